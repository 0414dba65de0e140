//===- Inputs.cpp - Values for a graph program's leaves -------------------===//

#include "weft/Exec/Inputs.h"
#include "Graph/IR/GraphOps.h"
#include "OpUtils.h"
#include "weft/Exec/Npy.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Exec/Random.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringSet.h"

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;

/// Standard deviation of random weights (BERT's and GPT-2's initialiser).
static constexpr double kWeightStd = 0.02;
/// Bound of integer inputs nothing constrains.
static constexpr int64_t kDefaultIndexBound = 2;

std::optional<int64_t> weft::exec::indexBound(mlir::Value v) {
  std::optional<int64_t> best;
  auto consider = [&](std::optional<int64_t> bound) {
    if (bound && (!best || *bound < *best))
      best = bound;
  };
  for (mlir::OpOperand &use : v.getUses()) {
    mlir::Operation *user = use.getOwner();
    unsigned n = use.getOperandNumber();
    if (auto gather = llvm::dyn_cast<g::GatherOp>(user)) {
      if (n == 1) {
        Shape data = shapeOf(gather.getData());
        consider(data[axisOf(gather.getAxis(), data.size())]);
      }
      continue;
    }
    if (auto gather = llvm::dyn_cast<g::GatherElementsOp>(user)) {
      if (n == 1)
        consider(shapeOf(gather.getData())[gather.getAxis()]);
      continue;
    }
    if (auto scatter = llvm::dyn_cast<g::ScatterElementsOp>(user)) {
      if (n == 1)
        consider(shapeOf(scatter.getData())[scatter.getAxis()]);
      continue;
    }
    if (auto scatter = llvm::dyn_cast<g::ScatterNdOp>(user)) {
      // Each tuple element indexes its own dim: the smallest bounds all.
      Shape data = shapeOf(scatter.getData());
      int64_t k = shapeOf(scatter.getIndices()).back();
      if (n == 1 && k > 0)
        consider(*std::min_element(data.begin(), data.begin() + k));
      continue;
    }
    if (llvm::isa<g::CrossEntropyOp, g::NllLossOp>(user)) {
      if (n == 1)
        consider(shapeOf(user->getOperand(0))[1]);
      continue;
    }
    if (llvm::isa<g::ReshapeOp, g::FlattenOp, g::TransposeOp, g::ExpandOp,
                  g::SliceOp, g::CastOp, g::ConcatOp, g::SplitOp>(user))
      for (mlir::Value r : user->getResults())
        consider(indexBound(r));
  }
  return best;
}

namespace {

/// The role of a float leaf, from its first normalisation use.
enum class Role { Weight, Zero, One };

Role roleOf(mlir::Value v) {
  for (mlir::OpOperand &use : v.getUses()) {
    mlir::Operation *user = use.getOwner();
    unsigned n = use.getOperandNumber();
    if (llvm::isa<g::LayerNormOp>(user))
      return n == 1 ? Role::One : Role::Zero;
    if (llvm::isa<g::BatchNormOp>(user))
      return n == 1 || n == 4 ? Role::One : Role::Zero;
    if (llvm::isa<g::Conv2dOp, g::ConvTranspose2dOp>(user) && n == 2)
      return Role::Zero;
  }
  return shapeOf(v).size() >= 2 ? Role::Weight : Role::Zero;
}

/// Seeded random values of `type` for the leaf `name` of `kind`.
Tensor randomTensor(mlir::RankedTensorType type, mlir::Value v,
                    llvm::StringRef kind, llvm::StringRef name, uint64_t seed,
                    double floatStd, bool byRole) {
  std::optional<ElementType> et = elementTypeOf(type);
  Tensor t(*et, type.getShape());
  uint64_t stream = streamOf((kind + ":" + name).str());
  int64_t n = t.getNumElements();
  if (t.isFloat()) {
    Role role = byRole ? roleOf(v) : Role::Weight;
    if (role == Role::Weight)
      fillNormal(t.floats(), n, seed, stream, floatStd);
    else
      std::fill_n(t.floats(), n, role == Role::One ? 1.0f : 0.0f);
    t.convertTo(*et);
    return t;
  }
  int64_t bound =
      *et == ElementType::I1 ? 2 : indexBound(v).value_or(kDefaultIndexBound);
  for (int64_t i = 0; i < n; ++i)
    t.ints()[i] = int64_t(uniform01(seed, stream, i) * double(bound));
  return t;
}

/// A leaf's `value` attribute as a tensor, if it has one.
llvm::Expected<std::optional<Tensor>> valueOf(mlir::Operation *op) {
  auto attr = op->getAttrOfType<mlir::ElementsAttr>("value");
  if (!attr)
    return std::optional<Tensor>();
  auto t = tensorFromAttr(attr);
  if (!t)
    return t.takeError();
  return std::optional<Tensor>(std::move(*t));
}

} // namespace

llvm::Expected<Bindings> weft::exec::makeBindings(mlir::func::FuncOp main,
                                                  const InitOptions &options,
                                                  BindingSummary *summary) {
  BindingSummary local;
  BindingSummary &s = summary ? *summary : local;
  Bindings b;
  llvm::StringSet<> names;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    std::string name = inputName(main, i);
    names.insert(name);
    mlir::Value arg = main.getArgument(i);
    auto type = arg.getType().cast<mlir::RankedTensorType>();
    auto file = options.npyFiles.find(name);
    if (file == options.npyFiles.end()) {
      b.inputs[name] = randomTensor(type, arg, "input", name, options.seed, 1.0,
                                    /*byRole=*/false);
      ++s.inputsRandom;
      continue;
    }
    auto t = readNpy(file->second);
    if (!t)
      return t.takeError();
    b.inputs[name] = std::move(*t);
    ++s.inputsFromFiles;
  }
  for (const auto &entry : options.npyFiles)
    if (!names.contains(entry.first()))
      return badInput("--input '{0}': the model has no input of that name",
                      entry.first());

  llvm::Error err = llvm::Error::success();
  main.walk([&](mlir::Operation *op) {
    if (err || !llvm::isa<g::ParameterOp, g::BufferOp>(op))
      return;
    bool isParameter = llvm::isa<g::ParameterOp>(op);
    llvm::StringRef name = op->getAttrOfType<mlir::StringAttr>("name");
    auto value = valueOf(op);
    if (!value) {
      err = value.takeError();
      return;
    }
    mlir::Value result = op->getResult(0);
    Tensor t =
        *value ? std::move(**value)
               : randomTensor(result.getType().cast<mlir::RankedTensorType>(),
                              result, isParameter ? "parameter" : "buffer",
                              name, options.seed, kWeightStd,
                              /*byRole=*/true);
    if (isParameter) {
      ++(*value ? s.parametersFromWeights : s.parametersRandom);
      s.parameterElements += t.getNumElements();
      b.parameters[name] = std::move(t);
    } else {
      b.buffers[name] = std::move(t);
    }
  });
  if (err)
    return std::move(err);
  return b;
}
