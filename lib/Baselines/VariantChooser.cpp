//===- VariantChooser.cpp - Baselines pick rule variants greedily ---------===//

#include "VariantChooser.h"
#include "mlir/IR/BuiltinTypes.h"
#include "weft/Spmd/Relayout.h"
#include "weft/Support/Error.h"
#include <tuple>

using namespace weft;
using namespace weft::baselines;
using namespace weft::spmd;

namespace {

/// Bytes-like cost of a relayout (elements × weight), its step count.
std::pair<double, int> relayoutCost(llvm::ArrayRef<RelayoutStep> steps,
                                    mlir::Type type) {
  auto t = type.cast<mlir::RankedTensorType>();
  double n = double(t.getNumElements());
  double cost = 0;
  for (const RelayoutStep &s : steps) {
    switch (s.kind) {
    case RelayoutKind::Shard:
      break;
    case RelayoutKind::AllReduce:
    case RelayoutKind::ReduceScatter:
      cost += 2 * n;
      break;
    default:
      cost += n;
    }
  }
  return {cost, int(steps.size())};
}

/// The first Gather layout of a variant: (operand index or -1, result index
/// or -1, layout).
struct FirstGather {
  int operand = -1, result = -1;
  graph::AxisLayout layout;
};

std::optional<FirstGather> firstGather(const graph::ShardingVariant &v) {
  for (auto [i, l] : llvm::enumerate(v.operands))
    if (l.isGather())
      return FirstGather{int(i), -1, l};
  for (auto [i, l] : llvm::enumerate(v.results))
    if (l.isGather())
      return FirstGather{-1, int(i), l};
  return std::nullopt;
}

} // namespace

OpChooser baselines::greedyChooser(std::vector<std::vector<double>> fresh) {
  return [fresh](mlir::Operation *op, llvm::ArrayRef<DistAttr> operands,
                 SegmentTable &segments) -> llvm::Expected<OpChoice> {
    unsigned numAxes = segments.mesh().axisSizes.size();
    auto variants = shardingVariantsOf(op);
    auto replicate = llvm::find_if(variants, [&](const auto &v) {
      return llvm::StringRef(v.name).endswith(".replicate");
    });
    if (replicate == variants.end())
      return badInput("{0} has no sharding rules",
                      op->getName().getStringRef().str());
    OpChoice choice;
    // Axes not chosen yet keep a replicate placeholder; their operand
    // entries are taken as they are now.
    choice.variants.assign(numAxes, *replicate);
    choice.segments.assign(numAxes, -1);
    for (unsigned a = 0; a < numAxes; ++a) {
      using Key = std::tuple<double, int, int, size_t>;
      std::optional<Key> best;
      OpChoice bestChoice;
      for (auto [index, v] : llvm::enumerate(variants)) {
        // Candidate segments for the variant's first split.
        llvm::SmallVector<int64_t, 4> candidates;
        auto first = firstGather(v);
        if (first) {
          mlir::Value value = first->operand >= 0
                                  ? op->getOperand(first->operand)
                                  : op->getResult(first->result);
          auto type = value.getType().cast<mlir::RankedTensorType>();
          int64_t extent = type.getDimSize(first->layout.dim);
          // The segment its operand already has there, on any axis.
          if (first->operand >= 0)
            for (const AxisDist &e : operands[first->operand].getAxes())
              if (e.isGather() && e.dim == first->layout.dim)
                candidates.push_back(e.segment);
          // A segment of another operand's matching split, scaled.
          for (auto [i, l] : llvm::enumerate(v.operands)) {
            if (!l.isGather())
              continue;
            for (const AxisDist &e : operands[i].getAxes())
              if (e.isGather() && e.dim == l.dim) {
                int64_t s = segments.scaled(e.segment, l.align, extent,
                                            first->layout.align);
                if (s >= 0)
                  candidates.push_back(s);
              }
          }
          if (a < fresh.size())
            candidates.push_back(
                segments.get(extent, fresh[a], 1u << a, first->layout.align));
        } else {
          candidates.push_back(-1);
        }
        for (int64_t seg : candidates) {
          OpChoice trial = choice;
          trial.variants[a] = v;
          trial.segments[a] = seg;
          // Derive on this axis alone, keeping the other entries as the
          // operands have them (chosen axes: as chosen).
          auto dists = deriveDists(op, trial, segments);
          if (!dists) {
            llvm::consumeError(dists.takeError());
            continue;
          }
          double cost = 0;
          int steps = 0;
          bool reachable = true;
          for (auto [i, want] : llvm::enumerate(dists->operands)) {
            DistAttr cur = operands[i];
            llvm::SmallVector<AxisDist, 4> target(cur.getAxes());
            for (unsigned b = 0; b <= a; ++b)
              target[b] = want.getAxes()[b];
            DistAttr to = DistAttr::get(op->getContext(), target);
            if (!isStructurallyValid(to)) {
              // Later axes would change too: take the derived dist.
              to = want;
            }
            auto plan = planRelayout(cur, to);
            if (mlir::failed(plan)) {
              reachable = false;
              break;
            }
            auto [c, n] = relayoutCost(*plan, op->getOperand(i).getType());
            cost += c;
            steps += n;
          }
          if (!reachable)
            continue;
          int splits = 0;
          for (const graph::AxisLayout &l : v.results)
            splits += !l.isIdentity();
          Key key{cost, steps, splits, index};
          if (!best || key < *best) {
            best = key;
            bestChoice = trial;
          }
        }
      }
      if (!best)
        return badInput("{0}: no sharding variant is reachable on axis {1}",
                        op->getName().getStringRef().str(), a);
      choice = bestChoice;
    }
    return choice;
  };
}
