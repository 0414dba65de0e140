//===- OpsetBridge.cpp - Opset 18+ models for an opset-17 checker ---------===//
//
// See OpsetBridge.h. Every rewrite here keeps the node's meaning; a form
// whose meaning opset 17 cannot carry is reported, never approximated.
//
//===----------------------------------------------------------------------===//

#include "OpsetBridge.h"
#include "BridgedTypes.h"
#include "ConstTensor.h"
#include "WindowShape.h"
#include "onnx/defs/schema.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

using namespace weft;
using namespace weft::import;

namespace {

/// Ops whose opset-18 form takes the reduction axes as an input.
bool takesAxesInputSince18(llvm::StringRef op) {
  return llvm::StringSwitch<bool>(op)
      .Cases("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", true)
      .Cases("ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", true)
      .Case("ReduceSumSquare", true)
      .Default(false);
}

/// Ops newer than opset 17 whose first result has the shape and element
/// type of their first input.
bool isShapePreservingNewOp(llvm::StringRef op) {
  return llvm::StringSwitch<bool>(op)
      .Cases("Gelu", "Mish", "GroupNormalization", "RMSNormalization", true)
      .Cases("Swish", "RotaryEmbedding", "SwiGLU", true)
      .Default(false);
}

/// Ops of one input whose result has the input's shape and element type.
bool isElementwiseUnaryOp(llvm::StringRef op) {
  return llvm::StringSwitch<bool>(op)
      .Cases("Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", true)
      .Cases("Ceil", "Celu", "Cos", "Cosh", "Elu", "Erf", "Exp", true)
      .Cases("Floor", "HardSigmoid", "HardSwish", "LeakyRelu", "Log", true)
      .Cases("Neg", "Reciprocal", "Relu", "Round", "Selu", "Shrink", true)
      .Cases("Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", true)
      .Cases("Sqrt", "Tan", "Tanh", "ThresholdedRelu", true)
      .Default(false);
}

/// The type string ONNX's schemas give a float element type.
const char *floatTypeString(int32_t type) {
  switch (type) {
  case onnx::TensorProto::FLOAT16:
    return "tensor(float16)";
  case onnx::TensorProto::BFLOAT16:
    return "tensor(bfloat16)";
  case onnx::TensorProto::FLOAT:
    return "tensor(float)";
  case onnx::TensorProto::DOUBLE:
    return "tensor(double)";
  default:
    return nullptr;
  }
}

/// Names of the element types that IR 9 and later added (the linked
/// library's enum stops at BFLOAT16 = 16).
const char *newElementTypeName(int32_t type) {
  switch (type) {
  case 17:
    return "FLOAT8E4M3FN";
  case 18:
    return "FLOAT8E4M3FNUZ";
  case 19:
    return "FLOAT8E5M2";
  case 20:
    return "FLOAT8E5M2FNUZ";
  case 21:
    return "UINT4";
  case 22:
    return "INT4";
  case 23:
    return "FLOAT4E2M1";
  default:
    return type > 16 ? "a type newer than BFLOAT16" : nullptr;
  }
}

std::string nodeName(const onnx::NodeProto &node) {
  return node.name().empty() ? node.output_size() ? node.output(0) : "?"
                             : node.name();
}

class Bridge {
public:
  Bridge(onnx::ModelProto &model, int64_t opset)
      : model(model), graph(*model.mutable_graph()), opset(opset) {}

  llvm::Expected<unsigned> run();

private:
  llvm::Error checkElementTypes() const;
  void bridgeRejectedElementTypes();
  llvm::Error checkFunctions();
  void dropEmptyConcatInputs();
  llvm::Error rewrite(onnx::NodeProto &node);
  llvm::Error reductionAxes(onnx::NodeProto &node);
  llvm::Error
  dropDefault(onnx::NodeProto &node, llvm::StringRef attr,
              llvm::function_ref<bool(const onnx::AttributeProto &)> isDefault);
  llvm::Error unsupportedForm(const onnx::NodeProto &node,
                              llvm::StringRef form) const;
  void removeAttribute(onnx::NodeProto &node, llvm::StringRef name);
  void renameAttribute(onnx::NodeProto &node, llvm::StringRef from,
                       llvm::StringRef to);
  const onnx::AttributeProto *attribute(const onnx::NodeProto &node,
                                        llvm::StringRef name) const;
  std::optional<std::vector<int64_t>> constantInts(llvm::StringRef name) const;

