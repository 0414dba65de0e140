//===- SpmdLocalRun.cpp - One spmd.local on every device, both ways -------===//

#include "OpUtils.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Exec/SpmdKernels.h"
#include "weft/Support/Error.h"
#include <cstring>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;
using spmd::ShardGeometry;

/// Whether device `x` drops once-operand `i` (coordinate ≠ 0 on one of its
/// once axes).
static bool dropsOnce(const LocalStep &step, const ShardGeometry &geometry,
                      unsigned i, unsigned x) {
  spmd::MeshAxes axes = step.onceAxes[i];
  for (unsigned a = 0; a < geometry.numAxes(); ++a)
    if ((axes & (1u << a)) && geometry.coord(x, a) != 0)
      return true;
  return false;
}

/// The clone's static shape of result `r`.
static Shape cloneResultShape(mlir::Operation *clone, unsigned r) {
  return shapeOf(clone->getResult(r));
}

static llvm::Error checkShapes(LocalStep &step, unsigned x,
                               llvm::ArrayRef<const Tensor *> operands) {
  mlir::Operation *clone = step.clones[x];
  for (auto [i, t] : llvm::enumerate(operands))
    if (t->getShape() != llvm::ArrayRef<int64_t>(shapeOf(clone->getOperand(i))))
      return makeError(ExitInternal,
                       "{0}: device {1} holds operand {2} as {3}, expected {4}",
                       describeOp(step.inner), x, i, shapeString(t->getShape()),
                       shapeString(shapeOf(clone->getOperand(i))));
  return llvm::Error::success();
}

/// Where result 0 of the clone of device `x` sits (dropout masks).
static OpContext contextFor(LocalStep &step, const ShardGeometry &geometry,
                            unsigned x, uint64_t seed, Shape &globalShape,
                            spmd::ShardBox &box) {
  OpContext ctx;
  ctx.seed = seed;
  ctx.dropoutId = step.dropoutId;
  if (step.inner->getNumResults() > 0) {
    globalShape = shapeOf(step.inner->getResult(0));
    // Dropout masks are keyed by global index along the axes whose rule is
    // dropout.split (the others compute the op whole).
    spmd::DistAttr dist = step.resultDists[0];
    if (llvm::isa<graph::DropoutOp>(step.inner)) {
      spmd::MeshAxes split = 0;
      for (auto [a, v] : llvm::enumerate(step.variants))
        if (v.name == "dropout.split")
          split |= 1u << a;
      dist = restrictDist(dist, split);
    }
    box = geometry.shardBox(globalShape, dist, x);
    ctx.view.globalShape = globalShape;
    ctx.view.offsets = box.offsets;
  }
  return ctx;
}

static bool sameTensor(const Tensor *a, const Tensor *b) {
  if (a == b)
    return true;
  if (!a || !b || a->getElementType() != b->getElementType() ||
      a->getShape() != b->getShape())
    return false;
  size_t n = size_t(a->getNumElements());
  // Empty shards hold no buffer; memcmp must not see a null pointer.
  if (n == 0)
    return true;
  return a->isFloat()
             ? std::memcmp(a->floats(), b->floats(), n * sizeof(float)) == 0
             : std::memcmp(a->ints(), b->ints(), n * sizeof(int64_t)) == 0;
}

/// Whether devices x and y run a plain recipe on bitwise-equal inputs (and
/// result gradients) with equal result boxes: kernels are deterministic, so
/// their results are equal and one computation serves both (a replicated
/// op on a replicated axis is computed once per group, not once per
/// device).
static bool sameWork(LocalStep &step, const ShardGeometry &geometry,
                     const DeviceTensors &in, const DeviceTensors *dres,
                     unsigned x, unsigned y) {
  if (step.special != LocalStep::Special::None)
    return false;
  for (auto [r, dist] : llvm::enumerate(step.resultDists)) {
    Shape shape = shapeOf(step.inner->getResult(r));
    spmd::ShardBox a = geometry.shardBox(shape, dist, x),
                   b = geometry.shardBox(shape, dist, y);
    if (a.offsets != b.offsets || a.extents != b.extents)
      return false;
  }
  for (unsigned i = 0; i < in[x].size(); ++i)
    if (!sameTensor(in[x][i], in[y][i]))
      return false;
  if (dres)
    for (unsigned r = 0; r < (*dres)[x].size(); ++r)
      if (!sameTensor((*dres)[x][r], (*dres)[y][r]))
        return false;
  return true;
}

