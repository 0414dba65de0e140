//===- PlanOutput.cpp - Writing plan files --------------------------------===//

#include "PlanOutput.h"
#include "weft/Emit/Launch.h"
#include "weft/Emit/TorchProgram.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace weft;

llvm::Error weft::writePlanFiles(llvm::StringRef dir, mlir::ModuleOp plan,
                                 const ClusterSpec &spec,
                                 const PlanEstimate &estimate,
                                 const PlanContext &context) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return badInput("cannot create '{0}': {1}", dir.str(), ec.message());
  auto layout = MeshLayout::get(plan, spec);
  if (!layout)
    return layout.takeError();
  llvm::SmallString<128> mlirPath(dir), jsonPath(dir);
  llvm::sys::path::append(mlirPath, "plan.mlir");
  llvm::sys::path::append(jsonPath, "plan.json");
  if (auto err = writeFile(mlirPath, [&](llvm::raw_ostream &os) {
        plan->print(os);
        os << "\n";
      }))
    return err;
  return writeFile(jsonPath, [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", planToJSON(plan, *layout, estimate, context))
       << "\n";
  });
}

llvm::Error weft::writeRunnableFiles(llvm::StringRef dir, mlir::ModuleOp plan,
                                     mlir::ModuleOp graph,
                                     llvm::StringRef title) {
  TorchEmitOptions options;
  options.graph = graph;
  options.title = title.str();
  llvm::SmallString<128> torchDir(dir);
  llvm::sys::path::append(torchDir, "torch");
  if (auto err = writeTorchDir(plan, options, torchDir))
    return err;
  llvm::SmallString<128> launchDir(dir);
  llvm::sys::path::append(launchDir, "launch");
  return writeLaunchDir(plan, LaunchOptions(), launchDir);
}
