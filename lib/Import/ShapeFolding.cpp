//===- ShapeFolding.cpp - Folding shape logic before shape inference ------===//

#include "ShapeFolding.h"
#include "ConstTensor.h"
#include "OnnxModel.h"
#include "onnx/shape_inference/implementation.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringMap.h"

using namespace weft;
using namespace weft::import;

bool import::isConstantInitializer(const onnx::TensorProto &t) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  bool isFloat = t.data_type() == onnx::TensorProto::FLOAT ||
                 t.data_type() == onnx::TensorProto::DOUBLE ||
                 t.data_type() == onnx::TensorProto::FLOAT16 ||
                 t.data_type() == onnx::TensorProto::BFLOAT16;
  return isFloat ? n <= 1 : n <= 64;
}

bool import::foldWouldExpand(const onnx::NodeProto &node,
                             llvm::ArrayRef<const ConstTensor *> inputs) {
  llvm::StringRef op = node.op_type();
  if (op != "ConstantOfShape" && op != "Expand")
    return false;
  size_t shapeInput = op == "ConstantOfShape" ? 0 : 1;
  if (shapeInput >= inputs.size() || !inputs[shapeInput])
    return false;
  // The product saturates: a shape whose product overflows is large too.
  int64_t n = 1;
  for (int64_t d : inputs[shapeInput]->asInts())
    if (d > 1 && __builtin_mul_overflow(n, d, &n))
      return true;
  return n > 64;
}

/// ONNX's shape inference of convolutions and pools reads the spatial
/// attributes by the kernel's rank without checking them against the
/// input's (found by fuzzing: a crash inside libonnx). Where both ranks are
/// declared (graph inputs, initializers) they are checked here first.
static llvm::Error checkConvPoolRanks(const onnx::GraphProto &graph) {
  llvm::StringMap<int64_t> rank;
  for (const onnx::ValueInfoProto &vi : graph.input())
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
      rank[vi.name()] = vi.type().tensor_type().shape().dim_size();
  for (const onnx::TensorProto &t : graph.initializer())
    rank[t.name()] = t.dims_size();
  for (const onnx::NodeProto &node : graph.node()) {
    llvm::StringRef op = node.op_type();
    bool conv = op == "Conv" || op == "ConvTranspose";
    bool pool = op == "MaxPool" || op == "AveragePool" || op == "LpPool";
    if ((!conv && !pool) || node.input_size() < 1)
      continue;
    auto inputRank = [&](int i) -> int64_t {
      if (node.input_size() <= i)
        return -1;
      auto it = rank.find(node.input(i));
      return it == rank.end() ? -1 : it->second;
    };
    int64_t x = inputRank(0), w = conv ? inputRank(1) : -1;
    int64_t spatial = w >= 0 ? w - 2 : x >= 0 ? x - 2 : -1;
    auto bad = [&](const llvm::Twine &why) {
      return badInput("{0} '{1}': {2}", op, node.name(), why.str());
    };
    if (conv && x >= 0 && w >= 0 && x != w)
      return bad("input of rank " + llvm::Twine(x) + " but kernel of rank " +
                 llvm::Twine(w));
    if (spatial < 1)
      continue;
    for (const onnx::AttributeProto &a : node.attribute()) {
      llvm::StringRef name = a.name();
      int64_t want =
          name == "pads" ? 2 * spatial
          : name == "kernel_shape" || name == "strides" || name == "dilations"
              ? spatial
              : -1;
      if (want >= 0 && a.ints_size() != want)
        return bad("attribute '" + name + "' has " +
                   llvm::Twine(a.ints_size()) + " values, expected " +
                   llvm::Twine(want) + " for " + llvm::Twine(spatial) +
                   " spatial dims");
    }
  }
  return llvm::Error::success();
}

llvm::Error import::inferShapes(onnx::ModelProto &model) {
  if (auto err = checkConvPoolRanks(model.graph()))
    return err;
  try {
    onnx::ShapeInferenceOptions inference(/*check_type_val=*/true,
                                          /*strict_mode_val=*/0,
                                          /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), inference);
  } catch (const std::exception &e) {
    return badInput("ONNX shape inference failed: {0}", oneLine(e.what()));
  }
  return llvm::Error::success();
}

