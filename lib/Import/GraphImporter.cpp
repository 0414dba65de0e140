//===- GraphImporter.cpp - Walks an ONNX graph into the graph dialect -----===//

#include "Graph/IR/GraphDialect.h"
#include "Graph/IR/GraphOps.h"
#include "Importer.h"
#include "OnnxModel.h"
#include "ShapeFolding.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include <cmath>
#include <numeric>

using namespace weft;
using namespace weft::import;

mlir::Type import::convertElementType(mlir::MLIRContext *ctx, int32_t type) {
  mlir::Builder b(ctx);
  switch (type) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

llvm::ArrayRef<int64_t> import::shapeOf(mlir::Value v) {
  return v.getType().cast<mlir::RankedTensorType>().getShape();
}

GraphImporter::GraphImporter(mlir::MLIRContext &context,
                             onnx::ModelProto &model,
                             const ImportOptions &options, ImportReport &report,
                             llvm::StringRef fileName)
    : context(context), model(model), options(options), report(report),
      fileName(fileName.str()), builder(&context) {}

mlir::Location GraphImporter::nameLoc(llvm::StringRef name) {
  return mlir::NameLoc::get(
      mlir::StringAttr::get(&context, name),
      mlir::FileLineColLoc::get(&context, fileName, 0, 0));
}

llvm::Error GraphImporter::collectTypes() {
  const onnx::GraphProto &g = model.graph();
  for (const auto &vi : g.input())
    types[vi.name()] = &vi.type();
  for (const auto &vi : g.value_info())
    types[vi.name()] = &vi.type();
  for (const auto &vi : g.output())
    types[vi.name()] = &vi.type();
  for (const auto &init : g.initializer())
    initializers[init.name()] = &init;
  parameterInputs = listedParameters(model);

  for (const auto &node : g.node()) {
    if (node.op_type() == "BatchNormalization")
      for (int i = 3; i < std::min(5, node.input_size()); ++i)
        runningStats.insert(node.input(i));
    // A loss's class weights are fixed by the model, not trained.
    if ((node.op_type() == "SoftmaxCrossEntropyLoss" ||
         node.op_type() == "NegativeLogLikelihoodLoss") &&
        node.input_size() > 2 && !node.input(2).empty())
      runningStats.insert(node.input(2));
  }
  // Resize's and Upsample's scales fix the result's shape: constants, not
  // parameters, whatever their size.
  llvm::StringSet<> scales;
  for (const auto &node : g.node()) {
    int input = node.op_type() == "Resize"     ? 2
                : node.op_type() == "Upsample" ? 1
                                               : -1;
    if (input >= 0 && node.input_size() > input)
      scales.insert(node.input(input));
  }
  // Small integer and scalar initializers are constants: shape operands,
  // axes, scales. Everything else becomes a parameter or buffer on use.
  for (const auto &init : g.initializer())
    if (!parameterInputs.contains(init.name()) &&
        (isConstantInitializer(init) || scales.contains(init.name())))
      if (auto c = readTensor(init))
        constants[init.name()] = std::move(*c);
  return llvm::Error::success();
}

llvm::Expected<mlir::RankedTensorType>
GraphImporter::typeOf(llvm::StringRef name) {
  auto it = types.find(name);
  if (it == types.end() || !it->second->has_tensor_type() ||
      !it->second->tensor_type().has_shape())
    return badInput("ONNX shape inference gave no shape for '{0}'; pass "
                    "--input-shape for the model's inputs",
                    name);
  const auto &tensor = it->second->tensor_type();
  llvm::SmallVector<int64_t> dims;
  for (const auto &d : tensor.shape().dim()) {
    if (!d.has_dim_value())
      return badInput("the shape of '{0}' is not static (dim '{1}'); pass "
                      "--input-shape for the model's inputs",
                      name, d.dim_param());
    dims.push_back(d.dim_value());
  }
  mlir::Type element = convertElementType(&context, tensor.elem_type());
  if (!element)
    return badInput("'{0}' has ONNX element type {1}, which Weft does not "
                    "support",
                    name, tensor.elem_type());
  return mlir::RankedTensorType::get(dims, element);
}

llvm::Error GraphImporter::createFunction() {
  module = mlir::ModuleOp::create(nameLoc(fileName));
  builder.setInsertionPointToEnd(module->getBody());

  llvm::SmallVector<mlir::Type> argTypes;
  llvm::SmallVector<std::string> argNames;
  for (const auto &input : model.graph().input()) {
    if (parameterInputs.contains(input.name()) ||
        initializers.count(input.name()))
      continue;
    auto type = typeOf(input.name());
    if (!type)
      return type.takeError();
    argTypes.push_back(*type);
    argNames.push_back(input.name());
  }
  auto func = builder.create<mlir::func::FuncOp>(
      nameLoc(model.graph().name().empty() ? "main" : model.graph().name()),
      "main", builder.getFunctionType(argTypes, {}));
  body = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "graph.input", builder.getStringAttr(name));
    body->getArgument(i).setLoc(nameLoc(name));
    values[name] = body->getArgument(i);
  }
  builder.setInsertionPointToStart(body);
  return llvm::Error::success();
}

