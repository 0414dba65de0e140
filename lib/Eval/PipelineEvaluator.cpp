//===- PipelineEvaluator.cpp - The step of a pipelined plan ---------------===//
//
// A pipelined plan (docs/Pipeline.md) is priced stage by stage: each stage
// module is a single-stage plan on its nodes, evaluated for one
// micro-batch; each send/recv pair is a point-to-point transfer between
// the two stages' devices; the schedule composes them into the step.
// docs/Evaluator.md, "Pipelined plans".
//
//===----------------------------------------------------------------------===//

#include "PlanEvaluator.h"
#include "weft/Cost/Collective.h"
#include <map>
#include <numeric>

using namespace weft;
using namespace weft::eval;
using namespace weft::spmd;

namespace {

/// One piece of a transfer: `bytes` from cluster device `src` to `dst`.
struct Piece {
  unsigned src, dst;
  double bytes;
};

/// Pieces sent at once: the slowest point-to-point send, or the busiest NIC
/// when several pieces leave or enter one node through it.
double concurrentSeconds(const ClusterSpec &spec,
                         llvm::ArrayRef<Piece> pieces) {
  double slowest = 0;
  std::map<unsigned, double> out, in;
  for (const Piece &p : pieces) {
    if (p.bytes <= 0 || p.src == p.dst)
      continue;
    slowest =
        std::max(slowest, pointToPointSeconds(spec, p.src, p.dst, p.bytes));
    unsigned from = spec.devices[p.src].node, to = spec.devices[p.dst].node;
    if (from == to)
      continue;
    out[from] += p.bytes;
    in[to] += p.bytes;
  }
  double nic = 0;
  for (auto *side : {&out, &in})
    for (auto [node, bytes] : *side)
      nic = std::max(nic, bytes / spec.nodes[node].nicBandwidth());
  return std::max(slowest, nic);
}

/// Bytes of `v`'s shard on mesh device `d` of `layout`.
double shardBytes(const MeshLayout &layout, mlir::Value v, unsigned d,
                  DType dtype) {
  auto type = v.getType().cast<mlir::RankedTensorType>();
  Shape s = layout.shardShape(type, distOrReplicated(v, layout.numAxes()), d);
  return double(std::accumulate(s.begin(), s.end(), int64_t(1),
                                std::multiplies<int64_t>())) *
         elementBytes(type, dtype);
}

/// Every device of `to` receives its shard of `toValue` from a device of
/// `from` (round robin over `from`'s devices; the value is whole there).
double reshardSeconds(const ClusterSpec &spec, const MeshLayout &from,
                      const MeshLayout &to, mlir::Value toValue, DType dtype) {
  std::vector<Piece> pieces;
  for (unsigned d = 0; d < to.numDevices(); ++d)
    pieces.push_back({from.clusterDevice(d % from.numDevices()),
                      to.clusterDevice(d), shardBytes(to, toValue, d, dtype)});
  return concurrentSeconds(spec, pieces);
}

/// `op`s of type T in `stage`'s @main, in program order.
template <typename T> llvm::SmallVector<T> opsOf(mlir::ModuleOp stage) {
  llvm::SmallVector<T> ops;
  if (auto main = stage.lookupSymbol<mlir::func::FuncOp>("main"))
    main.walk([&](T op) { ops.push_back(op); });
  return ops;
}

} // namespace

