//===- GraphShardingRules.cpp - Sharding rules: leaves and elementwise ----===//
//
// ShardingRuleOpInterface for parameters, buffers, constants and the
// elementwise ops (docs/Design.md §3.3, docs/ShardingRules.md). An elementwise
// op may split any result dim, in every operand that has it; a partial value
// passes through an op only where the op is linear in it.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "ShardingRuleBuilder.h"

using namespace mlir;
using namespace weft::graph;
using namespace weft::graph::rules;

//===----------------------------------------------------------------------===//
// Leaves
//===----------------------------------------------------------------------===//

/// A leaf can be materialised whole or as any shard: no communication.
static void getLeafVariants(Operation *op, Variants &variants) {
  addReplicated(variants, op);
  addBroadcastSplits(variants, op);
}

void ParameterOp::getShardingVariants(Variants &variants) {
  getLeafVariants(*this, variants);
}
void BufferOp::getShardingVariants(Variants &variants) {
  getLeafVariants(*this, variants);
}
void ConstantOp::getShardingVariants(Variants &variants) {
  getLeafVariants(*this, variants);
}

//===----------------------------------------------------------------------===//
// Binary elementwise ops
//===----------------------------------------------------------------------===//

/// Every binary op: replicate, or split a result dim consistently.
static void getBinaryVariants(Operation *op, Variants &variants) {
  addReplicated(variants, op);
  addBroadcastSplits(variants, op);
}

/// Sums: p + q of two partial sums is a partial sum; a whole addend must be
/// counted once (a bias added on one device, zeros on the others).
static void getAdditiveVariants(Operation *op, Variants &variants) {
  getBinaryVariants(op, variants);
  addPartial(variants, op, {0, 1});
  addPartial(variants, op, {0}, Combiner::Sum, /*once=*/{1}, "partial-once");
  addPartial(variants, op, {1}, Combiner::Sum, /*once=*/{0}, "partial-once");
}

void AddOp::getShardingVariants(Variants &variants) {
  getAdditiveVariants(*this, variants);
}
void SubOp::getShardingVariants(Variants &variants) {
  getAdditiveVariants(*this, variants);
}

void MulOp::getShardingVariants(Variants &variants) {
  getBinaryVariants(*this, variants);
  // (Σ p_i) · w = Σ (p_i · w): linear in either factor, not in both.
  addPartial(variants, *this, {0}, Combiner::Sum, {}, "partial-times-whole");
  addPartial(variants, *this, {1}, Combiner::Sum, {}, "partial-times-whole");
}

void DivOp::getShardingVariants(Variants &variants) {
  getBinaryVariants(*this, variants);
  // Linear in the numerator only.
  addPartial(variants, *this, {0}, Combiner::Sum, {}, "partial-by-whole");
}

void PowOp::getShardingVariants(Variants &variants) {
  getBinaryVariants(*this, variants);
}

void MinOp::getShardingVariants(Variants &variants) {
  getBinaryVariants(*this, variants);
}

void MaxOp::getShardingVariants(Variants &variants) {
  getBinaryVariants(*this, variants);
  // max(max_i p_i, max_i q_i) = max_i max(p_i, q_i).
  addPartial(variants, *this, {0, 1}, Combiner::Max);
}

void CompareOp::getShardingVariants(Variants &variants) {
  getBinaryVariants(*this, variants);
}

void SelectOp::getShardingVariants(Variants &variants) {
  getBinaryVariants(*this, variants);
  // c ? Σ p_i : Σ q_i = Σ (c ? p_i : q_i) with a whole condition; a whole
  // branch is counted on one device (c ? p_i : 0 elsewhere).
  addPartial(variants, *this, {1, 2});
  addPartial(variants, *this, {1}, Combiner::Sum, /*once=*/{2}, "partial-once");
  addPartial(variants, *this, {2}, Combiner::Sum, /*once=*/{1}, "partial-once");
}

//===----------------------------------------------------------------------===//
// Unary elementwise ops
//===----------------------------------------------------------------------===//

static void getUnaryVariants(Operation *op, Variants &variants) {
  addReplicated(variants, op);
  addBroadcastSplits(variants, op);
}

void SqrtOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void RsqrtOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void NegOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
  addPartial(variants, *this, {0});
}
void ReluOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void GeluOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void TanhOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void SigmoidOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void ErfOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void ExpOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void LogOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void ClipOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void SinOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void CosOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void TanOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void AsinOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void AcosOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void AtanOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void SinhOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void CoshOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void AsinhOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void AcoshOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void AtanhOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void FloorOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void CeilOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}
void RoundOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
}

void CastOp::getShardingVariants(Variants &variants) {
  getUnaryVariants(*this, variants);
  // A float-to-float conversion is linear up to rounding; `addPartial`
  // skips integer casts.
  addPartial(variants, *this, {0});
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

void DropoutOp::getShardingVariants(Variants &variants) {
  // The mask is keyed by each element's global index, so every device draws
  // the mask one device would: replicated copies agree, a shard needs its
  // offset, and a partial sum is masked alike on every device.
  addReplicated(variants, *this);
  addBroadcastSplits(variants, *this, "split", /*needsGlobalOffset=*/true);
  addPartial(variants, *this, {0});
}