static mlir::DenseElementsAttr toAttr(mlir::RankedTensorType type,
                                      const ConstTensor &c) {
  mlir::Type element = type.getElementType();
  if (auto f = element.dyn_cast<mlir::FloatType>()) {
    llvm::SmallVector<llvm::APFloat> vals;
    for (double v : c.values) {
      llvm::APFloat ap(v);
      bool lost;
      ap.convert(f.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
                 &lost);
      vals.push_back(ap);
    }
    return mlir::DenseElementsAttr::get(type, vals);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  llvm::SmallVector<llvm::APInt> vals;
  for (double v : c.values)
    vals.push_back(llvm::APInt(width, uint64_t(int64_t(v)), /*isSigned=*/true));
  return mlir::DenseElementsAttr::get(type, vals);
}

mlir::Value GraphImporter::materializeConstant(llvm::StringRef name,
                                               const ConstTensor &c) {
  mlir::Type element = convertElementType(&context, c.elementType);
  auto type = mlir::RankedTensorType::get(c.dims, element);
  auto op =
      builder.create<graph::ConstantOp>(nameLoc(name), type, toAttr(type, c));
  values[name] = op.getResult();
  return op.getResult();
}

static mlir::ElementsAttr weightsOf(mlir::RankedTensorType type,
                                    const onnx::TensorProto &t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return {};
  const std::string &raw = t.raw_data();
  if (!raw.empty()) {
    bool splat = false;
    llvm::ArrayRef<char> bytes(raw.data(), raw.size());
    if (mlir::DenseElementsAttr::isValidRawBuffer(type, bytes, splat))
      return mlir::DenseElementsAttr::getFromRawBuffer(type, bytes);
    return {};
  }
  auto c = readTensor(t);
  return c ? toAttr(type, *c) : mlir::ElementsAttr();
}

/// Whether a float initializer is an additive attention mask (square in its
/// last two dims, holding -inf): a buffer, not a parameter (docs/Design.md §1).
static bool isAttentionMask(const onnx::TensorProto &t) {
  int rank = t.dims_size();
  if (t.data_type() != onnx::TensorProto::FLOAT || rank < 2 ||
      t.dims(rank - 1) != t.dims(rank - 2))
    return false;
  auto c = readTensor(t);
  return c && llvm::any_of(c->values,
                           [](double v) { return std::isinf(v) && v < 0; });
}

llvm::Expected<mlir::Value>
GraphImporter::materializeLeaf(llvm::StringRef name) {
  auto type = typeOf(name);
  if (!type) {
    llvm::consumeError(type.takeError());
    // Initializers need not have value_info: use their own dims and type.
    auto init = initializers.find(name);
    if (init == initializers.end())
      return badInput("no type for tensor '{0}'", name);
    mlir::Type element =
        convertElementType(&context, init->second->data_type());
    if (!element)
      return badInput("initializer '{0}' has unsupported element type {1}",
                      name, init->second->data_type());
    llvm::SmallVector<int64_t> dims(init->second->dims().begin(),
                                    init->second->dims().end());
    type = mlir::RankedTensorType::get(dims, element);
  }
  bool isFloat = type->getElementType().isa<mlir::FloatType>();
  auto init = initializers.find(name);
  bool buffer = !isFloat || runningStats.contains(name) ||
                options.frozen.count(name.str()) ||
                (init != initializers.end() && isAttentionMask(*init->second));
  mlir::ElementsAttr value;
  if (options.withWeights && init != initializers.end())
    value = weightsOf(*type, *init->second);
  mlir::Location loc = nameLoc(name);
  mlir::Operation *op =
      buffer ? builder.create<graph::BufferOp>(loc, *type, name, value)
                   .getOperation()
             : builder.create<graph::ParameterOp>(loc, *type, name, value)
                   .getOperation();
  values[name] = op->getResult(0);
  return op->getResult(0);
}

llvm::Expected<mlir::Value> GraphImporter::valueOf(llvm::StringRef name) {
  std::string key = name.str();
  auto alias = aliases.find(key);
  if (alias != aliases.end())
    key = alias->second;
  auto it = values.find(key);
  if (it != values.end())
    return it->second;
  if (initializers.count(key) || parameterInputs.contains(key))
    return materializeLeaf(key);
  auto c = constants.find(key);
  if (c != constants.end())
    return materializeConstant(key, c->second);
  return badInput("tensor '{0}' is used before it is defined", key);
}

bool GraphImporter::canFold(const onnx::NodeProto &node) const {
  if (!isFoldable(node.op_type()))
    return false;
  if (node.op_type() == "Constant")
    return true;
  if (node.op_type() == "Shape")
    return types.count(node.input(0)) || values.count(node.input(0)) ||
           initializers.count(node.input(0));
  std::vector<const ConstTensor *> ins;
  for (const std::string &in : node.input()) {
    ins.push_back(nullptr);
    if (in.empty())
      continue;
    auto alias = aliases.find(in);
    auto c = constants.find(alias != aliases.end() ? alias->second : in);
    if (c == constants.end())
      return false;
    ins.back() = &c->second;
  }
  return !foldWouldExpand(node, ins);
}

llvm::Error GraphImporter::foldNode(const onnx::NodeProto &node) {
  std::vector<const ConstTensor *> ins;
  std::vector<std::vector<int64_t>> shapes;
  for (const std::string &in : node.input()) {
    auto alias = aliases.find(in);
    auto c = constants.find(alias != aliases.end() ? alias->second : in);
    ins.push_back(c == constants.end() ? nullptr : &c->second);
    std::vector<int64_t> shape;
    if (node.op_type() == "Shape") {
      auto v = valueOf(in);
      if (!v)
        return v.takeError();
      auto s = shapeOf(*v);
      shape.assign(s.begin(), s.end());
    }
    shapes.push_back(shape);
  }
  auto folded = import::foldNode(node, ins, shapes);
  if (!folded)
    return folded.takeError();
  for (size_t i = 0; i < folded->size() && int(i) < node.output_size(); ++i)
    constants[node.output(i)] = std::move((*folded)[i]);
  ++report.foldedNodes;
  return llvm::Error::success();
}

llvm::Error GraphImporter::importNode(const onnx::NodeProto &node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx" &&
      node.domain() != "weft")
    return badInput("unsupported ONNX op '{0}' of domain '{1}' (node '{2}'); "
                    "see docs/Import.md",
                    node.op_type(), node.domain(), node.name());
  if (node.op_type() == "Identity") {
    std::string source = node.input(0);
    auto alias = aliases.find(source);
    if (alias != aliases.end())
      source = alias->second;
    aliases[node.output(0)] = source;
    if (initializers.count(source) || parameterInputs.contains(source)) {
      auto group = llvm::find_if(report.sharedParameters,
                                 [&](const auto &g) { return g[0] == source; });
      if (group == report.sharedParameters.end())
        report.sharedParameters.push_back({source, node.output(0)});
      else
        group->push_back(node.output(0));
    }
    return llvm::Error::success();
  }
  if (canFold(node))
    return foldNode(node);
  std::string opType =
      node.domain() == "weft" ? "weft." + node.op_type() : node.op_type();
  const HandlerTable &table = legalizationTable();
  auto handler = table.find(opType);
  if (handler == table.end())
    return badInput("unsupported ONNX op '{0}' (node '{1}', opset {2}); see "
                    "docs/Import.md for the supported ops",
                    opType, node.name(), report.opsetVersion);
  mlir::Operation *before = body->empty() ? nullptr : &body->back();
  NodeContext ctx(*this, node);
  if (auto err = handler->second(ctx))
    return err;
  return verifyNewOps(node, before);
}

