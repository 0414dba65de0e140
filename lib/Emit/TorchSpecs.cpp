//===- TorchSpecs.cpp - Inputs, parameters and constants of a program -----===//
//
// What the emitted program declares at module level: its data inputs (name,
// global shape of one micro-batch, distribution, the bound of integer
// values), its parameters (strategy, distribution, the seeded value used
// when no weight file gives one) and the constants the forward pass reads.
// Roles and bounds follow lib/Exec/Inputs.cpp's rules, read through the
// plan: a value's uses are the graph ops of the locals that read it, past
// any relayout.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "PyLiteral.h"
#include "TorchWriter.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Spmd/Duals.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Base64.h"

using namespace weft;
using namespace weft::emit;
namespace g = weft::graph;

namespace {

using UseFn = llvm::function_ref<void(mlir::Operation *inner, unsigned n)>;

/// Calls `fn` for every graph op of a local that reads `v` (through
/// relayouts), with the operand number.
void forEachGraphUse(mlir::Value v, UseFn fn) {
  for (mlir::OpOperand &use : v.getUses()) {
    mlir::Operation *user = use.getOwner();
    if (auto local = llvm::dyn_cast<spmd::LocalOp>(user)) {
      mlir::Value arg =
          local.getBody().front().getArgument(use.getOperandNumber());
      for (mlir::OpOperand &inner : arg.getUses())
        if (!llvm::isa<spmd::YieldOp>(inner.getOwner()))
          fn(inner.getOwner(), inner.getOperandNumber());
      continue;
    }
    if (llvm::isa<spmd::ShardOp, spmd::AllGatherOp, spmd::ReduceScatterOp,
                  spmd::AllReduceOp, spmd::AllToAllOp>(user))
      forEachGraphUse(user->getResult(0), fn);
  }
}

int64_t dimOf(mlir::Value v, int64_t axis) {
  auto shape = v.getType().cast<mlir::RankedTensorType>().getShape();
  if (axis < 0)
    axis += shape.size();
  return axis >= 0 && axis < int64_t(shape.size()) ? shape[axis] : 0;
}

/// lib/Exec's indexBound through the plan: the smallest bound a use puts
/// on an integer value (a gathered axis, a class count), followed through
/// ops that move values.
std::optional<int64_t> planIndexBound(mlir::Value v, unsigned depth = 0) {
  std::optional<int64_t> best;
  auto consider = [&](std::optional<int64_t> b) {
    if (b && *b > 0 && (!best || *b < *best))
      best = b;
  };
  forEachGraphUse(v, [&](mlir::Operation *op, unsigned n) {
    if (n != 1 &&
        !llvm::isa<g::ReshapeOp, g::FlattenOp, g::TransposeOp, g::ExpandOp,
                   g::SliceOp, g::CastOp, g::ConcatOp, g::SplitOp>(op))
      return;
    if (auto gather = llvm::dyn_cast<g::GatherOp>(op))
      return consider(dimOf(gather.getData(), gather.getAxis()));
    if (auto gather = llvm::dyn_cast<g::GatherElementsOp>(op))
      return consider(dimOf(gather.getData(), gather.getAxis()));
    if (auto scatter = llvm::dyn_cast<g::ScatterElementsOp>(op))
      return consider(dimOf(scatter.getData(), scatter.getAxis()));
    if (auto scatter = llvm::dyn_cast<g::ScatterNdOp>(op)) {
      auto data = scatter.getData().getType().cast<mlir::RankedTensorType>();
      int64_t k = dimOf(scatter.getIndices(), -1);
      if (k > 0 && k <= data.getRank())
        consider(*std::min_element(data.getShape().begin(),
                                   data.getShape().begin() + k));
      return;
    }
    if (llvm::isa<g::CrossEntropyOp, g::NllLossOp>(op))
      return consider(dimOf(op->getOperand(0), 1));
    if (depth > 64 || llvm::isa<g::GatherOp, g::GatherElementsOp,
                                g::ScatterElementsOp, g::ScatterNdOp>(op))
      return;
    // A moving op: its results, as the local yields them.
    auto local = llvm::cast<spmd::LocalOp>(op->getParentOp());
    for (mlir::Value r : local.getResults())
      consider(planIndexBound(r, depth + 1));
  });
  return best;
}

/// lib/Exec's role of a float leaf: the scale of a normalisation is one,
/// its bias and a convolution's bias zero, other rank ≥ 2 tensors normal.
std::string planRole(mlir::Value v) {
  std::string role;
  forEachGraphUse(v, [&](mlir::Operation *op, unsigned n) {
    if (!role.empty())
      return;
    if (llvm::isa<g::LayerNormOp>(op))
      role = n == 1 ? "ones" : "zeros";
    else if (llvm::isa<g::BatchNormOp>(op))
      role = n == 1 || n == 4 ? "ones" : "zeros";
    else if (llvm::isa<g::Conv2dOp, g::ConvTranspose2dOp>(op) && n == 2)
      role = "zeros";
  });
  if (!role.empty())
    return role;
  return v.getType().cast<mlir::RankedTensorType>().getRank() >= 2 ? "normal"
                                                                   : "zeros";
}

/// Whether the forward function uses `ident` for something else: its
/// parameters, the modules it calls, the names the emitter gives values,
/// distributions, constants and recomputed runs.
bool takenInForward(llvm::StringRef ident) {
  for (llvm::StringRef name : {"rt", "p", "ops", "R", "recompute"})
    if (ident == name)
      return true;
  for (llvm::StringRef prefix : {"v", "D", "C", "run"}) {
    llvm::StringRef rest = ident;
    if (rest.consume_front(prefix) && !rest.empty() &&
        llvm::all_of(rest, llvm::isDigit))
      return true;
  }
  return false;
}

/// The name of @main's argument `i` in the graph program, if it has one.
std::string inputName(mlir::ModuleOp graph, unsigned i) {
  if (graph)
    if (auto main = graph.lookupSymbol<mlir::func::FuncOp>("main"))
      if (i < main.getNumArguments())
        if (auto name =
                main.getArgAttrOfType<mlir::StringAttr>(i, "graph.input"))
          return name.getValue().str();
  return "arg" + std::to_string(i);
}

} // namespace

