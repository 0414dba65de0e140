//===- NormTest.cpp - Layer and batch normalisation -----------------------===//

#include "weft/Exec/Norm.h"
#include "GradCheck.h"

using namespace weft::exec;
using namespace weft::exec::testing;

// [1, 2, 3]: mean 2, biased variance 2/3, so x̂ = (x − 2)·√1.5.
TEST(NormTest, LayerNormHandComputed) {
  Tensor x = Tensor::fromFloats({1, 3}, {1, 2, 3});
  Tensor g = Tensor::fromFloats({3}, {1, 1, 2});
  Tensor b = Tensor::fromFloats({3}, {0, 1, 0});
  expectTensor(layerNorm(x, g, b, 1, 0.0), {1, 3},
               {-1.2247449f, 1.0f, 2.4494897f});
}

// Per channel over N and spatial dims: channel 0 holds 1, 3 (mean 2, var 1),
// channel 1 holds 10, 10 (variance 0, so x̂ = 0). ε = 1 throughout.
TEST(NormTest, BatchNormTrainingUsesBatchStatistics) {
  Tensor x = Tensor::fromFloats({2, 2, 1, 1}, {1, 10, 3, 10});
  Tensor one = Tensor::filled({2}, 1), zero = Tensor::zeros({2});
  expectTensor(batchNorm(x, one, zero, zero, one, 1.0, /*training=*/true),
               {2, 2, 1, 1}, {-0.7071068f, 0.0f, 0.7071068f, 0.0f});
  // Inference: running mean 0, variance 1 (+ ε 1): x / √2.
  expectTensor(batchNorm(x, one, zero, zero, one, 1.0, /*training=*/false),
               {2, 2, 1, 1}, {0.7071068f, 7.071068f, 2.1213203f, 7.071068f},
               1e-5);
}

TEST(NormTest, LayerNormGradients) {
  for (int64_t axis : {1, 2}) {
    Tensor x = randomTensor({2, 3, 4}, 51);
    llvm::ArrayRef<int64_t> norm = x.getShape().drop_front(axis);
    expectGradientsMatch(
        [axis](const std::vector<Tensor> &in) {
          return layerNorm(in[0], in[1], in[2], axis, 1e-5);
        },
        [axis](const std::vector<Tensor> &in, const Tensor &,
               const Tensor &dy) {
          NormGrads g = layerNormBackward(in[0], in[1], dy, axis, 1e-5);
          return std::vector<Tensor>{g.input, g.scale, g.bias};
        },
        {x, randomTensor(norm, 52), randomTensor(norm, 53)});
  }
}

TEST(NormTest, BatchNormGradients) {
  for (bool training : {true, false}) {
    Tensor mean = randomTensor({3}, 61, 0.1);
    Tensor var = Tensor::filled({3}, 1.5f);
    expectGradientsMatch(
        [&](const std::vector<Tensor> &in) {
          return batchNorm(in[0], in[1], in[2], mean, var, 1e-5, training);
        },
        [&](const std::vector<Tensor> &in, const Tensor &, const Tensor &dy) {
          NormGrads g =
              batchNormBackward(in[0], in[1], mean, var, dy, 1e-5, training);
          return std::vector<Tensor>{g.input, g.scale, g.bias};
        },
        {randomTensor({4, 3, 2, 2}, 62), randomTensor({3}, 63),
         randomTensor({3}, 64)});
  }
}
