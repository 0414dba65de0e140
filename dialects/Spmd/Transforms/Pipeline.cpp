//===- Pipeline.cpp - spmd-synthesis-pipeline -----------------------------===//
//
// The synthesis stages as separate passes, with the IR between them
// written to `dump-dir` (01-graph.mlir, 02-search.mlir, ...): the search at
// ratios proportional to device speed, the ratio LP, the per-collective
// variant choice, the integer sizes. One round of the alternation that
// spmd-synthesize runs to a fixed point, stage by stage.
//
//===----------------------------------------------------------------------===//

#include "Spmd/Transforms/Pipeline.h"
#include "Spmd/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "weft/Synth/Synthesize.h"

using namespace weft;

namespace {
struct PipelineOptions : public mlir::PassPipelineOptions<PipelineOptions> {
  Option<std::string> cluster{*this, "cluster",
                              llvm::cl::desc("path of the cluster spec YAML")};
  Option<std::string> dtype{*this, "dtype",
                            llvm::cl::desc("fp32 | bf16 | fp16"),
                            llvm::cl::init("fp32")};
  Option<int64_t> align{*this, "align",
                        llvm::cl::desc("integer shard sizes multiple of N"),
                        llvm::cl::init(1)};
  Option<uint64_t> maxExpansions{
      *this, "max-expansions",
      llvm::cl::desc("search budget in expansions (0: default)"),
      llvm::cl::init(0)};
  Option<std::string> dumpDir{
      *this, "dump-dir",
      llvm::cl::desc("write the IR after every stage to this directory")};
};
} // namespace

void spmd::registerSynthesisPipeline() {
  mlir::PassPipelineRegistration<PipelineOptions>(
      "spmd-synthesis-pipeline",
      "graph program -> spmd plan: search, ratio LP, collective choice, "
      "integer sizes (each stage dumped with dump-dir)",
      [](mlir::OpPassManager &pm, const PipelineOptions &o) {
        unsigned stage = 0;
        auto dump = [&](llvm::StringRef name) {
          DumpPlanOptions d;
          d.dir = o.dumpDir;
          d.name = stageDumpName(++stage, name);
          pm.addPass(createDumpPlan(d));
        };
        dump("graph");
        SynthesizeOptions s;
        s.cluster = o.cluster;
        s.dtype = o.dtype;
        s.fixedRatios = true;
        s.maxExpansions = o.maxExpansions;
        // The baselines compete with the finished plan (spmd-synthesize,
        // weftc -o), not with one stage's.
        s.baselines = false;
        pm.addPass(createSynthesize(s));
        dump("search");
        AssignRatiosOptions a;
        a.cluster = o.cluster;
        a.dtype = o.dtype;
        pm.addPass(createAssignRatios(a));
        dump("assign-ratios");
        SelectCollectivesOptions c;
        c.cluster = o.cluster;
        c.dtype = o.dtype;
        pm.addPass(createSelectCollectives(c));
        dump("select-collectives");
        IntegerizeOptions i;
        i.cluster = o.cluster;
        i.dtype = o.dtype;
        i.align = o.align;
        pm.addPass(createIntegerize(i));
        dump("integerize");
      });
}
