//===- RateModel.cpp - Per-job rates on the cluster's GPU types ----------===//

#include "weft/Sched/RateModel.h"
#include "llvm/ADT/STLExtras.h"
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

RateModel::RateModel(const SchedCluster &cluster,
                     const ThroughputOracle &oracle, llvm::ArrayRef<Job> jobs,
                     ElasticBatch elastic)
    : cluster(cluster), oracle(oracle) {
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
    cls.counts = oracle.counts(job.type);
    cls.rates.assign(numTypes * cls.counts.size() * 2, 0.0);
    for (unsigned t = 0; t < numTypes; ++t) {
      const GpuType &type = cluster.types[t];
      if (!job.allowedTypes.empty() &&
          !llvm::any_of(job.allowedTypes, [&](const std::string &name) {
            return llvm::StringRef(name).equals_insensitive(type.name);
          }))
        continue;
      for (unsigned c = 0; c < cls.counts.size(); ++c) {
        unsigned count = cls.counts[c];
        for (unsigned cons = 0; cons < 2; ++cons) {
          std::optional<double> steps =
              oracle.throughput(job.type, count, type.oracleType, cons);
          double resize =
              elastic == ElasticBatch::PerGpu ? double(count) / job.scale : 1;
          double value = steps ? *steps * type.speedFactor * resize : 0.0;
          cls.rates[(t * cls.counts.size() + c) * 2 + cons] = value;
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
