//===- CompilerOracle.cpp - weft-sched's throughputs from the compiler ----===//

#include "weft/Cell/CompilerOracle.h"
#include "weft/Cell/SubCluster.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using namespace weft;
using namespace weft::cell;

static constexpr llvm::StringLiteral kHeader = "# weft-cell-cache v1";

struct CompilerOracle::Model {
  std::unique_ptr<ModelGraphs> graphs;
  std::unique_ptr<CellEstimator> estimator;
};

CompilerOracle::CompilerOracle(const ClusterSpec &cluster,
                               const CompilerOracleOptions &o)
    : cluster(cluster), options(o) {}

CompilerOracle::~CompilerOracle() = default;

llvm::Expected<CompilerOracleOptions>
CompilerOracle::parseSpec(llvm::StringRef spec) {
  CompilerOracleOptions options;
  if (spec.empty())
    return options;
  if (!spec.consume_front(":"))
    return badInput("--oracle compiler{0}: expected compiler[:cache=FILE]",
                    spec);
  llvm::SmallVector<llvm::StringRef> fields;
  spec.split(fields, ':', -1, false);
  for (llvm::StringRef field : fields) {
    auto [key, value] = field.split('=');
    if (key == "cache" && !value.empty()) {
      options.cachePath = value.str();
      continue;
    }
    unsigned n = 0;
    if (key == "max-stages" && !value.getAsInteger(10, n) && n >= 1) {
      options.maxStages = n;
      continue;
    }
    if (key == "max-gpus" && !value.getAsInteger(10, n) && n >= 1) {
      options.maxGpus = n;
      continue;
    }
    return badInput("--oracle compiler: unknown option '{0}' (expected "
                    "cache=FILE, max-stages=K or max-gpus=N)",
                    field);
  }
  return options;
}

llvm::Expected<std::unique_ptr<CompilerOracle>>
CompilerOracle::create(const ClusterSpec &cluster, llvm::StringRef clusterText,
                       const CompilerOracleOptions &options) {
  std::unique_ptr<CompilerOracle> oracle(new CompilerOracle(cluster, options));
  oracle->clusterKey = llvm::utohexstr(llvm::xxHash64(clusterText));
  if (options.cachePath.empty() || !llvm::sys::fs::exists(options.cachePath))
    return oracle;
  auto buffer = llvm::MemoryBuffer::getFile(options.cachePath);
  if (!buffer)
    return badInput("{0}: cannot read the oracle cache: {1}", options.cachePath,
                    buffer.getError().message());
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (auto [i, line] : llvm::enumerate(lines)) {
    if (line.trim().empty())
      continue;
    if (i == 0) {
      if (!line.startswith(kHeader))
        return badInput("{0}:1: not a Cell cache (expected '{1}')",
                        options.cachePath, kHeader);
      continue;
    }
    llvm::SmallVector<llvm::StringRef> fields;
    line.split(fields, '\t');
    double rate = 0;
    if (fields.size() != 4 || fields[3].trim().getAsDouble(rate) ||
        !(rate >= 0))
      return badInput("{0}:{1}: expected CLUSTER<tab>JOB TYPE<tab>DEVICES"
                      "<tab>ITERATIONS/S",
                      options.cachePath, i + 1);
    if (fields[0] == oracle->clusterKey)
      oracle->cache[(fields[1] + "\t" + fields[2]).str()] = rate;
  }
  return oracle;
}

std::string CompilerOracle::clusterType(llvm::StringRef name) const {
  for (const DeviceType &type : cluster.deviceTypes)
    if (llvm::StringRef(type.name).equals_insensitive(name))
      return type.name;
  return "";
}

CompilerOracle::Model *CompilerOracle::modelOf(llvm::StringRef jobType) const {
  auto it = models.find(jobType.str());
  if (it != models.end())
    return it->second.get();
  auto spec = parseJobModel(jobType);
  std::unique_ptr<Model> model;
  if (spec) {
    auto graphs = ModelGraphs::open(context, *spec);
    if (graphs) {
      model = std::make_unique<Model>();
      model->graphs = std::move(*graphs);
      model->estimator = std::make_unique<CellEstimator>(*model->graphs,
                                                         cluster, options.cell);
    } else if (!error) {
      error = llvm::toString(graphs.takeError());
    } else {
      llvm::consumeError(graphs.takeError());
    }
  } else {
    // counts() reports job types that do not parse; a name asked here
    // only (a batch-size variant of another oracle's naming) has no figure.
    llvm::consumeError(spec.takeError());
  }
  Model *raw = model.get();
  models[jobType.str()] = std::move(model);
  return raw;
}