llvm::Error GraphImporter::verifyNewOps(const onnx::NodeProto &node,
                                        mlir::Operation *before) {
  // ONNX's checker and (non-strict) inference accept some inconsistent
  // models, e.g. pads that make an output extent negative; the graph
  // verifiers do not. Check each node's ops at once to name the node.
  auto it = before ? std::next(before->getIterator()) : body->begin();
  for (mlir::Operation &op : llvm::make_range(it, body->end())) {
    std::string diagnostic;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      if (diagnostic.empty())
        diagnostic = d.str();
      return mlir::success();
    });
    if (failed(mlir::verify(&op, /*verifyRecursively=*/false)))
      return badInput("ONNX {0} node '{1}' is inconsistent: {2}",
                      node.op_type(), node.name(), diagnostic);
  }
  return llvm::Error::success();
}

llvm::Expected<mlir::Value> GraphImporter::findLoss() {
  const auto &outputs = model.graph().output();
  for (const auto &out : outputs) {
    auto type = typeOf(out.name());
    if (!type) {
      llvm::consumeError(type.takeError());
      continue;
    }
    if (type->getNumElements() != 1 ||
        !type->getElementType().isa<mlir::FloatType>())
      continue;
    auto value = valueOf(out.name());
    if (!value)
      return value.takeError();
    report.lossName = out.name();
    if (type->getRank() == 0)
      return *value;
    auto scalar = mlir::RankedTensorType::get({}, type->getElementType());
    return builder.create<graph::ReshapeOp>(nameLoc(out.name()), scalar, *value)
        .getResult();
  }
  std::string names;
  for (const auto &out : outputs)
    names += (names.empty() ? "'" : ", '") + out.name() + "'";
  if (options.proxyLoss == ProxyLoss::None || outputs.empty())
    return badInput("the model has no scalar loss output (outputs: {0}); pass "
                    "--loss=sum or --loss=mean to add a proxy loss",
                    names);
  auto value = valueOf(outputs[0].name());
  if (!value)
    return value.takeError();
  auto type = value->getType().cast<mlir::RankedTensorType>();
  if (!type.getElementType().isa<mlir::FloatType>())
    return badInput("output '{0}' is not floating point; cannot add a proxy "
                    "loss to it",
                    outputs[0].name());
  llvm::SmallVector<int64_t> axes(type.getRank());
  std::iota(axes.begin(), axes.end(), 0);
  auto scalar = mlir::RankedTensorType::get({}, type.getElementType());
  bool mean = options.proxyLoss == ProxyLoss::Mean;
  report.lossName = (mean ? "mean(" : "sum(") + outputs[0].name() + ")";
  mlir::Location loc = nameLoc(report.lossName);
  if (mean)
    return builder.create<graph::ReduceMeanOp>(loc, scalar, *value, axes, false)
        .getResult();
  return builder.create<graph::ReduceSumOp>(loc, scalar, *value, axes, false)
      .getResult();
}

