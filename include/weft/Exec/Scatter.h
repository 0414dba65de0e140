//===- Scatter.h - ScatterElements and ScatterND -----------------*- C++
//-*-===//
//
// Both scatters reduce to one map: the position in `data` each element of
// `updates` lands on (its target), then one combine per update. Targets are
// computed on the shard a device holds: an index names a global position
// along an indexed dim, and an update whose position lies outside the
// shard has no target (−1).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EXEC_SCATTER_H
#define WEFT_EXEC_SCATTER_H

#include "weft/Exec/Dropout.h"
#include "weft/Exec/Tensor.h"
#include <optional>
#include <vector>

namespace weft::exec {

enum class ScatterReduction { None, Add, Mul, Max, Min };

std::optional<ScatterReduction> parseScatterReduction(llvm::StringRef name);

/// Targets of ScatterElements: the update at position p goes to p with its
/// `axis` coordinate replaced by indices[p] (in [−dim, dim) of the global
/// extent, checked by the caller). `view` places the data's shard in the
/// global tensor (empty: the whole tensor).
std::vector<int64_t> scatterElementsTargets(llvm::ArrayRef<int64_t> dataShape,
                                            const Tensor &indices, int64_t axis,
                                            GlobalView view);

/// Targets of ScatterND: index tuple u (the last dim of `indices`, k
/// elements) addresses the slice data[i_0, …, i_{k−1}, …]; the slice's
/// elements are updates u·S … u·S + S − 1.
std::vector<int64_t> scatterNdTargets(llvm::ArrayRef<int64_t> dataShape,
                                      const Tensor &indices, GlobalView view);

/// A copy of `data` with each update combined into its target.
Tensor scatter(const Tensor &data, const Tensor &updates,
               llvm::ArrayRef<int64_t> targets, ScatterReduction reduction);

struct ScatterGrads {
  Tensor data, updates;
};
/// Gradients of data and updates (docs/Dialects/Graph.md says which
/// update a position's gradient goes to).
ScatterGrads scatterBackward(const Tensor &data, const Tensor &updates,
                             llvm::ArrayRef<int64_t> targets,
                             ScatterReduction reduction, const Tensor &dy);

} // namespace weft::exec

#endif // WEFT_EXEC_SCATTER_H
