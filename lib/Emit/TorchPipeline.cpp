//===- TorchPipeline.cpp - A pipelined plan as one PyTorch program --------===//
//
// docs/Pipeline.md, "Emitting": one program for every rank of the cluster.
// Each stage module is emitted as a single-stage plan is (TorchWriter: its
// mesh, segments, specs and a forward function with one line per op), its
// spmd.recv ops reading `recv[k]` and its spmd.send values returned with
// the loss; one table of distributions and constants serves all stages.
// weft_runtime/pipeline.py runs the stages' schedule, the point-to-point
// transfers (weft_runtime/transfer.py) and the optimizer.
//
//===----------------------------------------------------------------------===//

#include "PyLiteral.h"
#include "Spmd/IR/SpmdDialect.h"
#include "Spmd/IR/SpmdOps.h"
#include "TorchWriter.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

using namespace weft;
using namespace weft::emit;

namespace {

/// One stage's emission.
struct StagePart {
  mlir::ModuleOp module;
  llvm::SmallVector<int64_t, 4> nodes;
  std::unique_ptr<spmd::ShardGeometry> geo;
  std::unique_ptr<TorchWriter> writer;
  StageIO io;
};

std::string transferList(const std::vector<TransferSpec> &list) {
  std::string out = "[";
  for (auto [i, t] : llvm::enumerate(list))
    out += (i ? ", " : "") + ("Transfer(" + pyTuple(t.shape) + ", " +
                              pyString(t.type) + ", " + t.dist + ")");
  return out + "]";
}

void printHeader(llvm::raw_ostream &os, mlir::ModuleOp plan,
                 const TorchEmitOptions &options,
                 llvm::ArrayRef<StagePart> stages, int64_t microBatches,
                 llvm::StringRef schedule) {
  os << "#!/usr/bin/env python3\n";
  os << "\"\"\"" << options.title
     << ": a pipelined spmd plan as the PyTorch program every rank\nruns.\n\n";
  os << llvm::formatv("{0} stages, {1} micro-batch(es) under the {2} "
                      "schedule (docs/Pipeline.md):\n",
                      stages.size(), microBatches, schedule);
  for (auto [s, part] : llvm::enumerate(stages)) {
    std::string nodes;
    for (int64_t n : part.nodes)
      nodes += (nodes.empty() ? "" : ", ") + std::to_string(n);
    os << llvm::formatv(
        "  stage {0}: mesh node(s) {1}, {2} devices, {3} "
        "local ops, {4} collectives,\n    {5} parameters, {6} "
        "send(s), {7} recv(s).\n",
        s, nodes, part.geo->numDevices(), part.writer->localCount(),
        part.writer->collectiveCount(), part.writer->paramCount(),
        part.io.sends.size(), part.io.recvs.size());
  }
  os << "Written by weft-translate --spmd-to-torch; the runtime it calls is "
        "weft_runtime/\n(docs/Emit.md). Run every rank under torchrun, e.g. "
        "../launch/local.sh, or\nsee `python program.py --help`.\n\"\"\"\n\n";
  os << "import os\nimport sys\n\n"
        "sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n\n"
        "from weft_runtime import ops  # noqa: E402,F401\n"
        "from weft_runtime import recipes as R  # noqa: E402,F401\n"
        "from weft_runtime.driver import Constant, InputSpec, ParamSpec  # "
        "noqa: E402,F401\n"
        "from weft_runtime.mesh import DeviceClass, Mesh  # noqa: E402\n"
        "from weft_runtime.pipeline import Pipeline, Stage, Transfer, main  "
        "# noqa: E402\n"
        "from weft_runtime.recompute import recompute  # noqa: E402,F401\n\n";
  // The whole cluster's mesh: the world the ranks join.
  auto mesh = spmd::getMesh(plan);
  os << "MESH = ";
  printMeshLiteral(os, mesh, mesh.getNumNodes());
  os << "\n";
  auto fingerprint = plan->getAttrOfType<mlir::StringAttr>("spmd.fingerprint");
  os << "FINGERPRINT = "
     << pyString(fingerprint ? fingerprint.getValue() : options.title)
     << "\nMICRO_BATCHES = " << microBatches
     << "\nSCHEDULE = " << pyString(schedule) << "\n\n";
}

} // namespace

