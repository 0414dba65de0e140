//===- RatioProblem.cpp - Validation of ratio problems --------------------===//

#include "weft/Ratio/RatioProblem.h"
#include "weft/Support/Error.h"
#include <cmath>
#include <cstring>
#include <map>

using namespace weft;
using namespace weft::ratio;

unsigned RatioProblem::numDevices() const {
  unsigned n = 0;
  for (const DeviceClass &c : classes)
    n += c.count;
  return n;
}

llvm::SmallVector<unsigned, 2> RatioProblem::nodesOfClass(unsigned c) const {
  llvm::SmallVector<unsigned, 2> result;
  for (unsigned n = 0; n < nodes.size(); ++n)
    for (const auto &[cls, devices] : nodes[n].devices)
      if (cls == c && devices > 0) {
        result.push_back(n);
        break;
      }
  return result;
}

std::vector<llvm::SmallVector<unsigned, 2>>
RatioProblem::distinctNodesByClass() const {
  std::vector<llvm::SmallVector<unsigned, 2>> result(classes.size());
  // Shape -> first node of that shape; nodes in index order, so each class
  // keeps nodesOfClass's order.
  std::map<std::vector<uint64_t>, unsigned> firstOfShape;
  for (unsigned n = 0; n < nodes.size(); ++n) {
    std::vector<uint64_t> shape;
    uint64_t nic;
    std::memcpy(&nic, &nodes[n].nicBandwidth, sizeof(nic));
    shape.push_back(nic);
    for (const auto &[cls, devices] : nodes[n].devices)
      shape.push_back(uint64_t(cls) << 32 | devices);
    if (!firstOfShape.try_emplace(std::move(shape), n).second)
      continue;
    for (const auto &[cls, devices] : nodes[n].devices)
      if (cls < classes.size() && devices > 0 &&
          (result[cls].empty() || result[cls].back() != n))
        result[cls].push_back(n);
  }
  return result;
}

MaxCost weft::ratio::paddedAllGather(const RatioProblem &problem,
                                     unsigned segment, double bytes,
                                     double bandwidth) {
  MaxCost cost;
  cost.scale = (problem.numDevices() - 1.0) * bytes / bandwidth;
  for (unsigned c = 0; c < problem.classes.size(); ++c) {
    LinearCost piece;
    piece.terms.push_back({segment, c, 1.0});
    cost.pieces.push_back(std::move(piece));
  }
  return cost;
}

namespace {
/// Checks one problem; every message names the offending item.
class ProblemChecker {
public:
  explicit ProblemChecker(const RatioProblem &p) : p(p) {}
  llvm::Error run();

private:
  llvm::Error checkClassesAndNodes();
  llvm::Error checkSegments();
  llvm::Error checkLinear(const LinearCost &cost, const std::string &where,
                          bool nonNegative);
  llvm::Error checkMax(const MaxCost &cost, const std::string &where);
  llvm::Error checkStep(unsigned k);

  const RatioProblem &p;
};
} // namespace

static bool isFinite(double x) { return std::isfinite(x); }

llvm::Error ProblemChecker::checkClassesAndNodes() {
  if (p.classes.empty())
    return badInput("ratio problem has no device classes");
  for (const DeviceClass &c : p.classes) {
    if (c.count == 0)
      return badInput("device class '{0}' has no devices", c.name);
    if (std::isnan(c.memoryCapacity) || c.memoryCapacity <= 0)
      return badInput("device class '{0}' has memory capacity {1}, expected "
                      "a positive number of bytes",
                      c.name, c.memoryCapacity);
  }
  std::vector<unsigned> inNodes(p.classes.size(), 0);
  for (const Node &n : p.nodes) {
    if (!isFinite(n.nicBandwidth) || n.nicBandwidth <= 0)
      return badInput("node '{0}' has NIC bandwidth {1}, expected a positive "
                      "number of bytes/s",
                      n.name, n.nicBandwidth);
    for (const auto &[cls, devices] : n.devices) {
      if (cls >= p.classes.size())
        return badInput("node '{0}' names device class {1}, but there are "
                        "{2} classes",
                        n.name, cls, p.classes.size());
      inNodes[cls] += devices;
    }
  }
  if (p.nodes.empty())
    return llvm::Error::success();
  for (unsigned c = 0; c < p.classes.size(); ++c)
    if (inNodes[c] != p.classes[c].count)
      return badInput("nodes hold {0} devices of class '{1}', expected its "
                      "count {2}",
                      inNodes[c], p.classes[c].name, p.classes[c].count);
  return llvm::Error::success();
}

