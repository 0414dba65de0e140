//===- TableOracle.cpp - Throughputs from Gavel's measured JSON ----------===//

#include "weft/Sched/TableOracle.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace weft;
using namespace weft::sched;
using llvm::StringRef;

static constexpr StringRef kSpreadSuffix = "_unconsolidated";

llvm::Expected<std::pair<std::string, unsigned>>
sched::parseGavelKey(StringRef key) {
  // Python's repr of a (str, int) tuple: "('name', 4)". The name may hold
  // parentheses but no quote, so the last quote closes it.
  StringRef s = key.trim();
  if (!s.consume_front("(") || !s.consume_back(")"))
    return badInput("key '{0}': expected \"('<job type>', <scale>)\"", key);
  s = s.trim();
  char quote = s.empty() ? 0 : s.front();
  if (quote != '\'' && quote != '"')
    return badInput("key '{0}': expected a quoted job type", key);
  size_t close = s.rfind(quote);
  if (close == 0)
    return badInput("key '{0}': unterminated job type", key);
  std::string type = s.substr(1, close - 1).str();
  StringRef rest = s.drop_front(close + 1).trim();
  unsigned scale = 0;
  if (!rest.consume_front(",") || rest.trim().getAsInteger(10, scale) ||
      scale == 0)
    return badInput("key '{0}': expected a positive scale factor after the "
                    "job type",
                    key);
  return std::make_pair(type, scale);
}

llvm::Expected<std::unique_ptr<TableOracle>>
TableOracle::parse(StringRef text, StringRef fileName) {
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(text);
  if (!root)
    return badInput("{0}: invalid JSON: {1}", fileName,
                    llvm::toString(root.takeError()));
  const llvm::json::Object *byGpu = root->getAsObject();
  if (!byGpu || byGpu->empty())
    return badInput("{0}: expected an object keyed by worker type", fileName);
  auto oracle = std::make_unique<TableOracle>();
  for (const auto &gpuEntry : *byGpu) {
    std::string gpu = gpuEntry.first.str();
    const llvm::json::Object *jobs = gpuEntry.second.getAsObject();
    if (!jobs)
      return badInput("{0}: worker type '{1}': expected an object", fileName,
                      gpu);
    bool spread = StringRef(gpu).endswith(kSpreadSuffix);
    if (!spread)
      oracle->baseGpuTypes.push_back(gpu);
    for (const auto &jobEntry : *jobs) {
      auto key = parseGavelKey(jobEntry.first);
      if (!key)
        return badInput("{0}: worker type '{1}': {2}", fileName, gpu,
                        llvm::toString(key.takeError()));
      const llvm::json::Object *entry = jobEntry.second.getAsObject();
      std::optional<double> alone =
          entry ? entry->getNumber("null") : std::nullopt;
      if (!alone || *alone < 0)
        return badInput("{0}: worker type '{1}', job '{2}': expected a "
                        "non-negative \"null\" throughput",
                        fileName, gpu, jobEntry.first.str());
      oracle->table[{gpu, key->first, key->second}] = *alone;
      if (!spread) {
        auto &counts = oracle->countsByType[key->first];
        if (!llvm::is_contained(counts, key->second))
          counts.push_back(key->second);
      }
    }
  }
  for (auto &entry : oracle->countsByType)
    llvm::sort(entry.second);
  llvm::sort(oracle->baseGpuTypes);
  if (oracle->baseGpuTypes.empty())
    return badInput("{0}: no consolidated worker types", fileName);
  return oracle;
}

llvm::Expected<std::unique_ptr<TableOracle>> TableOracle::load(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return badInput("cannot read oracle table '{0}': {1}", path,
                    buffer.getError().message());
  return parse((*buffer)->getBuffer(), path);
}

std::optional<double> TableOracle::throughput(StringRef jobType, unsigned count,
                                              StringRef gpuType,
                                              bool consolidated) const {
  std::string gpu = gpuType.str();
  // A one-GPU job is never spread; Gavel's tables repeat it anyway.
  if (!consolidated && count > 1)
    gpu += kSpreadSuffix.str();
  auto it = table.find({gpu, jobType.str(), count});
  if (it != table.end())
    return it->second;
  auto measured = countsByType.find(jobType.str());
  if (!linearScaling || measured == countsByType.end() ||
      measured->second != std::vector<unsigned>{1} ||
      (count != 2 && count != 4 && count != 8))
    return std::nullopt;
  it = table.find({gpuType.str(), jobType.str(), 1});
  if (it == table.end())
    return std::nullopt;
  return it->second;
}

std::vector<unsigned> TableOracle::counts(StringRef jobType) const {
  auto it = countsByType.find(jobType.str());
  if (it == countsByType.end())
    return {};
  if (linearScaling && it->second == std::vector<unsigned>{1})
    return {1, 2, 4, 8};
  return it->second;
}

std::vector<std::string> TableOracle::jobTypes() const {
  std::vector<std::string> types;
  for (const auto &entry : countsByType)
    types.push_back(entry.first);
  return types;
}

std::vector<std::string> TableOracle::gpuTypes() const { return baseGpuTypes; }

double sched::estimatedParamsMillions(StringRef jobType) {
  // Public parameter counts of the models behind Gavel's job types.
  static const std::pair<StringRef, double> kModels[] = {
      {"ResNet-18", 11.7}, {"ResNet-50", 25.6},      {"Transformer", 65.0},
      {"LM", 66.0},        {"Recommendation", 20.0}, {"A3C", 3.3},
      {"CycleGAN", 28.3}};
  for (const auto &model : kModels)
    if (jobType.startswith(model.first))
      return model.second;
  return 0;
}

std::optional<IterationProfile>
TableOracle::iterationProfile(StringRef jobType, unsigned count,
                              StringRef gpuType) const {
  // Estimate (docs/Scheduler.md): data-parallel ring all-reduce of fp32
  // gradients, 2 (n-1)/n * 4 bytes * parameters per GPU per iteration;
  // compute time = the consolidated iteration time (communication inside a
  // node is taken as hidden).
  double params = estimatedParamsMillions(jobType) * 1e6;
  std::optional<double> rate = throughput(jobType, count, gpuType, true);
  if (!rate || *rate <= 0 || params <= 0 || count < 2)
    return std::nullopt;
  IterationProfile profile;
  profile.computeS = 1.0 / *rate;
  profile.bytesPerGpu = 2.0 * (count - 1) / count * 4.0 * params;
  return profile;
}
