//===- GraphBuilder.cpp - Op-by-op construction of ONNX graphs ------------===//

#include "weft/Zoo/GraphBuilder.h"
#include "llvm/ADT/Twine.h"
#include <cstring>

using namespace weft;
using namespace weft::zoo;

Attr Attr::integer(llvm::StringRef name, int64_t value) {
  Attr a;
  a.name = name.str();
  a.type = onnx::AttributeProto::INT;
  a.i = value;
  return a;
}

Attr Attr::real(llvm::StringRef name, float value) {
  Attr a;
  a.name = name.str();
  a.type = onnx::AttributeProto::FLOAT;
  a.f = value;
  return a;
}

Attr Attr::string(llvm::StringRef name, llvm::StringRef value) {
  Attr a;
  a.name = name.str();
  a.type = onnx::AttributeProto::STRING;
  a.s = value.str();
  return a;
}

Attr Attr::integers(llvm::StringRef name, llvm::ArrayRef<int64_t> values) {
  Attr a;
  a.name = name.str();
  a.type = onnx::AttributeProto::INTS;
  a.ints.assign(values.begin(), values.end());
  return a;
}

void zoo::setTensorType(onnx::TypeProto &type, int32_t elemType,
                        const Dims &dims) {
  onnx::TypeProto::Tensor *tensor = type.mutable_tensor_type();
  tensor->set_elem_type(elemType);
  onnx::TensorShapeProto *shape = tensor->mutable_shape();
  shape->clear_dim();
  for (const Dim &dim : dims) {
    onnx::TensorShapeProto::Dimension *d = shape->add_dim();
    if (dim.isSymbolic())
      d->set_dim_param(dim.symbol);
    else
      d->set_dim_value(dim.size);
  }
}

GraphBuilder::GraphBuilder(onnx::GraphProto &graph,
                           std::optional<int64_t> batch)
    : graph(graph), batch(batch) {}

Dim GraphBuilder::batchDim(int64_t factor) const {
  if (batch)
    return Dim(*batch * factor);
  if (factor == 1)
    return Dim(std::string("batch"));
  return Dim(("batch*" + llvm::Twine(factor)).str());
}

std::string GraphBuilder::addInput(llvm::StringRef name, int32_t elemType,
                                   const Dims &dims) {
  onnx::ValueInfoProto *input = graph.add_input();
  input->set_name(name.str());
  setTensorType(*input->mutable_type(), elemType, dims);
  return name.str();
}

std::string GraphBuilder::addParam(llvm::StringRef name,
                                   llvm::ArrayRef<int64_t> shape,
                                   ParamInit init) {
  std::string full = scoped(name);
  paramList.push_back(
      {full, std::vector<int64_t>(shape.begin(), shape.end()), init});
  return full;
}

std::string GraphBuilder::scoped(llvm::StringRef leaf) const {
  if (scope.empty())
    return leaf.str();
  return (scope + "." + leaf).str();
}

std::string GraphBuilder::freshName(llvm::StringRef opType) {
  std::string prefix = scope.empty() ? std::string() : scope + "/";
  return (prefix + opType + "_" + llvm::Twine(counter++)).str();
}

std::vector<std::string> GraphBuilder::addNodeMulti(
    llvm::StringRef opType, llvm::ArrayRef<std::string> inputs,
    llvm::ArrayRef<Attr> attrs, unsigned numOutputs, llvm::StringRef domain) {
  onnx::NodeProto *node = graph.add_node();
  std::string name = freshName(opType);
  node->set_name(name);
  node->set_op_type(opType.str());
  if (!domain.empty())
    node->set_domain(domain.str());
  for (const std::string &input : inputs)
    node->add_input(input);
  std::vector<std::string> outputs;
  for (unsigned i = 0; i < numOutputs; ++i) {
    outputs.push_back(numOutputs == 1 ? name
                                      : (name + ":" + llvm::Twine(i)).str());
    node->add_output(outputs.back());
  }
  for (const Attr &attr : attrs) {
    onnx::AttributeProto *a = node->add_attribute();
    a->set_name(attr.name);
    a->set_type(attr.type);
    switch (attr.type) {
    case onnx::AttributeProto::INT:
      a->set_i(attr.i);
      break;
    case onnx::AttributeProto::FLOAT:
      a->set_f(attr.f);
      break;
    case onnx::AttributeProto::STRING:
      a->set_s(attr.s);
      break;
    case onnx::AttributeProto::INTS:
      for (int64_t v : attr.ints)
        a->add_ints(v);
      break;
    default:
      break;
    }
  }
  return outputs;
}

std::string GraphBuilder::addNode(llvm::StringRef opType,
                                  llvm::ArrayRef<std::string> inputs,
                                  llvm::ArrayRef<Attr> attrs) {
  return addNodeMulti(opType, inputs, attrs, 1).front();
}

std::string GraphBuilder::renameLastOutput(llvm::StringRef name) {
  graph.mutable_node()->rbegin()->set_output(0, name.str());
  return name.str();
}

/// Adds a Constant node whose `value` attribute is `tensor`.
static std::string addConstant(GraphBuilder &b, onnx::GraphProto &graph,
                               onnx::TensorProto tensor) {
  std::string out = b.addNode("Constant", {});
  onnx::NodeProto &node = *graph.mutable_node()->rbegin();
  onnx::AttributeProto *a = node.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = std::move(tensor);
  return out;
}

std::string GraphBuilder::constInts(llvm::ArrayRef<int64_t> values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(int64_t(values.size()));
  for (int64_t v : values)
    t.add_int64_data(v);
  return addConstant(*this, graph, std::move(t));
}

std::string GraphBuilder::constInt(int64_t value) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_int64_data(value);
  return addConstant(*this, graph, std::move(t));
}

std::string GraphBuilder::constFloat(float value) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_float_data(value);
  return addConstant(*this, graph, std::move(t));
}

std::string GraphBuilder::constBools(llvm::ArrayRef<int64_t> shape,
                                     const std::vector<bool> &values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::BOOL);
  for (int64_t d : shape)
    t.add_dims(d);
  // raw_data stores one byte per bool, far smaller than int32_data.
  std::string raw(values.size(), '\0');
  for (size_t i = 0; i < values.size(); ++i)
    raw[i] = values[i] ? 1 : 0;
  t.set_raw_data(std::move(raw));
  return addConstant(*this, graph, std::move(t));
}

void GraphBuilder::setShape(llvm::StringRef name, const Dims &dims,
                            int32_t elemType) {
  onnx::ValueInfoProto *info = graph.add_value_info();
  info->set_name(name.str());
  setTensorType(*info->mutable_type(), elemType, dims);
}

void GraphBuilder::addOutput(llvm::StringRef name, int32_t elemType,
                             const Dims &dims) {
  onnx::ValueInfoProto *output = graph.add_output();
  output->set_name(name.str());
  setTensorType(*output->mutable_type(), elemType, dims);
}

GraphBuilder::Scope::Scope(GraphBuilder &builder, llvm::StringRef name)
    : builder(builder), oldSize(builder.scope.size()) {
  builder.scope = builder.scoped(name);
}

GraphBuilder::Scope::~Scope() { builder.scope.resize(oldSize); }
