//===- weft-zoo.cpp - Writes the zoo's weightless ONNX models -------------===//
//
//   weft-zoo {mlp,vgg19,vit,bert,bert-moe,gpt} [options] -o model.onnx
//
//===----------------------------------------------------------------------===//

#include "weft/Support/Error.h"
#include "weft/Zoo/Zoo.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace weft;
using namespace weft::zoo;

static cl::OptionCategory zooCategory("weft-zoo options");

static cl::opt<std::string>
    modelName(cl::Positional, cl::desc("<mlp|vgg19|vit|bert|bert-moe|gpt>"),
              cl::cat(zooCategory));
static cl::opt<std::string> outputPath("o", cl::desc("Output ONNX file"),
                                       cl::value_desc("file"),
                                       cl::cat(zooCategory));

static cl::opt<int64_t> layers("layers", cl::desc("Layers (blocks)"),
                               cl::cat(zooCategory));
static cl::opt<int64_t> hidden("hidden", cl::desc("Hidden size H"),
                               cl::cat(zooCategory));
static cl::opt<int64_t> heads("heads", cl::desc("Attention heads"),
                              cl::cat(zooCategory));
static cl::opt<int64_t> ffn("ffn", cl::desc("Feed-forward size F"),
                            cl::cat(zooCategory));
static cl::opt<int64_t> seq("seq", cl::desc("Sequence length S (tokens)"),
                            cl::cat(zooCategory));
static cl::opt<int64_t> vocab("vocab", cl::desc("Vocabulary size V"),
                              cl::cat(zooCategory));
static cl::opt<int64_t> experts("experts", cl::desc("MoE experts E (bert-moe)"),
                                cl::cat(zooCategory));
static cl::opt<double>
    capacityFactor("capacity-factor",
                   cl::desc("MoE capacity factor (bert-moe); capacity per "
                            "group = ceil(2 * factor * S / E)"),
                   cl::cat(zooCategory));
static cl::opt<int64_t> image("image",
                              cl::desc("Image side in pixels (vgg19, vit)"),
                              cl::cat(zooCategory));
static cl::opt<int64_t> classes("classes",
                                cl::desc("Classes (mlp, vgg19, vit)"),
                                cl::cat(zooCategory));
static cl::opt<int64_t>
    batch("batch", cl::desc("Fix the batch size (default: symbolic 'batch')"),
          cl::cat(zooCategory));
static cl::opt<bool>
    withWeights("with-weights",
                cl::desc("Write random weights as initializers (small "
                         "models; default: weightless)"),
                cl::cat(zooCategory));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of --with-weights"),
                              cl::init(0), cl::cat(zooCategory));

static const char *const kOverview =
    "weft-zoo: writes weightless ONNX training models (opset 17) ending in a "
    "scalar\ncross-entropy loss. Parameters are graph inputs listed in the "
    "metadata key\n'weft.parameters' unless --with-weights is given. Defaults "
    "per model:\n"
    "  mlp       3 layers, hidden 1024, 10 classes\n"
    "  vgg19     CIFAR-10: 32x32x3 images, 10 classes\n"
    "  vit       4x4 patches on 32x32, 12 layers, hidden 768, 12 heads, "
    "FFN 3072\n"
    "  bert      12 layers, hidden 768, 12 heads, FFN 3072, seq 128, vocab "
    "30522\n"
    "  bert-moe  bert with every other FFN a top-2 MoE: 16 experts, capacity "
    "factor 2.5\n"
    "  gpt       24 layers, hidden 1024, 16 heads, FFN 4096, seq 1024, vocab "
    "50257\n";

/// Copies a flag into `field` when the user gave it.
template <typename T, typename U>
static void override(const cl::opt<T> &flag, U &field) {
  if (flag.getNumOccurrences())
    field = flag;
}

/// Turns the parsed flags into validated-later zoo options.
static Expected<ZooOptions> optionsFromFlags() {
  if (modelName.empty())
    return badInput("no model given; expected one of mlp, vgg19, vit, bert, "
                    "bert-moe, gpt");
  Expected<ZooModelKind> kind = parseZooModelKind(modelName);
  if (!kind)
    return kind.takeError();
  if (outputPath.empty())
    return badInput("no output file given; pass -o model.onnx");
  ZooOptions o = defaultZooOptions(*kind);
  override(layers, o.layers);
  override(hidden, o.hidden);
  override(heads, o.heads);
  override(ffn, o.ffn);
  override(seq, o.seq);
  override(vocab, o.vocab);
  override(experts, o.experts);
  override(capacityFactor, o.capacityFactor);
  override(image, o.image);
  override(classes, o.classes);
  if (batch.getNumOccurrences())
    o.batch = int64_t(batch);
  o.withWeights = withWeights;
  o.seed = seed;
  if (auto err = validateZooOptions(o))
    return std::move(err);
  return o;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(zooCategory);
  std::string parseErrors;
  raw_string_ostream errs(parseErrors);
  if (!cl::ParseCommandLineOptions(argc, argv, kOverview, &errs)) {
    // One line: cl's first complaint without its "tool:" prefix.
    StringRef line = StringRef(errs.str()).split('\n').first.trim();
    line.consume_front("weft-zoo: ");
    return reportError("weft-zoo", badInput("{0} (see weft-zoo --help)", line));
  }
  Expected<ZooOptions> options = optionsFromFlags();
  if (!options)
    return reportError("weft-zoo", options.takeError());
  if (auto err = writeZooModel(*options, outputPath))
    return reportError("weft-zoo", std::move(err));
  return ExitSuccess;
}