llvm::Expected<PlanEstimate>
eval::evaluatePipelined(mlir::ModuleOp module, const ClusterSpec &spec,
                        const EvalOptions &planOptions) {
  EvalOptions options = optionsFor(module, planOptions);
  auto whole = module->getAttrOfType<MeshAttr>(SpmdDialect::kMeshAttr);
  // One mesh node per cluster node, or every cluster node cut into mesh
  // nodes of the mesh's size.
  int64_t cuts = 0;
  if (whole)
    for (const Node &n : spec.nodes)
      cuts += int64_t(n.numDevices) / whole.getDevicesPerNode();
  if (!whole || (whole.getNumNodes() != int64_t(spec.numNodes()) &&
                 whole.getNumNodes() != cuts))
    return badInput("a pipelined plan's mesh must have one node per node of "
                    "the cluster '{0}' ({1}), or its nodes cut into mesh "
                    "nodes of equal size",
                    spec.name, spec.numNodes());
  llvm::SmallVector<mlir::ModuleOp> stageOps = getStages(module);
  if (stageOps.empty())
    return badInput("the pipelined plan has no stage modules");
  int64_t m = SpmdDialect::getMicroBatches(module);
  auto schedule =
      module->getAttrOfType<mlir::StringAttr>(SpmdDialect::kScheduleAttr);
  bool gpipe = schedule && schedule.getValue() == "gpipe";
  bool overlap =
      overlapsGradientSync(options.overlapGradientSync, options.profile);
  unsigned numStages = stageOps.size();
  int64_t perNode = whole.getDevicesPerNode();

  PlanEstimate out;
  out.schedule = gpipe ? "gpipe" : "1f1b";
  out.microBatches = m;
  std::vector<MeshLayout> layouts;
  std::vector<PlanEstimate> singles;
  for (auto [s, stage] : llvm::enumerate(stageOps)) {
    auto layout = MeshLayout::get(stage, spec, options.foldDevices);
    if (!layout)
      return layout.takeError();
    auto single = evaluate(stage, spec, options, nullptr);
    if (!single)
      return single.takeError();
    layouts.push_back(std::move(*layout));
    singles.push_back(std::move(*single));
    const PlanEstimate &e = singles.back();
    StageEstimate st;
    st.index = s;
    auto nodes =
        stage->getAttrOfType<mlir::DenseI64ArrayAttr>(SpmdDialect::kNodesAttr);
    st.nodes.assign(nodes.asArrayRef().begin(), nodes.asArrayRef().end());
    for (unsigned d = 0; d < layouts.back().numDevices(); ++d)
      st.devices.push_back(layouts.back().clusterDevice(d));
    // One more micro-batch costs t_s: composeSteps of two less one.
    double one = composeSteps(e.steps, 1, overlap).stepSeconds;
    st.microBatchSeconds = composeSteps(e.steps, 2, overlap).stepSeconds - one;
    st.onceSeconds = e.stepSeconds - st.microBatchSeconds;
    // The forward part: compute less backward, and the communication that
    // is neither a dual nor a gradient sync.
    double forward = 0;
    for (const StepEstimate &k : e.steps)
      forward += k.computeSeconds - k.backwardSeconds +
                 std::max(0.0, k.repeatedCommSeconds - k.dualSeconds -
                                   k.repeatedSyncSeconds);
    st.forwardSeconds = std::clamp(forward, 0.0, st.microBatchSeconds);
    st.keptMicroBatches =
        gpipe ? m : std::min<int64_t>(m, int64_t(numStages) - int64_t(s));
    out.stages.push_back(std::move(st));
  }

  // Transfers between neighbours, per micro-batch: the k-th send of stage s
  // meets the k-th recv of stage s + 1 (the verifier checks it).
  for (unsigned s = 0; s + 1 < numStages; ++s) {
    auto sends = opsOf<SendOp>(stageOps[s]);
    auto recvs = opsOf<RecvOp>(stageOps[s + 1]);
    double forward = 0, backward = 0;
    for (auto [send, recv] : llvm::zip(sends, recvs)) {
      // The activation forward in the recv's layout, its gradient back in
      // the send's.
      forward += reshardSeconds(spec, layouts[s], layouts[s + 1],
                                recv->getResult(0), options.dtype);
      backward += reshardSeconds(spec, layouts[s + 1], layouts[s],
                                 send->getOperand(0), options.dtype);
    }
    out.stages[s].sendForwardSeconds = forward;
    out.stages[s].sendSeconds = forward + backward;
  }

  // The pipeline of S stages and S − 1 links, each link a stage of its
  // own: every micro-batch crosses all of them, and the slowest sets the
  // pace of the other M − 1.
  double fill = 0, slowest = 0, tail = 0;
  for (const StageEstimate &st : out.stages) {
    fill += st.microBatchSeconds + st.sendSeconds;
    slowest = std::max({slowest, st.microBatchSeconds, st.sendSeconds});
    tail = std::max(tail, st.onceSeconds);
  }
  out.pipelineSeconds = fill + double(m - 1) * slowest;
  out.stepSeconds = out.pipelineSeconds + tail;

  double busy = 0;
  for (auto [st, e] : llvm::zip(out.stages, singles)) {
    double mine = double(m) * st.microBatchSeconds;
    busy += mine * st.devices.size();
    st.bubbleFraction =
        out.pipelineSeconds > 0 ? 1 - mine / out.pipelineSeconds : 0;
    // Memory: the stage's own, with its activations kept for as many
    // micro-batches as the schedule holds at once.
    unsigned d = 0;
    for (const DeviceMemoryEstimate &one : e.memory) {
      DeviceMemoryEstimate mem = one;
      mem.device = unsigned(st.nodes[d / perNode] * perNode + d % perNode);
      ++d;
      mem.terms.activations *= double(st.keptMicroBatches);
      mem.fits = mem.peakBytes() <=
                 mem.capacityBytes * (1 - options.reservedMemoryFraction);
      st.peakMemoryBytes = std::max(st.peakMemoryBytes, mem.peakBytes());
      out.fits &= mem.fits;
      out.peakMemoryBytes = std::max(out.peakMemoryBytes, mem.peakBytes());
      out.memory.push_back(std::move(mem));
    }
    for (StepEstimate step : e.steps) {
      step.label = "stage " + std::to_string(st.index) + ": " + step.label;
      out.steps.push_back(std::move(step));
    }
    llvm::append_range(out.collectives, e.collectives);
    out.commSeconds += e.commSeconds;
    out.exposedGradientSyncSeconds =
        std::max(out.exposedGradientSyncSeconds, e.exposedGradientSyncSeconds);
    out.optimizerSeconds = std::max(out.optimizerSeconds, e.optimizerSeconds);
    out.timedOps += e.timedOps;
    out.measuredOps += e.measuredOps;
  }
  for (const StageEstimate &st : out.stages)
    out.commSeconds += double(m) * st.sendSeconds;
  llvm::sort(out.memory,
             [](const auto &a, const auto &b) { return a.device < b.device; });
  unsigned devices = 0;
  for (const StageEstimate &st : out.stages)
    devices += st.devices.size();
  out.bubbleFraction = out.pipelineSeconds > 0 && devices > 0
                           ? 1 - busy / (double(devices) * out.pipelineSeconds)
                           : 0;
  // Compute on the critical path: the formula with each stage's compute
  // for t_s (the slowest stage's for the M − 1); the communication share
  // is what the step spends beyond it and the optimizer update (link
  // transfers, collectives, exposed sync and the wait of the bubble).
  unsigned pace = 0;
  for (unsigned s = 0; s < numStages; ++s) {
    out.computeSeconds += singles[s].computeSeconds;
    if (out.stages[s].microBatchSeconds > out.stages[pace].microBatchSeconds)
      pace = s;
  }
  out.computeSeconds += double(m - 1) * singles[pace].computeSeconds;
  out.commShare = out.stepSeconds > 0
                      ? std::clamp((out.stepSeconds - out.computeSeconds -
                                    out.optimizerSeconds) /
                                       out.stepSeconds,
                                   0.0, 1.0)
                      : 0;
  return out;
}
