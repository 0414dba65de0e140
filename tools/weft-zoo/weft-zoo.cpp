//===- weft-zoo.cpp - Writes the zoo's weightless ONNX models -------------===//
//
//   weft-zoo {mlp,vgg19,vit,bert,bert-moe,gpt} [options] -o model.onnx
//
//===----------------------------------------------------------------------===//

#include "weft/Support/Error.h"
#include "weft/Zoo/Zoo.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
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

static cl::opt<std::string> layers(cl::value_desc("N"), "layers",
                                   cl::desc("Layers (blocks)"),
                                   cl::cat(zooCategory));
static cl::opt<std::string> hidden(cl::value_desc("N"), "hidden",
                                   cl::desc("Hidden size H"),
                                   cl::cat(zooCategory));
static cl::opt<std::string> heads(cl::value_desc("N"), "heads",
                                  cl::desc("Attention heads"),
                                  cl::cat(zooCategory));
static cl::opt<std::string> ffn(cl::value_desc("N"), "ffn",
                                cl::desc("Feed-forward size F"),
                                cl::cat(zooCategory));
static cl::opt<std::string> seq(cl::value_desc("N"), "seq",
                                cl::desc("Sequence length S (tokens)"),
                                cl::cat(zooCategory));
static cl::opt<std::string> vocab(cl::value_desc("N"), "vocab",
                                  cl::desc("Vocabulary size V"),
                                  cl::cat(zooCategory));
static cl::opt<std::string> experts(cl::value_desc("N"), "experts",
                                    cl::desc("MoE experts E (bert-moe)"),
                                    cl::cat(zooCategory));
static cl::opt<std::string>
    capacityFactor(cl::value_desc("X"), "capacity-factor",
                   cl::desc("MoE capacity factor (bert-moe); capacity per "
                            "group = ceil(2 * factor * S / E)"),
                   cl::cat(zooCategory));
static cl::opt<std::string> image(cl::value_desc("N"), "image",
                                  cl::desc("Image side in pixels (vgg19, vit)"),
                                  cl::cat(zooCategory));
static cl::opt<std::string> classes(cl::value_desc("N"), "classes",
                                    cl::desc("Classes (mlp, vgg19, vit)"),
                                    cl::cat(zooCategory));
static cl::opt<std::string>
    batch(cl::value_desc("N"), "batch",
          cl::desc("Fix the batch size (default: symbolic 'batch')"),
          cl::cat(zooCategory));
static cl::opt<bool>
    withWeights("with-weights",
                cl::desc("Write random weights as initializers (small "
                         "models; default: weightless)"),
                cl::cat(zooCategory));
static cl::opt<std::string> seed(cl::value_desc("N"), "seed",
                                 cl::desc("Seed of --with-weights"),
                                 cl::cat(zooCategory));

static cl::opt<bool>
    printSummary("summary",
                 cl::desc("Print parameters, file size and ops by type"),
                 cl::cat(zooCategory));

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

/// Parses a numeric flag into `field` when the user gave it.
template <typename T>
static Error override(const cl::opt<std::string> &flag, T &field) {
  if (!flag.getNumOccurrences())
    return Error::success();
  StringRef text = StringRef(flag).trim();
  bool bad;
  if constexpr (std::is_floating_point_v<T>) {
    double value = 0;
    bad = text.getAsDouble(value);
    field = value;
  } else {
    T value = 0;
    bad = text.getAsInteger(10, value);
    field = value;
  }
  if (bad)
    return badInput("--{0} expects a number, got '{1}'", flag.ArgStr,
                    flag.getValue());
  return Error::success();
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
  int64_t fixedBatch = 0;
  std::pair<const cl::opt<std::string> *, int64_t *> sizes[] = {
      {&layers, &o.layers},   {&hidden, &o.hidden}, {&heads, &o.heads},
      {&ffn, &o.ffn},         {&seq, &o.seq},       {&vocab, &o.vocab},
      {&experts, &o.experts}, {&image, &o.image},   {&classes, &o.classes},
      {&batch, &fixedBatch}};
  // A size the family does not read would be silently ignored.
  for (const cl::opt<std::string> *flag :
       {&layers, &hidden, &heads, &ffn, &seq, &vocab, &experts, &image,
        &classes, &capacityFactor})
    if (flag->getNumOccurrences() &&
        !llvm::is_contained(zooSizeFlags(*kind), flag->ArgStr))
      return badInput("--{0} does not apply to {1} (it takes --{2})",
                      flag->ArgStr, zooModelName(*kind),
                      llvm::join(zooSizeFlags(*kind), ", --"));
  for (auto [flag, field] : sizes)
    if (Error err = override(*flag, *field))
      return err;
  if (Error err = override(capacityFactor, o.capacityFactor))
    return std::move(err);
  if (Error err = override(seed, o.seed))
    return std::move(err);
  if (batch.getNumOccurrences())
    o.batch = fixedBatch;
  o.withWeights = withWeights;
  if (auto err = validateZooOptions(o))
    return std::move(err);
  return o;
}

/// Prints what was written; every number with its unit.
static void printZooSummary(const ZooOptions &options,
                            const ZooSummary &summary) {
  raw_ostream &os = outs();
  os << "model: " << zooModelName(options.kind) << "\n";
  os << "parameters: " << summary.parameters << " ("
     << format("%.1f", double(summary.parameters) * 4 / (1 << 20))
     << " MiB as fp32)\n";
  os << "weights: " << (options.withWeights ? "random initializers" : "none")
     << "\n";
  os << "file: " << summary.fileBytes << " bytes\n";
  os << "nodes: " << summary.nodes << "\n";
  for (const auto &[type, count] : summary.opCounts)
    os << "  " << type << ": " << count << " nodes\n";
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(zooCategory);
  std::string parseErrors;
  raw_string_ostream errs(parseErrors);
  if (!cl::ParseCommandLineOptions(argc, argv, kOverview, &errs)) {
    // One line: cl's first complaint without its "tool:" prefix.
    StringRef line = StringRef(errs.str()).split('\n').first.trim();
    line = line.split("  Try:").first;
    line.consume_front("weft-zoo: ");
    return reportError("weft-zoo", badInput("{0} (see weft-zoo --help)", line));
  }
  Expected<ZooOptions> options = optionsFromFlags();
  if (!options)
    return reportError("weft-zoo", options.takeError());
  Expected<ZooSummary> summary = writeZooModel(*options, outputPath);
  if (!summary)
    return reportError("weft-zoo", summary.takeError());
  if (printSummary)
    printZooSummary(*options, *summary);
  return ExitSuccess;
}
