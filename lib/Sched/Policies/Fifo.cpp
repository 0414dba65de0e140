//===- Fifo.cpp - First in, first out, heterogeneity-agnostic ------------===//
//
// Non-preemptive: running jobs keep their GPUs; waiting jobs are started in
// arrival order on the GPU type with the most free GPUs that can run them
// (blind to speed). A job that does not fit is skipped this round, so
// smaller later jobs may start (no head-of-line blocking).
//
//===----------------------------------------------------------------------===//

#include "PolicyUtil.h"

using namespace weft;
using namespace weft::sched;

namespace {
class Fifo : public Policy {
public:
  llvm::StringRef name() const override { return "fifo"; }

  llvm::Expected<std::vector<Assignment>> plan(const PolicyInput &in) override {
    std::vector<unsigned> free(in.capacity.begin(), in.capacity.end());
    std::vector<Assignment> plan;
    std::vector<unsigned> order = byArrival(in);
    for (unsigned i : order) {
      const ActiveJob &job = in.active[i];
      if (job.current.empty())
        continue;
      bool fits = true;
      for (const Part &part : job.current)
        fits &= free[part.type] >= part.count;
      if (!fits)
        continue;
      for (const Part &part : job.current)
        free[part.type] -= part.count;
      plan.push_back({job.id, job.current});
    }
    unsigned freeTotal = 0;
    for (unsigned f : free)
      freeTotal += f;
    for (unsigned i : order) {
      // A full cluster takes no one else: stop scanning the queue.
      if (freeTotal == 0)
        break;
      const ActiveJob &job = in.active[i];
      if (!job.current.empty())
        continue;
      unsigned scale = in.jobs[job.id].scale;
      int chosen = -1;
      for (unsigned t = 0; t < free.size(); ++t)
        if (free[t] >= scale && bestPlacementRate(in, job.id, t, scale) > 0 &&
            (chosen < 0 || free[t] > free[chosen]))
          chosen = t;
      if (chosen < 0)
        continue;
      free[chosen] -= scale;
      freeTotal -= scale;
      plan.push_back({job.id, {{unsigned(chosen), scale}}});
    }
    return plan;
  }
};
} // namespace

std::unique_ptr<Policy> sched::createFifo() { return std::make_unique<Fifo>(); }