llvm::Error
weft::exec::runLocalForward(LocalStep &step, const ShardGeometry &geometry,
                            llvm::ArrayRef<const DistValue *> operands,
                            uint64_t seed,
                            llvm::SmallVectorImpl<DistValue> &results) {
  unsigned n = geometry.numDevices();
  unsigned numResults = step.inner->getNumResults();
  results.clear();
  for (unsigned r = 0; r < numResults; ++r) {
    results.emplace_back();
    results.back().dist = step.resultDists[r];
    results.back().shards.resize(n);
  }
  // Operands per device, once-operands zeroed where they are dropped.
  std::vector<std::vector<Tensor>> zeroed(n);
  DeviceTensors in(n);
  for (unsigned x = 0; x < n; ++x) {
    zeroed[x].reserve(operands.size());
    for (unsigned i = 0; i < operands.size(); ++i) {
      const Tensor *t = &operands[i]->shard(x);
      if (dropsOnce(step, geometry, i, x)) {
        zeroed[x].emplace_back(t->getElementType(), t->getShape());
        t = &zeroed[x].back();
      }
      in[x].push_back(t);
    }
    if (auto err = checkShapes(step, x, in[x]))
      return err;
  }
  std::vector<llvm::SmallVector<Tensor, 2>> out(n);
  if (step.special != LocalStep::Special::None) {
    if (auto err = specialForward(step, geometry, in, out))
      return err;
  }
  std::vector<unsigned> alias(n);
  bool aliased = false;
  if (step.special == LocalStep::Special::None) {
    std::vector<unsigned> reps;
    for (unsigned x = 0; x < n; ++x) {
      alias[x] = x;
      for (unsigned y : reps)
        if (sameWork(step, geometry, in, nullptr, x, y)) {
          alias[x] = y;
          aliased = true;
          break;
        }
      if (alias[x] != x)
        continue;
      reps.push_back(x);
      Shape globalShape;
      spmd::ShardBox box;
      OpContext ctx = contextFor(step, geometry, x, seed, globalShape, box);
      if (auto err = runOpForward(step.clones[x], in[x], ctx, out[x]))
        return err;
    }
  } else {
    for (unsigned x = 0; x < n; ++x)
      alias[x] = x;
  }
  for (unsigned x = 0; x < n; ++x) {
    if (alias[x] != x)
      continue;
    if (out[x].size() != numResults)
      return makeError(ExitInternal, "{0}: the recipe gave {1} results",
                       describeOp(step.inner), out[x].size());
    for (unsigned r = 0; r < numResults; ++r) {
      Shape want = cloneResultShape(step.clones[x], r);
      if (out[x][r].getShape() != llvm::ArrayRef<int64_t>(want))
        return makeError(ExitVerifyFailed,
                         "{0}: on device {1} the recipe gives result {2} of "
                         "shape {3}, the plan's dist says {4}",
                         describeOp(step.inner), x, r,
                         shapeString(out[x][r].getShape()), shapeString(want));
      results[r].shards[x] = std::move(out[x][r]);
    }
  }
  if (aliased)
    for (DistValue &v : results)
      v.alias = alias;
  return llvm::Error::success();
}

llvm::Error weft::exec::runLocalBackward(
    LocalStep &step, const ShardGeometry &geometry,
    llvm::ArrayRef<const DistValue *> operands,
    llvm::ArrayRef<const DistValue *> results,
    llvm::ArrayRef<const std::vector<Tensor> *> resultGrads, uint64_t seed,
    llvm::SmallVectorImpl<std::vector<Tensor>> &operandGrads) {
  unsigned n = geometry.numDevices();
  std::vector<std::vector<Tensor>> zeroed(n), zeroGrads(n);
  DeviceTensors in(n), res(n), dres(n);
  for (unsigned x = 0; x < n; ++x) {
    zeroed[x].reserve(operands.size());
    zeroGrads[x].reserve(results.size());
    for (unsigned i = 0; i < operands.size(); ++i) {
      const Tensor *t = &operands[i]->shard(x);
      if (dropsOnce(step, geometry, i, x)) {
        zeroed[x].emplace_back(t->getElementType(), t->getShape());
        t = &zeroed[x].back();
      }
      in[x].push_back(t);
    }
    for (unsigned r = 0; r < results.size(); ++r) {
      const Tensor &value = results[r]->shard(x);
      res[x].push_back(&value);
      if (resultGrads[r])
        dres[x].push_back(&(*resultGrads[r])[x]);
      else if (value.isFloat())
        dres[x].push_back(
            &zeroGrads[x].emplace_back(Tensor::zeros(value.getShape())));
      else
        dres[x].push_back(nullptr);
    }
  }
  std::vector<llvm::SmallVector<Tensor, 4>> din(n);
  if (step.special != LocalStep::Special::None) {
    if (auto err = specialBackward(step, geometry, in, res, dres, din))
      return err;
  } else {
    std::vector<unsigned> reps;
    for (unsigned x = 0; x < n; ++x) {
      auto rep = llvm::find_if(reps, [&](unsigned y) {
        return sameWork(step, geometry, in, &dres, x, y);
      });
      if (rep != reps.end()) {
        // Equal inputs and result gradients: equal operand gradients.
        din[x] = din[*rep];
        continue;
      }
      reps.push_back(x);
      Shape globalShape;
      spmd::ShardBox box;
      OpContext ctx = contextFor(step, geometry, x, seed, globalShape, box);
      llvm::SmallVector<Tensor> grads;
      if (auto err =
              runOpBackward(step.clones[x], in[x], res[x], dres[x], ctx, grads))
        return err;
      din[x].assign(std::make_move_iterator(grads.begin()),
                    std::make_move_iterator(grads.end()));
    }
  }
  operandGrads.clear();
  operandGrads.resize(operands.size());
  for (unsigned i = 0; i < operands.size(); ++i) {
    bool any = false;
    for (unsigned x = 0; x < n; ++x)
      any |= i < din[x].size() && din[x][i].isValid();
    if (!any)
      continue;
    std::vector<Tensor> &grads = operandGrads[i];
    grads.resize(n);
    for (unsigned x = 0; x < n; ++x) {
      const Tensor &op = operands[i]->shard(x);
      if (i < din[x].size() && din[x][i].isValid() &&
          !dropsOnce(step, geometry, i, x))
        grads[x] = std::move(din[x][i]);
      else
        grads[x] = Tensor::zeros(op.getShape());
    }
  }
  return llvm::Error::success();
}
