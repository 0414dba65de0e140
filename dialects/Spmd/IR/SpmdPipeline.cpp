//===- SpmdPipeline.cpp - Stage structure of pipelined plans --------------===//
//
// The verifier of a pipelined plan (docs/Pipeline.md): stage modules in
// order on disjoint node sets, each stage's mesh the cluster's restricted
// to its nodes, send/recv pairs between neighbouring stages, parameters in
// one stage.
//
//===----------------------------------------------------------------------===//

#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace weft::spmd;

bool weft::spmd::isPipelined(Operation *module) {
  return module->hasAttr(SpmdDialect::kScheduleAttr);
}

SmallVector<ModuleOp> weft::spmd::getStages(ModuleOp module) {
  SmallVector<ModuleOp> stages;
  for (Operation &op : module.getBody()->getOperations())
    if (auto stage = dyn_cast<ModuleOp>(op))
      if (stage->hasAttr(SpmdDialect::kStageAttr))
        stages.push_back(stage);
  return stages;
}

/// Whether two device classes describe the same devices (nodes aside).
static bool sameDevices(DeviceClassAttr a, DeviceClassAttr b) {
  return a && b && a.getType() == b.getType() &&
         a.getPeakGflops() == b.getPeakGflops() &&
         a.getMemoryMb() == b.getMemoryMb();
}

/// Checks stage `index`'s own attributes against the cluster mesh; `owner`
/// maps cluster nodes to the stage holding them (-1: none yet).
static LogicalResult verifyStageMesh(ModuleOp stage, int64_t index,
                                     MeshAttr cluster,
                                     SmallVectorImpl<int64_t> &owner) {
  auto fail = [&]() { return stage->emitError() << "stage " << index << ": "; };
  auto nodes = stage->getAttrOfType<DenseI64ArrayAttr>(SpmdDialect::kNodesAttr);
  if (!nodes || nodes.empty())
    return fail() << "needs its cluster nodes ('spmd.nodes = array<i64: "
                     "...>')";
  for (int64_t n : nodes.asArrayRef()) {
    if (n < 0 || n >= cluster.getNumNodes())
      return fail() << "node " << n << " is not a cluster node (0.."
                    << cluster.getNumNodes() - 1 << ")";
    if (owner[n] >= 0)
      return fail() << "node " << n << " belongs to stage " << owner[n]
                    << " too";
    owner[n] = index;
  }
  auto mesh = stage->getAttrOfType<MeshAttr>(SpmdDialect::kMeshAttr);
  if (!mesh)
    return fail() << "needs its sub-mesh ('spmd.mesh')";
  if (mesh.getLocal() != cluster.getLocal())
    return fail() << "its mesh's local factors differ from the cluster's";
  if (mesh.getNumNodes() != int64_t(nodes.size()))
    return fail() << "its mesh has " << mesh.getNumNodes() << " nodes, "
                  << "'spmd.nodes' lists " << nodes.size();
  for (auto [pos, n] : llvm::enumerate(nodes.asArrayRef()))
    if (!sameDevices(mesh.getClassOfNode(pos), cluster.getClassOfNode(n)))
      return fail() << "node " << pos << " of its mesh does not have the "
                    << "devices of cluster node " << n;
  return success();
}

/// The sends and recvs of a stage, in program order.
struct StageTraffic {
  SmallVector<Operation *> sends, recvs;
};

