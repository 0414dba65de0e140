//===- PipelineCheck.cpp - Verify a pipelined plan against its model ------===//
//
// One SpmdInterpreter per (stage, micro-batch), each on its stage's
// sub-mesh; the steps run in the schedule's order, a step waiting for the
// ones it depends on (forward of the previous stage, backward of the
// next). A send's value is made whole and cut into the recv's layout on
// the next stage; a recv's gradient (partial over the id axes of its
// layout) is summed whole and cut into the send's layout, shared equally
// by the devices of each id group.
//
//===----------------------------------------------------------------------===//

#include "PipelineCheck.h"
#include "Graph/IR/GraphOps.h"
#include "OpUtils.h"
#include "PlanLocate.h"
#include "Spmd/IR/SpmdOps.h"
#include "weft/Exec/Inputs.h"
#include "weft/Exec/Interpreter.h"
#include "weft/Exec/SpmdInterpreter.h"
#include "weft/Exec/SpmdKernels.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>
#include <cmath>
#include <deque>

using namespace weft;
using namespace weft::exec;
using spmd::ShardGeometry;

std::vector<std::vector<PipelineStep>>
weft::exec::pipelineSchedule(llvm::StringRef schedule, int64_t stages,
                             int64_t micro) {
  std::vector<std::vector<PipelineStep>> order(stages);
  for (int64_t s = 0; s < stages; ++s) {
    auto &steps = order[s];
    if (schedule == "gpipe") {
      for (int64_t m = 0; m < micro; ++m)
        steps.push_back({m, false});
      for (int64_t m = 0; m < micro; ++m)
        steps.push_back({m, true});
      continue;
    }
    // 1F1B: warm-up forwards, then one backward and one forward each.
    int64_t warm = std::min(micro, stages - s);
    for (int64_t m = 0; m < warm; ++m)
      steps.push_back({m, false});
    for (int64_t m = 0; m < micro; ++m) {
      steps.push_back({m, true});
      if (warm + m < micro)
        steps.push_back({warm + m, false});
    }
  }
  return order;
}

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// One stage: its interpreters (one per micro-batch), its sends and recvs.
struct Stage {
  mlir::ModuleOp module;
  std::vector<std::unique_ptr<SpmdInterpreter>> runs;
  llvm::SmallVector<spmd::SendOp> sends;
  llvm::SmallVector<spmd::RecvOp> recvs;
  llvm::SmallVector<int64_t> nodes;
  const ShardGeometry &geo() const { return runs.front()->geometry(); }
  /// Cluster device of the stage's device `x`.
  unsigned clusterDevice(unsigned x, int64_t perNode) const {
    return unsigned(nodes[x / perNode] * perNode + x % perNode);
  }
};

llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return v.getType().cast<mlir::RankedTensorType>().getShape();
}

/// `whole` cut into `dist` on `geo`, every shard scaled by `scale` over the
/// size of its id group when `shareIdGroups`.
DistValue cut(const ShardGeometry &geo, const Tensor &whole,
              spmd::DistAttr dist, bool shareIdGroups) {
  DistValue v;
  v.dist = dist;
  float share =
      shareIdGroups
          ? float(1.0 / double(geo.sizeOf(ShardGeometry::identityAxes(dist))))
          : 1.0f;
  for (unsigned x = 0; x < geo.numDevices(); ++x) {
    Tensor t = extractBox(whole, geo.shardBox(whole.getShape(), dist, x));
    if (share != 1.0f)
      for (int64_t i = 0, e = t.getNumElements(); i < e; ++i)
        t.floats()[i] *= share;
    v.shards.push_back(std::move(t));
  }
  return v;
}

/// The true gradient of a value from its per-device partial gradients
/// (partial over the id axes of `dist`).
Tensor summedWhole(const ShardGeometry &geo, const DistValue &g,
                   llvm::ArrayRef<int64_t> shape) {
  Tensor whole = Tensor::zeros(shape);
  spmd::ShardBox all;
  all.offsets.assign(shape.size(), 0);
  all.extents.assign(shape.begin(), shape.end());
  for (unsigned x = 0; x < geo.numDevices(); ++x)
    transferBox(g.shard(x), geo.shardBox(shape, g.dist, x), whole, all,
                Combine::Add);
  return whole;
}

/// `err` with "WHERE: " before its message, its exit code kept.
llvm::Error inStep(llvm::Error err, const std::string &where) {
  return llvm::handleErrors(std::move(err), [&](const WeftError &e) {
    return llvm::Error(llvm::make_error<WeftError>(
        e.getCode(), where + ": " + e.getMessage()));
  });
}

void addInto(std::vector<Tensor> &into, const std::vector<Tensor> &g) {
  for (size_t x = 0; x < into.size(); ++x)
    for (int64_t i = 0, e = into[x].getNumElements(); i < e; ++i)
      into[x].floats()[i] += g[x].floats()[i];
}

} // namespace

