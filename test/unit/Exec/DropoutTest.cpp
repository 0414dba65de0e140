//===- DropoutTest.cpp - Dropout keyed by global element index ------------===//

#include "weft/Exec/Dropout.h"
#include "GradCheck.h"
#include "weft/Exec/Movement.h"

using namespace weft::exec;
using namespace weft::exec::testing;

TEST(DropoutTest, MaskIsZeroOrScaledAndDropsAboutRatio) {
  Tensor mask = dropoutMask({100, 100}, 0.25, 1, 0);
  int64_t dropped = 0;
  for (float m : mask.floatValues()) {
    EXPECT_TRUE(m == 0.0f || m == float(1.0 / 0.75)) << m;
    dropped += m == 0.0f;
  }
  // 10000 Bernoulli(0.25) draws: 2500 ± 43 (σ); 6σ bounds.
  EXPECT_GT(dropped, 2240);
  EXPECT_LT(dropped, 2760);
}

TEST(DropoutTest, RatioZeroIsIdentity) {
  Tensor x = randomTensor({3, 4}, 5);
  Tensor y = dropout(x, 0.0, 1, 0);
  for (int64_t i = 0; i < x.getNumElements(); ++i)
    EXPECT_EQ(y.floats()[i], x.floats()[i]);
}

TEST(DropoutTest, KeyedBySeedAndOp) {
  Tensor a = dropoutMask({64}, 0.5, 1, 0), b = dropoutMask({64}, 0.5, 1, 0);
  Tensor c = dropoutMask({64}, 0.5, 2, 0), d = dropoutMask({64}, 0.5, 1, 1);
  EXPECT_EQ(a.floatValues(), b.floatValues());
  EXPECT_NE(a.floatValues(), c.floatValues());
  EXPECT_NE(a.floatValues(), d.floatValues());
}

// The property a distributed run relies on: a shard's mask is the slice of
// the whole tensor's mask, whatever the shard's offsets.
TEST(DropoutTest, ShardMaskIsSliceOfGlobalMask) {
  Shape global = {6, 10};
  Tensor whole = dropoutMask(global, 0.3, 9, 4);
  for (auto [rows, cols] :
       {std::pair<int64_t, int64_t>{2, 3}, {0, 7}, {5, 0}}) {
    Shape offsets = {rows, cols};
    Shape shard = {global[0] - rows, global[1] - cols};
    Tensor local = dropoutMask(shard, 0.3, 9, 4, {global, offsets});
    Tensor expected = slice(whole, offsets, global, {1, 1});
    EXPECT_EQ(local.floatValues(), expected.floatValues());
  }
}

TEST(DropoutTest, BackwardUsesTheSameMask) {
  Tensor x = randomTensor({5, 5}, 6);
  expectGradientsMatch(
      [](const std::vector<Tensor> &in) { return dropout(in[0], 0.4, 3, 2); },
      [](const std::vector<Tensor> &, const Tensor &, const Tensor &dy) {
        return std::vector<Tensor>{dropout(dy, 0.4, 3, 2)};
      },
      {x});
}
