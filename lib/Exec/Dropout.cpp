//===- Dropout.cpp - Dropout keyed by global element index ----------------===//

#include "weft/Exec/Dropout.h"
#include "Indexing.h"
#include "weft/Exec/Random.h"

using namespace weft::exec;

Tensor weft::exec::dropoutMask(llvm::ArrayRef<int64_t> shape, double ratio,
                               uint64_t seed, uint64_t opId, GlobalView view) {
  llvm::ArrayRef<int64_t> global =
      view.globalShape.empty() ? shape : view.globalShape;
  Shape globalStrides = stridesOf(global);
  int64_t base = 0;
  for (size_t d = 0; d < view.offsets.size(); ++d)
    base += view.offsets[d] * globalStrides[d];
  Tensor mask(ElementType::F32, shape);
  float keep = ratio < 1.0 ? float(1.0 / (1.0 - ratio)) : 0.0f;
  uint64_t stream = mix64(opId);
  float *m = mask.floats();
  std::array<Shape, 1> strides{globalStrides};
  forEachElement<1>(shape, strides, [&](int64_t i, std::array<int64_t, 1> g) {
    m[i] =
        uniform01(seed, stream, uint64_t(base + g[0])) >= ratio ? keep : 0.0f;
  });
  return mask;
}

Tensor weft::exec::dropout(const Tensor &x, double ratio, uint64_t seed,
                           uint64_t opId, GlobalView view) {
  Tensor out = dropoutMask(x.getShape(), ratio, seed, opId, view);
  const float *in = x.floats();
  float *o = out.floats();
  for (int64_t i = 0, e = x.getNumElements(); i < e; ++i)
    o[i] *= in[i];
  return out;
}
