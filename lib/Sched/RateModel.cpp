//===- RateModel.cpp - Per-job rates on the cluster's GPU types ----------===//

#include "weft/Sched/RateModel.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include <map>

using namespace weft;
using namespace weft::sched;

std::optional<ElasticBatch> sched::parseElasticBatch(llvm::StringRef text) {
  if (text == "global")
    return ElasticBatch::Global;
  if (text == "per-gpu")
    return ElasticBatch::PerGpu;
  return std::nullopt;
}

std::optional<TypeRequest> sched::parseTypeRequest(llvm::StringRef text) {
  if (text == "hard")
    return TypeRequest::Hard;
  if (text == "prefer")
    return TypeRequest::Prefer;
  return std::nullopt;
}

/// Steps/s of a job of type `jobType` asking for `scale` GPUs, on `count`
/// GPUs of oracle type `gpu`, in the job's own steps (see ElasticBatch).
static std::optional<double> elasticThroughput(const ThroughputOracle &oracle,
                                               const std::string &jobType,
                                               unsigned scale, unsigned count,
                                               llvm::StringRef gpu, bool cons,
                                               ElasticBatch elastic) {
  if (elastic == ElasticBatch::PerGpu)
    if (std::optional<double> steps =
            oracle.throughput(jobType, count, gpu, cons))
      return *steps * count / scale;
  unsigned batch = unsigned(samplesPerStep(jobType));
  if (elastic == ElasticBatch::Global && count != scale && batch > 1 &&
      batch * scale % count == 0 &&
      llvm::StringRef(jobType).contains("(batch size ")) {
    // The same global batch over `count` GPUs: the variant at the new
    // per-GPU batch, if the oracle measured it.
    unsigned perGpu = batch * scale / count;
    llvm::StringRef name(jobType);
    std::string variant = (name.take_front(name.rfind("(batch size ")) +
                           "(batch size " + llvm::Twine(perGpu) + ")")
                              .str();
    if (std::optional<double> steps =
            oracle.throughput(variant, count, gpu, cons))
      return *steps * perGpu / batch;
  }
  return oracle.throughput(jobType, count, gpu, cons);
}

RateModel::RateModel(const SchedCluster &cluster,
                     const ThroughputOracle &oracle, llvm::ArrayRef<Job> jobs,
                     ElasticBatch elastic)
    : RateModel(cluster, oracle, jobs, RateOptions{elastic}) {}

RateModel::RateModel(const SchedCluster &cluster,
                     const ThroughputOracle &oracle, llvm::ArrayRef<Job> jobs,
                     const RateOptions &options)
    : cluster(cluster), oracle(oracle), elastic(options.elastic) {
  unsigned numTypes = cluster.types.size();
  std::map<std::tuple<std::string, unsigned, std::vector<std::string>>,
           unsigned>
      index;
  classOf.resize(jobs.size());
  for (const Job &job : jobs) {
    jobTypeOf.push_back(job.type);
    auto key = std::make_tuple(job.type, job.scale, job.allowedTypes);
    auto [it, inserted] = index.insert({key, classes.size()});
    classOf[job.id] = it->second;
    if (!inserted)
      continue;
    JobClass cls;
    cls.jobType = job.type;
    cls.scale = job.scale;
    cls.worth.assign(numTypes, 0.0);
    cls.counts = oracle.counts(job.type);
    cls.rates.assign(numTypes * cls.counts.size() * 2, 0.0);
    cls.progress = cls.rates;
    for (unsigned t = 0; t < numTypes; ++t) {
      const GpuType &type = cluster.types[t];
      bool requested =
          job.allowedTypes.empty() ||
          llvm::any_of(job.allowedTypes, [&](const std::string &name) {
            return llvm::StringRef(name).equals_insensitive(type.name);
          });
      if (!requested && options.request == TypeRequest::Hard)
        continue;
      double worth = requested ? 1.0 : options.penalty;
      cls.worth[t] = worth;
      for (unsigned c = 0; c < cls.counts.size(); ++c) {
        unsigned count = cls.counts[c];
        for (unsigned cons = 0; cons < 2; ++cons) {
          std::optional<double> steps =
              elasticThroughput(oracle, job.type, job.scale, count,
                                type.oracleType, cons, options.elastic);
          double value = steps ? *steps * type.speedFactor : 0.0;
          unsigned at = (t * cls.counts.size() + c) * 2 + cons;
          cls.progress[at] = value;
          cls.rates[at] = value * worth;
        }
      }
      double atScale = 0;
      for (unsigned c = 0; c < cls.counts.size(); ++c)
        if (cls.counts[c] == job.scale)
          atScale = cls.rates[(t * cls.counts.size() + c) * 2 + 1];
      if (atScale > cls.best && type.total >= job.scale) {
        cls.best = atScale;
        cls.bestType = t;
      }
    }
    classes.push_back(std::move(cls));
  }
}

double RateModel::rate(unsigned job, unsigned type, unsigned count,
                       bool consolidated) const {
  const JobClass &cls = classes[classOf[job]];
  for (unsigned c = 0; c < cls.counts.size(); ++c)
    if (cls.counts[c] == count)
      return cls.rates[(type * cls.counts.size() + c) * 2 + consolidated];
  return 0;
}

double RateModel::progressRate(unsigned job, unsigned type, unsigned count,
                               bool consolidated) const {
  const JobClass &cls = classes[classOf[job]];
  for (unsigned c = 0; c < cls.counts.size(); ++c)
    if (cls.counts[c] == count)
      return cls.progress[(type * cls.counts.size() + c) * 2 + consolidated];
  return 0;
}

llvm::ArrayRef<unsigned> RateModel::counts(unsigned job) const {
  return classes[classOf[job]].counts;
}

double RateModel::bestRate(unsigned job) const {
  return classes[classOf[job]].best;
}

int RateModel::bestType(unsigned job) const {
  return classes[classOf[job]].bestType;
}

std::optional<IterationProfile> RateModel::profile(unsigned job, unsigned type,
                                                   unsigned count) const {
  const GpuType &gpu = cluster.types[type];
  auto profile = oracle.iterationProfile(jobTypeOf[job], count, gpu.oracleType);
  if (profile)
    profile->computeS /= gpu.speedFactor;
  return profile;
}

double RateModel::mixedProgressRate(
    unsigned job, llvm::ArrayRef<std::pair<unsigned, unsigned>> parts) const {
  unsigned id = classOf[job];
  const JobClass &cls = classes[id];
  std::vector<std::pair<unsigned, unsigned>> key(parts.begin(), parts.end());
  llvm::sort(key);
  auto [it, inserted] = mixed.try_emplace({id, key}, 0.0);
  if (!inserted)
    return it->second;
  std::map<std::string, unsigned> counts;
  unsigned total = 0;
  for (auto [type, count] : key) {
    if (type >= cluster.types.size() || cls.worth[type] <= 0)
      return 0;
    counts[cluster.types[type].oracleType] += count;
    total += count;
  }
  std::optional<double> steps = oracle.throughputMixed(cls.jobType, counts);
  if (!steps)
    return 0;
  double value = *steps;
  if (elastic == ElasticBatch::PerGpu)
    value *= double(total) / cls.scale;
  it->second = value;
  return value;
}

double RateModel::mixedRate(
    unsigned job, llvm::ArrayRef<std::pair<unsigned, unsigned>> parts) const {
  double least = 1;
  for (auto [type, count] : parts)
    if (type < cluster.types.size())
      least = std::min(least, classes[classOf[job]].worth[type]);
  return mixedProgressRate(job, parts) * least;
}
