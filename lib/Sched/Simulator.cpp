//===- Simulator.cpp - Round-based discrete-event cluster simulator ------===//
//
// Time advances in rounds. At a round's start: arrivals are admitted or
// rejected, failed nodes are taken out, the policy plans, and the plan is
// placed (jobs whose assignment is unchanged keep their GPUs). During the
// round each placed job runs at its rate (slowed by the network model) after
// paying the restart cost if it (re)started; a job that finishes mid-round
// leaves at its exact finish time; a node failure mid-round rolls its jobs
// back to their last checkpoint.
//
//===----------------------------------------------------------------------===//

#include "weft/Sched/Simulator.h"
#include "ParseNumber.h"
#include "weft/Sched/Admission.h"
#include "weft/Sched/Network.h"
#include "weft/Sched/Placement.h"
#include "weft/Sched/RestartCost.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include <chrono>
#include <cmath>
#include <limits>

using namespace weft;
using namespace weft::sched;
using llvm::StringRef;

llvm::Expected<NodeFailure> sched::parseFailure(StringRef text,
                                                const SchedCluster &cluster) {
  auto [nodeName, when] = text.rsplit('@');
  if (when.empty() || nodeName.empty())
    return badInput("--fail '{0}': expected NODE@SECONDS", text);
  int node = cluster.findNode(nodeName);
  if (node < 0)
    return badInput("--fail '{0}': unknown node '{1}' (e.g. '{2}')", text,
                    nodeName, cluster.nodes.front().name);
  double scale = 1;
  if (when.consume_back("h"))
    scale = 3600;
  else
    when.consume_back("s");
  double time = 0;
  if (parseFinite(when, time) || time < 0)
    return badInput("--fail '{0}': time '{1}' is not a non-negative number "
                    "of seconds (or hours with 'h')",
                    text, when);
  return NodeFailure{unsigned(node), time * scale};
}

namespace {

/// Runs one policy over one workload; state lives here.
class Simulation {
public:
  Simulation(const Workload &workload, const SchedCluster &cluster,
             const RateModel &rates, Policy &policy, const SimOptions &options)
      : workload(workload), jobs(workload.jobs), cluster(cluster), rates(rates),
        policy(policy), options(options) {}

  llvm::Expected<SimResult> run();

private:
  void admitArrivals();
  void applyFailures();
  void preparePolicyInput();
  llvm::Error checkViews() const;
  void markStale(unsigned id) {
    if (!stale[id]) {
      stale[id] = 1;
      ++numStale;
    }
  }
  llvm::Error placePlan(const std::vector<Assignment> &plan);
  void runRound(double roundEnd);
  std::vector<unsigned> capacity() const;
  bool measuredDone() const;

  const Workload &workload;
  llvm::ArrayRef<Job> jobs;
  const SchedCluster &cluster;
  const RateModel &rates;
  Policy &policy;
  const SimOptions &options;

