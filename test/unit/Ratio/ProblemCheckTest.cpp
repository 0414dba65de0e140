//===- ProblemCheckTest.cpp - RatioProblem::check rejects bad problems ----===//

#include "TestProblems.h"
#include "weft/Ratio/Objective.h"
#include "weft/Ratio/SolveRatios.h"
#include <cmath>
#include <functional>

using namespace weft;
using namespace weft::ratio;
using namespace weft::ratio::test;

namespace {

/// A well-formed two-class problem the cases below break one way each.
RatioProblem validProblem() {
  RatioProblem p = makeProblem({2, 2}, 768, 64);
  p.nodes.push_back({"n0", {{0u, 2u}}, 1e9});
  p.nodes.push_back({"n1", {{1u, 2u}}, 1e9});
  Step &step = addStep(p);
  step.perClass[0].compute = linear(1e-3, 0, 0, 1);
  step.perClass[1].compute = linear(1e-3, 0, 1, 2);
  step.perClass[0].comm = linear(0, 0, 1, -0.5);
  step.perClass[1].nicLoads.push_back({0, 1e6});
  step.perClass[0].commMax.push_back(paddedAllGather(p, 0, 1e6, 1e9));
  p.classes[0].memoryCapacity = 1e9;
  p.memory = {linear(1e6, 0, 0, 1e8), linear(1e6, 0, 1, 1e8)};
  return p;
}

struct BadCase {
  const char *name;
  std::function<void(RatioProblem &)> breakIt;
  const char *expected; // a fragment of the message
};

TEST(ProblemCheck, ValidProblemPasses) {
  EXPECT_EQ(messageOf(validProblem().check()), "");
  auto sol = solveRatios(validProblem());
  EXPECT_TRUE(bool(sol)) << messageOf(sol.takeError());
}

TEST(ProblemCheck, RejectsMalformedProblems) {
  std::vector<BadCase> cases = {
      {"no classes", [](RatioProblem &p) { p.classes.clear(); },
       "no device classes"},
      {"empty class", [](RatioProblem &p) { p.classes[1].count = 0; },
       "has no devices"},
      {"negative memory",
       [](RatioProblem &p) { p.classes[0].memoryCapacity = -1; },
       "memory capacity"},
      {"zero extent", [](RatioProblem &p) { p.segments[0].extent = 0; },
       "extent 0"},
      {"alignment not dividing",
       [](RatioProblem &p) { p.segments[0].alignment = 100; },
       "divisor of its extent"},
      {"fixed ratios not summing to one",
       [](RatioProblem &p) {
         p.segments[0].fixedRatios = std::vector<double>{0.25, 0.5};
       },
       "sum to 1.5"},
      {"fixed ratio count",
       [](RatioProblem &p) {
         p.segments[0].fixedRatios = std::vector<double>{0.5};
       },
       "expected one per class"},
      {"negative fixed ratio",
       [](RatioProblem &p) {
         p.segments[0].fixedRatios = std::vector<double>{0.75, -0.25};
       },
       "non-negative"},
      {"step class count",
       [](RatioProblem &p) { p.steps[0].perClass.pop_back(); },
       "costs for 1 classes"},
      {"negative multiplicity",
       [](RatioProblem &p) { p.steps[0].multiplicity = -1; }, "multiplicity"},
      {"unknown segment",
       [](RatioProblem &p) {
         p.steps[0].perClass[0].compute.terms[0].segment = 7;
       },
       "names segment 7"},
      {"unknown class",
       [](RatioProblem &p) {
         p.steps[0].perClass[0].comm.terms[0].deviceClass = 9;
       },
       "names device class 9"},
      {"negative compute coefficient",
       [](RatioProblem &p) {
         p.steps[0].perClass[0].compute.terms[0].coef = -1;
       },
       "negative coefficient"},
      {"non-finite coefficient",
       [](RatioProblem &p) { p.steps[0].perClass[0].comm.terms[0].coef = NAN; },
       "not finite"},
      {"concave max term",
       [](RatioProblem &p) { p.steps[0].perClass[0].commMax[0].scale = -1; },
       "not convex"},
      {"max without pieces",
       [](RatioProblem &p) {
         p.steps[0].perClass[0].commMax[0].pieces.clear();
       },
       "no pieces"},
      {"nodes not covering a class",
       [](RatioProblem &p) { p.nodes[1].devices[0].second = 1; },
       "nodes hold 1 devices of class 'c1'"},
      {"NIC load without nodes", [](RatioProblem &p) { p.nodes.clear(); },
       "no nodes"},
      {"zero NIC bandwidth",
       [](RatioProblem &p) { p.nodes[0].nicBandwidth = 0; }, "NIC bandwidth"},
      {"memory rows count", [](RatioProblem &p) { p.memory.pop_back(); },
       "memory has 1 rows"},
  };
  for (const BadCase &c : cases) {
    RatioProblem p = validProblem();
    c.breakIt(p);
    auto [code, message] = codeAndMessage(p.check());
    EXPECT_EQ(code, ExitBadInput) << c.name;
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << c.name << ": " << message;
    // The solver refuses the same problem with the same message.
    auto sol = solveRatios(p);
    ASSERT_FALSE(bool(sol)) << c.name;
    EXPECT_EQ(codeAndMessage(sol.takeError()).second, message) << c.name;
  }
}

// Nodes of one shape (class counts in order, NIC bandwidth bit for bit)
// price alike: each class keeps the first node of each shape, in node order,
// and the objective's NIC term is the one of all nodes.
TEST(RatioProblem, DistinctNodeShapesPerClass) {
  RatioProblem p = makeProblem({24, 12});
  for (unsigned n = 0; n < 3; ++n)
    p.nodes.push_back({"a" + std::to_string(n), {{0u, 8u}}, 1e9});
  p.nodes.push_back({"b0", {{1u, 4u}}, 2e9});
  p.nodes.push_back({"b1", {{1u, 4u}}, 1e9});
  p.nodes.push_back({"b2", {{1u, 4u}}, 2e9});
  auto shapes = p.distinctNodesByClass();
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0], (llvm::SmallVector<unsigned, 2>{0}));
  EXPECT_EQ(shapes[1], (llvm::SmallVector<unsigned, 2>{3, 4}));
  ASSERT_EQ(messageOf(p.check()), "");

  // One step whose only cost is a NIC load on class 1: the slowest NIC
  // (node b1, 1e9 B/s) receives (1 - 4·B) of 8e9 bytes.
  Step &step = addStep(p);
  step.perClass[1].nicLoads.push_back({0, 8e9});
  Ratios ratios = {{1.0 / 36, 1.0 / 36}};
  EXPECT_DOUBLE_EQ(evaluateObjective(p, ratios), (1 - 4.0 / 36) * 8e9 / 1e9);
}

} // namespace
