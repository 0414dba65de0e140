//===- Relayout.cpp - The collectives between two distributions -----------===//

#include "weft/Spmd/Relayout.h"
#include "Spmd/IR/SpmdOps.h"
#include "llvm/ADT/Twine.h"

using namespace weft;
using namespace weft::spmd;

llvm::StringRef spmd::toString(RelayoutKind kind) {
  switch (kind) {
  case RelayoutKind::Shard:
    return "shard";
  case RelayoutKind::AllGather:
    return "all_gather";
  case RelayoutKind::AllReduce:
    return "all_reduce";
  case RelayoutKind::ReduceScatter:
    return "reduce_scatter";
  case RelayoutKind::AllToAll:
    return "all_to_all";
  }
  return "";
}

bool spmd::isStructurallyValid(DistAttr dist) {
  llvm::ArrayRef<AxisDist> axes = dist.getAxes();
  for (size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].isGather() && (axes[a].dim < 0 || axes[a].segment < 0))
      return false;
    for (size_t b = 0; b < a; ++b)
      if (axes[a].isGather() && axes[b].isGather() &&
          axes[a].dim == axes[b].dim && axes[a].segment != axes[b].segment)
        return false;
  }
  return true;
}

static mlir::FailureOr<llvm::SmallVector<RelayoutStep, 4>>
fail(std::string *why, const llvm::Twine &msg) {
  if (why)
    *why = msg.str();
  return mlir::failure();
}

static bool onDim(const AxisDist &d, int64_t dim) {
  return d.isGather() && d.dim == dim;
}

mlir::FailureOr<llvm::SmallVector<RelayoutStep, 4>>
spmd::planRelayout(DistAttr from, DistAttr to, std::string *why) {
  llvm::SmallVector<RelayoutStep, 4> steps;
  if (!from || !to)
    return fail(why, "missing distribution");
  unsigned n = from.getAxes().size();
  if (to.getAxes().size() != n)
    return fail(why, "distributions of " + llvm::Twine(n) + " and " +
                         llvm::Twine(to.getAxes().size()) + " axes");
  if (!isStructurallyValid(from) || !isStructurallyValid(to))
    return fail(why, "axes splitting one dim with different segments");
  if (from == to)
    return steps;
  for (unsigned a = 0; a < n; ++a) {
    AxisDist f = from.getAxes()[a], t = to.getAxes()[a];
    if (t.isPartial() && f != t)
      return fail(why, "cannot turn " + str(f) + " into " + str(t) +
                           " on axis " + llvm::Twine(a));
  }
  DistAttr cur = from;
  auto emit = [&](RelayoutKind kind, unsigned a, AxisDist entry) {
    DistAttr after = cur.with(a, entry);
    steps.push_back({kind, a, cur, after});
    cur = after;
  };
  auto at = [&](unsigned a) { return cur.getAxes()[a]; };
  auto want = [&](unsigned a) { return to.getAxes()[a]; };

  // 1. Partial values that end whole (or split, for a max) are added up,
  // inside nodes first (the innermost axis).
  for (unsigned a = n; a-- > 0;) {
    AxisDist f = at(a), t = want(a);
    if (f.isPartial() && f != t &&
        (t.isIdentity() || f.kind == AxisDist::Kind::Max))
      emit(RelayoutKind::AllReduce, a, AxisDist::identity());
  }

  // Axes whose entry changes, closed under the nesting rule: a change on
  // axis a of dim d (removed from or added to d) also takes off every split
  // of d on an axis below it (b > a), to be put back afterwards.
  llvm::SmallVector<bool, 4> marked(n, false);
  for (unsigned a = 0; a < n; ++a)
    marked[a] = at(a) != want(a);
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned a = 0; a < n; ++a) {
      if (!marked[a])
        continue;
      for (unsigned b = a + 1; b < n; ++b) {
        bool hit = (at(a).isGather() && onDim(at(b), at(a).dim)) ||
                   (want(a).isGather() && onDim(at(b), want(a).dim));
        if (hit && !marked[b])
          marked[b] = changed = true;
      }
    }
  }

  // 2. Remove changing splits from the minor axis up; an all_to_all when the
  // new dim can take the split on this axis now and keep its nesting.
  for (unsigned a = n; a-- > 0;) {
    if (!marked[a] || !at(a).isGather())
      continue;
    AxisDist t = want(a);
    bool direct = t.isGather() && t.dim != at(a).dim;
    for (unsigned b = 0; direct && b < n; ++b) {
      if (b == a)
        continue;
      bool curOn = onDim(at(b), t.dim), wantOn = onDim(want(b), t.dim);
      if (b > a)
        direct = !curOn;
      else
        direct = curOn == wantOn &&
                 (!curOn || (at(b).segment == t.segment && !marked[b]));
    }
    if (direct) {
      emit(RelayoutKind::AllToAll, a, t);
      marked[a] = false;
    } else {
      emit(RelayoutKind::AllGather, a, AxisDist::identity());
    }
  }

  // 3. Add splits from the major axis down.
  for (unsigned a = 0; a < n; ++a) {
    AxisDist f = at(a), t = want(a);
    if (f == t)
      continue;
    if (t.isGather() && f.isIdentity())
      emit(RelayoutKind::Shard, a, t);
    else if (t.isGather() && f.kind == AxisDist::Kind::Sum)
      emit(RelayoutKind::ReduceScatter, a, t);
    else
      return fail(why, "cannot turn " + str(f) + " into " + str(t) +
                           " on axis " + llvm::Twine(a));
  }
  if (cur != to)
    return fail(why, "internal: relayout did not reach the target");
  for (const RelayoutStep &s : steps)
    if (!isStructurallyValid(s.after))
      return fail(why, "internal: an intermediate distribution is invalid");
  return steps;
}

mlir::Value spmd::emitRelayout(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value x,
                               llvm::ArrayRef<RelayoutStep> steps) {
  for (const RelayoutStep &s : steps) {
    mlir::Type type = x.getType();
    switch (s.kind) {
    case RelayoutKind::Shard:
      x = b.create<ShardOp>(loc, type, x, s.axis, s.after);
      break;
    case RelayoutKind::AllGather:
      x = b.create<AllGatherOp>(loc, type, x, s.axis, s.after,
                                GatherMode::Padded);
      break;
    case RelayoutKind::AllReduce:
      x = b.create<AllReduceOp>(loc, type, x, s.axis, s.after,
                                AllReduceAlgorithm::Ring);
      break;
    case RelayoutKind::ReduceScatter:
      x = b.create<ReduceScatterOp>(loc, type, x, s.axis, s.after);
      break;
    case RelayoutKind::AllToAll:
      x = b.create<AllToAllOp>(loc, type, x, s.axis, s.after);
      break;
    }
  }
  return x;
}