  onnx::ModelProto &model;
  onnx::GraphProto &graph;
  int64_t opset;
  unsigned changed = 0;
  /// Constant tensors of the graph: initializers and Constant nodes.
  llvm::StringMap<const onnx::TensorProto *> constants;
  llvm::StringMap<std::vector<int64_t>> constantIntLists;
  /// The node producing each value, for constants behind value-preserving
  /// ops (the dynamo exporter reshapes its axes lists).
  llvm::StringMap<const onnx::NodeProto *> producers;
};

} // namespace

llvm::Error Bridge::unsupportedForm(const onnx::NodeProto &node,
                                    llvm::StringRef form) const {
  return badInput("unsupported form of ONNX op '{0}' (node '{1}', opset "
                  "{2}): {3}; see docs/Import.md",
                  node.op_type(), nodeName(node), opset, form);
}

const onnx::AttributeProto *Bridge::attribute(const onnx::NodeProto &node,
                                              llvm::StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

void Bridge::renameAttribute(onnx::NodeProto &node, llvm::StringRef from,
                             llvm::StringRef to) {
  for (auto &a : *node.mutable_attribute())
    if (a.name() == from)
      a.set_name(to.str());
  ++changed;
}

void Bridge::removeAttribute(onnx::NodeProto &node, llvm::StringRef name) {
  auto *attrs = node.mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i)
    if (attrs->Get(i).name() == name)
      attrs->DeleteSubrange(i, 1);
}

llvm::Error Bridge::dropDefault(
    onnx::NodeProto &node, llvm::StringRef attr,
    llvm::function_ref<bool(const onnx::AttributeProto &)> isDefault) {
  const onnx::AttributeProto *a = attribute(node, attr);
  if (!a)
    return llvm::Error::success();
  if (!isDefault(*a))
    return unsupportedForm(node, "attribute '" + attr.str() +
                                     "' at a value opset 17 cannot express");
  removeAttribute(node, attr);
  ++changed;
  return llvm::Error::success();
}

std::optional<std::vector<int64_t>>
Bridge::constantInts(llvm::StringRef name) const {
  // Reshape, Identity, Squeeze and Unsqueeze keep the values in order. The
  // walk is bounded: a malformed graph may have a cycle.
  for (int step = 0; step < 16; ++step) {
    if (constantIntLists.count(name) || constants.count(name))
      break;
    auto producer = producers.find(name);
    if (producer == producers.end())
      return std::nullopt;
    const onnx::NodeProto &node = *producer->second;
    llvm::StringRef op = node.op_type();
    bool keepsValues = op == "Reshape" || op == "Identity" || op == "Squeeze" ||
                       op == "Unsqueeze";
    if (!keepsValues || node.input_size() == 0 ||
        !(node.domain().empty() || node.domain() == "ai.onnx"))
      return std::nullopt;
    name = node.input(0);
  }
  auto list = constantIntLists.find(name);
  if (list != constantIntLists.end())
    return list->second;
  auto it = constants.find(name);
  if (it == constants.end())
    return std::nullopt;
  auto tensor = readTensor(*it->second);
  if (!tensor || !tensor->isInteger())
    return std::nullopt;
  return tensor->asInts();
}

llvm::Error Bridge::reductionAxes(onnx::NodeProto &node) {
  std::optional<std::vector<int64_t>> axes;
  if (node.input_size() > 1 && !node.input(1).empty()) {
    axes = constantInts(node.input(1));
    if (!axes)
      return unsupportedForm(node, "reduction axes computed at run time");
    node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
  }
  const onnx::AttributeProto *noop = attribute(node, "noop_with_empty_axes");
  bool keepInput = noop && noop->i() != 0;
  removeAttribute(node, "noop_with_empty_axes");
  if ((!axes || axes->empty()) && keepInput) {
    // No axes and "do nothing when none are given": the input itself.
    node.set_op_type("Identity");
    node.clear_attribute();
  } else if (axes && !axes->empty()) {
    auto *attr = node.add_attribute();
    attr->set_name("axes");
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t a : *axes)
      attr->add_ints(a);
  }
  ++changed;
  return llvm::Error::success();
}

