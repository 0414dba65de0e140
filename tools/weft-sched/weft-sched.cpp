//===- weft-sched.cpp - Trace-driven cluster scheduling simulator --------===//
//
// weft-sched --cluster SPEC (--trace FILE | --workload gavel:...)
//            --oracle table:FILE|compiler[:cache=FILE] --policy a[,b,...]
//            [--network fair|crux]
//            [--report DIR] [--report-csv FILE]
// docs/Scheduler.md is the manual.
//
//===----------------------------------------------------------------------===//

#include "OracleFlag.h"
#include "weft/Sched/ClusterAdapter.h"
#include "weft/Sched/Network.h"
#include "weft/Sched/RateModel.h"
#include "weft/Sched/Report.h"
#include "weft/Sched/RestartCost.h"
#include "weft/Sched/Simulator.h"
#include "weft/Sched/TableOracle.h"
#include "weft/Sched/Workload.h"
#include "weft/Support/CommandLine.h"
#include "weft/Support/Error.h"
#include "weft/Support/Progress.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>

using namespace weft;
using namespace weft::sched;
namespace cl = llvm::cl;

static cl::OptionCategory category("weft-sched options");
static cl::opt<std::string>
    clusterArg("cluster", cl::desc("cluster spec (YAML) or gpus:TYPE=N,..."),
               cl::value_desc("spec"), cl::cat(category));
