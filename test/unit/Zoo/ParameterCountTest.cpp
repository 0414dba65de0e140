//===- ParameterCountTest.cpp - Parameter counts against closed forms -----===//
//
// Each closed form is written out from the architecture, independently of
// the builders, and compared with the sizes of the parameters the model lists
// in weft.parameters.
//
//===----------------------------------------------------------------------===//

#include "ZooTestUtils.h"

using namespace weft;
using namespace weft::zoo;

namespace {

/// Attention (Q, K, V, output: weights and biases) of one layer.
uint64_t attention(uint64_t h) { return 4 * h * h + 4 * h; }
/// Dense FFN H→F→H with biases.
uint64_t feedForward(uint64_t h, uint64_t f) { return 2 * h * f + f + h; }
/// A LayerNorm's scale and bias.
uint64_t layerNorm(uint64_t h) { return 2 * h; }

/// Checks both the model's listed parameters and countZooParameters.
void expectCount(const ZooOptions &o, uint64_t expected) {
  onnx::ModelProto model = buildOrFail(o);
  EXPECT_EQ(listedParameterCount(model), expected);
  llvm::Expected<uint64_t> counted = countZooParameters(o);
  ASSERT_TRUE(bool(counted)) << llvm::toString(counted.takeError());
  EXPECT_EQ(*counted, expected);
}

TEST(ZooParameterCount, BertBaseClosedForm) {
  ZooOptions o = defaultZooOptions(ZooModelKind::Bert);
  uint64_t h = o.hidden, v = o.vocab, s = o.seq, f = o.ffn, l = o.layers;
  uint64_t embeddings = v * h + s * h + layerNorm(h);
  uint64_t perLayer = attention(h) + feedForward(h, f) + 2 * layerNorm(h);
  uint64_t lmHead = h * v + v;
  uint64_t expected = embeddings + l * perLayer + lmHead;
  EXPECT_EQ(expected, 132066618u); // the number itself, worked out by hand
  expectCount(o, expected);
}

TEST(ZooParameterCount, BertMoeClosedForm) {
  ZooOptions o = defaultZooOptions(ZooModelKind::BertMoe);
  uint64_t h = o.hidden, v = o.vocab, s = o.seq, f = o.ffn, l = o.layers;
  uint64_t e = o.experts;
  uint64_t moeLayers = l / 2, denseLayers = l - moeLayers;
  uint64_t dense = attention(h) + feedForward(h, f) + 2 * layerNorm(h);
  uint64_t moe =
      attention(h) + h * e /*gate*/ + e * feedForward(h, f) + 2 * layerNorm(h);
  uint64_t expected = v * h + s * h + layerNorm(h) + denseLayers * dense +
                      moeLayers * moe + h * v + v;
  expectCount(o, expected);
}

TEST(ZooParameterCount, GptClosedForm) {
  ZooOptions o = defaultZooOptions(ZooModelKind::Gpt);
  uint64_t h = o.hidden, v = o.vocab, s = o.seq, f = o.ffn, l = o.layers;
  uint64_t perLayer = attention(h) + feedForward(h, f) + 2 * layerNorm(h);
  // Final LayerNorm; LM head without bias.
  uint64_t expected = v * h + s * h + l * perLayer + layerNorm(h) + h * v;
  expectCount(o, expected);
}

TEST(ZooParameterCount, VitClosedForm) {
  ZooOptions o = defaultZooOptions(ZooModelKind::Vit);
  uint64_t h = o.hidden, f = o.ffn, l = o.layers, c = o.classes;
  uint64_t p = kVitPatch, tokens = (o.image / p) * (o.image / p) + 1;
  uint64_t patchEmbed = h * 3 * p * p + h;
  uint64_t perLayer = attention(h) + feedForward(h, f) + 2 * layerNorm(h);
  uint64_t expected = patchEmbed + h /*cls*/ + tokens * h + l * perLayer +
                      layerNorm(h) + h * c + c;
  EXPECT_EQ(tokens, 65u);
  expectCount(o, expected);
}

TEST(ZooParameterCount, Vgg19ClosedForm) {
  ZooOptions o = defaultZooOptions(ZooModelKind::Vgg19);
  const uint64_t channels[] = {64,  64,  128, 128, 256, 256, 256, 256,
                               512, 512, 512, 512, 512, 512, 512, 512};
  uint64_t expected = 0, in = 3;
  for (uint64_t out : channels) {
    expected += 9 * in * out + out;
    in = out;
  }
  expected += 512 * o.classes + o.classes;
  EXPECT_EQ(expected, 20029514u); // 20.0M: the CIFAR VGG19 figure
  expectCount(o, expected);
}

TEST(ZooParameterCount, MlpClosedForm) {
  ZooOptions o = defaultZooOptions(ZooModelKind::Mlp);
  o.layers = 4;
  o.hidden = 64;
  o.classes = 7;
  uint64_t h = 64, c = 7;
  expectCount(o, 3 * (h * h + h) + h * c + c);
}

TEST(ZooParameterCount, FollowsOptions) {
  ZooOptions o = defaultZooOptions(ZooModelKind::Bert);
  o.layers = 2;
  o.hidden = 64;
  o.heads = 4;
  o.ffn = 256;
  o.seq = 16;
  o.vocab = 100;
  uint64_t h = 64, f = 256;
  uint64_t expected =
      100 * h + 16 * h + layerNorm(h) +
      2 * (attention(h) + feedForward(h, f) + 2 * layerNorm(h)) + h * 100 + 100;
  expectCount(o, expected);
}

} // namespace
