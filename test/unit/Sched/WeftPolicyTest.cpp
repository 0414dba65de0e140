//===- WeftPolicyTest.cpp - The weft policy's heterogeneous Cells ---------===//
//
// An oracle that prices one heterogeneous Cell (1 V100 + 1 K80 as one plan,
// throughputMixed) above either GPU alone: `weft` gives the job that Cell,
// `crius` (homogeneous Cells only) cannot, and an infeasible mixed Cell
// (rate 0) is never chosen.
//
//===----------------------------------------------------------------------===//

#include "weft/Sched/Policy.h"
#include "weft/Sched/Simulator.h"
#include "gtest/gtest.h"

using namespace weft::sched;

namespace {
/// Job "J": 1 step/s on a V100, 0.5 on a K80, `mixed` on both as one Cell.
class MixedOracle : public ThroughputOracle {
public:
  explicit MixedOracle(double mixed) : mixed(mixed) {}
  std::optional<double> throughput(llvm::StringRef jobType, unsigned count,
                                   llvm::StringRef gpuType,
                                   bool) const override {
    if (jobType != "J" || count != 1)
      return std::nullopt;
    return gpuType == "v100" ? 1.0 : 0.5;
  }
  std::optional<double> throughputMixed(
      llvm::StringRef jobType,
      const std::map<std::string, unsigned> &counts) const override {
    ++asked;
    std::map<std::string, unsigned> cell{{"k80", 1}, {"v100", 1}};
    if (jobType != "J" || counts != cell)
      return std::nullopt;
    return mixed;
  }
  std::vector<unsigned> counts(llvm::StringRef) const override { return {1}; }
  std::vector<std::string> jobTypes() const override { return {"J"}; }
  std::vector<std::string> gpuTypes() const override { return {"k80", "v100"}; }
  double mixed;
  mutable unsigned asked = 0;
};

SimResult run(const MixedOracle &oracle, llvm::StringRef policyName) {
  auto cluster = parseInlineCluster("gpus:v100=1,k80=1,per-node=1");
  EXPECT_TRUE(bool(cluster));
  Workload workload;
  Job job;
  job.type = "J";
  job.totalSteps = 3600;
  workload.jobs.push_back(job);
  RateModel rates(*cluster, oracle, workload.jobs);
  auto policy = createPolicy(policyName, {});
  EXPECT_TRUE(bool(policy));
  SimOptions options;
  options.restartCostS = 0;
  options.checkInvariants = true;
  auto result = simulate(workload, *cluster, rates, **policy, options);
  EXPECT_TRUE(bool(result)) << llvm::toString(result.takeError());
  return std::move(*result);
}
} // namespace

// On the V100 alone 3600 steps take 3600 s; on the mixed Cell (2 steps/s)
// 1800 s. weft moves the job there at once (its first Cell, the V100, is
// upgraded with the idle K80); crius keeps it on the V100.
TEST(WeftPolicy, TakesTheFasterHeterogeneousCell) {
  MixedOracle oracle(2.0);
  SimResult weft = run(oracle, "weft");
  EXPECT_GT(oracle.asked, 0u);
  ASSERT_EQ(weft.jobs.size(), 1u);
  EXPECT_NEAR(weft.jobs[0].finishS, 1800, 1e-6);
  SimResult crius = run(oracle, "crius");
  EXPECT_NEAR(crius.jobs[0].finishS, 3600, 1e-6);
}

// A mixed Cell slower than the V100 alone per added GPU still adds
// throughput (1.2 > 1), so weft takes it; one the oracle marks infeasible
// (0: out of memory) never.
TEST(WeftPolicy, NeverChoosesAnInfeasibleMixedCell) {
  MixedOracle slower(1.2);
  EXPECT_NEAR(run(slower, "weft").jobs[0].finishS, 3000, 1e-6);
  MixedOracle infeasible(0.0);
  EXPECT_NEAR(run(infeasible, "weft").jobs[0].finishS, 3600, 1e-6);
}

TEST(WeftPolicy, Registered) {
  EXPECT_TRUE(bool(createPolicy("weft", {})));
  EXPECT_NE(knownPolicies().find("weft"), std::string::npos);
}
