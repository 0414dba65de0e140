//===- ReduceTest.cpp - Sum, mean and max over axes -----------------------===//

#include "weft/Exec/Reduce.h"
#include "GradCheck.h"

using namespace weft::exec;
using namespace weft::exec::testing;

TEST(ReduceTest, HandComputed) {
  Tensor x = Tensor::fromFloats({2, 3}, {1, 5, 3, 4, 2, 6});
  expectTensor(reduce(ReduceKind::Sum, x, {1}, false), {2}, {9, 12});
  expectTensor(reduce(ReduceKind::Mean, x, {0}, true), {1, 3},
               {2.5f, 3.5f, 4.5f});
  expectTensor(reduce(ReduceKind::Max, x, {0, 1}, false), {}, {6});
  expectTensor(reduce(ReduceKind::Max, x, {1}, true), {2, 1}, {5, 6});
}

TEST(ReduceTest, MaxSplitsGradientAmongTies) {
  Tensor x = Tensor::fromFloats({4}, {2, 7, 7, 1});
  Tensor y = reduce(ReduceKind::Max, x, {0}, false);
  expectTensor(reduceBackward(ReduceKind::Max, x, y, Tensor::scalar(1.0f), {0}),
               {4}, {0, 0.5f, 0.5f, 0});
}

TEST(ReduceTest, GradientsMatchFiniteDifferences) {
  Tensor x = randomTensor({2, 3, 4}, 71);
  for (ReduceKind kind : {ReduceKind::Sum, ReduceKind::Mean, ReduceKind::Max})
    for (bool keep : {true, false}) {
      llvm::SmallVector<int64_t> axes = {0, 2};
      expectGradientsMatch(
          [&](const std::vector<Tensor> &in) {
            return reduce(kind, in[0], axes, keep);
          },
          [&](const std::vector<Tensor> &in, const Tensor &y,
              const Tensor &dy) {
            return std::vector<Tensor>{
                reduceBackward(kind, in[0], y, dy, axes)};
          },
          {x});
    }
}
