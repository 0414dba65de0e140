//===- AllPairsRound.h - An all-to-all round priced per node -----*- C++
//-*-===//
//
// Private to lib/Cost: allPairsRoundSeconds's fast path.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_COST_ALLPAIRSROUND_H
#define WEFT_LIB_COST_ALLPAIRSROUND_H

#include "weft/Cost/Network.h"
#include <optional>

namespace weft {

/// allPairsRoundSeconds from the group's members per node and per leaf, in
/// O(n · nodes) without a transfer or a link lookup per pair; the same
/// value bit for bit. std::nullopt when the group repeats a device or some
/// member's bytes are NaN (the caller enumerates the transfers then).
std::optional<double> allPairsRoundByNode(const ClusterSpec &spec,
                                          llvm::ArrayRef<unsigned> group,
                                          llvm::ArrayRef<double> sendBytes);

} // namespace weft

#endif // WEFT_LIB_COST_ALLPAIRSROUND_H
