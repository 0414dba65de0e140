//===- ZooOptions.cpp - Zoo model names, defaults and validation ----------===//

#include "weft/Support/Error.h"
#include "weft/Zoo/Zoo.h"
#include <cmath>

using namespace weft;
using namespace weft::zoo;

const std::vector<ZooModelKind> &zoo::allZooModelKinds() {
  static const std::vector<ZooModelKind> kinds = {
      ZooModelKind::Mlp,  ZooModelKind::Vgg19,   ZooModelKind::Vit,
      ZooModelKind::Bert, ZooModelKind::BertMoe, ZooModelKind::Gpt};
  return kinds;
}

llvm::StringRef zoo::zooModelName(ZooModelKind kind) {
  switch (kind) {
  case ZooModelKind::Mlp:
    return "mlp";
  case ZooModelKind::Vgg19:
    return "vgg19";
  case ZooModelKind::Vit:
    return "vit";
  case ZooModelKind::Bert:
    return "bert";
  case ZooModelKind::BertMoe:
    return "bert-moe";
  case ZooModelKind::Gpt:
    return "gpt";
  }
  return "unknown";
}

llvm::Expected<ZooModelKind> zoo::parseZooModelKind(llvm::StringRef name) {
  for (ZooModelKind kind : allZooModelKinds())
    if (zooModelName(kind) == name)
      return kind;
  return badInput("unknown model '{0}'; expected one of mlp, vgg19, vit, "
                  "bert, bert-moe, gpt",
                  name);
}

ZooOptions zoo::defaultZooOptions(ZooModelKind kind) {
  ZooOptions o;
  o.kind = kind;
  o.classes = 10;
  o.image = 32;
  switch (kind) {
  case ZooModelKind::Mlp:
    o.layers = 3;
    o.hidden = 1024;
    break;
  case ZooModelKind::Vgg19:
    o.layers = 19;
    break;
  case ZooModelKind::Vit:
  case ZooModelKind::Bert:
  case ZooModelKind::BertMoe:
    o.layers = 12;
    o.hidden = 768;
    o.heads = 12;
    o.ffn = 3072;
    o.seq = 128;
    o.vocab = 30522;
    break;
  case ZooModelKind::Gpt:
    o.layers = 24;
    o.hidden = 1024;
    o.heads = 16;
    o.ffn = 4096;
    o.seq = 1024;
    o.vocab = 50257;
    break;
  }
  if (kind == ZooModelKind::BertMoe) {
    o.experts = 16;
    o.capacityFactor = 2.5;
  }
  return o;
}

llvm::ArrayRef<llvm::StringRef> zoo::zooSizeFlags(ZooModelKind kind) {
  static const llvm::StringRef mlp[] = {"layers", "hidden", "classes"};
  // VGG19's depth is its name.
  static const llvm::StringRef vgg[] = {"image", "classes"};
  static const llvm::StringRef vit[] = {"layers", "hidden", "heads",
                                        "ffn",    "image",  "classes"};
  static const llvm::StringRef text[] = {"layers", "hidden", "heads",
                                         "ffn",    "seq",    "vocab"};
  static const llvm::StringRef moe[] = {
      "layers", "hidden", "heads",   "ffn",
      "seq",    "vocab",  "experts", "capacity-factor"};
  switch (kind) {
  case ZooModelKind::Mlp:
    return mlp;
  case ZooModelKind::Vgg19:
    return vgg;
  case ZooModelKind::Vit:
    return vit;
  case ZooModelKind::Bert:
  case ZooModelKind::Gpt:
    return text;
  case ZooModelKind::BertMoe:
    return moe;
  }
  return {};
}

/// The largest size a flag may take.
static constexpr int64_t kMaxSize = int64_t(1) << 24;

/// Checks that a size the family uses is positive.
static llvm::Error checkPositive(llvm::StringRef flag, int64_t value) {
  if (value <= 0)
    return badInput("--{0} must be positive, got {1}", flag, value);
  // Keeps products of sizes (element counts, flattened dims) in int64.
  if (value > kMaxSize)
    return badInput("--{0} is too large: {1} > {2}", flag, value, kMaxSize);
  return llvm::Error::success();
}

llvm::Error zoo::validateZooOptions(const ZooOptions &o) {
  if (o.batch)
    if (auto err = checkPositive("batch", *o.batch))
      return err;
  if (auto err = checkPositive("classes", o.classes))
    return err;
  bool isTransformer =
      o.kind == ZooModelKind::Vit || o.kind == ZooModelKind::Bert ||
      o.kind == ZooModelKind::BertMoe || o.kind == ZooModelKind::Gpt;
  bool isText = isTransformer && o.kind != ZooModelKind::Vit;
  if (o.kind != ZooModelKind::Vgg19) {
    if (auto err = checkPositive("layers", o.layers))
      return err;
    if (auto err = checkPositive("hidden", o.hidden))
      return err;
  }
  if (isTransformer) {
    if (auto err = checkPositive("heads", o.heads))
      return err;
    if (auto err = checkPositive("ffn", o.ffn))
      return err;
    if (o.hidden % o.heads != 0)
      return badInput("--hidden {0} is not divisible by --heads {1}", o.hidden,
                      o.heads);
  }
  if (isText) {
    if (auto err = checkPositive("seq", o.seq))
      return err;
    if (auto err = checkPositive("vocab", o.vocab))
      return err;
  }
  if (o.kind == ZooModelKind::Gpt && o.seq < 2)
    return badInput("--seq must be at least 2 for gpt's next-token loss, got "
                    "{0}",
                    o.seq);
  if (o.kind == ZooModelKind::Vit || o.kind == ZooModelKind::Vgg19) {
    if (auto err = checkPositive("image", o.image))
      return err;
    int64_t factor = o.kind == ZooModelKind::Vit ? kVitPatch : 32;
    if (o.image % factor != 0)
      return badInput("--image {0} is not divisible by {1} ({2})", o.image,
                      factor,
                      o.kind == ZooModelKind::Vit ? "the patch size"
                                                  : "vgg19's five poolings");
  }
  if (o.kind == ZooModelKind::BertMoe) {
    if (o.experts < 2)
      return badInput("--experts must be at least 2 for top-2 gating, got {0}",
                      o.experts);
    if (!(o.capacityFactor > 0) || !std::isfinite(o.capacityFactor))
      return badInput("--capacity-factor must be positive, got {0}",
                      o.capacityFactor);
  }
  return llvm::Error::success();
}

int64_t zoo::moeCapacity(const ZooOptions &o) {
  double capacity =
      std::ceil(2.0 * o.capacityFactor * double(o.seq) / double(o.experts));
  return std::max<int64_t>(1, int64_t(capacity));
}
