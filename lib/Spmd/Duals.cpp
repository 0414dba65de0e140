//===- Duals.cpp - The backward of every spmd collective and strategy -----===//

#include "weft/Spmd/Duals.h"
#include "Spmd/IR/SpmdOps.h"
#include "llvm/ADT/STLExtras.h"

using namespace weft::spmd;

llvm::StringRef weft::spmd::toString(Collective c) {
  switch (c) {
  case Collective::None:
    return "none";
  case Collective::ZeroPad:
    return "zero_pad";
  case Collective::AllGather:
    return "all_gather";
  case Collective::ReduceScatter:
    return "reduce_scatter";
  case Collective::AllReduce:
    return "all_reduce";
  case Collective::AllToAll:
    return "all_to_all";
  case Collective::Send:
    return "send";
  case Collective::Recv:
    return "recv";
  }
  return "none";
}

// docs/Design.md §3.4, partial-sum convention: the gradient of a replicated
// value is held as partial sums, so a gather's dual adds them up
// (reduce_scatter) and an all_reduce's dual hands every device the whole
// gradient again.
static const CollectiveDual kCollectiveDuals[] = {
    {"spmd.shard", Collective::None, Collective::ZeroPad, false},
    {"spmd.all_gather", Collective::AllGather, Collective::ReduceScatter,
     false},
    {"spmd.reduce_scatter", Collective::ReduceScatter, Collective::AllGather,
     false},
    {"spmd.all_reduce", Collective::AllReduce, Collective::AllReduce, false},
    {"spmd.all_to_all", Collective::AllToAll, Collective::AllToAll, true},
    {"spmd.send", Collective::Send, Collective::Recv, true},
    {"spmd.recv", Collective::Recv, Collective::Send, true},
};

llvm::ArrayRef<CollectiveDual> weft::spmd::collectiveDuals() {
  return kCollectiveDuals;
}

std::optional<CollectiveDual> weft::spmd::dualOf(mlir::Operation *op) {
  llvm::StringRef name = op->getName().getStringRef();
  const auto *row =
      llvm::find_if(kCollectiveDuals,
                    [&](const CollectiveDual &d) { return d.opName == name; });
  if (row == std::end(kCollectiveDuals))
    return std::nullopt;
  CollectiveDual dual = *row;
  // all_reduce(max) is a stability shift: the shifted softmax does not
  // depend on it, so it is a stop-gradient.
  if (auto reduce = llvm::dyn_cast<AllReduceOp>(op)) {
    DistAttr in = getDist(reduce.getInput());
    if (in && in.getAxes()[reduce.getAxis()].kind == AxisDist::Kind::Max)
      dual.backward = Collective::None;
  }
  return dual;
}

//                    strategy  trainable  gradient sync  after update
//                    grad sharded  opt sharded  regather in backward
static const StrategyDual kStrategyDuals[] = {
    {ParamStrategy::Replicated, true, Collective::AllReduce, Collective::None,
     false, false, false},
    {ParamStrategy::Zero1, true, Collective::ReduceScatter,
     Collective::AllGather, false, true, false},
    {ParamStrategy::Zero2, true, Collective::ReduceScatter,
     Collective::AllGather, true, true, false},
    {ParamStrategy::Zero3, true, Collective::AllReduce, Collective::None, false,
     false, true},
    {ParamStrategy::Buffer, false, Collective::None, Collective::None, false,
     false, false},
};

llvm::ArrayRef<StrategyDual> weft::spmd::strategyDuals() {
  return kStrategyDuals;
}

const StrategyDual &weft::spmd::dualOf(ParamStrategy s) {
  return kStrategyDuals[static_cast<unsigned>(s)];
}
