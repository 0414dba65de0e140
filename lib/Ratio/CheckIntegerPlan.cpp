//===- CheckIntegerPlan.cpp - Z3 check of a finished integer plan ---------===//
//
// Every constraint is built as a ground Z3 formula over the plan's numbers
// (exact integers and rationals) and simplified to true or false; the first
// false one is reported.
//
//===----------------------------------------------------------------------===//

#include "Z3Numbers.h"
#include "weft/Ratio/Integerize.h"
#include "weft/Support/Error.h"
#include "weft/Support/Units.h"
#include <algorithm>
#include <cmath>
#include <map>

using namespace weft;
using namespace weft::ratio;

static bool holds(const z3::expr &e) { return e.simplify().is_true(); }

static llvm::Error violated(const std::string &what) {
  return makeError(ExitVerifyFailed, "integer plan violates {0}", what);
}

static llvm::Error checkShape(const RatioProblem &p, const IntegerPlan &plan) {
  if (plan.sizes.size() != p.segments.size())
    return violated("its shape: sizes for " +
                    std::to_string(plan.sizes.size()) + " segments, expected " +
                    std::to_string(p.segments.size()));
  for (unsigned s = 0; s < p.segments.size(); ++s) {
    if (plan.sizes[s].size() != p.classes.size())
      return violated("its shape: segment '" + p.segments[s].name +
                      "' has sizes for " +
                      std::to_string(plan.sizes[s].size()) + " classes");
    for (unsigned c = 0; c < p.classes.size(); ++c)
      if (plan.sizes[s][c].size() != p.classes[c].count)
        return violated("its shape: segment '" + p.segments[s].name + "' has " +
                        std::to_string(plan.sizes[s][c].size()) +
                        " sizes for class '" + p.classes[c].name +
                        "', which has " + std::to_string(p.classes[c].count) +
                        " devices");
  }
  return llvm::Error::success();
}

static llvm::Error checkSegment(const RatioProblem &p, const IntegerPlan &plan,
                                unsigned s, const IntegerizeOptions &options,
                                z3::context &ctx) {
  const Segment &seg = p.segments[s];
  int64_t unit = alignmentUnit(seg, options);
  z3::expr unitExpr = ctx.int_val(unit);
  z3::expr sum = ctx.int_val(0);
  std::string where = "segment '" + seg.name + "'";
  for (unsigned c = 0; c < p.classes.size(); ++c) {
    const std::vector<int64_t> &sizes = plan.sizes[s][c];
    // Each distinct size once, in order of its first device, with how many
    // devices hold it: the devices of a class hold one or two sizes, and a
    // formula per device made this check the longest part of integer sizes
    // on clusters of thousands of devices.
    std::vector<std::pair<unsigned, int64_t>> distinct; // (first device, n)
    std::map<int64_t, unsigned> slot;
    for (unsigned i = 0; i < sizes.size(); ++i) {
      auto [it, inserted] = slot.try_emplace(sizes[i], distinct.size());
      if (inserted)
        distinct.push_back({i, 0});
      ++distinct[it->second].second;
    }
    for (auto [i, devices] : distinct) {
      z3::expr size = ctx.int_val(sizes[i]);
      std::string device = "device " + std::to_string(i) + " of class '" +
                           p.classes[c].name + "'";
      if (!holds(size >= 0))
        return violated(where + ": " + device + " holds " +
                        std::to_string(sizes[i]) + " elements, expected >= 0");
      if (!holds(z3::mod(size, unitExpr) == 0))
        return violated(where + ": " + device + " holds " +
                        std::to_string(sizes[i]) +
                        " elements, not a multiple of the alignment " +
                        std::to_string(unit));
      sum = sum + ctx.int_val(devices) * size;
    }
    auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    if (!holds(ctx.int_val(*hi) - ctx.int_val(*lo) <= unitExpr))
      return violated(where + ": devices of class '" + p.classes[c].name +
                      "' hold " + std::to_string(*lo) + " to " +
                      std::to_string(*hi) +
                      " elements, more than one alignment unit (" +
                      std::to_string(unit) + ") apart");
  }
  if (!holds(sum == ctx.int_val(seg.extent)))
    return violated(where + ": sizes sum to " +
                    sum.simplify().get_decimal_string(0) +
                    ", expected the extent " + std::to_string(seg.extent));
  return llvm::Error::success();
}

static llvm::Error checkMemory(const RatioProblem &p, const IntegerPlan &plan,
                               unsigned c, z3::context &ctx) {
  double capacity = p.classes[c].memoryCapacity;
  if (!std::isfinite(capacity))
    return llvm::Error::success();
  const LinearCost &mem = p.memory[c];
  z3::expr bytes = exactReal(ctx, mem.constant);
  for (const RatioTerm &t : mem.terms) {
    // The device of the class with the most (coef ≥ 0) or least elements.
    const std::vector<int64_t> &sizes = plan.sizes[t.segment][t.deviceClass];
    int64_t size = t.coef >= 0 ? *std::max_element(sizes.begin(), sizes.end())
                               : *std::min_element(sizes.begin(), sizes.end());
    std::string share = std::to_string(size) + "/" +
                        std::to_string(p.segments[t.segment].extent);
    bytes = bytes + exactReal(ctx, t.coef) * ctx.real_val(share.c_str());
  }
  if (holds(bytes <= exactReal(ctx, capacity)))
    return llvm::Error::success();
  double value = 0;
  bytes.simplify().is_numeral(value);
  return violated("memory: devices of class '" + p.classes[c].name + "' need " +
                  formatBytes(value) + ", capacity " + formatBytes(capacity));
}

llvm::Error weft::ratio::checkIntegerPlan(const RatioProblem &problem,
                                          const IntegerPlan &plan,
                                          const IntegerizeOptions &options) {
  if (llvm::Error err = problem.check())
    return err;
  if (llvm::Error err = checkShape(problem, plan))
    return err;
  try {
    z3::context ctx;
    for (unsigned s = 0; s < problem.segments.size(); ++s)
      if (llvm::Error err = checkSegment(problem, plan, s, options, ctx))
        return err;
    for (unsigned c = 0; c < problem.memory.size(); ++c)
      if (llvm::Error err = checkMemory(problem, plan, c, ctx))
        return err;
    return llvm::Error::success();
  } catch (const z3::exception &e) {
    return makeError(ExitInternal, "Z3 failed checking the integer plan: {0}",
                     e.msg());
  }
}
