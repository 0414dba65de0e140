//===- OnnxImport.h - ONNX model → graph dialect -----------------*- C++
//-*-===//
//
// The importer's public face. It is the only header of lib/Import that other
// code includes, and it includes no ONNX or protobuf header.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_IMPORT_ONNXIMPORT_H
#define WEFT_IMPORT_ONNXIMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace weft {

/// How to turn a model's outputs into the scalar loss a training step needs.
enum class ProxyLoss { None, Sum, Mean };

struct ImportOptions {
  /// The value of every symbolic batch dimension (dim 0 of an input). Unset:
  /// a symbolic batch is an error that suggests --global-batch.
  std::optional<int64_t> batch;
  /// Explicit shapes for inputs, overriding the model's (--input-shape).
  llvm::StringMap<std::vector<int64_t>> inputShapes;
  /// Names of float tensors to treat as buffers rather than parameters.
  std::set<std::string> frozen;
  /// Copy initializer data into the parameters (--with-weights).
  bool withWeights = false;
  /// What to do when no output is a scalar loss (--loss).
  ProxyLoss proxyLoss = ProxyLoss::None;
  /// Fuse the erf form of GELU into graph.gelu after import
  /// (graph-fuse-gelu; false: --no-fuse).
  bool fuse = true;
  /// Return every graph output from @main, in order (result attribute
  /// `graph.output` = its name), instead of a scalar loss: a forward-only
  /// program for `weft-run --forward`. No loss is needed.
  bool allOutputs = false;
};

/// Facts about the import that tools report.
struct ImportReport {
  int64_t opsetVersion = 0;
  std::string producer;
  /// Groups of tensor names that denote one shared parameter (initializers
  /// aliased through Identity); the first name is the initializer.
  std::vector<std::vector<std::string>> sharedParameters;
  /// Whether the model keeps its weights in external data files (never read).
  bool externalData = false;
  /// Whether the parameters were given as inputs (weightless model).
  bool weightless = false;
  /// The name of the output used as the loss, or the proxy loss added.
  std::string lossName;
  /// Number of ONNX nodes folded into constants (shape computations).
  unsigned foldedNodes = 0;
  /// Nodes rewritten from opset 18+ forms into opset-17 ones (OpsetBridge).
  unsigned bridgedNodes = 0;
  /// Number of GELU chains fused into graph.gelu.
  unsigned fusedGelus = 0;
  /// The batch option set the (symbolic) batch dim of an input: the model
  /// can be imported at another batch, e.g. one micro-batch of a step.
  bool batchSymbolic = false;
};

/// Imports the ONNX model at `path` (binary `.onnx` or textual `.onnxtext`)
/// into a module holding one `func.func @main` in the graph dialect. Errors
/// carry exit code 1 and one line naming the problem.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path,
               const ImportOptions &options, ImportReport *report = nullptr);

/// Registers the dialects the importer produces.
void registerImportDialects(mlir::MLIRContext &context);

} // namespace weft

#endif // WEFT_IMPORT_ONNXIMPORT_H