  SimState state;
  SimResult result;
  unsigned nextArrival = 0;
  unsigned nextFailure = 0;
  std::vector<NodeFailure> failures;
  std::vector<unsigned> activeIds;
  /// The policies' views of the active jobs, parallel to activeIds. Only
  /// the views of jobs whose state changed (stale: they ran, were
  /// preempted or arrived) are refreshed each round.
  std::vector<ActiveJob> active;
  std::vector<char> stale;
  unsigned numStale = 0;
  /// Jobs holding GPUs this round, ascending (a subset of activeIds): the
  /// per-round work follows them, not the waiting queue.
  std::vector<unsigned> runningIds;
  std::vector<bool> everRan;
  /// Restart seconds still to pay before the job progresses.
  std::vector<double> restartDebtS;
  std::vector<double> samplesPerStepOf;
  std::vector<char> planned, kept;
  std::vector<double> attainedS, slowdown;
  /// result.rounds when the job was admitted: its rounds in the cluster are
  /// result.rounds - admitRound (no per-round counter for waiting jobs).
  std::vector<unsigned> admitRound;
  std::vector<std::vector<unsigned>> roundsOnType;
  std::vector<double> nodeFailedAt;
  bool changed = true;
  unsigned finished = 0;
  /// Measured jobs neither finished nor rejected yet.
  unsigned measuredLeft = 0;
};

std::vector<unsigned> Simulation::capacity() const {
  std::vector<unsigned> cap(cluster.types.size(), 0);
  for (unsigned n = 0; n < cluster.nodes.size(); ++n)
    if (!state.nodeFailed[n])
      cap[cluster.nodes[n].type] += cluster.nodes[n].numGpus;
  return cap;
}

bool Simulation::measuredDone() const { return measuredLeft == 0; }

void Simulation::admitArrivals() {
  std::vector<unsigned> cap;
  std::vector<double> backlog;
  while (nextArrival < jobs.size() &&
         jobs[nextArrival].arrivalS <= state.nowS) {
    unsigned id = nextArrival++;
    const Job &job = jobs[id];
    JobState &js = state.jobs[id];
    JobRecord &record = result.jobs[id];
    js.arrived = true;
    changed = true;
    if (cap.empty())
      cap = capacity();
    // The job must fit some allowed type as a gang of its requested size.
    bool fits = false;
    for (unsigned t = 0; t < cluster.types.size() && !fits; ++t)
      fits = cap[t] >= job.scale && (rates.rate(id, t, job.scale, true) > 0 ||
                                     rates.rate(id, t, job.scale, false) > 0);
    if (!fits) {
      js.rejected = true;
      measuredLeft -= workload.measured(id);
      record.status = JobStatus::Rejected;
      record.rejectReason = llvm::formatv("needs {0} GPUs of one type; no "
                                          "allowed type of the cluster has "
                                          "that many healthy GPUs able to run "
                                          "'{1}'",
                                          job.scale, job.type)
                                .str();
      continue;
    }
    if (options.deadlines && job.deadlineS) {
      if (backlog.empty()) {
        // GPU-seconds of admitted work, queued on each job's current type
        // (or its fastest type while it waits).
        backlog.assign(cluster.types.size(), 0);
        for (unsigned a : activeIds) {
          const JobState &other = state.jobs[a];
          int type = other.parts.empty() ? rates.bestType(a)
                                         : int(other.parts.front().type);
          if (type < 0)
            continue;
          double rate = rates.rate(a, type, jobs[a].scale, true);
          if (rate > 0)
            backlog[type] +=
                (jobs[a].totalSteps - other.steps) / rate * jobs[a].scale;
        }
      }
      double finish =
          estimateFinish(rates, id, job.totalSteps, state.nowS, backlog, cap,
                         policy.elastic() ? 0 : job.scale);
      if (finish > *job.deadlineS) {
        js.rejected = true;
        measuredLeft -= workload.measured(id);
        record.status = JobStatus::Rejected;
        record.rejectReason =
            std::isinf(finish)
                ? std::string("deadline: no Cell can run it")
                : llvm::formatv("deadline: best Cell finishes {0:F2} h after "
                                "the deadline",
                                (finish - *job.deadlineS) / 3600)
                      .str();
        continue;
      }
      int best = rates.bestType(id);
      if (best >= 0) {
        double rate = rates.rate(id, best, job.scale, true);
        if (rate > 0)
          backlog[best] += job.totalSteps / rate * job.scale;
      }
    }
    js.admitted = true;
    admitRound[id] = result.rounds;
    activeIds.push_back(id);
    active.emplace_back();
    active.back().id = id;
    markStale(id);
  }
}

void Simulation::applyFailures() {
  while (nextFailure < failures.size() &&
         failures[nextFailure].timeS <= state.nowS) {
    const NodeFailure &failure = failures[nextFailure++];
    unsigned node = failure.node;
    if (state.nodeFailed[node])
      continue;
    state.nodeFailed[node] = true;
    nodeFailedAt[node] = std::min(nodeFailedAt[node], failure.timeS);
    changed = true;
  }
}

void Simulation::preparePolicyInput() {
  // Views keep their vectors' capacity from round to round, so a round
  // allocates nothing per waiting job; a waiting job's view changes only in
  // its rounds in the cluster.
  for (ActiveJob &view : active) {
    unsigned id = view.id;
    view.roundsActive = result.rounds - admitRound[id];
    if (numStale == 0 || !stale[id])
      continue;
    stale[id] = 0;
    --numStale;
    view.remainingSteps = jobs[id].totalSteps - state.jobs[id].steps;
    view.attainedS = attainedS[id];
    view.roundsOnType.assign(roundsOnType[id].begin(), roundsOnType[id].end());
    view.current.assign(state.jobs[id].parts.begin(),
                        state.jobs[id].parts.end());
  }
}

llvm::Error Simulation::checkViews() const {
  // The views preparePolicyInput() refreshed only for stale jobs must equal
  // views built afresh from the state.
  if (active.size() != activeIds.size())
    return makeError(ExitInternal, "{0} policy views for {1} active jobs",
                     active.size(), activeIds.size());
  for (unsigned i = 0; i < active.size(); ++i) {
    const ActiveJob &view = active[i];
    unsigned id = activeIds[i];
    const JobState &js = state.jobs[id];
    if (view.id != id ||
        view.remainingSteps != jobs[id].totalSteps - js.steps ||
        view.attainedS != attainedS[id] ||
        !llvm::equal(view.roundsOnType, roundsOnType[id]) ||
        !llvm::equal(view.current, js.parts))
      return makeError(ExitInternal,
                       "the policies' view of job {0} is stale in round {1}",
                       id, result.rounds);
  }
  return llvm::Error::success();
}

llvm::Error Simulation::placePlan(const std::vector<Assignment> &plan) {
  NodePool pool(cluster, state.nodeFailed);
  // planned[] and kept[] are members sized to the workload once; only the
  // planned jobs' entries are set, and they are cleared on the way out.
  std::vector<const Assignment *> fresh;
  std::vector<unsigned> keptIds;
  auto clearMarks = llvm::make_scope_exit([&] {
    for (const Assignment &a : plan)
      if (a.job < jobs.size())
        planned[a.job] = kept[a.job] = 0;
  });
  // Validate, then keep unchanged assignments where they ran.
  for (const Assignment &a : plan) {
    if (a.job >= jobs.size() || !state.jobs[a.job].admitted ||
        state.jobs[a.job].done)
      return makeError(ExitInternal,
                       "policy {0} assigned job {1}, which is "
                       "not active",
                       policy.name(), a.job);
    if (planned[a.job]++)
      return makeError(ExitInternal, "policy {0} assigned job {1} twice",
                       policy.name(), a.job);
    std::vector<std::pair<unsigned, unsigned>> cell;
    for (const Part &part : a.parts) {
      if (part.type >= cluster.types.size() || part.count == 0)
        return makeError(ExitInternal, "policy {0} gave job {1} a bad part",
                         policy.name(), a.job);
      cell.emplace_back(part.type, part.count);
      // Never a Cell the oracle marks infeasible (out of memory, a count it
      // does not know, a type the job may not use). A mixed Cell is one
      // plan over all its parts: the oracle prices it whole.
      if (!a.mixed && rates.rate(a.job, part.type, part.count, true) <= 0 &&
          rates.rate(a.job, part.type, part.count, false) <= 0)
        return makeError(ExitInternal,
                         "policy {0} gave job {1} {2} {3} GPUs, where it "
                         "cannot run",
                         policy.name(), a.job, part.count,
                         cluster.types[part.type].name);
    }
    if (a.mixed && rates.mixedRate(a.job, cell) <= 0)
      return makeError(ExitInternal,
                       "policy {0} gave job {1} a mixed Cell where it cannot "
                       "run",
                       policy.name(), a.job);
    JobState &js = state.jobs[a.job];
    if (!a.parts.empty() && a.parts == js.parts && pool.take(js.placement)) {
      kept[a.job] = true;
      keptIds.push_back(a.job);
      continue;
    }
    fresh.push_back(&a);
  }
  // Jobs that ran and do not keep their GPUs are preempted: they checkpoint.
  // (Waiting jobs hold nothing: no placement, parts, rate or restart debt.)
  for (unsigned id : runningIds) {
    JobState &js = state.jobs[id];
    if (kept[id])
      continue;
    markStale(id);
    if (restartDebtS[id] > 0 && !js.placement.empty())
      ++result.jobs[id].stalledRestarts;
    restartDebtS[id] = 0;
    if (!js.placement.empty()) {
      js.ckptSteps = js.steps;
      js.runSinceCkptS = 0;
    }
    js.placement.clear();
    js.parts.clear();
    js.rate = 0;
  }
  runningIds = std::move(keptIds);
  for (const Assignment *a : fresh) {
    std::vector<NodeShare> taken;
    double rate = 0;
    bool ok = true;
    for (const Part &part : a->parts) {
      bool spreadOk = rates.rate(a->job, part.type, part.count, false) > 0;
      std::optional<PartPlacement> where =
          pool.place(part.type, part.count, spreadOk);
      if (!where) {
        ok = false;
        break;
      }
      rate += rates.progressRate(a->job, part.type, part.count,
                                 where->consolidated);
      taken.insert(taken.end(), where->shares.begin(), where->shares.end());
    }
    if (ok && a->mixed) {
      std::vector<std::pair<unsigned, unsigned>> cell;
      for (const Part &part : a->parts)
        cell.emplace_back(part.type, part.count);
      rate = rates.mixedProgressRate(a->job, cell);
    }
    if (!ok || rate <= 0) {
      pool.release(taken);
      continue;
    }
    JobState &js = state.jobs[a->job];
    js.placement = std::move(taken);
    js.parts = a->parts;
    js.rate = rate;
    runningIds.push_back(a->job);
    if (everRan[a->job]) {
      ++result.jobs[a->job].restarts;
      unsigned gpus = 0;
      for (const Part &part : a->parts)
        gpus += part.count;
      restartDebtS[a->job] =
          RestartCost{options.restartCostS, options.restartCostPerGpuS,
                      options.restartCostCapS}
              .seconds(gpus);
    }
  }
  llvm::sort(runningIds);
  return llvm::Error::success();
}

void Simulation::runRound(double roundEnd) {
  double start = state.nowS;
  double roundS = roundEnd - start;
  // Network slowdowns.
  const std::vector<unsigned> &running = runningIds;
  for (unsigned id : running)
    slowdown[id] = 1.0;
  if (options.network) {
    std::vector<NetJob> net;
    for (unsigned id : running) {
      const JobState &js = state.jobs[id];
      if (js.placement.size() < 2)
        continue;
      unsigned count = 0;
      for (const Part &part : js.parts)
        count += part.count;
      auto profile =
          rates.profile(id, js.parts.front().type, js.parts.front().count);
      if (!profile)
        continue;
      net.push_back({id, js.placement, *profile});
    }
    if (!net.empty()) {
      std::vector<double> factors = options.network->slowdowns(net);
      for (unsigned i = 0; i < net.size(); ++i)
        slowdown[net[i].job] = std::max(1.0, factors[i]);
    }
  }
  // Failures inside this round.
  std::vector<double> failAt(cluster.nodes.size(),
                             std::numeric_limits<double>::infinity());
  for (unsigned f = nextFailure; f < failures.size(); ++f)
    if (failures[f].timeS < roundEnd)
      failAt[failures[f].node] =
          std::min(failAt[failures[f].node], failures[f].timeS);
  double usefulInRound = 0, samplesInRound = 0;
  unsigned finishedInRound = 0;
  for (unsigned id : running) {
    markStale(id);
    JobState &js = state.jobs[id];
    JobRecord &record = result.jobs[id];
    const Job &job = jobs[id];
    unsigned gpus = 0;
    double fail = std::numeric_limits<double>::infinity();
    for (const auto &[node, n] : js.placement) {
      gpus += n;
      fail = std::min(fail, failAt[node]);
    }
    if (record.startS < 0)
      record.startS = start;
    everRan[id] = true;
    double stopAt = std::min(roundEnd, fail);
    // The restart cost first, carried over while it exceeds the round.
    double pay = std::min(restartDebtS[id], std::max(0.0, stopAt - start));
    restartDebtS[id] -= pay;
    result.restartGpuS += gpus * pay;
    double runFrom = start + pay;
    double rate = js.rate / slowdown[id];
    double runS = std::max(0.0, stopAt - runFrom);
    double need = (job.totalSteps - js.steps) / rate;
    for (const Part &part : js.parts)
      ++roundsOnType[id][part.type];
    if (need <= runS) {
      double end = runFrom + need;
      js.steps = job.totalSteps;
      js.ckptSteps = js.steps;
      js.done = true;
      record.status = JobStatus::Finished;
      record.finishS = end;
      attainedS[id] += need;
      samplesInRound += need * rate * samplesPerStepOf[id];
      result.allocatedGpuS += gpus * (end - start);
      usefulInRound += gpus * need / slowdown[id];
      js.placement.clear();
      js.parts.clear();
      ++finished;
      ++finishedInRound;
      measuredLeft -= workload.measured(id);
      changed = true;
      continue;
    }
    js.steps += rate * runS;
    samplesInRound += rate * runS * samplesPerStepOf[id];
    attainedS[id] += runS;
    result.allocatedGpuS += gpus * (stopAt - start);
    usefulInRound += gpus * runS / slowdown[id];
    js.runSinceCkptS += runS;
    if (options.checkpointEveryS > 0 &&
        js.runSinceCkptS >= options.checkpointEveryS) {
      double k = std::floor(js.runSinceCkptS / options.checkpointEveryS);
      js.runSinceCkptS -= k * options.checkpointEveryS;
      js.ckptSteps = std::max(js.ckptSteps, js.steps - rate * js.runSinceCkptS);
    }
    if (fail < roundEnd) {
      // The node died under the job: back to the last checkpoint.
      record.lostSteps += js.steps - js.ckptSteps;
      js.steps = js.ckptSteps;
      js.runSinceCkptS = 0;
      js.placement.clear();
      js.parts.clear();
      js.rate = 0;
      if (restartDebtS[id] > 0)
        ++record.stalledRestarts;
      restartDebtS[id] = 0;
      changed = true;
    }
  }
  result.samples.emplace_back(start, roundEnd, samplesInRound);
  result.usefulGpuS += usefulInRound;
  unsigned healthy = 0;
  for (unsigned n = 0; n < cluster.nodes.size(); ++n)
    if (!state.nodeFailed[n])
      healthy += cluster.nodes[n].numGpus;
  if (healthy > 0 && roundS > 0)
    result.utilization.push_back({start, usefulInRound / (healthy * roundS)});
  // Drop finished jobs, and those a failure stopped, from the lists.
  auto holdsNothing = [&](unsigned id) {
    return state.jobs[id].placement.empty();
  };
  llvm::erase_if(runningIds, holdsNothing);
  if (finishedInRound) {
    auto done = [&](unsigned id) { return state.jobs[id].done; };
    llvm::erase_if(activeIds, done);
    llvm::erase_if(active, [&](const ActiveJob &view) {
      if (!done(view.id))
        return false;
      numStale -= stale[view.id];
      stale[view.id] = 0;
      return true;
    });
  }
}

llvm::Expected<SimResult> Simulation::run() {
  auto wallStart = std::chrono::steady_clock::now();
  unsigned n = jobs.size();
  result.policy = policy.name().str();
  result.jobs.resize(n);
  for (unsigned i = 0; i < n; ++i)
    result.jobs[i].id = i;
  state.jobs.assign(n, JobState());
  state.lastCkpt.assign(n, 0);
  state.nodeUsed.assign(cluster.nodes.size(), 0);
  state.nodeFailed.assign(cluster.nodes.size(), false);
  nodeFailedAt.assign(cluster.nodes.size(),
                      std::numeric_limits<double>::infinity());
  everRan.assign(n, false);
  planned.assign(n, 0);
  kept.assign(n, 0);
  restartDebtS.assign(n, 0);
  samplesPerStepOf.resize(n);
  for (unsigned i = 0; i < n; ++i)
    samplesPerStepOf[i] = samplesPerStep(jobs[i].type);
  attainedS.assign(n, 0);
  slowdown.assign(n, 1.0);
  admitRound.assign(n, 0);
  stale.assign(n, 0);
  measuredLeft = 0;
  for (unsigned i = 0; i < n; ++i)
    measuredLeft += workload.measured(i);
  roundsOnType.assign(n, std::vector<unsigned>(cluster.types.size(), 0));
  failures = options.failures;
  llvm::sort(failures, [](const NodeFailure &a, const NodeFailure &b) {
    return a.timeS < b.timeS;
  });
#ifndef NDEBUG
  bool check = true;
#else
  bool check = options.checkInvariants;
#endif
  if (n == 0)
    return result;
  double firstArrival = jobs.front().arrivalS;
  state.nowS = firstArrival;
  bool ranLast = true;
  while (state.nowS < options.maxTimeS) {
    applyFailures();
    admitArrivals();
    if (activeIds.empty()) {
      if (nextArrival >= n)
        break;
      state.nowS = std::max(state.nowS, jobs[nextArrival].arrivalS);
      continue;
    }
    // Nothing ran last round, nothing changed and nothing will: stuck.
    if (!ranLast && !changed && nextArrival >= n &&
        nextFailure >= failures.size())
      break;
    preparePolicyInput();
    if (check)
      if (llvm::Error err = checkViews())
        return std::move(err);
    std::vector<unsigned> cap = capacity();
    PolicyInput in;
    in.nowS = state.nowS;
    in.roundS = options.roundS;
    in.cluster = &cluster;
    in.rates = &rates;
    in.jobs = jobs;
    in.active = active;
    in.capacity = cap;
    in.changed = changed;
    changed = false;
    llvm::Expected<std::vector<Assignment>> plan = policy.plan(in);
    if (!plan)
      return plan.takeError();
    if (llvm::Error err = placePlan(*plan))
      return std::move(err);
    std::fill(state.nodeUsed.begin(), state.nodeUsed.end(), 0);
    ranLast = false;
    for (unsigned id : runningIds)
      for (const auto &[node, gpus] : state.jobs[id].placement) {
        state.nodeUsed[node] += gpus;
        ranLast = true;
      }
    if (check) {
      if (llvm::Error err = checkInvariants(state, cluster, jobs))
        return std::move(err);
      for (unsigned id : activeIds)
        state.lastCkpt[id] = state.jobs[id].ckptSteps;
    }
    double roundEnd = state.nowS + options.roundS;
    runRound(roundEnd);
    ++result.rounds;
    state.nowS = roundEnd;
    // Gavel stops once every measured job is done.
    if (workload.measureEnd < n && measuredDone())
      break;
    if (options.onRound)
      options.onRound(state.nowS, finished);
  }
  // Whatever is left is reported, never dropped.
  double lastEvent = firstArrival;
  for (unsigned i = 0; i < n; ++i) {
    JobRecord &record = result.jobs[i];
    if (record.status == JobStatus::Finished)
      lastEvent = std::max(lastEvent, record.finishS);
    else if (record.status != JobStatus::Rejected)
      record.status = JobStatus::Unfinished;
  }
  if (finished < n)
    lastEvent = std::max(lastEvent, std::min(state.nowS, options.maxTimeS));
  for (unsigned node = 0; node < cluster.nodes.size(); ++node) {
    double until = std::min(lastEvent, nodeFailedAt[node]);
    result.availableGpuS +=
        cluster.nodes[node].numGpus * std::max(0.0, until - firstArrival);
  }
  result.solverS = policy.solverSeconds();
  result.solves = policy.solves();
  result.wallS = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - wallStart)
                     .count();
  if (check)
    if (llvm::Error err = checkFinalInvariants(result, jobs))
      return std::move(err);
  return result;
}

} // namespace

llvm::Expected<SimResult> sched::simulate(const Workload &workload,
                                          const SchedCluster &cluster,
                                          const RateModel &rates,
                                          Policy &policy,
                                          const SimOptions &options) {
  if (options.roundS <= 0)
    return badInput("round length must be positive, got {0} s", options.roundS);
  Simulation sim(workload, cluster, rates, policy, options);
  return sim.run();
}
