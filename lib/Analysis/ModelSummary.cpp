//===- ModelSummary.cpp - What a graph program holds and costs ------------===//

#include "weft/Analysis/ModelSummary.h"
#include "Graph/IR/GraphOps.h"
#include "weft/Support/Units.h"
#include "llvm/Support/FormatVariadic.h"

using namespace weft;
namespace g = weft::graph;

ModelSummary weft::summarizeModel(mlir::ModuleOp module) {
  ModelSummary s;
  module.walk([&](mlir::Operation *op) {
    if (!llvm::isa<g::GraphDialect>(op->getDialect()))
      return;
    auto type = op->getResult(0).getType().cast<mlir::RankedTensorType>();
    g::TensorShape shape = g::TensorShape::of(type);
    if (llvm::isa<g::ParameterOp>(op)) {
      ++s.parameterTensors;
      s.parameterElements += shape.numElements();
      s.parameterBytes += shape.bytes();
      return;
    }
    if (llvm::isa<g::BufferOp>(op)) {
      ++s.bufferTensors;
      s.bufferElements += shape.numElements();
      s.bufferBytes += shape.bytes();
      return;
    }
    ++s.numOps;
    ++s.opsByKind[op->getName().stripDialect().str()];
    auto costOp = llvm::dyn_cast<g::CostOpInterface>(op);
    if (!costOp)
      return;
    g::OpCost cost = costOp.getGlobalCost();
    s.forwardFlops += cost.forwardFlops;
    s.backwardFlops += cost.backwardFlops;
    s.keptActivationBytes += cost.keptBytes;
    s.trainingFlopsByClass[g::stringifyOpClass(cost.opClass).str()] +=
        cost.forwardFlops + cost.backwardFlops;
  });
  return s;
}

void weft::printModelSummary(const ModelSummary &s, llvm::raw_ostream &os) {
  os << llvm::formatv("ops:                 {0} (by kind below)\n", s.numOps);
  for (const auto &[kind, count] : s.opsByKind)
    os << llvm::formatv("  {0,-18} {1,6}\n", kind, count);
  os << llvm::formatv("parameters:          {0} in {1} tensors ({2})\n",
                      formatSI(s.parameterElements, ""), s.parameterTensors,
                      formatBytes(s.parameterBytes));
  os << llvm::formatv("buffers:             {0} in {1} tensors ({2})\n",
                      formatSI(s.bufferElements, ""), s.bufferTensors,
                      formatBytes(s.bufferBytes));
  os << llvm::formatv("activations kept:    {0} per step\n",
                      formatBytes(s.keptActivationBytes));
  os << llvm::formatv("training FLOPs:      {0} per step (forward {1}, "
                      "backward {2})\n",
                      formatSI(s.trainingFlops(), "FLOP"),
                      formatSI(s.forwardFlops, "FLOP"),
                      formatSI(s.backwardFlops, "FLOP"));
  for (const auto &[cls, flops] : s.trainingFlopsByClass) {
    if (flops == 0)
      continue;
    os << llvm::formatv("  {0,-18} {1,12} ({2:F1}%)\n", cls,
                        formatSI(flops, "FLOP"),
                        100.0 * flops / std::max(s.trainingFlops(), 1.0));
  }
}

llvm::json::Value weft::toJSON(const ModelSummary &s) {
  llvm::json::Object ops, flopsByClass;
  for (const auto &[kind, count] : s.opsByKind)
    ops[kind] = count;
  for (const auto &[cls, flops] : s.trainingFlopsByClass)
    flopsByClass[cls] = flops;
  return llvm::json::Object{
      {"ops", s.numOps},
      {"ops_by_kind", std::move(ops)},
      {"parameters", llvm::json::Object{{"tensors", s.parameterTensors},
                                        {"elements", s.parameterElements},
                                        {"bytes", s.parameterBytes}}},
      {"buffers", llvm::json::Object{{"tensors", s.bufferTensors},
                                     {"elements", s.bufferElements},
                                     {"bytes", s.bufferBytes}}},
      {"activation_bytes_kept", s.keptActivationBytes},
      {"forward_flops", s.forwardFlops},
      {"backward_flops", s.backwardFlops},
      {"training_flops", s.trainingFlops()},
      {"training_flops_by_class", std::move(flopsByClass)},
  };
}
