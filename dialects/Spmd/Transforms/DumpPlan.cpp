//===- DumpPlan.cpp - spmd-dump -------------------------------------------===//
//
// Writes the module to dir/name.mlir, unchanged: the synthesis pipeline's
// view of the IR between its stages.
//
//===----------------------------------------------------------------------===//

#include "PassSupport.h"
#include "Spmd/Transforms/Passes.h"
#include "weft/Support/Error.h"
#include "weft/Support/FileOutput.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace weft::spmd {
#define GEN_PASS_DEF_DUMPPLAN
#include "Spmd/Transforms/Passes.h.inc"
} // namespace weft::spmd

using namespace weft;

namespace {
struct DumpPlanPass : public spmd::impl::DumpPlanBase<DumpPlanPass> {
  using DumpPlanBase::DumpPlanBase;

  void runOnOperation() override {
    markAllAnalysesPreserved();
    if (dir.empty())
      return;
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      spmd::emitPassError(
          getOperation(), getArgument(),
          badInput("cannot create '{0}': {1}", dir.getValue(), ec.message()));
      return signalPassFailure();
    }
    llvm::SmallString<128> path(dir.getValue());
    llvm::sys::path::append(path, name + ".mlir");
    if (auto err = writeFile(path, [&](llvm::raw_ostream &os) {
          getOperation()->print(os);
          os << "\n";
        })) {
      spmd::emitPassError(getOperation(), getArgument(), std::move(err));
      return signalPassFailure();
    }
  }
};
} // namespace