void GraphImporter::hoistLeaves() {
  // Leaves have no operands, so moving them to the top keeps the program
  // valid and lists the model's parameters, buffers and constants first.
  mlir::Operation *insertBefore = nullptr;
  for (mlir::Operation &op : llvm::make_early_inc_range(*body)) {
    bool leaf =
        llvm::isa<graph::ParameterOp, graph::BufferOp, graph::ConstantOp>(op);
    if (!leaf) {
      if (!insertBefore)
        insertBefore = &op;
      continue;
    }
    if (insertBefore)
      op.moveBefore(insertBefore);
  }
}

void GraphImporter::removeDeadOps() {
  // Outputs other than the loss (logits, updated running statistics) and
  // the nodes only they need are dropped; declared parameters are kept.
  for (mlir::Operation &op :
       llvm::make_early_inc_range(llvm::reverse(body->getOperations()))) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>() ||
        llvm::isa<graph::ParameterOp, graph::BufferOp>(op))
      continue;
    if (op.use_empty())
      op.erase();
  }
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> GraphImporter::run() {
  if (auto err = collectTypes())
    return std::move(err);
  if (auto err = createFunction())
    return std::move(err);
  for (const auto &node : model.graph().node())
    if (auto err = importNode(node))
      return std::move(err);
  llvm::SmallVector<mlir::Value> results;
  llvm::SmallVector<llvm::StringRef> outputNames;
  if (options.allOutputs) {
    // A forward-only program: every graph output in order, no loss.
    for (const auto &out : model.graph().output()) {
      auto it = types.find(out.name());
      if (it != types.end() && !it->second->has_tensor_type())
        return badInput("output '{0}' is not a tensor (a sequence, map or "
                        "optional); a forward program returns tensors only",
                        out.name());
      auto value = valueOf(out.name());
      if (!value)
        return value.takeError();
      results.push_back(*value);
      outputNames.push_back(out.name());
    }
  } else {
    auto loss = findLoss();
    if (!loss)
      return loss.takeError();
    results.push_back(*loss);
  }
  builder.create<mlir::func::ReturnOp>(
      nameLoc(options.allOutputs ? "outputs" : "loss"), results);
  auto func = llvm::cast<mlir::func::FuncOp>(body->getParentOp());
  func.setFunctionType(builder.getFunctionType(
      func.getArgumentTypes(), mlir::ValueRange(results).getTypes()));
  for (auto [i, name] : llvm::enumerate(outputNames))
    func.setResultAttr(i, "graph.output", builder.getStringAttr(name));
  removeDeadOps();
  hoistLeaves();

  std::string diagnostics;
  {
    mlir::ScopedDiagnosticHandler handler(&context,
                                          [&](mlir::Diagnostic &diag) {
                                            if (diagnostics.empty())
                                              diagnostics = diag.str();
                                            return mlir::success();
                                          });
    if (failed(mlir::verify(*module)))
      return makeError(ExitInternal,
                       "the imported program does not verify: {0}",
                       diagnostics);
  }
  return std::move(module);
}
