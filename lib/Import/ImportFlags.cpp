//===- ImportFlags.cpp - Command-line flags shared by importing tools -----===//

#include "weft/Import/ImportFlags.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringExtras.h"

using namespace weft;
namespace cl = llvm::cl;

ImportFlags::ImportFlags(cl::OptionCategory &category)
    : globalBatch("global-batch",
                  cl::desc("Global batch size (samples per step across all "
                           "devices)"),
                  cl::value_desc("N"), cl::init(0), cl::cat(category)),
      batchPerDevice("batch-per-device",
                     cl::desc("Samples per device per step; the global batch "
                              "is this times the device count (default 32)"),
                     cl::value_desc("N"), cl::init(0), cl::cat(category)),
      inputShapes("input-shape",
                  cl::desc("Static shape of an input, e.g. "
                           "input_ids=32x128 (repeatable)"),
                  cl::value_desc("name=DxDx..."), cl::cat(category)),
      frozen("frozen",
             cl::desc("Float tensors to treat as buffers (no gradient)"),
             cl::value_desc("name,..."), cl::CommaSeparated, cl::cat(category)),
      withWeights("with-weights",
                  cl::desc("Copy initializer data into the program"),
                  cl::cat(category)),
      loss("loss", cl::desc("Add a proxy loss when no output is a scalar loss"),
           cl::values(
               clEnumValN(ProxyLoss::None, "none", "no proxy (default)"),
               clEnumValN(ProxyLoss::Sum, "sum", "sum of the first output"),
               clEnumValN(ProxyLoss::Mean, "mean", "mean of the first output")),
           cl::init(ProxyLoss::None), cl::cat(category)),
      noFuse("no-fuse",
             cl::desc("Keep elementwise chains as exported (by default the "
                      "erf form of GELU becomes one graph.gelu)"),
             cl::cat(category)) {}

static llvm::Expected<std::pair<std::string, std::vector<int64_t>>>
parseInputShape(llvm::StringRef text) {
  auto [name, dims] = text.split('=');
  if (name.empty() || dims.empty())
    return badInput("--input-shape '{0}' is not name=DxDx...", text);
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, 'x');
  for (llvm::StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d <= 0)
      return badInput("--input-shape '{0}': '{1}' is not a positive integer",
                      text, p);
    shape.push_back(d);
  }
  return std::make_pair(name.str(), shape);
}

llvm::Expected<ImportOptions> ImportFlags::resolve(unsigned numDevices) const {
  ImportOptions options;
  // 0 is the flags' "not given"; given explicitly it is bad input.
  if (globalBatch < 0 || (globalBatch.getNumOccurrences() && !globalBatch))
    return badInput("--global-batch must be positive, got {0}",
                    int64_t(globalBatch));
  if (batchPerDevice < 0 ||
      (batchPerDevice.getNumOccurrences() && !batchPerDevice))
    return badInput("--batch-per-device must be positive, got {0}",
                    int64_t(batchPerDevice));
  if (globalBatch && batchPerDevice)
    return badInput("give --global-batch or --batch-per-device, not both");
  if (globalBatch)
    options.batch = globalBatch;
  else
    options.batch = (batchPerDevice ? batchPerDevice : 32) *
                    int64_t(std::max(numDevices, 1u));
  for (const std::string &s : inputShapes) {
    auto parsed = parseInputShape(s);
    if (!parsed)
      return parsed.takeError();
    options.inputShapes[parsed->first] = parsed->second;
  }
  options.frozen.insert(frozen.begin(), frozen.end());
  options.withWeights = withWeights;
  options.proxyLoss = loss;
  options.fuse = !noFuse;
  return options;
}