void CompilerOracle::append(const std::string &key, double rate) const {
  if (options.cachePath.empty())
    return;
  bool fresh = !llvm::sys::fs::exists(options.cachePath);
  std::error_code ec;
  llvm::raw_fd_ostream os(options.cachePath, ec, llvm::sys::fs::OF_Append);
  if (ec) {
    if (!error)
      error = llvm::formatv("{0}: cannot write the oracle cache: {1}",
                            options.cachePath, ec.message())
                  .str();
    return;
  }
  if (fresh)
    os << kHeader << "\n";
  os << clusterKey << "\t" << key << "\t" << llvm::formatv("{0:e16}", rate)
     << "\n";
}

std::optional<double>
CompilerOracle::rateOf(llvm::StringRef jobType,
                       const DeviceMultiset &devices) const {
  std::string key = (jobType + "\t" + formatMultiset(devices)).str();
  auto hit = cache.find(key);
  if (hit != cache.end()) {
    ++hits;
    return hit->second;
  }
  // Devices the cluster lacks: no figure.
  DeviceMultiset have = devicesOf(cluster);
  for (const auto &[type, count] : devices)
    if (!have.count(type) || have[type] < count)
      return std::nullopt;
  Model *model = modelOf(jobType);
  if (!model)
    return std::nullopt;
  double rate = 0;
  for (unsigned s = 1; s <= options.maxStages; ++s) {
    auto e = model->estimator->estimate({devices, s});
    if (!e) {
      if (!error)
        error = llvm::toString(e.takeError());
      else
        llvm::consumeError(e.takeError());
      return std::nullopt;
    }
    if (e->feasible && e->iterationSeconds > 0)
      rate = std::max(rate, 1 / e->iterationSeconds);
    if (options.progress)
      options.progress(
          llvm::formatv("Cell {0} of '{1}': {2}", formatCell(e->cell), jobType,
                        e->feasible ? llvm::formatv("{0:f3} s/iteration",
                                                    e->iterationSeconds)
                                          .str()
                                    : e->reason)
              .str());
  }
  ++computed;
  cache[key] = rate;
  append(key, rate);
  return rate;
}

std::optional<double> CompilerOracle::throughput(llvm::StringRef jobType,
                                                 unsigned count,
                                                 llvm::StringRef gpuType,
                                                 bool consolidated) const {
  // A Cell's nodes are packed (SubCluster.h): no figure for a job spread
  // over more nodes than it needs.
  std::string type = clusterType(gpuType);
  if (type.empty() || count == 0 || (!consolidated && count > 1))
    return std::nullopt;
  return rateOf(jobType, {{type, count}});
}

std::optional<double> CompilerOracle::throughputMixed(
    llvm::StringRef jobType,
    const std::map<std::string, unsigned> &counts) const {
  DeviceMultiset devices;
  for (const auto &[name, count] : counts) {
    std::string type = clusterType(name);
    if (type.empty())
      return std::nullopt;
    if (count)
      devices[type] += count;
  }
  if (devices.empty())
    return std::nullopt;
  return rateOf(jobType, devices);
}

std::vector<unsigned> CompilerOracle::counts(llvm::StringRef jobType) const {
  auto spec = parseJobModel(jobType);
  if (!spec) {
    if (!error)
      error = llvm::toString(spec.takeError());
    else
      llvm::consumeError(spec.takeError());
    return {};
  }
  if (!spec->zoo && !llvm::sys::fs::exists(spec->path)) {
    if (!error)
      error = llvm::formatv("job type '{0}': no such model file '{1}'", jobType,
                            spec->path)
                  .str();
    return {};
  }
  // 1, 2, 4, ... and each type's total, up to the largest type and to
  // maxGpus.
  std::vector<unsigned> result;
  unsigned largest = 0;
  for (const auto &entry : devicesOf(cluster))
    largest = std::max(largest, entry.second);
  largest = std::min(largest, options.maxGpus);
  for (unsigned c = 1; c <= largest; c *= 2)
    result.push_back(c);
  for (const auto &entry : devicesOf(cluster))
    if (entry.second <= largest && !llvm::is_contained(result, entry.second))
      result.push_back(entry.second);
  llvm::sort(result);
  return result;
}

std::vector<std::string> CompilerOracle::jobTypes() const {
  std::vector<std::string> types;
  for (const auto &entry : models)
    types.push_back(entry.first);
  return types;
}

std::vector<std::string> CompilerOracle::gpuTypes() const {
  std::vector<std::string> types;
  for (const DeviceType &type : cluster.deviceTypes)
    types.push_back(llvm::StringRef(type.name).lower());
  llvm::sort(types);
  return types;
}
