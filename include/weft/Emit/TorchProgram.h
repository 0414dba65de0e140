//===- TorchProgram.h - An spmd plan as a PyTorch program -------*- C++ -*-===//
//
// `weft-translate --spmd-to-torch` and `weftc -o DIR` (DIR/torch/): the
// Python program every rank of a plan runs under torchrun. The program
// holds what is particular to the plan (mesh, segments, inputs,
// parameters, the forward pass as one line per plan op); everything else is
// python/weft_runtime, which is embedded in the tools and written beside
// the program. docs/Emit.md is the reference.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EMIT_TORCHPROGRAM_H
#define WEFT_EMIT_TORCHPROGRAM_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace weft {

struct TorchEmitOptions {
  /// The graph program the plan was made from (weftc's graph.mlir), or
  /// null: it names the program's inputs (else arg0, arg1, ...) and gives
  /// the parameters' values of a model imported --with-weights.
  mlir::ModuleOp graph;
  /// What the program's docstring calls the plan (a file or model name).
  std::string title;
};

/// Writes the program (program.py) for `plan`; a pipelined plan
/// (docs/Pipeline.md, "Emitting") is one program whose ranks run their
/// stage. Errors (exit code 1): a plan the program cannot express
/// (spmd.send/spmd.recv outside stage modules, a local without a graph op);
/// exit code 3: a local whose recipe cannot run on the shards the plan
/// gives it.
llvm::Error emitTorchProgram(mlir::ModuleOp plan,
                             const TorchEmitOptions &options,
                             llvm::raw_ostream &os);

/// Writes `dir`/program.py, `dir`/weft_runtime/ (the runtime) and, when
/// the graph holds parameter values, `dir`/weights/<name>.npy.
llvm::Error writeTorchDir(mlir::ModuleOp plan, const TorchEmitOptions &options,
                          llvm::StringRef dir);

/// The runtime's files as embedded at build time: (relative path, text).
llvm::ArrayRef<std::pair<const char *, const char *>> runtimeFiles();

} // namespace weft

#endif // WEFT_EMIT_TORCHPROGRAM_H
