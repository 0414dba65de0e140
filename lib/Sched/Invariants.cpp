//===- Invariants.cpp - Checks the simulator runs every round ------------===//

#include "weft/Sched/Simulator.h"
#include "weft/Support/Error.h"

using namespace weft;
using namespace weft::sched;

llvm::Error sched::checkInvariants(const SimState &state,
                                   const SchedCluster &cluster,
                                   llvm::ArrayRef<Job> jobs) {
  std::vector<unsigned> used(cluster.nodes.size(), 0);
  for (unsigned j = 0; j < state.jobs.size(); ++j) {
    const JobState &job = state.jobs[j];
    for (const auto &[node, gpus] : job.placement) {
      if (node >= cluster.nodes.size())
        return makeError(ExitInternal,
                         "round at {0} s: job {1} placed on "
                         "node {2}, which does not exist",
                         state.nowS, j, node);
      if (state.nodeFailed[node])
        return makeError(ExitInternal,
                         "round at {0} s: job {1} holds GPUs "
                         "on failed node '{2}'",
                         state.nowS, j, cluster.nodes[node].name);
      used[node] += gpus;
    }
    if (job.ckptSteps + 1e-9 < state.lastCkpt[j])
      return makeError(ExitInternal,
                       "round at {0} s: job {1}'s completed "
                       "steps decreased from {2} to {3}",
                       state.nowS, j, state.lastCkpt[j], job.ckptSteps);
    if (job.ckptSteps > job.steps + 1e-6 ||
        job.steps > jobs[j].totalSteps * (1 + 1e-9) + 1e-6)
      return makeError(ExitInternal,
                       "round at {0} s: job {1} has {2} steps "
                       "({3} checkpointed) of {4}",
                       state.nowS, j, job.steps, job.ckptSteps,
                       jobs[j].totalSteps);
  }
  for (unsigned n = 0; n < cluster.nodes.size(); ++n)
    if (used[n] > cluster.nodes[n].numGpus)
      return makeError(ExitInternal,
                       "round at {0} s: node '{1}' has {2} of "
                       "{3} GPUs booked",
                       state.nowS, cluster.nodes[n].name, used[n],
                       cluster.nodes[n].numGpus);
  return llvm::Error::success();
}

llvm::Error sched::checkFinalInvariants(const SimResult &result,
                                        llvm::ArrayRef<Job> jobs) {
  if (result.jobs.size() != jobs.size())
    return makeError(ExitInternal, "{0}: {1} job records for {2} jobs",
                     result.policy, result.jobs.size(), jobs.size());
  for (const JobRecord &record : result.jobs) {
    if (record.status == JobStatus::Finished &&
        (record.finishS < jobs[record.id].arrivalS || record.startS < 0))
      return makeError(ExitInternal,
                       "{0}: job {1} finished before it "
                       "arrived or started",
                       result.policy, record.id);
    if (record.status == JobStatus::Rejected && record.rejectReason.empty())
      return makeError(ExitInternal, "{0}: job {1} rejected without a reason",
                       result.policy, record.id);
  }
  return llvm::Error::success();
}