/// The graph program (--graph) must be the plan's model: its @main takes
/// the plan's inputs, in order, with their global types.
static llvm::Error checkGraphMatches(mlir::ModuleOp graph,
                                     mlir::func::FuncOp main) {
  auto graphMain = graph.lookupSymbol<mlir::func::FuncOp>("main");
  if (!graphMain)
    return badInput("the graph program has no func.func @main");
  auto mine = main.getArgumentTypes(), theirs = graphMain.getArgumentTypes();
  if (mine.size() != theirs.size())
    return badInput("the graph program is not the plan's model: its @main "
                    "takes {0} input(s), the plan's {1}",
                    theirs.size(), mine.size());
  for (auto [i, types] : llvm::enumerate(llvm::zip(mine, theirs)))
    if (std::get<0>(types) != std::get<1>(types))
      return badInput("the graph program is not the plan's model: input {0} "
                      "is {1} there, {2} in the plan",
                      i, std::get<1>(types), std::get<0>(types));
  return llvm::Error::success();
}

llvm::Error TorchWriter::collectSpecs(mlir::func::FuncOp main) {
  if (options.graph)
    if (auto err = checkGraphMatches(options.graph, main))
      return err;
  llvm::StringSet<> idents;
  for (mlir::BlockArgument arg : main.getArguments()) {
    auto type = arg.getType().dyn_cast<mlir::RankedTensorType>();
    spmd::DistAttr dist = spmd::getDist(arg);
    if (!type || !dist)
      return badInput("@main's argument {0} needs a ranked type and an "
                      "spmd.dist",
                      arg.getArgNumber());
    InputSpec in;
    in.name = inputName(options.graph, arg.getArgNumber());
    in.ident = pyIdentifier(in.name);
    while (takenInForward(in.ident) || (stage && in.ident == "recv") ||
           !idents.insert(in.ident).second)
      in.ident += "_";
    in.type = elementTypeName(type);
    in.shape.assign(type.getShape().begin(), type.getShape().end());
    in.dist = distName(dist);
    if (!type.getElementType().isa<mlir::FloatType>() &&
        !type.getElementType().isInteger(1)) {
      std::optional<int64_t> bound = planIndexBound(arg);
      in.bound = bound.value_or(2);
      in.bounded = bound.has_value();
    }
    inputs.push_back(std::move(in));
  }
  for (auto p : main.getOps<spmd::ParameterOp>()) {
    auto type = p.getType().cast<mlir::RankedTensorType>();
    ParamSpec spec;
    spec.name = p.getName().str();
    spec.type = elementTypeName(type);
    spec.shape.assign(type.getShape().begin(), type.getShape().end());
    spec.dist = distName(p.getDist());
    spec.strategy = spmd::toString(p.getStrategy()).str();
    spec.init = type.getElementType().isa<mlir::FloatType>()
                    ? planRole(p.getResult())
                    : "zeros";
    // The id axes' group syncs the gradient.
    spmd::MeshAxes idAxes = spmd::ShardGeometry::identityAxes(p.getDist());
    if (idAxes)
      axesTuple(idAxes);
    params.push_back(std::move(spec));
  }
  return llvm::Error::success();
}

