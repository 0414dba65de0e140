//===- SpaceImpl.h - A SearchSpace's pricing state (lib/Synth internal) ---===//
//
// What building the space and its transitions share: the evaluator's mesh
// layout and collective pricer, the interned tensor types, and the priced
// relayouts between distributions (memoised on first use by step()).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SYNTH_SPACEIMPL_H
#define WEFT_LIB_SYNTH_SPACEIMPL_H

#include "weft/Eval/CollectivePricer.h"
#include "weft/Eval/MeshLayout.h"
#include "weft/Synth/SearchSpace.h"
#include <deque>

namespace weft::synth {

/// A relayout of one value type between two distributions, priced.
struct RelayoutCost {
  bool ok = false;
  RepVector comm, transient;
  double maxSeconds = 0, bytes = 0;
  unsigned collectives = 0;
};

/// The space's pricing state: the evaluator's view of the mesh and the
/// relayouts priced so far.
struct SearchSpace::Impl {
  const ClusterSpec *spec = nullptr;
  EvalOptions eval;
  mlir::OwningOpRef<mlir::ModuleOp> holder;
  std::optional<MeshLayout> layout;
  std::unique_ptr<CollectivePricer> pricer;
  std::vector<mlir::RankedTensorType> types;
  llvm::DenseMap<mlir::Type, unsigned> typeIds;
  /// Relayouts by (type, from, to, gradient, ZeRO-3) packed into 64 bits
  /// (looked up on every transition: one probe of a flat table); a deque,
  /// so the references handed out stay valid.
  llvm::DenseMap<uint64_t, uint32_t, PackedKeyInfo> relayoutIndex;
  std::deque<RelayoutCost> relayouts;

  double elementBytes(mlir::RankedTensorType type) const {
    if (type.getElementType().isa<mlir::FloatType>())
      return bytesPerElement(eval.dtype);
    return std::max(1u, type.getElementTypeBitWidth() / 8);
  }
  double shardElements(mlir::RankedTensorType type, spmd::DistAttr dist,
                       unsigned d) const {
    auto s = layout->shardShape(type, dist, d);
    double n = 1;
    for (int64_t x : s)
      n *= double(x);
    return n;
  }
  double shardBytes(mlir::RankedTensorType type, spmd::DistAttr dist,
                    unsigned d) const {
    return elementBytes(type) * shardElements(type, dist, d);
  }
  /// Seconds of `kind` along `axes` for the group of mesh device `rep`;
  /// `bytesOf(meshDevice)` is a member's contribution.
  double priceAlong(spmd::Collective kind, AxisMask axes, unsigned rep,
                    llvm::function_ref<double(unsigned)> bytesOf,
                    CollectiveVariant variant = {}) {
    if (layout->sizeOf(axes) <= 1 || !spmd::communicates(kind))
      return 0;
    llvm::ArrayRef<unsigned> group = layout->groupOf(rep, axes);
    llvm::ArrayRef<unsigned> cluster = layout->clusterGroupOf(rep, axes);
    // Members of one orbit hold the same shards (MeshLayout): each orbit's
    // bytes are computed once.
    llvm::SmallVector<double> bytes;
    llvm::SmallVector<std::pair<unsigned, double>, 8> orbits;
    for (unsigned y : group) {
      unsigned r = layout->representativeOf(y);
      auto it = llvm::find_if(orbits, [&](auto &o) { return o.first == r; });
      if (it == orbits.end()) {
        orbits.push_back({r, bytesOf(r)});
        it = std::prev(orbits.end());
      }
      bytes.push_back(it->second);
    }
    return pricer->seconds(kind, cluster, bytes, variant);
  }
};

} // namespace weft::synth

#endif // WEFT_LIB_SYNTH_SPACEIMPL_H
