//===- ModelSource.h - A job's model at its global batch ----------*- C++
//-*-===//
//
// What a scheduler's job type names (docs/Cells.md, "Job types"): a zoo
// model with options and its global batch, `bert:layers=24;batch=32`, or an
// ONNX file with its batch, `models/net.onnx;batch=64`. ModelGraphs imports
// it once per gradient-accumulation micro-batch count and keeps the graphs.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CELL_MODELSOURCE_H
#define WEFT_CELL_MODELSOURCE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "weft/Zoo/Zoo.h"
#include "llvm/Support/Error.h"
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace weft {
namespace cell {

/// A parsed job type.
struct JobModelSpec {
  /// A zoo model (`zoo` holds its options) or an ONNX file at `path`.
  std::optional<zoo::ZooOptions> zoo;
  std::string path;
  /// Global batch of one iteration, samples.
  int64_t batch = 0;
};

/// Parses "FAMILY[:KEY=VALUE[;KEY=VALUE...]];batch=N" (zoo sizes by their
/// weft-zoo flag names: layers, hidden, heads, ffn, seq, vocab, experts,
/// capacity-factor, image, classes) or "PATH.onnx;batch=N". `batch` is
/// required. Errors: bad input naming the job type.
llvm::Expected<JobModelSpec> parseJobModel(llvm::StringRef jobType);

/// A model imported at its global batch and, on demand, at batch / m for
/// gradient accumulation over m micro-batches.
class ModelGraphs {
public:
  /// Imports `spec` (a zoo model is written to a temporary file first).
  /// Errors: bad input (an unreadable or unimportable model).
  static llvm::Expected<std::unique_ptr<ModelGraphs>>
  open(mlir::MLIRContext &context, const JobModelSpec &spec);
  ~ModelGraphs();

  /// The graph of one micro-batch when each iteration runs `m` of them
  /// (m = 1: the whole batch), with `spmd.micro_batches` = m. Errors: m
  /// does not divide the batch, the batch is not symbolic, or the import
  /// fails.
  llvm::Expected<mlir::ModuleOp> graph(unsigned m);

  /// A fresh import of one micro-batch's graph for `m` micro-batches (the
  /// model at batch / m; no attributes added), for pipeline synthesis.
  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> importAt(int64_t m);

  int64_t globalBatch() const { return batch; }
  /// The model can be imported at another batch (symbolic batch dim).
  bool batchSymbolic() const { return symbolic; }
  /// Training FLOPs of one iteration (whole batch).
  double trainingFlops() const { return flops; }
  /// Structural fingerprint of the whole-batch graph.
  const std::string &fingerprint() const { return print; }

private:
  ModelGraphs(mlir::MLIRContext &context) : context(context) {}
  mlir::MLIRContext &context;
  std::string path;
  bool temporary = false, symbolic = false;
  int64_t batch = 0;
  double flops = 0;
  std::string print;
  std::map<unsigned, mlir::OwningOpRef<mlir::ModuleOp>> graphs;
};

} // namespace cell
} // namespace weft

#endif // WEFT_CELL_MODELSOURCE_H
