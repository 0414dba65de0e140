//===- ModelSummary.h - What a graph program holds and costs -----*- C++
//-*-===//
//
// The summary `weftc` prints for a model without a plan: ops by kind,
// parameters, buffers, activations kept for the backward pass and training
// FLOPs per step, all from the graph dialect's CostOpInterface.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_ANALYSIS_MODELSUMMARY_H
#define WEFT_ANALYSIS_MODELSUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include <map>
#include <string>

namespace weft {

struct ModelSummary {
  /// Op count per op name without the dialect prefix ("matmul").
  std::map<std::string, unsigned> opsByKind;
  unsigned numOps = 0;
  unsigned parameterTensors = 0, bufferTensors = 0;
  int64_t parameterElements = 0, bufferElements = 0;
  double parameterBytes = 0, bufferBytes = 0;
  /// Bytes of activations the backward pass needs kept, per step.
  double keptActivationBytes = 0;
  double forwardFlops = 0, backwardFlops = 0;
  /// Forward + backward FLOPs per op class ("matmul", "elementwise", ...).
  std::map<std::string, double> trainingFlopsByClass;

  double trainingFlops() const { return forwardFlops + backwardFlops; }
};

/// Summarises the `main` function of a graph-dialect module.
ModelSummary summarizeModel(mlir::ModuleOp module);

/// Prints the summary as aligned text with units.
void printModelSummary(const ModelSummary &summary, llvm::raw_ostream &os);

/// The summary as JSON (numbers in base units: bytes, FLOP).
llvm::json::Value toJSON(const ModelSummary &summary);

} // namespace weft

#endif // WEFT_ANALYSIS_MODELSUMMARY_H
