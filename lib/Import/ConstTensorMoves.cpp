//===- ConstTensorMoves.cpp - Transpose and GatherElements of constants ---===//
//
// Exports build position tables from constants: torch.gather over a buffer
// of token-type ids (BERT's embeddings), a transposed rotary table. Both
// only move values, so they fold exactly.
//
//===----------------------------------------------------------------------===//

#include "ConstTensor.h"
#include "weft/Support/Error.h"

using namespace weft;
using namespace weft::import;

static const onnx::AttributeProto *attr(const onnx::NodeProto &node,
                                        llvm::StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

static std::vector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = int(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

llvm::Expected<ConstTensor> import::foldTranspose(const onnx::NodeProto &node,
                                                  const ConstTensor &data) {
  int64_t rank = data.dims.size();
  std::vector<int64_t> perm;
  if (const auto *a = attr(node, "perm"))
    perm.assign(a->ints().begin(), a->ints().end());
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  std::vector<bool> seen(rank, false);
  if (int64_t(perm.size()) != rank)
    return badInput("Transpose '{0}': perm of {1} axes for rank {2}",
                    node.name(), perm.size(), rank);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return badInput("Transpose '{0}': perm is not a permutation",
                      node.name());
    seen[p] = true;
  }
  ConstTensor out;
  out.elementType = data.elementType;
  for (int64_t p : perm)
    out.dims.push_back(data.dims[p]);
  std::vector<int64_t> inStrides = rowMajorStrides(data.dims),
                       outStrides = rowMajorStrides(out.dims);
  int64_t n = out.numElements();
  out.values.resize(n);
  for (int64_t f = 0; f < n; ++f) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += ((f / outStrides[d]) % out.dims[d]) * inStrides[perm[d]];
    out.values[f] = data.values[src];
  }
  return out;
}

llvm::Expected<ConstTensor>
import::foldGatherElements(const onnx::NodeProto &node, const ConstTensor &data,
                           const ConstTensor &indices) {
  int64_t rank = data.dims.size();
  const auto *a = attr(node, "axis");
  int64_t axis = a ? a->i() : 0;
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank || int64_t(indices.dims.size()) != rank)
    return badInput("GatherElements '{0}': axis or index rank out of range",
                    node.name());
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.dims[d] > data.dims[d])
      return badInput("GatherElements '{0}': indices larger than the data",
                      node.name());
  ConstTensor out;
  out.elementType = data.elementType;
  out.dims = indices.dims;
  std::vector<int64_t> inStrides = rowMajorStrides(data.dims),
                       outStrides = rowMajorStrides(out.dims);
  int64_t n = out.numElements(), extent = data.dims[axis];
  out.values.resize(n);
  for (int64_t f = 0; f < n; ++f) {
    int64_t index = int64_t(indices.values[f]);
    if (index < 0)
      index += extent;
    if (index < 0 || index >= extent)
      return badInput("GatherElements '{0}': index {1} out of range",
                      node.name(), int64_t(indices.values[f]));
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t coord = d == axis ? index : (f / outStrides[d]) % out.dims[d];
      src += coord * inStrides[d];
    }
    out.values[f] = data.values[src];
  }
  return out;
}