llvm::Error ProblemChecker::checkSegments() {
  for (const Segment &s : p.segments) {
    if (s.extent < 1)
      return badInput("segment '{0}' has extent {1}, expected at least 1",
                      s.name, s.extent);
    if (s.alignment < 1 || s.extent % s.alignment != 0)
      return badInput("segment '{0}' has alignment {1}, expected a positive "
                      "divisor of its extent {2}",
                      s.name, s.alignment, s.extent);
    if (!s.fixedRatios)
      continue;
    if (s.fixedRatios->size() != p.classes.size())
      return badInput("segment '{0}' fixes {1} ratios, expected one per "
                      "class ({2})",
                      s.name, s.fixedRatios->size(), p.classes.size());
    double sum = 0;
    for (unsigned c = 0; c < p.classes.size(); ++c) {
      double r = (*s.fixedRatios)[c];
      if (!isFinite(r) || r < 0)
        return badInput("segment '{0}' fixes ratio {1} for class '{2}', "
                        "expected a finite non-negative share",
                        s.name, r, p.classes[c].name);
      sum += p.classes[c].count * r;
    }
    if (std::abs(sum - 1) > 1e-9)
      return badInput("fixed ratios of segment '{0}' sum to {1} over all "
                      "devices, expected 1",
                      s.name, sum);
  }
  return llvm::Error::success();
}

llvm::Error ProblemChecker::checkLinear(const LinearCost &cost,
                                        const std::string &where,
                                        bool nonNegative) {
  if (!isFinite(cost.constant))
    return badInput("{0}: constant {1} is not finite", where, cost.constant);
  if (nonNegative && cost.constant < 0)
    return badInput("{0}: negative constant {1}, expected a time >= 0", where,
                    cost.constant);
  for (const RatioTerm &t : cost.terms) {
    if (t.segment >= p.segments.size())
      return badInput("{0}: term names segment {1}, but there are {2}", where,
                      t.segment, p.segments.size());
    if (t.deviceClass >= p.classes.size())
      return badInput("{0}: term names device class {1}, but there are {2}",
                      where, t.deviceClass, p.classes.size());
    if (!isFinite(t.coef))
      return badInput("{0}: coefficient {1} is not finite", where, t.coef);
    if (nonNegative && t.coef < 0)
      return badInput("{0}: negative coefficient {1} on segment '{2}', "
                      "expected compute time to grow with the shard",
                      where, t.coef, p.segments[t.segment].name);
  }
  return llvm::Error::success();
}

llvm::Error ProblemChecker::checkMax(const MaxCost &cost,
                                     const std::string &where) {
  // A negative multiple of a maximum is concave: its epigraph would let the
  // LP raise the maximum variable freely.
  if (!isFinite(cost.scale) || cost.scale < 0)
    return badInput("{0}: max term has scale {1}, expected a finite scale "
                    ">= 0 (a negative scale is not convex)",
                    where, cost.scale);
  if (cost.pieces.empty())
    return badInput("{0}: max term has no pieces", where);
  for (const LinearCost &piece : cost.pieces)
    if (llvm::Error err = checkLinear(piece, where, /*nonNegative=*/false))
      return err;
  return llvm::Error::success();
}

llvm::Error ProblemChecker::checkStep(unsigned k) {
  const Step &step = p.steps[k];
  std::string name = "step " + std::to_string(k);
  if (!step.name.empty())
    name += " '" + step.name + "'";
  if (!isFinite(step.multiplicity) || step.multiplicity < 0)
    return badInput("{0}: multiplicity {1}, expected a finite count >= 0", name,
                    step.multiplicity);
  if (step.perClass.size() != p.classes.size())
    return badInput("{0}: has costs for {1} classes, expected {2}", name,
                    step.perClass.size(), p.classes.size());
  for (unsigned c = 0; c < p.classes.size(); ++c) {
    const StepClassCost &cost = step.perClass[c];
    std::string where = name + " on class '" + p.classes[c].name + "'";
    if (llvm::Error err = checkLinear(cost.compute, where + " compute",
                                      /*nonNegative=*/true))
      return err;
    if (llvm::Error err = checkLinear(cost.comm, where + " communication",
                                      /*nonNegative=*/false))
      return err;
    for (const MaxCost &m : cost.computeMax)
      if (llvm::Error err = checkMax(m, where + " compute"))
        return err;
    for (const MaxCost &m : cost.commMax)
      if (llvm::Error err = checkMax(m, where + " communication"))
        return err;
    for (const NicLoad &nic : cost.nicLoads) {
      if (nic.segment >= p.segments.size())
        return badInput("{0}: NIC load names segment {1}, but there are {2}",
                        where, nic.segment, p.segments.size());
      if (!isFinite(nic.bytes) || nic.bytes < 0)
        return badInput("{0}: NIC load of {1} bytes, expected >= 0", where,
                        nic.bytes);
      if (p.nodes.empty())
        return badInput("{0}: NIC load given but the problem has no nodes",
                        where);
    }
  }
  return llvm::Error::success();
}

llvm::Error ProblemChecker::run() {
  if (llvm::Error err = checkClassesAndNodes())
    return err;
  if (llvm::Error err = checkSegments())
    return err;
  for (unsigned k = 0; k < p.steps.size(); ++k)
    if (llvm::Error err = checkStep(k))
      return err;
  if (!p.memory.empty() && p.memory.size() != p.classes.size())
    return badInput("memory has {0} rows, expected none or one per class ({1})",
                    p.memory.size(), p.classes.size());
  for (unsigned c = 0; c < p.memory.size(); ++c)
    if (llvm::Error err = checkLinear(
            p.memory[c], "memory of class '" + p.classes[c].name + "'",
            /*nonNegative=*/false))
      return err;
  return llvm::Error::success();
}

llvm::Error RatioProblem::check() const { return ProblemChecker(*this).run(); }
