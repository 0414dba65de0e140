//===- GavelGenerator.cpp - Gavel's continuous workload generator --------===//
//
// docs/Setups.md: Poisson arrivals at rate λ jobs/hour; job type uniform over
// the oracle's types; duration 60*10^U(1.5,3) s with probability 0.8, else
// 60*10^U(3,4) s, measured on the reference GPU (v100); GPUs 1/2/4/8 with
// probabilities 0.7/0.1/0.15/0.05. A job type without figures for the drawn
// count runs on 1 GPU (A3C, CycleGAN and Recommendation do not scale).
//
//===----------------------------------------------------------------------===//

#include "ParseNumber.h"
#include "weft/Sched/Workload.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/SmallVector.h"
#include <cmath>
#include <random>

using namespace weft;
using namespace weft::sched;
using llvm::StringRef;

llvm::Expected<GeneratorParams> sched::parseGeneratorSpec(StringRef text) {
  StringRef body = text;
  if (!body.consume_front("gavel:") && body != "gavel")
    return badInput("workload '{0}': expected "
                    "'gavel:rate=R,jobs=N,seed=S,window=A-B'",
                    text);
  GeneratorParams params;
  llvm::SmallVector<StringRef> items;
  body.split(items, ',', -1, false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    bool bad = false;
    if (key == "rate")
      bad = parseFinite(value, params.ratePerHour) || params.ratePerHour <= 0;
    else if (key == "jobs")
      bad = value.getAsInteger(10, params.numJobs) || params.numJobs == 0;
    else if (key == "seed")
      bad = value.getAsInteger(10, params.seed);
    else if (key == "window") {
      auto [a, b] = value.split('-');
      bad = a.getAsInteger(10, params.windowBegin) ||
            b.getAsInteger(10, params.windowEnd) ||
            params.windowEnd <= params.windowBegin;
    } else
      return badInput("workload '{0}': unknown key '{1}' (known: rate, jobs, "
                      "seed, window)",
                      text, key);
    if (bad)
      return badInput("workload '{0}': bad value '{1}' for '{2}'", text, value,
                      key);
  }
  if (params.windowEnd > params.numJobs)
    return badInput("workload '{0}': window ends at job {1} but only {2} jobs "
                    "are generated",
                    text, params.windowEnd, params.numJobs);
  return params;
}

namespace {
/// A uniform double in [0, 1) from 53 random bits (portable, unlike
/// std::uniform_real_distribution).
double uniform(std::mt19937_64 &rng) { return (rng() >> 11) * 0x1.0p-53; }
} // namespace

llvm::Expected<Workload>
sched::generateGavelWorkload(const GeneratorParams &params,
                             const ThroughputOracle &oracle) {
  std::vector<std::string> types = oracle.jobTypes();
  std::string reference = referenceGpuType(oracle);
  if (types.empty() || reference.empty())
    return badInput("gavel generator: the oracle has no job or GPU types");
  std::mt19937_64 rng(params.seed);
  Workload workload;
  double now = 0;
  for (unsigned i = 0; i < params.numJobs; ++i) {
    if (i > 0)
      now += -std::log(1 - uniform(rng)) * 3600.0 / params.ratePerHour;
    Job job;
    job.id = i;
    job.origin = "generator";
    job.arrivalS = now;
    job.type = types[std::min<size_t>(types.size() - 1,
                                      size_t(uniform(rng) * types.size()))];
    double u = uniform(rng);
    double exponent = uniform(rng) < 0.8 ? 1.5 + 1.5 * u : 3.0 + u;
    double durationS = 60.0 * std::pow(10.0, exponent);
    double p = uniform(rng);
    unsigned scale = p < 0.7 ? 1 : p < 0.8 ? 2 : p < 0.95 ? 4 : 8;
    std::optional<double> rate =
        oracle.throughput(job.type, scale, reference, true);
    if (!rate || *rate <= 0) {
      scale = 1;
      rate = oracle.throughput(job.type, 1, reference, true);
    }
    if (!rate || *rate <= 0)
      return badInput("gavel generator: no throughput for '{0}' on '{1}'",
                      job.type, reference);
    job.scale = scale;
    job.totalSteps = std::max(1.0, std::round(durationS * *rate));
    workload.jobs.push_back(std::move(job));
  }
  if (params.windowEnd > 0) {
    workload.measureBegin = params.windowBegin;
    workload.measureEnd = params.windowEnd;
  }
  return workload;
}
