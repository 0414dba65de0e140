//===- SpaceStorage.cpp - Parameter strategies at a leaf's first use ------===//
//
// A leaf first used with one distribution may be stored otherwise:
// parameters replicated, ZeRO-1, ZeRO-2 (where the use leaves an axis to
// shard them over) or ZeRO-3 (split on their largest free dim and gathered
// before use); buffers and inputs as used. Each option is priced with the
// evaluator's strategy costs (weft/Eval/StrategyCost.h): committed bytes,
// gradient sync and the optimizer update with its after-update gathers.
// SearchSpace::storageOptions memoises them per leaf kind, type and use.
//
//===----------------------------------------------------------------------===//

#include "SpaceImpl.h"
#include "weft/Eval/StrategyCost.h"
#include "weft/Spmd/Relayout.h"

using namespace weft;
using namespace weft::synth;
using spmd::AxisDist;
using spmd::DistAttr;

std::vector<StorageOption> SearchSpace::makeStorageOptions(const ValueInfo &v,
                                                           DistId use) {
  std::vector<StorageOption> out;
  DistAttr useDist = dist(use);
  if (useDist.isPartial())
    return out; // A leaf is never a partial value.
  if (v.kind != ValueInfo::Kind::Parameter) {
    out.push_back(leafStorage(v, use));
    return out;
  }
  for (auto &[strategy, stored] : storageCandidates(v, useDist))
    out.push_back(priceStorage(v, strategy, stored));
  return out;
}

StorageOption SearchSpace::leafStorage(const ValueInfo &v, DistId use) {
  DistAttr useDist = dist(use);
  unsigned reps = numReps();
  StorageOption o;
  o.strategy = v.kind == ValueInfo::Kind::Buffer
                   ? spmd::ParamStrategy::Buffer
                   : spmd::ParamStrategy::Replicated;
  o.stored = use;
  o.sync.assign(reps, 0);
  o.committed.assign(reps, 0);
  if (v.kind == ValueInfo::Kind::Buffer) {
    auto type = impl_->types[v.typeId];
    for (unsigned r = 0; r < reps; ++r) {
      MemoryCounts c;
      c.storedParameters = impl_->shardElements(type, useDist, repDevices_[r]);
      o.committed[r] =
          deviceMemory(c, impl_->eval.dtype, impl_->eval.optimizer).total();
    }
  }
  return o;
}

llvm::SmallVector<std::pair<spmd::ParamStrategy, DistAttr>, 4>
SearchSpace::storageCandidates(const ValueInfo &v, DistAttr useDist) const {
  AxisMask idAxes = 0;
  for (auto [a, e] : llvm::enumerate(useDist.getAxes()))
    if (e.isIdentity() && axisSizes_[a] > 1)
      idAxes |= 1u << a;
  llvm::SmallVector<std::pair<spmd::ParamStrategy, DistAttr>, 4> candidates;
  candidates.push_back({spmd::ParamStrategy::Replicated, useDist});
  if (idAxes) {
    candidates.push_back({spmd::ParamStrategy::Zero1, useDist});
    candidates.push_back({spmd::ParamStrategy::Zero2, useDist});
    // ZeRO-3: the largest dim not split by the use, split over every id
    // axis, gathered before use.
    int64_t ways = impl_->layout->sizeOf(idAxes);
    int best = -1;
    for (unsigned d = 0; d < v.shape.size(); ++d) {
      bool split = llvm::any_of(useDist.getAxes(), [&](const AxisDist &e) {
        return e.isGather() && e.dim == int64_t(d);
      });
      if (!split && v.shape[d] >= 2 && v.shape[d] >= ways &&
          (best < 0 || v.shape[d] > v.shape[best]))
        best = int(d);
    }
    if (best >= 0) {
      DistAttr stored = useDist;
      int64_t seg = 0;
      for (const spmd::SegmentAttr &sa : segments_)
        if (sa.getExtent() == v.shape[best])
          seg = sa.getId();
      for (unsigned a = 0; a < numAxes(); ++a)
        if (idAxes & (1u << a))
          stored = stored.with(a, AxisDist::gather(best, seg));
      if (spmd::isStructurallyValid(stored))
        candidates.push_back({spmd::ParamStrategy::Zero3, stored});
    }
  }
  return candidates;
}

StorageOption SearchSpace::priceStorage(const ValueInfo &v,
                                        spmd::ParamStrategy strategy,
                                        DistAttr stored) {
  unsigned reps = numReps();
  auto type = impl_->types[v.typeId];
  const EvalOptions &eval = impl_->eval;
  StorageOption o;
  o.strategy = strategy;
  o.stored = intern(stored);
  AxisMask storedId = 0;
  for (auto [a, e] : llvm::enumerate(stored.getAxes()))
    if (e.isIdentity())
      storedId |= 1u << a;
  StrategyCost cost = strategyCost(
      strategy, double(impl_->layout->sizeOf(storedId)), eval.dtype);
  double update = 0, gather = 0;
  for (unsigned r = 0; r < reps; ++r) {
    unsigned rep = repDevices_[r];
    auto elementsOf = [&](unsigned d) {
      return impl_->shardElements(type, stored, d);
    };
    MemoryCounts c = cost.counts(elementsOf(rep));
    o.committed.push_back(deviceMemory(c, eval.dtype, eval.optimizer).total());
    CollectiveVariant best;
    best.bestAllReduce = true;
    CollectiveVariant bucketed = best;
    bucketed.bucketBytes = eval.gradientBucketBytes;
    double sync = impl_->priceAlong(
        cost.dual->gradientSync, storedId, rep,
        [&](unsigned d) { return cost.syncBytes(elementsOf(d)); }, bucketed);
    // Gradient accumulation: costs are per micro-batch, so what runs once
    // per step (a sync of whole gradients, the optimizer) counts 1/m.
    o.sync.push_back(cost.syncOncePerStep() ? sync / microBatches_ : sync);
    gather = std::max(gather, impl_->priceAlong(
                                  cost.dual->afterUpdate, storedId, rep,
                                  [&](unsigned d) {
                                    return cost.afterUpdateBytes(elementsOf(d));
                                  },
                                  best));
    OpWork work =
        optimizerUpdateWork(c.optimizerParameters, eval.optimizer, eval.dtype);
    update = std::max(update, opTime(impl_->layout->typeOf(rep), eval.dtype,
                                     work, eval.profile)
                                  .seconds);
  }
  o.optimizerSeconds = (update + gather) / double(microBatches_);
  return o;
}
