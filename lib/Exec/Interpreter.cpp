//===- Interpreter.cpp - Single-device reference run of a graph program ---===//

#include "weft/Exec/Interpreter.h"
#include "Graph/IR/GraphOps.h"
#include "OpUtils.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;

llvm::Expected<mlir::func::FuncOp> weft::exec::findMain(mlir::ModuleOp module) {
  auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main || main.isExternal())
    return badInput("the module has no func.func @main (expected a graph "
                    "program)");
  auto results = main.getFunctionType().getResults();
  auto loss = results.size() == 1
                  ? results[0].dyn_cast<mlir::RankedTensorType>()
                  : mlir::RankedTensorType();
  if (!loss || loss.getRank() != 0 ||
      !loss.getElementType().isa<mlir::FloatType>())
    return badInput("@main must return one scalar float loss, found {0} "
                    "results",
                    results.size());
  return main;
}

llvm::Expected<mlir::func::FuncOp>
weft::exec::findForwardMain(mlir::ModuleOp module) {
  auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main || main.isExternal())
    return badInput("the module has no func.func @main (expected a graph "
                    "program)");
  for (auto [i, type] : llvm::enumerate(main.getFunctionType().getResults())) {
    auto ranked = type.dyn_cast<mlir::RankedTensorType>();
    if (!ranked || !elementTypeOf(ranked))
      return badInput("output {0} ('{1}') of @main has type {2}; a forward "
                      "run returns float, integer or bool tensors",
                      i, outputName(main, i), type);
  }
  return main;
}

std::string weft::exec::outputName(mlir::func::FuncOp main, unsigned i) {
  if (auto name = main.getResultAttrOfType<mlir::StringAttr>(i, "graph.output"))
    return name.str();
  return "result" + std::to_string(i);
}

std::string weft::exec::inputName(mlir::func::FuncOp main, unsigned i) {
  if (auto name = main.getArgAttrOfType<mlir::StringAttr>(i, "graph.input"))
    return name.str();
  return "arg" + std::to_string(i);
}

GraphInterpreter::GraphInterpreter(mlir::func::FuncOp main, uint64_t seed)
    : main(main), seed(seed) {
  uint64_t next = 0;
  main.walk([&](g::DropoutOp op) { dropoutIds[op] = next++; });
}

std::vector<std::string> GraphInterpreter::getParameterNames() {
  std::vector<std::string> names;
  llvm::StringSet<> seen;
  main.walk([&](g::ParameterOp op) {
    if (seen.insert(op.getName()).second)
      names.push_back(op.getName().str());
  });
  return names;
}

const Tensor *GraphInterpreter::lookup(mlir::Value v) const {
  auto it = values.find(v);
  return it == values.end() ? nullptr : &it->second;
}

llvm::SmallVector<const Tensor *, 4>
GraphInterpreter::operandsOf(mlir::Operation &op) const {
  llvm::SmallVector<const Tensor *, 4> operands;
  auto it = adjusted.find(&op);
  for (auto [i, v] : llvm::enumerate(op.getOperands())) {
    if (it != adjusted.end() && i < it->second.size() &&
        it->second[i].isValid())
      operands.push_back(&it->second[i]);
    else
      operands.push_back(lookup(v));
  }
  return operands;
}

void GraphInterpreter::report(llvm::StringRef phase, size_t done,
                              size_t total) {
  if (progress)
    progress(llvm::formatv("{0} {1}/{2} ops", phase, done, total).str());
}

/// Checks a bound tensor against the declared type and converts it to it.
static llvm::Error conform(Tensor &t, mlir::Type type, llvm::StringRef what,
                           llvm::StringRef name) {
  auto ranked = type.cast<mlir::RankedTensorType>();
  if (t.getShape() != ranked.getShape())
    return badInput("{0} '{1}' has shape {2}, the model expects {3}", what,
                    name, shapeString(t.getShape()),
                    shapeString(ranked.getShape()));
  std::optional<ElementType> et = elementTypeOf(ranked);
  if (!et)
    return badInput("{0} '{1}' has an unsupported element type", what, name);
  if (isFloatType(*et) != t.isFloat())
    return badInput("{0} '{1}' holds {2} values, the model expects {3}", what,
                    name, t.isFloat() ? "float" : "integer",
                    isFloatType(*et) ? "float" : "integer");
  t.convertTo(*et);
  return llvm::Error::success();
}