llvm::Error Bridge::rewrite(onnx::NodeProto &node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return llvm::Error::success();
  llvm::StringRef op = node.op_type();
  auto isZero = [](const onnx::AttributeProto &a) { return a.i() == 0; };
  auto allOnes = [](const onnx::AttributeProto &a) {
    return llvm::all_of(a.ints(), [](int64_t v) { return v == 1; });
  };

  if (opset >= 18 && takesAxesInputSince18(op))
    return reductionAxes(node);
  if (op == "Split") {
    // Opset 18's num_outputs says what the output count already says; an
    // uneven split is then reported by shape inference.
    if (attribute(node, "num_outputs")) {
      removeAttribute(node, "num_outputs");
      ++changed;
    }
    return llvm::Error::success();
  }
  if (op == "Pad") {
    if (node.input_size() > 3 && !node.input(3).empty())
      return unsupportedForm(node, "padding over chosen axes (input 'axes')");
    if (const auto *mode = attribute(node, "mode"); mode && mode->s() == "wrap")
      return unsupportedForm(node, "mode 'wrap'");
    return llvm::Error::success();
  }
  if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    // Pools opset 17 cannot carry (AveragePool's and LpPool's dilations,
    // LpPool's ceil_mode, opsets 18-19), and every ceil_mode pool (the
    // linked inference keeps a last window that starts in the end padding,
    // which ONNX has dropped since), wait in the bridge domain and are
    // typed by ONNX's arithmetic (WindowShape.h).
    const auto *ceil = attribute(node, "ceil_mode");
    const auto *dilations = attribute(node, "dilations");
    if ((ceil && !isZero(*ceil)) ||
        (op != "MaxPool" && dilations && !allOnes(*dilations))) {
      node.set_domain(kBridgeDomain);
      ++changed;
      return llvm::Error::success();
    }
    if (op == "AveragePool")
      return dropDefault(node, "dilations", allOnes);
    if (op == "LpPool") {
      if (auto err = dropDefault(node, "dilations", allOnes))
        return err;
      return dropDefault(node, "ceil_mode", isZero);
    }
    return llvm::Error::success();
  }
  if (op == "Cast" || op == "CastLike") {
    // 'saturate' only affects float8 targets, which are rejected anyway.
    if (attribute(node, "saturate")) {
      removeAttribute(node, "saturate");
      ++changed;
    }
    if (const auto *to = attribute(node, "to"))
      if (const char *name = newElementTypeName(int32_t(to->i())))
        return unsupportedForm(node, std::string("a cast to ") + name);
    return llvm::Error::success();
  }
  if (op == "Resize") {
    // antialias and axes (opset 18) keep their meaning under a name with
    // two leading underscores, which the checker skips (ONNX's internal
    // symbols); the handler reads them there.
    if (const auto *a = attribute(node, "antialias"); a && a->i() != 0)
      renameAttribute(node, "antialias", "__antialias");
    if (auto err = dropDefault(node, "antialias", isZero))
      return err;
    if (auto err = dropDefault(
            node, "keep_aspect_ratio_policy",
            [](const onnx::AttributeProto &a) { return a.s() == "stretch"; }))
      return err;
    if (attribute(node, "axes")) {
      // Opset 17's shape inference checks constant scales and sizes
      // against the rank; values given at run time it cannot see.
      for (int i = 2; i < std::min(4, node.input_size()); ++i)
        if (!node.input(i).empty() && (constants.count(node.input(i)) ||
                                       constantIntLists.count(node.input(i))))
          return unsupportedForm(node, "resizing chosen axes (attribute "
                                       "'axes') with constant scales or "
                                       "sizes");
      renameAttribute(node, "axes", "__axes");
    }
    return llvm::Error::success();
  }
  // ScatterElements' and ScatterND's reductions max and min (opset 18)
  // pass: the linked checker does not check the attribute's value, and the
  // graph ops carry them.

  // GridSample from opset 20 samples any number of spatial dims (and
  // renamed its modes), which opset 16's inference cannot type.
  bool newGridSample = op == "GridSample" && opset >= 20;
  if (!newGridSample &&
      onnx::OpSchemaRegistry::Schema(node.op_type(), int(kCheckerOpset), ""))
    return llvm::Error::success();
  if (isShapePreservingNewOp(op) || hasBridgedOutputTypes(op)) {
    node.set_domain(kBridgeDomain);
    ++changed;
    return llvm::Error::success();
  }
  return badInput("unsupported ONNX op '{0}' (node '{1}', opset {2}); see "
                  "docs/Import.md for the supported ops",
                  node.op_type(), nodeName(node), opset);
}