llvm::Error weft::emit::emitPipelineProgram(mlir::ModuleOp plan,
                                            const TorchEmitOptions &options,
                                            llvm::raw_ostream &os) {
  int64_t microBatches = 1;
  if (auto mb = plan->getAttrOfType<mlir::IntegerAttr>("spmd.micro_batches"))
    microBatches = mb.getInt();
  auto schedule = plan->getAttrOfType<mlir::StringAttr>("spmd.schedule");
  if (!schedule ||
      (schedule.getValue() != "1f1b" && schedule.getValue() != "gpipe"))
    return badInput("the pipelined plan's spmd.schedule is not \"1f1b\" or "
                    "\"gpipe\"");
  if (!spmd::getMesh(plan))
    return badInput("the plan has no 'spmd.mesh' attribute");
  std::vector<StagePart> stages;
  for (mlir::ModuleOp module : spmd::getStages(plan)) {
    StagePart part;
    part.module = module;
    auto nodes = module->getAttrOfType<mlir::DenseI64ArrayAttr>("spmd.nodes");
    if (!nodes)
      return badInput("stage {0} has no spmd.nodes", stages.size());
    part.nodes.assign(nodes.asArrayRef().begin(), nodes.asArrayRef().end());
    auto geo = spmd::ShardGeometry::get(module);
    if (!geo)
      return geo.takeError();
    part.geo = std::make_unique<spmd::ShardGeometry>(std::move(*geo));
    stages.push_back(std::move(part));
  }
  if (stages.empty())
    return badInput("the pipelined plan has no stage modules");
  // Stage by stage, the names continuing from the previous stage's.
  for (size_t s = 0; s < stages.size(); ++s) {
    StagePart &part = stages[s];
    part.writer =
        std::make_unique<TorchWriter>(part.module, *part.geo, options);
    part.writer->setStage(&part.io);
    if (s)
      part.writer->inheritNames(*stages[s - 1].writer);
    if (auto err = part.writer->run()) {
      std::string where = "stage " + std::to_string(s);
      return llvm::handleErrors(std::move(err), [&](const WeftError &e) {
        return llvm::Error(llvm::make_error<WeftError>(
            e.getCode(), where + ": " + e.getMessage()));
      });
    }
  }

  for (auto [s, part] : llvm::enumerate(stages))
    if (part.writer->inputSpecs().size() !=
        stages.front().writer->inputSpecs().size())
      return badInput("stage {0}'s @main takes {1} input(s), stage 0's {2}: "
                      "every stage takes the model's inputs",
                      s, part.writer->inputSpecs().size(),
                      stages.front().writer->inputSpecs().size());
  // Every stage draws a seeded integer input alike: below the least bound
  // any stage's uses put on it.
  for (size_t i = 0; i < stages.front().writer->inputSpecs().size(); ++i) {
    std::optional<int64_t> bound;
    for (StagePart &part : stages) {
      const InputSpec &in = part.writer->inputSpecs()[i];
      if (in.bounded && (!bound || in.bound < *bound))
        bound = in.bound;
    }
    if (bound)
      for (StagePart &part : stages)
        part.writer->inputSpecs()[i].bound = *bound;
  }

  printHeader(os, plan, options, stages, microBatches, schedule.getValue());
  stages.back().writer->printNames(os);
  for (auto [s, part] : llvm::enumerate(stages)) {
    std::string prefix = "STAGE" + std::to_string(s) + "_";
    os << "\n\n# Stage " << s << ": mesh node(s) " << pyTuple(part.nodes)
       << ".\n";
    part.writer->printMesh(os, prefix);
    part.writer->printSpecs(os, prefix);
    os << "\n\n";
    part.writer->printForward(os, "stage" + std::to_string(s), "recv");
  }
  os << "\n\nPLAN = Pipeline(MESH, [";
  for (auto [s, part] : llvm::enumerate(stages)) {
    std::string p = "STAGE" + std::to_string(s) + "_";
    int64_t bucket = spmd::SpmdDialect::getGradientBucketBytes(part.module, -1);
    if (bucket < 0)
      bucket = spmd::SpmdDialect::getGradientBucketBytes(plan, -1);
    os << (s ? ",\n" : "\n") << "    Stage(" << s << ", " << pyTuple(part.nodes)
       << ", " << p << "MESH, " << p << "SEGMENTS, " << p << "INPUTS, " << p
       << "PARAMETERS, stage" << s
       << ",\n          loss_dist=" << part.writer->lossDistName()
       << ", sends=" << transferList(part.io.sends)
       << ",\n          recvs=" << transferList(part.io.recvs)
       << ", axis_sets=" << part.writer->axisSetsText()
       << ", bucket_bytes=" << (bucket < 0 ? "None" : std::to_string(bucket))
       << ")";
  }
  os << "],\n    micro_batches=MICRO_BATCHES, schedule=SCHEDULE, "
        "fingerprint=FINGERPRINT)\n\nif __name__ == \"__main__\":\n    "
        "main(PLAN)\n";
  return llvm::Error::success();
}