llvm::Expected<PlanCheckResult>
weft::exec::checkPipeline(mlir::func::FuncOp main, mlir::ModuleOp plan,
                          const PlanCheckOptions &opts) {
  PlanCheckResult result;
  int64_t micro = spmd::SpmdDialect::getMicroBatches(plan);
  auto scheduleAttr =
      plan->getAttrOfType<mlir::StringAttr>(spmd::SpmdDialect::kScheduleAttr);
  llvm::StringRef schedule = scheduleAttr ? scheduleAttr.getValue() : "1f1b";
  auto cluster =
      plan->getAttrOfType<spmd::MeshAttr>(spmd::SpmdDialect::kMeshAttr);
  int64_t perNode = cluster ? cluster.getDevicesPerNode() : 1;

  // Micro-batch m's inputs are seeded with seed + m; parameters are m = 0's.
  std::vector<Bindings> bindings;
  for (int64_t m = 0; m < micro; ++m) {
    InitOptions init;
    init.seed = opts.seed + uint64_t(m);
    for (auto &f : opts.npyFiles)
      init.npyFiles[f.getKey()] = f.getValue();
    auto b = makeBindings(main, init);
    if (!b)
      return b.takeError();
    if (m > 0) {
      b->parameters = bindings.front().parameters;
      b->buffers = bindings.front().buffers;
    }
    bindings.push_back(std::move(*b));
  }

  // The stages, one interpreter per micro-batch.
  SpmdRunOptions runOpts;
  runOpts.seed = opts.seed;
  runOpts.duals = opts.duals;
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    runOpts.inputNames.push_back(inputName(main, i));
  std::deque<Stage> stages;
  for (mlir::ModuleOp module : spmd::getStages(plan)) {
    Stage st;
    st.module = module;
    if (auto nodes = module->getAttrOfType<mlir::DenseI64ArrayAttr>(
            spmd::SpmdDialect::kNodesAttr))
      st.nodes.assign(nodes.asArrayRef().begin(), nodes.asArrayRef().end());
    module.walk([&](spmd::SendOp op) { st.sends.push_back(op); });
    module.walk([&](spmd::RecvOp op) { st.recvs.push_back(op); });
    for (int64_t m = 0; m < micro; ++m) {
      auto run = SpmdInterpreter::create(module, runOpts);
      if (!run)
        return run.takeError();
      (*run)->setStage();
      st.runs.push_back(std::move(*run));
    }
    result.numDevices += st.geo().numDevices();
    module.walk([&](graph::DropoutOp) { ++runOpts.firstDropoutId; });
    stages.push_back(std::move(st));
  }
  int64_t count = stages.size();
  if (!count)
    return badInput("the pipelined plan has no stages");

  // Run the schedule.
  auto order = pipelineSchedule(schedule, count, micro);
  std::vector<size_t> next(count, 0);
  std::vector<std::vector<char>> forwardDone(count,
                                             std::vector<char>(micro, 0)),
      backwardDone = forwardDone;
  auto start = std::chrono::steady_clock::now();
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t s = 0; s < count; ++s) {
      if (next[s] == order[s].size())
        continue;
      PipelineStep step = order[s][next[s]];
      int64_t m = step.microBatch;
      bool ready = step.backward ? forwardDone[s][m] && (s + 1 == count ||
                                                         backwardDone[s + 1][m])
                                 : (s == 0 || forwardDone[s - 1][m]);
      if (!ready)
        continue;
      Stage &st = stages[s];
      SpmdInterpreter &run = *st.runs[m];
      std::string where =
          llvm::formatv("stage {0}, micro-batch {1}", s, m).str();
      if (!step.backward) {
        if (auto err = run.forward(bindings[m]))
          return inStep(std::move(err), where);
        // Hand the sends to the next stage in its recvs' layouts.
        auto &sent = run.sentValues();
        for (size_t k = 0; k < sent.size() && s + 1 < count; ++k) {
          Stage &to = stages[s + 1];
          if (k >= to.recvs.size())
            break;
          Tensor whole =
              wholeOf(st.geo(), sent[k], shapeOf(st.sends[k].getInput()));
          to.runs[m]->inbox().push_back(
              cut(to.geo(), whole, to.recvs[k].getDist(), false));
        }
        sent.clear();
        forwardDone[s][m] = 1;
      } else {
        if (auto err = run.backward())
          return inStep(std::move(err), where);
        auto &back = run.gradientsSentBack();
        for (size_t k = 0; k < back.size() && s > 0; ++k) {
          Stage &to = stages[s - 1];
          if (k >= to.sends.size())
            break;
          mlir::Value in = to.sends[k].getInput();
          Tensor whole = summedWhole(st.geo(), back[k], shapeOf(in));
          to.runs[m]->gradientInbox().push_back(
              cut(to.geo(), whole, spmd::getDist(in), true));
        }
        back.clear();
        backwardDone[s][m] = 1;
      }
      result.pipelineOrder +=
          llvm::formatv("{0}s{1}:{2}{3}",
                        result.pipelineOrder.empty() ? "" : " ", s,
                        step.backward ? "B" : "F", m)
              .str();
      ++next[s];
      progress = true;
    }
  }
  for (int64_t s = 0; s < count; ++s)
    if (next[s] != order[s].size())
      return makeError(ExitInternal, "the {0} schedule stalls at stage {1}",
                       schedule, s);
  result.spmdSeconds = secondsSince(start);

  // The reference on the same micro-batches.
  start = std::chrono::steady_clock::now();
  llvm::StringMap<Tensor> refGrads;
  std::vector<std::string> names;
  std::vector<double> refLosses;
  for (int64_t m = 0; m < micro; ++m) {
    GraphInterpreter ref(main, opts.seed);
    if (auto err = ref.forward(bindings[m]))
      return std::move(err);
    if (auto err = ref.backward())
      return std::move(err);
    refLosses.push_back(ref.getLoss());
    names = ref.getParameterNames();
    for (const std::string &name : names) {
      const Tensor &g = ref.getParameterGradients().find(name)->second;
      auto [it, fresh] = refGrads.try_emplace(name, g);
      if (!fresh)
        for (int64_t i = 0, e = g.getNumElements(); i < e; ++i)
          it->second.floats()[i] += g.floats()[i];
    }
  }
  for (auto &entry : refGrads)
    for (int64_t i = 0, e = entry.second.getNumElements(); i < e; ++i)
      entry.second.floats()[i] /= float(micro);
  result.referenceSeconds = secondsSince(start);

  // Losses, per micro-batch.
  std::optional<PlanMismatch> lossMismatch;
  for (int64_t m = 0; m < micro; ++m) {
    double got = stages.back().runs[m]->getLoss(), want = refLosses[m];
    result.spmdLoss += got / double(micro);
    result.referenceLoss += want / double(micro);
    bool agrees =
        std::fabs(got - want) <= opts.atol + opts.rtol * std::fabs(want);
    if ((!agrees || std::isnan(got) != std::isnan(want)) && !lossMismatch)
      lossMismatch = PlanMismatch{
          llvm::formatv("the loss of stage {0}, micro-batch {1}", count - 1, m)
              .str(),
          "loss",
          0,
          0,
          got,
          want};
  }
  result.lossDifference = std::fabs(result.spmdLoss - result.referenceLoss);

  // Parameter gradients: each stage's summed over the micro-batches it
  // accumulates, divided by M.
  std::optional<PlanMismatch> gradMismatch;
  llvm::StringSet<> seen;
  result.numParameters = names.size();
  for (int64_t s = 0; s < count; ++s) {
    Stage &st = stages[s];
    std::vector<ParameterGradient> sum;
    for (int64_t m = 0; m < micro; ++m) {
      if (m == opts.testDropMicroBatch)
        continue;
      const auto &grads = st.runs[m]->getParameterGradients();
      if (sum.empty()) {
        sum = grads;
        continue;
      }
      for (size_t i = 0; i < sum.size() && i < grads.size(); ++i)
        addInto(sum[i].shards, grads[i].shards);
    }
    for (ParameterGradient &pg : sum) {
      seen.insert(pg.name);
      auto it = refGrads.find(pg.name);
      if (it == refGrads.end())
        continue;
      const Tensor &want = it->second;
      double worst = 0;
      for (unsigned x = 0; x < st.geo().numDevices(); ++x) {
        Tensor &got = pg.shards[x];
        for (int64_t i = 0, e = got.getNumElements(); i < e; ++i)
          got.floats()[i] /= float(micro);
        Tensor piece =
            extractBox(want, st.geo().shardBox(want.getShape(), pg.dist, x));
        auto [begin, end] = pg.ranges[x];
        Diff d =
            compareTensors(got, piece, opts.rtol, opts.atol, 0, begin, end);
        worst = std::max(worst, d.maxAbs);
        if (d.maxAbs > result.maxGradientDifference) {
          result.maxGradientDifference = d.maxAbs;
          result.worstParameter = pg.name;
        }
        if (d.first >= 0 && !gradMismatch)
          gradMismatch = PlanMismatch{
              llvm::formatv("stage {0}: spmd.parameter '{1}' ({2}, gradient "
                            "accumulated over {3} micro-batches; device {4} "
                            "of the stage)",
                            s, pg.name, pg.strategy, micro, x)
                  .str(),
              "gradient of parameter '" + pg.name + "'",
              st.clusterDevice(x, perNode),
              d.first,
              d.got,
              d.want};
      }
      result.gradientDifferences.emplace_back(pg.name, worst);
    }
  }
  // A trainable parameter no stage trains has no gradient.
  for (const std::string &name : names) {
    if (seen.contains(name))
      continue;
    const Tensor &want = refGrads.find(name)->second;
    Tensor zeros = Tensor::zeros(want.getShape());
    Diff d = compareTensors(zeros, want, opts.rtol, opts.atol);
    result.gradientDifferences.emplace_back(name, d.maxAbs);
    if (d.first >= 0 && !gradMismatch)
      gradMismatch = PlanMismatch{"spmd.parameter '" + name +
                                      "' (not trained by any stage)",
                                  "gradient of parameter '" + name + "'",
                                  0,
                                  d.first,
                                  d.got,
                                  d.want};
  }
  result.agree = !lossMismatch && !gradMismatch;
  if (!result.agree)
    result.mismatch = lossMismatch ? lossMismatch : gradMismatch;
  return result;
}