/// Checks peers, partiality and the loss return of stage `index` of
/// `count`; collects its traffic.
static LogicalResult verifyStageProgram(ModuleOp stage, int64_t index,
                                        int64_t count, StageTraffic &traffic) {
  auto main = stage.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return stage->emitError()
           << "stage " << index << ": has no func.func @main";
  unsigned want = index + 1 == count ? 1 : 0;
  if (main.getNumResults() != want)
    return main->emitError() << "stage " << index << ": @main returns "
                             << main.getNumResults() << " values; "
                             << (want ? "the last stage returns the loss"
                                      : "a stage before the last returns none");
  WalkResult r = stage.walk([&](Operation *op) {
    bool isSend = isa<SendOp>(op);
    if (!isSend && !isa<RecvOp>(op))
      return WalkResult::advance();
    auto peer = op->getAttrOfType<IntegerAttr>("peer");
    int64_t want = isSend ? index + 1 : index - 1;
    if (!peer || peer.getInt() != want) {
      op->emitError() << "stage " << index << ": "
                      << (isSend ? "sends to stage " : "receives from stage ")
                      << (peer ? peer.getInt() : -1) << "; a stage "
                      << (isSend ? "sends to the next ("
                                 : "receives from "
                                   "the previous (")
                      << want << ")";
      return WalkResult::interrupt();
    }
    if (want < 0 || want >= count) {
      op->emitError() << "stage " << index << ": stage " << want
                      << " does not exist";
      return WalkResult::interrupt();
    }
    DistAttr dist = isSend ? getDist(op->getOperand(0))
                           : op->getAttrOfType<DistAttr>("dist");
    if (dist && dist.isPartial()) {
      op->emitError() << "stage " << index << ": a value "
                      << (isSend ? "sent" : "received")
                      << " between stages cannot be partial";
      return WalkResult::interrupt();
    }
    (isSend ? traffic.sends : traffic.recvs).push_back(op);
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

LogicalResult weft::spmd::verifyPipeline(ModuleOp module) {
  auto schedule = module->getAttrOfType<StringAttr>(SpmdDialect::kScheduleAttr);
  if (!schedule ||
      (schedule.getValue() != "1f1b" && schedule.getValue() != "gpipe"))
    return module->emitError() << "'" << SpmdDialect::kScheduleAttr
                               << "' must be \"1f1b\" or \"gpipe\"";
  auto cluster = module->getAttrOfType<MeshAttr>(SpmdDialect::kMeshAttr);
  if (!cluster)
    return module->emitError("a pipelined plan needs the cluster's mesh "
                             "('spmd.mesh')");
  SmallVector<ModuleOp> stages;
  for (Operation &op : module.getBody()->getOperations()) {
    auto stage = dyn_cast<ModuleOp>(op);
    if (!stage || !stage->hasAttr(SpmdDialect::kStageAttr))
      return op.emitError() << "a pipelined plan holds only stage modules "
                               "('spmd.stage'), found '"
                            << op.getName() << "'";
    auto index = stage->getAttrOfType<IntegerAttr>(SpmdDialect::kStageAttr);
    if (!index || index.getInt() != int64_t(stages.size()))
      return stage->emitError() << "stage module at position " << stages.size()
                                << " has 'spmd.stage' " << index.getInt()
                                << "; stages are in program order";
    stages.push_back(stage);
  }
  if (stages.empty())
    return module->emitError("a pipelined plan needs at least one stage "
                             "module");
  SmallVector<int64_t> owner(cluster.getNumNodes(), -1);
  SmallVector<StageTraffic> traffic(stages.size());
  llvm::StringMap<int64_t> paramStage;
  int64_t count = stages.size();
  for (int64_t s = 0; s < count; ++s) {
    ModuleOp stage = stages[s];
    if (failed(verifyStageMesh(stage, s, cluster, owner)) ||
        failed(verifyStageProgram(stage, s, count, traffic[s])))
      return failure();
    WalkResult r = stage.walk([&](ParameterOp p) {
      auto name = p->getAttrOfType<StringAttr>("name");
      if (!name)
        return WalkResult::advance();
      auto [it, fresh] = paramStage.try_emplace(name.getValue(), s);
      if (fresh || it->second == s)
        return WalkResult::advance();
      p->emitError() << "stage " << s << ": parameter '" << name.getValue()
                     << "' is declared in stage " << it->second
                     << " too; a parameter lives on one stage";
      return WalkResult::interrupt();
    });
    if (r.wasInterrupted())
      return failure();
  }
  for (int64_t s = 0; s + 1 < count; ++s) {
    ArrayRef<Operation *> sends = traffic[s].sends,
                          recvs = traffic[s + 1].recvs;
    for (size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k) {
      if (k >= recvs.size())
        return sends[k]->emitError()
               << "stage " << s << ": send #" << k << " has no matching recv "
               << "in stage " << s + 1 << " (it receives " << recvs.size()
               << ")";
      if (k >= sends.size())
        return recvs[k]->emitError() << "stage " << s + 1 << ": recv #" << k
                                     << " has no matching send in stage " << s
                                     << " (it sends " << sends.size() << ")";
      Type sent = sends[k]->getOperand(0).getType();
      Type got = recvs[k]->getResult(0).getType();
      if (sent != got)
        return recvs[k]->emitError()
               << "stage " << s + 1 << ": recv #" << k << " has type " << got
               << " but send #" << k << " of stage " << s << " sends " << sent;
    }
  }
  return success();
}