llvm::Error Bridge::checkElementTypes() const {
  auto check = [&](const std::string &name, int32_t type) -> llvm::Error {
    if (const char *newName = newElementTypeName(type))
      return badInput("tensor '{0}' has element type {1}, which Weft does not "
                      "support",
                      name, newName);
    return llvm::Error::success();
  };
  auto checkInfo = [&](const onnx::ValueInfoProto &vi) -> llvm::Error {
    if (!vi.type().has_tensor_type())
      return llvm::Error::success();
    return check(vi.name(), vi.type().tensor_type().elem_type());
  };
  for (const auto &vi : graph.input())
    if (auto err = checkInfo(vi))
      return err;
  for (const auto &vi : graph.output())
    if (auto err = checkInfo(vi))
      return err;
  for (const auto &vi : graph.value_info())
    if (auto err = checkInfo(vi))
      return err;
  for (const auto &t : graph.initializer())
    if (auto err = check(t.name(), t.data_type()))
      return err;
  for (const auto &[name, tensor] : constants)
    if (auto err = check(name.str(), tensor->data_type()))
      return err;
  return llvm::Error::success();
}

/// Opset 22 and later gave many elementwise ops float16 and bfloat16
/// inputs that their opset-17 schemas reject (Celu and Elu). Element types
/// are followed from the graph's inputs, initializers and constants
/// through every op whose schema gives output 0 the type of input 0; an
/// elementwise op whose schema rejects its input's float type waits in the
/// bridge domain, typed as its input.
void Bridge::bridgeRejectedElementTypes() {
  llvm::StringMap<int32_t> types;
  for (const auto &vi : graph.input())
    if (vi.type().has_tensor_type())
      types[vi.name()] = vi.type().tensor_type().elem_type();
  for (const auto &init : graph.initializer())
    types[init.name()] = init.data_type();
  for (auto &node : *graph.mutable_node()) {
    if (node.output_size() == 0)
      continue;
    if (node.op_type() == "Constant" && node.domain().empty()) {
      for (const auto &a : node.attribute())
        if (a.name() == "value" && a.has_t())
          types[node.output(0)] = a.t().data_type();
      continue;
    }
    auto in = node.input_size() ? types.find(node.input(0)) : types.end();
    if (in == types.end())
      continue;
    int32_t type = in->second;
    if (node.domain() == kBridgeDomain) {
      if (isShapePreservingNewOp(node.op_type()) ||
          hasBridgedOutputTypes(node.op_type()))
        types[node.output(0)] = type;
      continue;
    }
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
        node.op_type(), int(kCheckerOpset), node.domain());
    if (!schema || schema->inputs().empty() || schema->outputs().empty())
      continue;
    const onnx::OpSchema::FormalParameter &input = schema->inputs()[0];
    if (input.GetTypeStr() == schema->outputs()[0].GetTypeStr())
      types[node.output(0)] = type;
    const char *name = floatTypeString(type);
    if (!name || !isElementwiseUnaryOp(node.op_type()))
      continue;
    bool allowed = llvm::any_of(
        input.GetTypes(), [&](const std::string *t) { return *t == name; });
    if (!allowed) {
      node.set_domain(kBridgeDomain);
      ++changed;
    }
  }
}

/// Concat inputs that are empty 1-d constants add nothing; the linked
/// shape inference rejects a Concat whose first input is one (the dynamo
/// exporter's reshape targets begin with the empty leading dims).
void Bridge::dropEmptyConcatInputs() {
  auto isEmpty = [&](const std::string &name) {
    auto it = constants.find(name);
    return it != constants.end() && it->second->dims_size() == 1 &&
           it->second->dims(0) == 0;
  };
  for (auto &node : *graph.mutable_node()) {
    if (node.op_type() != "Concat" ||
        !(node.domain().empty() || node.domain() == "ai.onnx"))
      continue;
    auto *inputs = node.mutable_input();
    if (llvm::all_of(*inputs, isEmpty))
      continue;
    for (int i = inputs->size() - 1; i >= 0; --i)
      if (isEmpty(inputs->Get(i))) {
        inputs->DeleteSubrange(i, 1);
        ++changed;
      }
  }
}

llvm::Error Bridge::checkFunctions() {
  if (model.functions_size() == 0)
    return llvm::Error::success();
  for (const auto &node : graph.node())
    for (const auto &f : model.functions())
      if (f.name() == node.op_type() && f.domain() == node.domain())
        return badInput("node '{0}' calls the model-local function '{1}' "
                        "(domain '{2}'); Weft imports inlined graphs: export "
                        "with the functions inlined",
                        nodeName(node), f.name(), f.domain());
  // Functions no node calls are dead weight (exporters keep a library).
  model.clear_functions();
  ++changed;
  return llvm::Error::success();
}

