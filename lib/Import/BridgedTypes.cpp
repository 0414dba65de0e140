//===- BridgedTypes.cpp - Output types of bridged multi-output ops --------===//
//
// CausalConvWithState: output is shaped like the input [b, c, l],
// present_state [b, c, k - 1] for a weight [c, 1, k]. LinearAttention: with
// query [b, t, hq · dk], value [b, t, hkv · dv], output is [b, t, hq · dv]
// and present_state [b, hkv, dk, dv]. GridSample (opset 20 and later, any
// number of spatial dims): [n, c, o1, ..., or]. Attention's are in
// AttentionTypes.cpp.
//
//===----------------------------------------------------------------------===//

#include "BridgedTypes.h"
#include "AttentionTypes.h"

using namespace weft;
using namespace weft::import;

std::optional<std::vector<int64_t>>
import::staticDims(const onnx::TypeProto *type) {
  if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape())
    return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto &d : type->tensor_type().shape().dim()) {
    if (!d.has_dim_value())
      return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

onnx::TypeProto import::tensorTypeOf(int32_t element,
                                     llvm::ArrayRef<int64_t> dims) {
  onnx::TypeProto type;
  type.mutable_tensor_type()->set_elem_type(element);
  auto *shape = type.mutable_tensor_type()->mutable_shape();
  for (int64_t d : dims)
    shape->add_dim()->set_dim_value(d);
  return type;
}

const onnx::TypeProto *import::inputType(const onnx::NodeProto &node, int i,
                                         InputTypes typeOf) {
  return i < node.input_size() && !node.input(i).empty() ? typeOf(node.input(i))
                                                         : nullptr;
}

namespace {

int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return a.i();
  return 0;
}

OutputTypes causalConvTypes(const onnx::NodeProto &node, InputTypes typeOf) {
  OutputTypes out(node.output_size());
  const onnx::TypeProto *in = inputType(node, 0, typeOf);
  auto x = staticDims(in), w = staticDims(inputType(node, 1, typeOf));
  if (!x || !w || x->size() != 3 || w->size() != 3 || (*w)[2] < 1)
    return out;
  int32_t element = in->tensor_type().elem_type();
  OutputTypes types = {tensorTypeOf(element, *x),
                       tensorTypeOf(element, {(*x)[0], (*x)[1], (*w)[2] - 1})};
  for (size_t i = 0; i < out.size() && i < types.size(); ++i)
    out[i] = types[i];
  return out;
}

OutputTypes linearAttentionTypes(const onnx::NodeProto &node,
                                 InputTypes typeOf) {
  OutputTypes out(node.output_size());
  const onnx::TypeProto *in = inputType(node, 0, typeOf);
  auto q = staticDims(in), v = staticDims(inputType(node, 2, typeOf));
  int64_t qHeads = intAttr(node, "q_num_heads");
  int64_t kvHeads = intAttr(node, "kv_num_heads");
  if (!q || !v || q->size() != 3 || v->size() != 3 || qHeads <= 0 ||
      kvHeads <= 0 || (*q)[2] % qHeads || (*v)[2] % kvHeads)
    return out;
  int64_t keySize = (*q)[2] / qHeads, valueSize = (*v)[2] / kvHeads;
  int32_t element = in->tensor_type().elem_type();
  OutputTypes types = {
      tensorTypeOf(element, {(*q)[0], (*q)[1], qHeads * valueSize}),
      tensorTypeOf(element, {(*q)[0], kvHeads, keySize, valueSize})};
  // present_state has past_state's element type when one is given.
  if (const onnx::TypeProto *past = inputType(node, 3, typeOf))
    types[1]->mutable_tensor_type()->set_elem_type(
        past->tensor_type().elem_type());
  for (size_t i = 0; i < out.size() && i < types.size(); ++i)
    out[i] = types[i];
  return out;
}

/// GridSample (opset 20 and later): X [n, c, d1, ..., dr] sampled at
/// grid [n, o1, ..., or, r] gives [n, c, o1, ..., or].
OutputTypes gridSampleTypes(const onnx::NodeProto &node, InputTypes typeOf) {
  OutputTypes out(node.output_size());
  const onnx::TypeProto *in = inputType(node, 0, typeOf);
  auto x = staticDims(in), grid = staticDims(inputType(node, 1, typeOf));
  if (!x || !grid || x->size() < 3 || grid->size() != x->size() || out.empty())
    return out;
  std::vector<int64_t> dims{(*x)[0], (*x)[1]};
  dims.insert(dims.end(), grid->begin() + 1, grid->end() - 1);
  out[0] = tensorTypeOf(in->tensor_type().elem_type(), dims);
  return out;
}

} // namespace

bool import::hasBridgedOutputTypes(llvm::StringRef op) {
  return op == "Attention" || op == "CausalConvWithState" ||
         op == "LinearAttention" || op == "GridSample";
}

OutputTypes import::bridgedOutputTypes(const onnx::NodeProto &node,
                                       InputTypes typeOf) {
  llvm::StringRef op = node.op_type();
  if (op == "Attention")
    return attentionOutputTypes(node, typeOf);
  if (op == "CausalConvWithState")
    return causalConvTypes(node, typeOf);
  if (op == "LinearAttention")
    return linearAttentionTypes(node, typeOf);
  if (op == "GridSample")
    return gridSampleTypes(node, typeOf);
  return OutputTypes(node.output_size());
}