std::optional<std::vector<int64_t>>
import::staticDims(const onnx::ValueInfoProto &vi) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
    return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto &d : vi.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value())
      return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

/// The static shapes known for the graph's values.
static llvm::StringMap<std::vector<int64_t>>
staticShapes(const onnx::GraphProto &graph) {
  llvm::StringMap<std::vector<int64_t>> shapes;
  auto add = [&](const onnx::ValueInfoProto &vi) {
    if (auto dims = staticDims(vi))
      shapes[vi.name()] = std::move(*dims);
  };
  for (const auto &vi : graph.input())
    add(vi);
  for (const auto &vi : graph.value_info())
    add(vi);
  for (const auto &init : graph.initializer())
    shapes[init.name()] =
        std::vector<int64_t>(init.dims().begin(), init.dims().end());
  return shapes;
}

static onnx::TensorProto toTensorProto(const ConstTensor &c) {
  onnx::TensorProto t;
  t.set_data_type(c.elementType);
  for (int64_t d : c.dims)
    t.add_dims(d);
  switch (c.elementType) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (double v : c.values)
      t.add_float_data(float(v));
    break;
  case onnx::TensorProto::DOUBLE:
    for (double v : c.values)
      t.add_double_data(v);
    break;
  case onnx::TensorProto::INT64:
    // asInts saturates: INT64_MAX as a double does not fit back.
    for (int64_t v : c.asInts())
      t.add_int64_data(v);
    break;
  default:
    // INT32, INT8, UINT8 and BOOL all live in int32_data.
    for (double v : c.values)
      t.add_int32_data(int32_t(v));
    break;
  }
  return t;
}

/// Replaces `node` by a Constant node producing `value` under its output
/// name.
static void replaceWithConstant(onnx::NodeProto &node, const ConstTensor &c) {
  std::string output = node.output(0), name = node.name();
  node.Clear();
  node.set_op_type("Constant");
  node.set_name(name);
  node.add_output(output);
  auto *attr = node.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  *attr->mutable_t() = toTensorProto(c);
}

/// A frozen float initializer small enough to hold as a constant.
static bool isSmallFrozen(const onnx::TensorProto &t,
                          const std::set<std::string> &frozen) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  return n <= 64 && frozen.count(t.name());
}

llvm::Expected<unsigned>
import::foldShapeComputations(onnx::ModelProto &model,
                              const std::set<std::string> &frozen) {
  unsigned total = 0;
  // Each round can reveal shapes that let the next one fold more; a graph
  // has no more rounds of this than nodes, and real exports need two or
  // three.
  for (int round = 0; round < model.graph().node_size() + 1; ++round) {
    auto shapes = staticShapes(model.graph());
    llvm::StringMap<ConstTensor> constants;
    for (const auto &init : model.graph().initializer())
      if (isConstantInitializer(init) || isSmallFrozen(init, frozen))
        if (auto c = readTensor(init))
          constants[init.name()] = std::move(*c);

    unsigned folded = 0;
    for (auto &node : *model.mutable_graph()->mutable_node()) {
      llvm::StringRef op = node.op_type();
      if (!node.domain().empty() || !isFoldable(op) || node.output_size() != 1)
        continue;
      std::vector<const ConstTensor *> ins;
      std::vector<std::vector<int64_t>> inShapes;
      bool ready = true;
      for (const std::string &in : node.input()) {
        auto c = constants.find(in);
        ins.push_back(c == constants.end() ? nullptr : &c->second);
        auto s = shapes.find(in);
        inShapes.push_back(s == shapes.end() ? std::vector<int64_t>()
                                             : s->second);
        if (op == "Shape")
          ready &= s != shapes.end();
        else if (!in.empty() && c == constants.end())
          ready = false;
      }
      if (!ready || foldWouldExpand(node, ins))
        continue;
      auto result = import::foldNode(node, ins, inShapes);
      if (!result) {
        // Not foldable after all (an unusual attribute): the importer's
        // handler will say so precisely if the node matters.
        llvm::consumeError(result.takeError());
        continue;
      }
      if (op != "Constant") {
        replaceWithConstant(node, result->front());
        ++folded;
      }
      constants[node.output(0)] = std::move(result->front());
    }
    total += folded;
    if (!folded)
      break;
    if (auto err = inferShapes(model))
      return std::move(err);
  }
  return total;
}
