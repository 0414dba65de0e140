//===- BertShapeTest.cpp - A ratio problem of BERT / 64-device shape ------===//
//
// A synthetic problem with the shape of BERT-base on 64 devices (4 device
// classes of 16, 8 nodes of 8): 12 layers of 16 steps, per-layer head,
// hidden and FFN segments and a shared batch segment; rooflines, padded
// all-gathers, NIC loads, gradient all-reduce constants and memory rows. It
// checks the LP and Integerize end to end and prints their sizes and
// measured wall times (no timing assertions). With `memoised`, the layers
// share segments and collapse to one block with multiplicity 12.
//
//===----------------------------------------------------------------------===//

#include "TestProblems.h"
#include "weft/Ratio/Integerize.h"
#include "weft/Ratio/Objective.h"
#include <chrono>
#include <cstdio>
#include <random>

using namespace weft;
using namespace weft::ratio;
using namespace weft::ratio::test;

namespace {

struct ClassSpec {
  const char *name;
  double flops;  // FLOP/s
  double memBw;  // bytes/s
  double memory; // bytes
  double linkBw; // bytes/s, collective bandwidth per device
  double nicBw;  // bytes/s per node
};

RatioProblem bertShape(bool memoised) {
  const ClassSpec specs[] = {
      {"A100", 19.5e12, 1.5e12, 40e9, 100e9, 25e9},
      {"V100", 15.7e12, 0.9e12, 32e9, 50e9, 12.5e9},
      {"P100", 9.3e12, 0.7e12, 16e9, 16e9, 12.5e9},
      {"T4", 8.1e12, 0.3e12, 16e9, 16e9, 6.25e9},
  };
  RatioProblem p;
  for (unsigned c = 0; c < 4; ++c) {
    p.classes.push_back({specs[c].name, 16, specs[c].memory});
    for (unsigned n = 0; n < 2; ++n)
      p.nodes.push_back({std::string(specs[c].name) + "-" + std::to_string(n),
                         {{c, 8u}},
                         specs[c].nicBw});
  }
  const int layers = 12, batch = 2048, seq = 128, hidden = 768;
  p.segments.push_back({"batch", batch, 1, std::nullopt});
  std::mt19937 rng(7);
  auto jitter = [&] {
    return std::uniform_real_distribution<double>(0.9, 1.1)(rng);
  };
  // Relative FLOPs and bytes of 16 steps of a layer, fixed once so that the
  // layers are identical.
  std::vector<double> flopShare, byteShare;
  for (int i = 0; i < 16; ++i) {
    flopShare.push_back(jitter());
    byteShare.push_back(jitter());
  }
  double layerFlops = 6.0 * batch * seq * 12 * hidden * hidden; // fwd + bwd
  double paramBytes = 4.0 * 12 * hidden * hidden;
  double activationBytes = 4.0 * batch * seq * hidden * 20;
  for (int l = 0; l < layers; ++l) {
    unsigned heads = p.segments.size(), hid = heads + 1, ffn = heads + 2;
    if (memoised && l > 0) {
      heads = 1;
      hid = 2;
      ffn = 3;
    } else {
      std::string suffix = "." + std::to_string(l);
      p.segments.push_back(
          {"batch-heads" + suffix, 12 * batch, 1, std::nullopt});
      p.segments.push_back({"hidden" + suffix, hidden, 64, std::nullopt});
      p.segments.push_back({"ffn" + suffix, 4 * hidden, 64, std::nullopt});
    }
    for (int i = 0; i < 16; ++i) {
      unsigned seg = i < 4    ? 0
                     : i < 8  ? heads
                     : i < 12 ? ffn
                     : i < 14 ? hid
                              : 0;
      Step &step = addStep(p);
      double flops = layerFlops / 16 * flopShare[i];
      double bytes = activationBytes / 16 * byteShare[i];
      for (unsigned c = 0; c < 4; ++c) {
        StepClassCost &cost = step.perClass[c];
        cost.compute.constant = 20e-6; // kernel launches, kept in the row
        MaxCost roofline;
        roofline.pieces.push_back(linear(0, seg, c, flops / specs[c].flops));
        roofline.pieces.push_back(linear(0, seg, c, bytes / specs[c].memBw));
        cost.computeMax.push_back(roofline);
        if (i % 4 == 3)
          cost.commMax.push_back(
              paddedAllGather(p, seg, bytes / 8, specs[c].linkBw));
        if (i % 8 == 5)
          cost.nicLoads.push_back({0, bytes / 4});
        if (i == 15) // gradient all-reduce of the layer's weights
          cost.comm.constant = 2 * paramBytes * 63 / 64 / specs[c].linkBw;
      }
    }
  }
  for (unsigned c = 0; c < 4; ++c) {
    LinearCost mem;
    mem.constant = 16.0 * paramBytes * layers; // weights, grads, Adam
    mem.terms.push_back({0, c, activationBytes * layers});
    p.memory.push_back(mem);
  }
  return p;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

void solveAndIntegerize(bool memoised) {
  RatioProblem p = bertShape(memoised);
  auto start = std::chrono::steady_clock::now();
  auto sol = solveRatios(p);
  double lpSeconds = secondsSince(start);
  ASSERT_TRUE(bool(sol)) << messageOf(sol.takeError());
  EXPECT_NEAR(sol->objectiveSeconds, evaluateObjective(p, sol->ratios),
              1e-7 * sol->objectiveSeconds);

  start = std::chrono::steady_clock::now();
  auto plan = integerize(p, *sol);
  double z3Seconds = secondsSince(start);
  ASSERT_TRUE(bool(plan)) << messageOf(plan.takeError());
  EXPECT_EQ(messageOf(checkIntegerPlan(p, *plan)), "");
  EXPECT_GE(plan->integerCost, plan->continuousCost * (1 - 1e-9));
  EXPECT_LE(plan->integerCost, plan->roundedCost * (1 + 1e-12));
  std::printf("bert-shape%s: %zu steps (%u distinct), %zu segments, 4 "
              "classes: LP %u rows x %u columns in %.3f s (measured); "
              "integerize %.3f s (measured, %s); step %.6f s continuous, "
              "%.6f s integer, %.6f s rounded\n",
              memoised ? " memoised" : "", p.steps.size(),
              sol->numDistinctSteps, p.segments.size(), sol->numRows,
              sol->numColumns, lpSeconds, z3Seconds,
              plan->provedOptimal ? "proved optimal" : "resource limit",
              plan->continuousCost, plan->integerCost, plan->roundedCost);
}

TEST(BertShape, LayersAsDistinctSteps) { solveAndIntegerize(false); }

TEST(BertShape, MemoisedLayers) { solveAndIntegerize(true); }

} // namespace