llvm::Error GraphInterpreter::bindLeaf(mlir::Operation *op,
                                       const Bindings &bindings) {
  bool isParameter = llvm::isa<g::ParameterOp>(op);
  llvm::StringRef name = isParameter ? llvm::cast<g::ParameterOp>(op).getName()
                                     : llvm::cast<g::BufferOp>(op).getName();
  const llvm::StringMap<Tensor> &table =
      isParameter ? bindings.parameters : bindings.buffers;
  const char *what = isParameter ? "parameter" : "buffer";
  auto it = table.find(name);
  if (it == table.end())
    return badInput("no value bound to {0} '{1}'", what, name);
  Tensor t = it->second;
  if (auto err = conform(t, op->getResult(0).getType(), what, name))
    return err;
  values[op->getResult(0)] = std::move(t);
  if (isParameter)
    needsGrad.insert(op->getResult(0));
  return llvm::Error::success();
}

llvm::Error GraphInterpreter::forward(const Bindings &bindings) {
  values.clear();
  returned.clear();
  adjusted.clear();
  needsGrad.clear();
  parameterGrads.clear();
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    std::string name = inputName(main, i);
    auto it = bindings.inputs.find(name);
    if (it == bindings.inputs.end())
      return badInput("no value bound to input '{0}'", name);
    Tensor t = it->second;
    if (auto err = conform(t, main.getArgument(i).getType(), "input", name))
      return err;
    values[main.getArgument(i)] = std::move(t);
  }
  mlir::Block &body = main.getBody().front();
  size_t total = body.getOperations().size(), done = 0;
  llvm::SmallVector<const Tensor *> operands;
  llvm::SmallVector<Tensor> results;
  for (mlir::Operation &op : body) {
    report("forward", ++done, total);
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      returned.assign(ret.getOperands().begin(), ret.getOperands().end());
      break;
    }
    if (llvm::isa<g::ParameterOp, g::BufferOp>(op)) {
      if (auto err = bindLeaf(&op, bindings))
        return err;
      continue;
    }
    operands.clear();
    results.clear();
    bool anyNeedsGrad = false;
    for (mlir::Value v : op.getOperands()) {
      operands.push_back(lookup(v));
      anyNeedsGrad |= needsGrad.contains(v);
    }
    if (adjust) {
      llvm::SmallVector<Tensor, 2> replacement;
      if (adjust(op, operands, replacement)) {
        auto &kept = adjusted[&op] = std::move(replacement);
        for (auto [i, t] : llvm::enumerate(kept))
          if (i < operands.size() && t.isValid())
            operands[i] = &t;
      }
    }
    OpContext ctx;
    ctx.seed = seed;
    ctx.dropoutId = dropoutIds.lookup(&op);
    if (auto err = runOpForward(&op, operands, ctx, results))
      return err;
    for (auto [value, tensor] : llvm::zip(op.getResults(), results)) {
      if (anyNeedsGrad && tensor.isFloat())
        needsGrad.insert(value);
      values[value] = std::move(tensor);
    }
  }
  lossValue = {};
  loss = std::nan("");
  if (returned.size() != 1)
    return llvm::Error::success();
  auto type = returned[0].getType().dyn_cast<mlir::RankedTensorType>();
  if (!type || type.getRank() != 0 ||
      !type.getElementType().isa<mlir::FloatType>())
    return llvm::Error::success();
  lossValue = returned[0];
  loss = lookup(lossValue)->at(0);
  // A loss op's value in double: central differences of the loss need more
  // than f32's 7 digits.
  if (mlir::Operation *def = lossValue.getDefiningOp()) {
    llvm::SmallVector<const Tensor *> args;
    for (mlir::Value v : def->getOperands())
      args.push_back(lookup(v));
    if (std::optional<double> precise = preciseLoss(def, args))
      loss = *precise;
  }
  return llvm::Error::success();
}