/// An empty value_ints or value_floats list (the dynamo exporter's shape
/// of a scalar) becomes a 1-d tensor of no elements: the linked checker
/// reads an empty list as a missing one.
static bool emptyListToTensor(onnx::AttributeProto &a) {
  bool ints = a.name() == "value_ints" && a.ints_size() == 0;
  bool floats = a.name() == "value_floats" && a.floats_size() == 0;
  if (!ints && !floats)
    return false;
  a.Clear();
  a.set_name("value");
  a.set_type(onnx::AttributeProto::TENSOR);
  a.mutable_t()->set_data_type(ints ? onnx::TensorProto::INT64
                                    : onnx::TensorProto::FLOAT);
  a.mutable_t()->add_dims(0);
  return true;
}

/// A Shape node whose start and end select nothing, whatever the input's
/// rank (the dynamo exporter's leading dims of a reshape to [-1, d]),
/// becomes an empty int64 Constant: the linked shape inference gives it a
/// type Concat then rejects.
static bool emptyShapeToConstant(onnx::NodeProto &node) {
  if (node.op_type() != "Shape" || node.output_size() != 1)
    return false;
  std::optional<int64_t> start, end;
  for (const auto &a : node.attribute()) {
    if (a.name() == "start")
      start = a.i();
    if (a.name() == "end")
      end = a.i();
  }
  bool empty = start && end &&
               (*start == *end || (*start >= 0 && *end >= 0 && *end < *start) ||
                (*start < 0 && *end < 0 && *end < *start));
  if (!empty)
    return false;
  node.clear_input();
  node.clear_attribute();
  node.set_op_type("Constant");
  auto *a = node.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(0);
  return true;
}

