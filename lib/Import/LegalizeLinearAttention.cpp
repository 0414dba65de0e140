//===- LegalizeLinearAttention.cpp - LinearAttention as graph ops ---------===//
//
// ONNX's LinearAttention (opset 27) keeps, per key/value head, a state S of
// [key size, value size] that each token updates and each query reads
// (docs/Import.md, "LinearAttention"). With k and q columns of the key
// size, v a row of the value size, g the decay (log-space) and β the rate:
//
//   linear       S ← S + k vᵀ
//   gated        S ← exp(g) ⊙ S + k vᵀ
//   delta        S ← S + β k (vᵀ − kᵀ S)
//   gated_delta  S ← S' + β k (vᵀ − kᵀ S') with S' = exp(g) ⊙ S
//
// and the output of a token is scale · qᵀ S after its update. The importer
// unrolls the recurrence over the static sequence length into existing
// graph ops:
//
//  1. query, key, value [batch, T, heads · size] become [batch, heads, T,
//     size]; decay [batch, T, kv heads · key size] or [batch, T, kv heads]
//     becomes exp(decay) as [batch, kv heads, T, key size or 1], beta
//     [batch, T, kv heads or 1] becomes [batch, kv heads or 1, T, 1];
//  2. S starts as past_state (zeros when absent); for each step t the
//     slices of step t update it by the rule's matmuls (k as a column
//     [key size, 1] times a row [1, value size]; kᵀ S as a [1, key size]
//     row times S);
//  3. the query heads of step t, grouped as [batch, kv heads, q heads / kv
//     heads, key size] (consecutive query heads share a key/value head),
//     are multiplied by S: [batch, 1, q heads · value size] per step,
//     concatenated along the sequence;
//  4. present_state is S after the last step.
//
// float16 and bfloat16 inputs are computed in float32 and the results cast
// back. chunk_size is a hint for chunked kernels and does not change the
// result, so it is ignored.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"
#include <cmath>

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