/// into += g (same shapes).
static void accumulate(Tensor &into, const Tensor &g) {
  float *o = into.floats();
  const float *in = g.floats();
  for (int64_t i = 0, e = into.getNumElements(); i < e; ++i)
    o[i] += in[i];
}

llvm::Error GraphInterpreter::gradientsOf(
    mlir::Operation &op, const llvm::DenseMap<mlir::Value, Tensor> &grads,
    llvm::SmallVectorImpl<Tensor> &operandGrads) const {
  llvm::SmallVector<const Tensor *> operands(operandsOf(op)), results,
      resultGrads;
  llvm::SmallVector<Tensor> zeros;
  zeros.reserve(op.getNumResults());
  for (mlir::Value r : op.getResults()) {
    const Tensor *value = lookup(r);
    results.push_back(value);
    auto it = grads.find(r);
    if (it != grads.end())
      resultGrads.push_back(&it->second);
    else if (value->isFloat())
      resultGrads.push_back(
          &zeros.emplace_back(Tensor::zeros(value->getShape())));
    else
      resultGrads.push_back(nullptr);
  }
  OpContext ctx;
  ctx.seed = seed;
  ctx.dropoutId = dropoutIds.lookup(&op);
  return runOpBackward(&op, operands, results, resultGrads, ctx, operandGrads);
}

llvm::SmallVector<const Tensor *> GraphInterpreter::getOutputs() const {
  llvm::SmallVector<const Tensor *> outputs;
  for (mlir::Value v : returned)
    outputs.push_back(lookup(v));
  return outputs;
}

llvm::Error GraphInterpreter::backward() {
  if (returned.empty() && !lossValue)
    return makeError(ExitInternal, "backward() called before forward()");
  if (!lossValue)
    return badInput("@main returns no scalar float loss to differentiate");
  llvm::DenseMap<mlir::Value, Tensor> grads;
  grads[lossValue] = Tensor::filled({}, 1.0f);
  mlir::Block &body = main.getBody().front();
  size_t total = body.getOperations().size(), done = 0;
  llvm::SmallVector<Tensor> operandGrads;
  parameterGrads.clear();
  for (mlir::Operation &op : llvm::reverse(body)) {
    report("backward", ++done, total);
    if (auto param = llvm::dyn_cast<g::ParameterOp>(op)) {
      auto it = grads.find(param.getResult());
      Tensor grad = it != grads.end() ? std::move(it->second)
                                      : Tensor::zeros(shapeOf(param));
      auto [slot, fresh] = parameterGrads.try_emplace(param.getName());
      if (fresh)
        slot->second = std::move(grad);
      else
        accumulate(slot->second, grad);
      continue;
    }
    bool anyGrad = llvm::any_of(op.getResults(),
                                [&](mlir::Value r) { return grads.count(r); });
    bool anyNeeds = llvm::any_of(
        op.getOperands(), [&](mlir::Value v) { return needsGrad.contains(v); });
    if (!anyGrad || !anyNeeds)
      continue;
    if (auto err = gradientsOf(op, grads, operandGrads))
      return err;
    for (mlir::Value r : op.getResults())
      grads.erase(r);
    for (auto [v, grad] : llvm::zip(op.getOperands(), operandGrads)) {
      if (!grad.isValid() || !needsGrad.contains(v))
        continue;
      auto [slot, fresh] = grads.try_emplace(v);
      if (fresh)
        slot->second = std::move(grad);
      else
        accumulate(slot->second, grad);
    }
  }
  return llvm::Error::success();
}
