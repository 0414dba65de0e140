//===- ZooOptionsTest.cpp - Zoo names, defaults and validation ------------===//

#include "weft/Support/Error.h"
#include "weft/Zoo/Zoo.h"
#include "gtest/gtest.h"

using namespace weft;
using namespace weft::zoo;

namespace {

/// The message of a bad-input error, or "" if `err` is success / another
/// kind (the test then fails on the message check).
std::string badInputMessage(llvm::Error err) {
  std::string message;
  llvm::handleAllErrors(
      std::move(err),
      [&](const WeftError &e) {
        if (e.getCode() == ExitBadInput)
          message = e.getMessage();
      },
      [&](const llvm::ErrorInfoBase &) {});
  return message;
}

TEST(ZooOptions, NamesRoundTrip) {
  for (ZooModelKind kind : allZooModelKinds()) {
    llvm::Expected<ZooModelKind> parsed = parseZooModelKind(zooModelName(kind));
    ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_EQ(allZooModelKinds().size(), 6u);
}

TEST(ZooOptions, UnknownModelIsBadInput) {
  llvm::Expected<ZooModelKind> parsed = parseZooModelKind("resnet");
  ASSERT_FALSE(bool(parsed));
  std::string message = badInputMessage(parsed.takeError());
  EXPECT_NE(message.find("unknown model 'resnet'"), std::string::npos)
      << message;
}

TEST(ZooOptions, BenchmarkDefaults) {
  ZooOptions bert = defaultZooOptions(ZooModelKind::Bert);
  EXPECT_EQ(bert.layers, 12);
  EXPECT_EQ(bert.hidden, 768);
  EXPECT_EQ(bert.heads, 12);
  EXPECT_EQ(bert.ffn, 3072);
  EXPECT_EQ(bert.seq, 128);
  EXPECT_EQ(bert.vocab, 30522);
  EXPECT_FALSE(bert.batch.has_value());
  EXPECT_FALSE(bert.withWeights);

  ZooOptions moe = defaultZooOptions(ZooModelKind::BertMoe);
  EXPECT_EQ(moe.experts, 16);
  EXPECT_DOUBLE_EQ(moe.capacityFactor, 2.5);
  // ceil(2 · 2.5 · 128 / 16) = 40.
  EXPECT_EQ(moeCapacity(moe), 40);

  ZooOptions gpt = defaultZooOptions(ZooModelKind::Gpt);
  EXPECT_EQ(gpt.layers, 24);
  EXPECT_EQ(gpt.hidden, 1024);
  EXPECT_EQ(gpt.heads, 16);
  EXPECT_EQ(gpt.seq, 1024);
  EXPECT_EQ(gpt.vocab, 50257);

  ZooOptions vgg = defaultZooOptions(ZooModelKind::Vgg19);
  EXPECT_EQ(vgg.image, 32);
  EXPECT_EQ(vgg.classes, 10);
  for (ZooModelKind kind : allZooModelKinds())
    EXPECT_FALSE(bool(validateZooOptions(defaultZooOptions(kind))))
        << zooModelName(kind).str();
}

/// One invalid option set and a fragment of the expected message.
struct BadCase {
  const char *what;
  ZooOptions options;
  const char *message;
};

TEST(ZooOptions, RejectsBadSizes) {
  std::vector<BadCase> cases;
  auto add = [&](const char *what, ZooModelKind kind, auto mutate,
                 const char *message) {
    ZooOptions o = defaultZooOptions(kind);
    mutate(o);
    cases.push_back({what, o, message});
  };
  add(
      "zero layers", ZooModelKind::Bert, [](ZooOptions &o) { o.layers = 0; },
      "--layers must be positive, got 0");
  add(
      "negative hidden", ZooModelKind::Mlp,
      [](ZooOptions &o) { o.hidden = -4; }, "--hidden must be positive");
  add(
      "heads", ZooModelKind::Bert, [](ZooOptions &o) { o.heads = 5; },
      "--hidden 768 is not divisible by --heads 5");
  add(
      "vit patch", ZooModelKind::Vit, [](ZooOptions &o) { o.image = 30; },
      "--image 30 is not divisible by 4");
  add(
      "vgg pooling", ZooModelKind::Vgg19, [](ZooOptions &o) { o.image = 48; },
      "--image 48 is not divisible by 32");
  add(
      "one expert", ZooModelKind::BertMoe, [](ZooOptions &o) { o.experts = 1; },
      "--experts must be at least 2");
  add(
      "capacity", ZooModelKind::BertMoe,
      [](ZooOptions &o) { o.capacityFactor = 0; },
      "--capacity-factor must be positive");
  add(
      "batch", ZooModelKind::Mlp, [](ZooOptions &o) { o.batch = 0; },
      "--batch must be positive");
  add(
      "vocab", ZooModelKind::Gpt, [](ZooOptions &o) { o.vocab = 0; },
      "--vocab must be positive");
  add(
      "gpt seq", ZooModelKind::Gpt, [](ZooOptions &o) { o.seq = 1; },
      "--seq must be at least 2");
  add(
      "huge", ZooModelKind::Bert, [](ZooOptions &o) { o.vocab = 1LL << 40; },
      "--vocab is too large");
  add(
      "classes", ZooModelKind::Vit, [](ZooOptions &o) { o.classes = 0; },
      "--classes must be positive");
  for (BadCase &c : cases) {
    std::string message = badInputMessage(validateZooOptions(c.options));
    EXPECT_NE(message.find(c.message), std::string::npos)
        << c.what << ": got '" << message << "'";
    // The writer refuses them too, before building anything.
    llvm::Expected<std::string> bytes = serializeZooModel(c.options);
    EXPECT_FALSE(bool(bytes)) << c.what;
    if (!bytes)
      EXPECT_FALSE(badInputMessage(bytes.takeError()).empty()) << c.what;
  }
}

TEST(ZooOptions, WithWeightsRefusesHugeModels) {
  ZooOptions o = defaultZooOptions(ZooModelKind::Gpt);
  o.withWeights = true;
  llvm::Expected<std::string> bytes = serializeZooModel(o);
  ASSERT_FALSE(bool(bytes));
  std::string message = badInputMessage(bytes.takeError());
  EXPECT_NE(message.find("--with-weights would write"), std::string::npos)
      << message;
}

} // namespace
