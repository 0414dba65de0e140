//===- WithWeightsTest.cpp - Random initializers round trip ---------------===//

#include "ZooTestUtils.h"
#include "onnx/checker.h"
#include <cmath>
#include <cstring>

using namespace weft;
using namespace weft::zoo;

namespace {

/// A small BERT that --with-weights writes quickly.
ZooOptions smallBert() {
  ZooOptions o = defaultZooOptions(ZooModelKind::Bert);
  o.layers = 2;
  o.hidden = 32;
  o.heads = 4;
  o.ffn = 64;
  o.seq = 8;
  o.vocab = 50;
  o.withWeights = true;
  o.seed = 7;
  return o;
}

/// Parses serialized bytes or fails the test.
onnx::ModelProto parse(const ZooOptions &o) {
  llvm::Expected<std::string> bytes = serializeZooModel(o);
  onnx::ModelProto model;
  if (!bytes) {
    ADD_FAILURE() << llvm::toString(bytes.takeError());
    return model;
  }
  EXPECT_TRUE(model.ParseFromString(*bytes));
  return model;
}

/// The float values of initializer `name`.
std::vector<float> values(const onnx::ModelProto &model,
                          const std::string &name) {
  for (const auto &init : model.graph().initializer()) {
    if (init.name() != name)
      continue;
    std::vector<float> out(init.raw_data().size() / sizeof(float));
    std::memcpy(out.data(), init.raw_data().data(), init.raw_data().size());
    return out;
  }
  return {};
}

TEST(ZooWithWeights, RoundTripsAsInitializers) {
  ZooOptions o = smallBert();
  onnx::ModelProto model = parse(o);
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    FAIL() << e.what();
  }
  std::vector<std::string> listed = listedParameters(model);
  ASSERT_EQ(size_t(model.graph().initializer_size()), listed.size());
  // Only data inputs remain graph inputs.
  EXPECT_EQ(model.graph().input_size(), 2);
  ZooOptions weightless = o;
  weightless.withWeights = false;
  EXPECT_EQ(listedParameterCount(model),
            listedParameterCount(buildOrFail(weightless)));
  for (const auto &init : model.graph().initializer()) {
    uint64_t n = 1;
    for (int64_t d : init.dims())
      n *= uint64_t(d);
    EXPECT_EQ(init.raw_data().size(), n * sizeof(float)) << init.name();
  }
}

TEST(ZooWithWeights, InitializesByKind) {
  onnx::ModelProto model = parse(smallBert());
  std::vector<float> scale =
      values(model, "encoder.layer.0.attention_norm.weight");
  ASSERT_EQ(scale.size(), 32u);
  for (float v : scale)
    EXPECT_EQ(v, 1.0f);
  for (float v : values(model, "lm_head.bias"))
    EXPECT_EQ(v, 0.0f);
  std::vector<float> w =
      values(model, "encoder.layer.0.attention.query.weight");
  ASSERT_EQ(w.size(), 32u * 32u);
  double sumSquares = 0;
  for (float v : w) {
    EXPECT_LT(std::abs(v), 0.035f);
    sumSquares += double(v) * v;
  }
  double stddev = std::sqrt(sumSquares / w.size());
  EXPECT_NEAR(stddev, 0.02, 0.003);
}

TEST(ZooWithWeights, SeedDeterminesWeights) {
  ZooOptions o = smallBert();
  std::string name = "embeddings.word_embeddings";
  std::vector<float> a = values(parse(o), name);
  std::vector<float> b = values(parse(o), name);
  o.seed = 8;
  std::vector<float> c = values(parse(o), name);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(ZooWithWeights, SmallMoeAndVitWork) {
  ZooOptions moe = smallBert();
  moe.kind = ZooModelKind::BertMoe;
  moe.experts = 4;
  moe.capacityFactor = 1.0;
  onnx::ModelProto model = parse(moe);
  EXPECT_EQ(countOps(model, "Top2Gating"), 1);
  EXPECT_EQ(size_t(model.graph().initializer_size()),
            listedParameters(model).size());

  ZooOptions vit = defaultZooOptions(ZooModelKind::Vit);
  vit.layers = 1;
  vit.hidden = 16;
  vit.heads = 2;
  vit.ffn = 32;
  vit.image = 8;
  vit.withWeights = true;
  EXPECT_GT(parse(vit).graph().initializer_size(), 0);
}

} // namespace
