//===- CellsOutput.h - weftc --cells: the Cell table ---------------*- C++
//-*-===//
//
// `weftc MODEL --cluster SPEC --cells --global-batch N [--max-stages K]
// [--json]`: every Cell of the cluster (lib/Cell's enumerateCells)
// estimated by the synthesizer, as a table (or JSON), with the best Cell
// per GPU type and overall (docs/Cells.md).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_CELLSOUTPUT_H
#define WEFT_TOOLS_WEFTC_CELLSOUTPUT_H

#include "weft/Cluster/ClusterSpec.h"
#include "weft/Eval/Evaluator.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

namespace weft {

/// weftc's Cell flags.
struct CellFlags {
  explicit CellFlags(llvm::cl::OptionCategory &category);
  llvm::cl::opt<bool> cells, full, prune, homogeneous;
  llvm::cl::opt<unsigned> maxStages;
};

/// Estimates the Cells of `model` (an ONNX file at `globalBatch` samples per
/// iteration) on `spec` and prints the table, or JSON with `json`. Errors:
/// bad input (exit 1) for the flags or the model.
llvm::Error printCells(const CellFlags &flags, llvm::StringRef model,
                       int64_t globalBatch, const ClusterSpec &spec,
                       const EvalOptions &eval, bool json,
                       llvm::raw_ostream &os);

} // namespace weft

#endif // WEFT_TOOLS_WEFTC_CELLSOUTPUT_H
