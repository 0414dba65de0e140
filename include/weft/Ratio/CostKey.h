//===- CostKey.h - Canonical byte keys of cost expressions ------*- C++ -*-===//
//
// Equal keys mean equal functions of the ratios: terms are merged and sorted,
// max pieces compared as sets. Used to collapse steps and share epigraph
// columns.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_RATIO_COSTKEY_H
#define WEFT_RATIO_COSTKEY_H

#include "weft/Ratio/RatioProblem.h"
#include <string>

namespace weft {
namespace ratio {

std::string linearKey(const LinearCost &cost);
/// The key of max over pieces, without the scale.
std::string piecesKey(const MaxCost &cost);
/// The key of a whole step's costs (multiplicity and name excluded).
std::string stepKey(const Step &step);

} // namespace ratio
} // namespace weft

#endif // WEFT_RATIO_COSTKEY_H
