//===- MatmulTest.cpp - Batched matrix product ----------------------------===//

#include "weft/Exec/Matmul.h"
#include "GradCheck.h"

using namespace weft::exec;
using namespace weft::exec::testing;

TEST(MatmulTest, TwoByThreeTimesThreeByTwo) {
  Tensor a = Tensor::fromFloats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Tensor::fromFloats({3, 2}, {7, 8, 9, 10, 11, 12});
  // [1 2 3]·[7 9 11]ᵀ = 58, ·[8 10 12]ᵀ = 64; [4 5 6]: 139, 154.
  expectTensor(matmul(a, b), {2, 2}, {58, 64, 139, 154});
}

TEST(MatmulTest, BatchedLhsWithSharedWeight) {
  Tensor a = Tensor::fromFloats({2, 1, 2}, {1, 2, 3, 4});
  Tensor w = Tensor::fromFloats({2, 2}, {1, 0, 1, 1});
  expectTensor(matmul(a, w), {2, 1, 2}, {3, 2, 7, 4});
}

TEST(MatmulTest, BroadcastBatchOnBothSides) {
  // lhs batch [2, 1], rhs batch [3]: result batch [2, 3]; each product is
  // a 1×1 · 1×1 matrix, so the result is the outer product.
  Tensor a = Tensor::fromFloats({2, 1, 1, 1}, {2, 3});
  Tensor b = Tensor::fromFloats({3, 1, 1}, {1, 10, 100});
  expectTensor(matmul(a, b), {2, 3, 1, 1}, {2, 20, 200, 3, 30, 300});
}

static void checkMatmulGrads(llvm::ArrayRef<int64_t> lhs,
                             llvm::ArrayRef<int64_t> rhs) {
  expectGradientsMatch(
      [](const std::vector<Tensor> &in) { return matmul(in[0], in[1]); },
      [](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
        BinaryGrads g = matmulBackward(in[0], in[1], dy);
        return std::vector<Tensor>{g.lhs, g.rhs};
      },
      {randomTensor(lhs, 11), randomTensor(rhs, 12)});
}

TEST(MatmulTest, GradientsPlain) { checkMatmulGrads({3, 4}, {4, 2}); }
TEST(MatmulTest, GradientsSharedWeight) { checkMatmulGrads({2, 3, 4}, {4, 5}); }
TEST(MatmulTest, GradientsFullBatch) {
  checkMatmulGrads({2, 2, 3, 4}, {2, 2, 4, 3});
}
TEST(MatmulTest, GradientsBroadcastBatch) {
  checkMatmulGrads({2, 1, 3, 2}, {3, 2, 2});
}