namespace {

/// The four recurrences and the inputs each reads.
struct Rule {
  bool gated = false, delta = false;
};

/// [batch, T, heads · size] as [batch, heads, T, size].
mlir::Value splitHeads(Composer &c, mlir::Value x, int64_t heads) {
  llvm::ArrayRef<int64_t> s = shapeOf(x);
  mlir::Value split = c.reshape(x, {s[0], s[1], heads, s[2] / heads});
  return c.transpose(split, {0, 2, 1, 3});
}

/// The optional input `i` named `what`, checked to be 3-d [batch, T, n]
/// with n one of `widths`, as [batch, n / size, T, size] where size is
/// `size` when n is widths[0] and 1 otherwise.
llvm::Expected<mlir::Value> perStep(NodeContext &ctx, Composer &c, unsigned i,
                                    llvm::StringRef what, int64_t batch,
                                    int64_t steps,
                                    llvm::ArrayRef<int64_t> widths,
                                    int64_t size, mlir::Type compute) {
  auto x = ctx.optionalInput(i);
  if (!x)
    return x.takeError();
  if (!*x)
    return ctx.unsupported("no " + what.str() +
                           " input, which the update rule needs");
  llvm::ArrayRef<int64_t> s = shapeOf(*x);
  if (s.size() != 3 || s[0] != batch || s[1] != steps ||
      !llvm::is_contained(widths, s[2]) ||
      !elementOf(*x).isa<mlir::FloatType>()) {
    std::string want;
    for (int64_t w : widths)
      want += (want.empty() ? "" : " or ") + std::to_string(w);
    return ctx.unsupported(what.str() + " not of shape [batch, T, " + want +
                           "]");
  }
  int64_t width = s[2] == widths[0] ? size : 1;
  return splitHeads(c, c.cast(*x, compute), s[2] / width);
}

llvm::Error linearAttention(NodeContext &ctx) {
  auto q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  if (!q)
    return q.takeError();
  if (!k)
    return k.takeError();
  if (!v)
    return v.takeError();
  std::string ruleName = ctx.attrString("update_rule", "gated_delta");
  Rule rule;
  if (ruleName == "gated")
    rule.gated = true;
  else if (ruleName == "delta")
    rule.delta = true;
  else if (ruleName == "gated_delta")
    rule.gated = rule.delta = true;
  else if (ruleName != "linear")
    return ctx.unsupported("update_rule '" + ruleName +
                           "' (ONNX defines 'linear', 'gated', 'delta' and "
                           "'gated_delta')");

  llvm::ArrayRef<int64_t> qs = shapeOf(*q), ks = shapeOf(*k), vs = shapeOf(*v);
  mlir::Type element = elementOf(*q);
  if (qs.size() != 3 || ks.size() != 3 || vs.size() != 3 ||
      !element.isa<mlir::FloatType>() || elementOf(*k) != element ||
      elementOf(*v) != element)
    return ctx.unsupported("query, key and value that are not 3-d float "
                           "tensors of one type");
  int64_t qHeads = ctx.attrInt("q_num_heads", 0);
  int64_t kvHeads = ctx.attrInt("kv_num_heads", 0);
  if (qHeads <= 0 || kvHeads <= 0 || qHeads % kvHeads)
    return ctx.unsupported("q_num_heads " + std::to_string(qHeads) +
                           " and kv_num_heads " + std::to_string(kvHeads) +
                           " (both positive, q a multiple of kv)");
  int64_t batch = qs[0], steps = qs[1];
  if (qs[2] % qHeads || ks[2] % kvHeads || vs[2] % kvHeads ||
      qs[2] / qHeads != ks[2] / kvHeads || ks[0] != batch || vs[0] != batch ||
      ks[1] != steps || vs[1] != steps)
    return ctx.unsupported("query, key and value whose batch, sequence or "
                           "head sizes disagree");
  if (steps == 0)
    return ctx.unsupported("an empty sequence");
  int64_t keySize = qs[2] / qHeads, valueSize = vs[2] / kvHeads;
  int64_t group = qHeads / kvHeads;

  Composer c(ctx);
  mlir::OpBuilder &b = ctx.builder();
  mlir::Type compute = element.isF16() || element.isBF16()
                           ? mlir::Type(b.getF32Type())
                           : element;
  llvm::SmallVector<int64_t> stateShape{batch, kvHeads, keySize, valueSize};
  auto past = ctx.optionalInput(3);
  if (!past)
    return past.takeError();
  mlir::Type stateElement = element;
  mlir::Value state;
  if (*past) {
    if (shapeOf(*past) != llvm::ArrayRef<int64_t>(stateShape) ||
        !elementOf(*past).isa<mlir::FloatType>())
      return ctx.unsupported("a past_state not of shape [batch, kv heads, "
                             "key size, value size]");
    stateElement = elementOf(*past);
    state = c.cast(*past, compute);
  } else {
    state = c.constant(stateShape, compute, {0.0});
  }
  mlir::Value gate, rate;
  if (rule.gated) {
    auto decay = perStep(ctx, c, 4, "decay", batch, steps,
                         {kvHeads * keySize, kvHeads}, keySize, compute);
    if (!decay)
      return decay.takeError();
    gate = c.unary<g::ExpOp>(*decay);
  }
  if (rule.delta) {
    auto beta =
        perStep(ctx, c, 5, "beta", batch, steps, {kvHeads, 1}, 1, compute);
    if (!beta)
      return beta.takeError();
    rate = *beta;
  }

  double scale = ctx.attrFloat("scale", 0);
  if (scale == 0)
    scale = 1 / std::sqrt(double(keySize));
  mlir::Value query = c.mul(splitHeads(c, c.cast(*q, compute), qHeads),
                            c.scalar(compute, scale));
  mlir::Value key = splitHeads(c, c.cast(*k, compute), kvHeads);
  mlir::Value value = splitHeads(c, c.cast(*v, compute), kvHeads);

  llvm::SmallVector<mlir::Value> outputs;
  for (int64_t t = 0; t < steps; ++t) {
    mlir::Value kRow = c.slice(key, 2, t, t + 1);
    mlir::Value kColumn = c.reshape(kRow, {batch, kvHeads, keySize, 1});
    mlir::Value update = c.slice(value, 2, t, t + 1);
    if (gate) {
      mlir::Value factor = c.slice(gate, 2, t, t + 1);
      llvm::ArrayRef<int64_t> fs = shapeOf(factor);
      state = c.mul(state, c.reshape(factor, {fs[0], fs[1], fs[3], 1}));
    }
    if (rate) {
      mlir::Value predicted = c.matmul(kRow, state);
      update = c.mul(c.sub(update, predicted), c.slice(rate, 2, t, t + 1));
    }
    state = c.add(state, c.matmul(kColumn, update));
    mlir::Value qStep = c.reshape(c.slice(query, 2, t, t + 1),
                                  {batch, kvHeads, group, keySize});
    outputs.push_back(
        c.reshape(c.matmul(qStep, state), {batch, 1, qHeads * valueSize}));
  }
  if (auto err = c.finish(c.cast(c.concat(outputs, 1), element), 0))
    return err;
  const onnx::NodeProto &node = ctx.getNode();
  if (node.output_size() < 2 || node.output(1).empty())
    return llvm::Error::success();
  return c.finish(c.cast(state, stateElement), 1);
}

} // namespace

void import::registerLinearAttentionHandler(HandlerTable &t) {
  t["LinearAttention"] = linearAttention;
}
