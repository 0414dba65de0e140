//===- Zoo.h - The model zoo: options and writers ---------------*- C++ -*-===//
//
// The zoo writes weightless ONNX training models (forward pass ending in a
// scalar cross-entropy loss) for the benchmark models of docs/Setups.md. This
// header is ONNX-free; ZooModel.h exposes the ONNX ModelProto itself.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_ZOO_ZOO_H
#define WEFT_ZOO_ZOO_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft {
namespace zoo {

/// The model families the zoo can write.
enum class ZooModelKind { Mlp, Vgg19, Vit, Bert, BertMoe, Gpt };

/// All kinds, in the order `--help` lists them.
const std::vector<ZooModelKind> &allZooModelKinds();

/// The command-line name of a kind (`mlp`, `vgg19`, `vit`, `bert`,
/// `bert-moe`, `gpt`).
llvm::StringRef zooModelName(ZooModelKind kind);

/// Parses a command-line model name; a bad-input error lists the known names.
llvm::Expected<ZooModelKind> parseZooModelKind(llvm::StringRef name);

/// Sizes and switches of one zoo model. Obtain defaults with
/// `defaultZooOptions` and override fields; fields a family does not use are
/// ignored (docs/Zoo.md lists which apply).
struct ZooOptions {
  ZooModelKind kind = ZooModelKind::Bert;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t ffn = 0;
  int64_t seq = 0;
  int64_t vocab = 0;
  int64_t experts = 0;
  double capacityFactor = 0;
  int64_t image = 0;
  int64_t classes = 0;
  /// A fixed batch size; unset means the symbolic dim `batch`.
  std::optional<int64_t> batch;
  /// Write random parameters as initializers instead of graph inputs.
  bool withWeights = false;
  uint64_t seed = 0;
};

/// The defaults of a family (docs/Setups.md sizes).
ZooOptions defaultZooOptions(ZooModelKind kind);

/// The size options a family reads, by their weft-zoo flag names ("layers",
/// "hidden", ...); the others do not change its model.
llvm::ArrayRef<llvm::StringRef> zooSizeFlags(ZooModelKind kind);

/// Checks sizes: positive, hidden divisible by heads, image divisible by the
/// patch or pooling factor, and so on. Returns a bad-input error otherwise.
llvm::Error validateZooOptions(const ZooOptions &options);

/// Patch edge of the ViT family (4 × 4 patches).
constexpr int64_t kVitPatch = 4;

/// Tokens per group the MoE gating may send to one expert:
/// ceil(2 · capacityFactor · seq / experts) (top-2, GShard), at least 1.
int64_t moeCapacity(const ZooOptions &options);

/// Number of trainable parameters (scalars) the model declares.
llvm::Expected<uint64_t> countZooParameters(const ZooOptions &options);

/// Builds, checks and shape-infers the model; returns the serialized
/// ModelProto.
llvm::Expected<std::string> serializeZooModel(const ZooOptions &options);

/// What was written, for the tool's summary.
struct ZooSummary {
  uint64_t parameters = 0;
  uint64_t nodes = 0;
  uint64_t fileBytes = 0;
  /// Node count per op type (`weft.Top2Gating` for the custom op), sorted.
  std::vector<std::pair<std::string, uint64_t>> opCounts;
};

/// Builds the model and writes it to `path` (binary ONNX).
llvm::Expected<ZooSummary> writeZooModel(const ZooOptions &options,
                                         llvm::StringRef path);

} // namespace zoo
} // namespace weft

#endif // WEFT_ZOO_ZOO_H
