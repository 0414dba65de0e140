//===- Gating.h - GShard top-2 gating with per-group capacity ---*- C++ -*-===//

#ifndef WEFT_EXEC_GATING_H
#define WEFT_EXEC_GATING_H

#include "weft/Exec/Elementwise.h"
#include "weft/Exec/Tensor.h"

namespace weft::exec {

struct GatingResult {
  Tensor dispatch, combine;
};

/// graph.top2_gating (docs/Zoo.md): p = softmax(tokens · gate) over the E
/// experts; each token's best expert (lowest index on ties) and second best
/// get gates p1/(p1+p2) and p2/(p1+p2); per group, tokens take the next
/// free of an expert's `capacity` slots in token order, all first choices
/// before all second choices, and are dropped for that expert when it is
/// full. dispatch and combine are G×S×E×C.
GatingResult top2Gating(const Tensor &tokens, const Tensor &gate,
                        int64_t capacity);

/// Gradients of tokens and gate from the gradient of `combine` (dispatch is
/// piecewise constant; the expert choice and slots are held fixed).
BinaryGrads top2GatingBackward(const Tensor &tokens, const Tensor &gate,
                               const Tensor &dCombine, int64_t capacity);

} // namespace weft::exec

#endif // WEFT_EXEC_GATING_H