llvm::Expected<unsigned> Bridge::run() {
  for (const auto &init : graph.initializer())
    constants[init.name()] = &init;
  for (auto &node : *graph.mutable_node()) {
    for (const std::string &out : node.output())
      producers[out] = &node;
    if (node.domain().empty() || node.domain() == "ai.onnx")
      changed += emptyShapeToConstant(node);
    if (node.op_type() != "Constant" || node.output_size() != 1 ||
        !(node.domain().empty() || node.domain() == "ai.onnx"))
      continue;
    for (auto &a : *node.mutable_attribute())
      changed += emptyListToTensor(a);
    for (const auto &a : node.attribute()) {
      if (a.name() == "value" && a.has_t())
        constants[node.output(0)] = &a.t();
      if (a.name() == "value_ints")
        constantIntLists[node.output(0)] =
            std::vector<int64_t>(a.ints().begin(), a.ints().end());
    }
  }
  dropEmptyConcatInputs();
  if (model.ir_version() > kCheckerIrVersion) {
    if (auto err = checkElementTypes())
      return std::move(err);
    model.set_ir_version(kCheckerIrVersion);
    ++changed;
  }
  if (auto err = checkFunctions())
    return std::move(err);
  if (opset <= kCheckerOpset)
    return changed;

  for (auto &node : *graph.mutable_node())
    if (auto err = rewrite(node))
      return std::move(err);
  bridgeRejectedElementTypes();
  for (auto &entry : *model.mutable_opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      entry.set_version(kCheckerOpset);
  bool bridged = llvm::any_of(
      graph.node(), [](const auto &n) { return n.domain() == kBridgeDomain; });
  if (bridged) {
    auto *entry = model.add_opset_import();
    entry->set_domain(kBridgeDomain);
    entry->set_version(1);
  }
  return changed;
}

llvm::Expected<unsigned> import::bridgeToCheckerOpset(onnx::ModelProto &model) {
  int64_t opset = 0;
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = entry.version();
  return Bridge(model, opset).run();
}

/// The output type of a bridged pool from its input's static type, or none.
static std::optional<onnx::TypeProto> pooledType(const onnx::NodeProto &node,
                                                 const onnx::TypeProto &in) {
  const auto &shape = in.tensor_type().shape();
  std::vector<int64_t> dims;
  for (const auto &d : shape.dim()) {
    if (!d.has_dim_value())
      return std::nullopt;
    dims.push_back(d.dim_value());
  }
  if (dims.size() < 3)
    return std::nullopt;
  WindowAttrs w;
  for (const auto &a : node.attribute()) {
    std::vector<int64_t> ints(a.ints().begin(), a.ints().end());
    if (a.name() == "kernel_shape")
      w.kernel = ints;
    else if (a.name() == "strides")
      w.strides = ints;
    else if (a.name() == "dilations")
      w.dilations = ints;
    else if (a.name() == "pads")
      w.pads = ints;
    else if (a.name() == "auto_pad")
      w.autoPad = a.s();
    else if (a.name() == "ceil_mode")
      w.ceilMode = a.i() != 0;
  }
  std::vector<int64_t> out;
  if (!resolveWindow(llvm::ArrayRef(dims).drop_front(2), w, out).empty())
    return std::nullopt;
  onnx::TypeProto type = in;
  auto *dimsOut = type.mutable_tensor_type()->mutable_shape()->mutable_dim();
  for (size_t d = 0; d < out.size(); ++d)
    dimsOut->Mutable(2 + d)->set_dim_value(out[d]);
  return type;
}

bool import::typeBridgedOutputs(onnx::ModelProto &model) {
  onnx::GraphProto &graph = *model.mutable_graph();
  auto hasShape = [](const onnx::TypeProto &t) {
    return t.has_tensor_type() && t.tensor_type().has_shape();
  };
  llvm::StringMap<const onnx::TypeProto *> types;
  for (const auto &vi : graph.input())
    if (hasShape(vi.type()))
      types[vi.name()] = &vi.type();
  for (const auto &vi : graph.value_info())
    if (hasShape(vi.type()))
      types[vi.name()] = &vi.type();
  for (const auto &vi : graph.output())
    if (hasShape(vi.type()))
      types[vi.name()] = &vi.type();
  // Initializers (not graph inputs since IR 4) as types of their own.
  std::vector<onnx::TypeProto> initTypes;
  initTypes.reserve(graph.initializer_size());
  for (const auto &init : graph.initializer()) {
    onnx::TypeProto &t = initTypes.emplace_back();
    t.mutable_tensor_type()->set_elem_type(init.data_type());
    auto *shape = t.mutable_tensor_type()->mutable_shape();
    for (int64_t d : init.dims())
      shape->add_dim()->set_dim_value(d);
    types.try_emplace(init.name(), &t);
  }
  // Copies: adding value_info below may move the protos `types` points to.
  std::vector<std::pair<std::string, onnx::TypeProto>> additions;
  for (const auto &node : graph.node()) {
    if (node.domain() == kBridgeDomain &&
        hasBridgedOutputTypes(node.op_type())) {
      auto typeOf = [&](llvm::StringRef name) -> const onnx::TypeProto * {
        auto it = types.find(name);
        return it == types.end() ? nullptr : it->second;
      };
      for (auto [i, type] : llvm::enumerate(bridgedOutputTypes(node, typeOf)))
        if (type && !node.output(i).empty() && !types.count(node.output(i)))
          additions.emplace_back(node.output(i), std::move(*type));
      continue;
    }
    if (node.domain() != kBridgeDomain || node.input_size() == 0 ||
        node.output_size() == 0 || types.count(node.output(0)))
      continue;
    auto in = types.find(node.input(0));
    if (in == types.end())
      continue;
    if (isShapePreservingNewOp(node.op_type()) ||
        isElementwiseUnaryOp(node.op_type())) {
      additions.emplace_back(node.output(0), *in->second);
    } else if (std::optional<onnx::TypeProto> pooled =
                   pooledType(node, *in->second)) {
      additions.emplace_back(node.output(0), std::move(*pooled));
    }
  }
  for (auto &addition : additions) {
    const std::string &name = addition.first;
    auto output = llvm::find_if(*graph.mutable_output(), [&](const auto &o) {
      return o.name() == name;
    });
    if (output != graph.mutable_output()->end()) {
      *output->mutable_type() = addition.second;
      continue;
    }
    auto *vi = graph.add_value_info();
    vi->set_name(name);
    *vi->mutable_type() = addition.second;
  }
  return !additions.empty();
}

void import::restoreBridgedOps(onnx::ModelProto &model) {
  for (auto &node : *model.mutable_graph()->mutable_node())
    if (node.domain() == kBridgeDomain)
      node.clear_domain();
  auto *opsets = model.mutable_opset_import();
  for (int i = opsets->size() - 1; i >= 0; --i)
    if (opsets->Get(i).domain() == kBridgeDomain)
      opsets->DeleteSubrange(i, 1);
}