std::string TorchWriter::distName(spmd::DistAttr dist) {
  std::string text = distText(dist);
  auto [it, inserted] =
      dists.insert({text, "D" + std::to_string(dists.size())});
  return it->second;
}

llvm::Expected<std::string> TorchWriter::constantName(mlir::Attribute value,
                                                      mlir::Type type) {
  auto elements = value.dyn_cast<mlir::ElementsAttr>();
  if (!elements)
    return badInput("a graph.constant without an elements value");
  auto t = exec::tensorFromAttr(elements);
  if (!t)
    return t.takeError();
  auto shaped = type.cast<mlir::RankedTensorType>();
  std::string args =
      pyString(elementTypeName(shaped)) + ", " + pyTuple(shaped.getShape());
  auto dense = elements.dyn_cast<mlir::DenseElementsAttr>();
  if (dense && dense.isSplat() && t->getNumElements() > 0) {
    args += ", fill=" + (t->isFloat() ? pyFloat(t->floats()[0])
                                      : std::to_string(t->ints()[0]));
  } else {
    // Little-endian float32 or int64 words, base64.
    llvm::StringRef bytes =
        t->isFloat()
            ? llvm::StringRef(reinterpret_cast<const char *>(t->floats()),
                              t->getNumElements() * sizeof(float))
            : llvm::StringRef(reinterpret_cast<const char *>(t->ints()),
                              t->getNumElements() * sizeof(int64_t));
    args += ", data=" + pyString(llvm::encodeBase64(bytes));
  }
  std::string name = "C" + std::to_string(constants.size());
  constants.push_back({name, "Constant(" + args + ")"});
  return name;
}

std::string TorchWriter::axesTuple(spmd::MeshAxes axes) {
  std::vector<unsigned> list;
  for (unsigned a = 0; a < geo.numAxes(); ++a)
    if (axes & (1u << a))
      list.push_back(a);
  if (list.size() > 1)
    axisSets.insert(list);
  std::string out = "(";
  for (auto [i, a] : llvm::enumerate(list))
    out += (i ? ", " : "") + std::to_string(a);
  return out + (list.size() == 1 ? ",)" : ")");
}

std::string TorchWriter::groupOf(spmd::MeshAxes axes) {
  return axes ? "rt.group(" + axesTuple(axes) + ")" : "None";
}