static cl::opt<std::string>
    traceArg("trace", cl::desc("job trace (Gavel .trace or Weft .csv)"),
             cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string> workloadArg(
    "workload",
    cl::desc("generated workload: gavel:rate=R,jobs=N,seed=S,window=A-B"),
    cl::value_desc("spec"), cl::cat(category));
static cl::opt<std::string> oracleArg("oracle",
                                      cl::desc("throughput oracle: table:FILE "
                                               "or compiler[:cache=FILE]"),
                                      cl::value_desc("oracle"),
                                      cl::cat(category));
static cl::opt<std::string> policyArg("policy",
                                      cl::desc("comma-separated policies"),
                                      cl::value_desc("a,b,..."),
                                      cl::init("fifo"), cl::cat(category));
static cl::opt<std::string>
    networkArg("network", cl::desc("network model: none, fair or crux"),
               cl::init("none"), cl::cat(category));
static cl::opt<unsigned>
    cruxLevels("crux-levels", cl::desc("priority levels for --network crux"),
               cl::init(8), cl::cat(category));
static cl::opt<std::string>
    reportDir("report", cl::desc("write report.json, jobs.csv and SVGs here"),
              cl::value_desc("dir"), cl::cat(category));
static cl::opt<double> roundS("round", cl::desc("round length (s)"),
                              cl::init(360), cl::cat(category));
static cl::opt<std::string> restartCostArg(
    "restart-cost",
    cl::desc("seconds per (re)start after a preemption, migration, resize "
             "or failure: S or S,POLICY=S,... (per-policy values)"),
    cl::value_desc("s[,policy=s]"), cl::init("10"), cl::cat(category));
static cl::opt<std::string> restartPerGpuArg(
    "restart-cost-per-gpu",
    cl::desc("seconds per GPU added to each restart's cost (S or "
             "S,POLICY=S,...)"),
    cl::value_desc("s[,policy=s]"), cl::init("0"), cl::cat(category));
static cl::opt<std::string> restartCapArg(
    "restart-cost-cap",
    cl::desc("cap on one restart's cost, seconds or none (S or "
             "S,POLICY=S,...); a cost beyond a round carries over"),
    cl::value_desc("s[,policy=s]"), cl::init("none"), cl::cat(category));
static cl::opt<std::string>
    reportCsv("report-csv",
              cl::desc("write samples/s and jobs finished per time window, "
                       "per policy, as CSV"),
              cl::value_desc("file"), cl::cat(category));
static cl::opt<double>
    reportWindowH("report-window", cl::desc("time window of --report-csv (h)"),
                  cl::init(1), cl::cat(category));
static cl::opt<std::string> gpuTypesArg(
    "gpu-types",
    cl::desc("a job's gpu_types: hard (it runs on those types only; a type "
             "the cluster lacks is bad input) or prefer (policies favour "
             "them, other types count at --gpu-type-penalty of their rate)"),
    cl::init("hard"), cl::cat(category));
static cl::opt<double> gpuTypePenalty(
    "gpu-type-penalty",
    cl::desc("with --gpu-types prefer: the fraction of its rate a type "
             "outside a job's gpu_types is worth to the policies, in (0, 1]"),
    cl::init(0.5), cl::cat(category));
static cl::opt<double>
    checkpointEveryS("checkpoint-every",
                     cl::desc("periodic checkpoint interval of run time (s); "
                              "0 = only on preemption"),
                     cl::init(0), cl::cat(category));
static cl::list<std::string>
    failArgs("fail", cl::desc("node failure: NODE@SECONDS (or NODE@Hh)"),
             cl::value_desc("node@time"), cl::cat(category));
static cl::opt<bool>
    deadlines("deadlines",
              cl::desc("admit deadline jobs only if a Cell can meet them"),
              cl::cat(category));
static cl::opt<bool> fork("fork",
                          cl::desc("hadar: fork jobs over GPU types (HadarE)"),
                          cl::cat(category));
static cl::opt<double> knee("knee",
                            cl::desc("rubick: knee of the sensitivity curves "
                                     "(fraction of rate per added GPU)"),
                            cl::init(0.01), cl::cat(category));
static cl::opt<std::string> elasticBatch(
    "elastic-batch",
    cl::desc("how crius/rubick's resized jobs progress: global (fixed "
             "global batch, the oracle's iteration rate at the new size) or "
             "per-gpu (fixed per-GPU batch, a fixed number of samples)"),
    cl::init("global"), cl::cat(category));
static cl::opt<bool>
    checkInvariantsArg("check-invariants",
                       cl::desc("check the invariants every round"),
                       cl::cat(category));
static cl::opt<bool> linearScaling(
    "assume-linear-scaling",
    cl::desc("table oracle: run 1-GPU-only job types on 2/4/8 GPUs at the "
             "1-GPU iteration rate (Gavel's msr traces need it)"),
    cl::cat(category));
static cl::opt<double> maxTimeH("max-time",
                                cl::desc("stop after this simulated time (h)"),
                                cl::init(1e6), cl::cat(category));

static llvm::Error run() {
  if (clusterArg.empty())
    return badInput("--cluster is required");
  if (traceArg.empty() == workloadArg.empty())
    return badInput("give exactly one of --trace and --workload");
  auto loadedOracle = loadOracle(oracleArg, clusterArg);
  if (!loadedOracle)
    return loadedOracle.takeError();
  const ThroughputOracle *oracle = loadedOracle->oracle.get();
  if (loadedOracle->table)
    loadedOracle->table->setAssumeLinearScaling(linearScaling);
  // The compiler oracle calls a job type it cannot open unknown; its own
  // error says why.
  auto oracleError = [&](llvm::Error err) -> llvm::Error {
    if (loadedOracle->compiler)
      if (std::optional<std::string> why =
              loadedOracle->compiler->firstError()) {
        llvm::consumeError(std::move(err));
        return badInput("--oracle compiler: {0}", *why);
      }
    return err;
  };
  std::optional<Progress> cellProgress;
  if (loadedOracle->compiler) {
    cellProgress.emplace("weft-sched compiler oracle");
    loadedOracle->compiler->setProgress(
        [&](llvm::StringRef line) { cellProgress->update(line); });
  }
  auto cluster = loadSchedCluster(clusterArg, *oracle);
  if (!cluster)
    return cluster.takeError();
  Workload workload;
  if (!traceArg.empty()) {
    auto loaded = loadTrace(traceArg, *oracle);
    if (!loaded)
      return oracleError(loaded.takeError());
    workload = std::move(*loaded);
  } else {
    auto params = parseGeneratorSpec(workloadArg);
    if (!params)
      return params.takeError();
    auto generated = generateGavelWorkload(*params, *oracle);
    if (!generated)
      return generated.takeError();
    workload = std::move(*generated);
  }
  std::optional<TypeRequest> request = parseTypeRequest(gpuTypesArg);
  if (!request)
    return badInput("--gpu-types '{0}': expected hard or prefer", gpuTypesArg);
  if (!(gpuTypePenalty > 0 && gpuTypePenalty <= 1))
    return badInput("--gpu-type-penalty must be in (0, 1], got {0}",
                    gpuTypePenalty.getValue());
  if (*request == TypeRequest::Hard)
    if (auto err = checkAllowedTypes(workload, *cluster))
      return err;
  auto restartBase = parsePerPolicyValue("restart-cost", restartCostArg, 10);
  if (!restartBase)
    return restartBase.takeError();
  auto restartPerGpu =
      parsePerPolicyValue("restart-cost-per-gpu", restartPerGpuArg, 0);
  if (!restartPerGpu)
    return restartPerGpu.takeError();
  auto restartCap = parsePerPolicyValue("restart-cost-cap", restartCapArg,
                                        std::numeric_limits<double>::infinity(),
                                        /*allowNone=*/true);
  if (!restartCap)
    return restartCap.takeError();
  SimOptions options;
  options.roundS = roundS;
  options.checkpointEveryS = checkpointEveryS;
  options.deadlines = deadlines;
  options.checkInvariants = checkInvariantsArg;
  options.maxTimeS = maxTimeH * 3600;
  struct Bound {
    cl::opt<double> *flag;
    bool positive;
  };
  for (Bound b : {Bound{&roundS, true}, Bound{&maxTimeH, true},
                  Bound{&reportWindowH, true}, Bound{&checkpointEveryS, false},
                  Bound{&knee, false}}) {
    double value = *b.flag;
    if (!std::isfinite(value) || value < 0 || (b.positive && value == 0))
      return badInput("--{0} must be a finite number {1} 0, got {2}",
                      b.flag->ArgStr, b.positive ? ">" : ">=", value);
  }
  for (const std::string &text : failArgs) {
    auto failure = parseFailure(text, *cluster);
    if (!failure)
      return failure.takeError();
    options.failures.push_back(*failure);
  }
  std::unique_ptr<NetworkModel> network;
  if (networkArg != "none") {
    auto model = createNetworkModel(networkArg, *cluster, cruxLevels);
    if (!model)
      return model.takeError();
    network = std::move(*model);
    options.network = network.get();
  }
  PolicyOptions policyOptions;
  policyOptions.fork = fork;
  policyOptions.knee = knee;
  llvm::SmallVector<llvm::StringRef> names;
  llvm::StringRef(policyArg).split(names, ',', -1, false);
  if (names.empty())
    return badInput("--policy: no policy given; known policies: {0}",
                    knownPolicies());
  std::vector<std::unique_ptr<Policy>> policies;
  for (llvm::StringRef name : names) {
    auto policy = createPolicy(name.trim(), policyOptions);
    if (!policy)
      return policy.takeError();
    policies.push_back(std::move(*policy));
  }
  std::optional<ElasticBatch> elastic = parseElasticBatch(elasticBatch);
  if (!elastic)
    return badInput("--elastic-batch '{0}': expected global or per-gpu",
                    elasticBatch);
  RateOptions rateOptions;
  rateOptions.elastic = *elastic;
  rateOptions.request = *request;
  rateOptions.penalty = gpuTypePenalty;
  RateModel rates(*cluster, *oracle, workload.jobs, rateOptions);
  llvm::outs() << "cluster " << cluster->name << ": " << cluster->totalGpus()
               << " GPUs in " << cluster->nodes.size() << " nodes (";
  for (unsigned t = 0; t < cluster->types.size(); ++t) {
    const GpuType &type = cluster->types[t];
    llvm::outs() << (t ? ", " : "") << type.total << " " << type.name;
    if (type.oracleType != llvm::StringRef(type.name).lower() ||
        type.speedFactor != 1)
      llvm::outs() << llvm::format(" as %s x %.2f", type.oracleType.c_str(),
                                   type.speedFactor);
  }
  llvm::outs() << "); " << workload.jobs.size() << " jobs";
  if (workload.measureEnd < workload.jobs.size())
    llvm::outs() << ", measuring jobs " << workload.measureBegin << "-"
                 << workload.measureEnd;
  llvm::outs() << "; network " << networkArg << "\n";
  std::vector<SimResult> results;
  std::vector<PolicyStats> stats;
  for (auto &policy : policies) {
    Progress progress(("weft-sched " + policy->name()).str());
    unsigned total = workload.jobs.size();
    options.onRound = [&](double nowS, unsigned finished) {
      progress.update(llvm::formatv("{0:F1} h simulated, {1}/{2} jobs done",
                                    nowS / 3600, finished, total)
                          .str());
    };
    options.restartCostS = restartBase->get(policy->name());
    options.restartCostPerGpuS = restartPerGpu->get(policy->name());
    options.restartCostCapS = restartCap->get(policy->name());
    auto result = simulate(workload, *cluster, rates, *policy, options);
    progress.done();
    if (!result)
      return result.takeError();
    stats.push_back(computeStats(*result, workload));
    results.push_back(std::move(*result));
  }
  if (loadedOracle->compiler) {
    cellProgress->done();
    if (std::optional<std::string> why = loadedOracle->compiler->firstError())
      return badInput("--oracle compiler: {0}", *why);
    llvm::errs() << llvm::formatv(
        "weft-sched: compiler oracle: {0} Cells estimated, {1} answers from "
        "the cache\n",
        loadedOracle->compiler->estimated(),
        loadedOracle->compiler->cacheHits());
  }
  printStatsTable(stats, llvm::outs());
  for (const PolicyStats &s : stats)
    llvm::outs() << llvm::format("%s: simulated in %.2f s wall, %u LP solves "
                                 "in %.2f s, %u restarts, allocated %.1f %%, "
                                 "%.1f samples/s\n",
                                 s.policy.c_str(), s.wallS, s.solves, s.solverS,
                                 s.restarts, 100 * s.allocatedUtilization,
                                 s.avgSamplesPerS);
  for (const PolicyStats &s : stats)
    if (s.stalledJobs)
      llvm::errs() << llvm::formatv(
          "weft-sched: warning: {0}: {2} jobs lost their GPUs {1} times "
          "before paying their restart cost: restarts keep them from "
          "progressing (jobs.csv stalled_restarts)\n",
          s.policy, s.stalledRestarts, s.stalledJobs);
  for (const SimResult &result : results) {
    unsigned shown = 0;
    for (const JobRecord &r : result.jobs)
      if (r.status == JobStatus::Rejected && !r.rejectReason.empty() &&
          shown++ < 3)
        llvm::outs() << result.policy << ": job " << r.id
                     << " rejected: " << r.rejectReason << "\n";
  }
  if (!reportDir.empty())
    if (llvm::Error err = writeReport(reportDir, results, stats, workload))
      return err;
  if (!reportCsv.empty())
    if (llvm::Error err = writeThroughputCsv(reportCsv, results, workload,
                                             reportWindowH * 3600))
      return err;
  return llvm::Error::success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  if (!weft::parseCommandLine(argc, argv, "weft-sched",
                              "weft-sched: simulate scheduling policies "
                              "on a heterogeneous GPU cluster\n"))
    return ExitBadInput;
  if (llvm::Error err = run())
    return reportError("weft-sched", std::move(err));
  return ExitSuccess;
}
