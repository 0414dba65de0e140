//===- AttentionTypes.cpp - Output types of a bridged Attention -----------===//
//
// ONNX's shapes for Attention: with 4-d inputs Q [b, hq, sq, d],
// K [b, hkv, skv, d], V [b, hkv, skv, dv]; with 3-d inputs the heads come
// from q_num_heads and kv_num_heads. Y is [b, hq, sq, dv] (3-d:
// [b, sq, hq · dv]), present_key and present_value [b, hkv, past + skv, d
// or dv], qk_matmul_output [b, hq, sq, past + skv].
//
//===----------------------------------------------------------------------===//

#include "AttentionTypes.h"
#include "BridgedTypes.h"

using namespace weft;
using namespace weft::import;

namespace {

int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return a.i();
  return 0;
}

} // namespace

std::vector<std::optional<onnx::TypeProto>> import::attentionOutputTypes(
    const onnx::NodeProto &node,
    llvm::function_ref<const onnx::TypeProto *(llvm::StringRef)> typeOf) {
  std::vector<std::optional<onnx::TypeProto>> out(node.output_size());
  auto input = [&](int i) -> const onnx::TypeProto * {
    return i < node.input_size() && !node.input(i).empty()
               ? typeOf(node.input(i))
               : nullptr;
  };
  auto q = staticDims(input(0)), k = staticDims(input(1)),
       v = staticDims(input(2));
  if (!q || !k || !v || q->size() != k->size() || q->size() != v->size())
    return out;
  int64_t batch, qHeads, kvHeads, qLen, kvLen, headSize, vHeadSize;
  bool threeD = q->size() == 3;
  if (threeD) {
    qHeads = intAttr(node, "q_num_heads");
    kvHeads = intAttr(node, "kv_num_heads");
    if (qHeads <= 0 || kvHeads <= 0)
      return out;
    batch = (*q)[0];
    qLen = (*q)[1];
    kvLen = (*k)[1];
    headSize = (*k)[2] / kvHeads;
    vHeadSize = (*v)[2] / kvHeads;
  } else if (q->size() == 4) {
    batch = (*q)[0];
    qHeads = (*q)[1];
    qLen = (*q)[2];
    kvHeads = (*k)[1];
    kvLen = (*k)[2];
    headSize = (*k)[3];
    vHeadSize = (*v)[3];
  } else {
    return out;
  }
  int64_t pastLen = 0;
  if (input(4)) {
    auto past = staticDims(input(4));
    if (!past || past->size() != 4)
      return out;
    pastLen = (*past)[2];
  }
  int64_t totalLen = pastLen + kvLen;
  int32_t element = input(0)->tensor_type().elem_type();
  int32_t vElement = input(2)->tensor_type().elem_type();
  std::vector<onnx::TypeProto> types = {
      threeD ? tensorTypeOf(element, {batch, qLen, qHeads * vHeadSize})
             : tensorTypeOf(element, {batch, qHeads, qLen, vHeadSize}),
      tensorTypeOf(element, {batch, kvHeads, totalLen, headSize}),
      tensorTypeOf(vElement, {batch, kvHeads, totalLen, vHeadSize}),
      tensorTypeOf(element, {batch, qHeads, qLen, totalLen})};
  for (size_t i = 0; i < out.size() && i < types.size(); ++i)
    out[i] = types[i];
  return out;
}
