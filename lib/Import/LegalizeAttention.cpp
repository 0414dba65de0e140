//===- LegalizeAttention.cpp - Attention (opsets 23-25) as graph ops ------===//
//
// ONNX's Attention op (opset 23; 24 changed the causal frontier with a
// cache, 25 added sliding windows) is legalised into existing graph ops
// (docs/Import.md, "Attention"):
//
//  1. 3-d Q, K, V of [batch, sequence, heads · head size] are reshaped to
//     [batch, sequence, heads, head size] and transposed to 4-d
//     [batch, heads, sequence, head size];
//  2. past_key and past_value are concatenated in front of K and V along
//     the sequence; the results are present_key and present_value;
//  3. Q and K are each multiplied by √scale (scale defaults to
//     1/√head size), the K heads of grouped-query attention repeated
//     (each kv head serves q_num_heads / kv_num_heads consecutive q heads:
//     reshape, expand, reshape), and Q·Kᵀ taken by graph.matmul;
//  4. softcap c > 0 gives c · tanh(scores / c);
//  5. the bias is added: attn_mask (a bool mask as 0 where true and −inf
//     where false; a last dim shorter than the total sequence padded with
//     −inf) plus a constant of 0 and −inf for is_causal and the windows,
//     whose frontier is offset by the past sequence length;
//  6. softmax along the keys (in softmax_precision's type when given);
//     a query row whose bias is −inf everywhere gives zeros: its scores are
//     replaced by 0 before the softmax (no NaN, also not in gradients) and
//     its probabilities by 0 after. The rows are known at import time when
//     the bias is a constant, found by reduce_max otherwise;
//  7. the probabilities times V (its heads repeated as K's), and for 3-d
//     inputs transposed and reshaped back to [batch, sequence, hidden].
//
// qk_matmul_output is the scores before softcap (mode 0), after it (1),
// with the bias (2) or the probabilities (3). nonpad_kv_seqlen (a cache
// kept outside the op) is not supported.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"
#include "weft/Support/Error.h"
#include <cmath>
#include <limits>

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// The node's attributes and the dims of its 4-d operands.
struct AttentionShape {
  int64_t batch = 0, qHeads = 0, kvHeads = 0;
  int64_t qLen = 0, pastLen = 0, totalLen = 0;
  int64_t headSize = 0, vHeadSize = 0;
  bool threeD = false;
};

/// Whether output `i` is wanted (present and named).
bool wantsOutput(NodeContext &ctx, unsigned i) {
  const onnx::NodeProto &node = ctx.getNode();
  return int(i) < node.output_size() && !node.output(i).empty();
}

/// A 3-d [batch, sequence, heads · size] operand as 4-d
/// [batch, heads, sequence, size].
mlir::Value splitHeads(Composer &c, mlir::Value x, int64_t heads) {
  llvm::ArrayRef<int64_t> s = shapeOf(x);
  mlir::Value split = c.reshape(x, {s[0], s[1], heads, s[2] / heads});
  return c.transpose(split, {0, 2, 1, 3});
}

/// [batch, kv heads, sequence, size] with each head repeated `times` times
/// in place: [h0, h0, h1, h1, ...] for times = 2.
mlir::Value repeatHeads(Composer &c, mlir::Value x, int64_t times) {
  if (times == 1)
    return x;
  llvm::ArrayRef<int64_t> s = shapeOf(x);
  mlir::Value one = c.reshape(x, {s[0], s[1], 1, s[2], s[3]});
  mlir::Value many = c.expand(one, {s[0], s[1], times, s[2], s[3]});
  return c.reshape(many, {s[0], s[1] * times, s[2], s[3]});
}

/// The ONNX element type code of softmax_precision as an MLIR type.
mlir::Type precisionType(mlir::OpBuilder &b, int64_t code) {
  switch (code) {
  case 1:
    return b.getF32Type();
  case 10:
    return b.getF16Type();
  case 11:
    return b.getF64Type();
  case 16:
    return b.getBF16Type();
  default:
    return nullptr;
  }
}

/// Reads Q, K and V, checks their dims against each other and the head
/// attributes, and brings them to 4-d. Fills `shape` but its past and total
/// lengths.
llvm::Error headsOf(NodeContext &ctx, Composer &c, mlir::Value &q,
                    mlir::Value &k, mlir::Value &v, AttentionShape &shape) {
  llvm::ArrayRef<int64_t> qs = shapeOf(q), ks = shapeOf(k), vs = shapeOf(v);
  if (qs.size() != ks.size() || qs.size() != vs.size() ||
      (qs.size() != 3 && qs.size() != 4))
    return ctx.unsupported("Q, K and V of ranks " + std::to_string(qs.size()) +
                           ", " + std::to_string(ks.size()) + ", " +
                           std::to_string(vs.size()) +
                           " (ONNX defines 3-d and 4-d)");
  if (!elementOf(q).isa<mlir::FloatType>() || elementOf(k) != elementOf(q) ||
      elementOf(v) != elementOf(q))
    return ctx.unsupported("Q, K and V of different or non-float types");
  shape.threeD = qs.size() == 3;
  int64_t qHeadsAttr = ctx.attrInt("q_num_heads", 0);
  int64_t kvHeadsAttr = ctx.attrInt("kv_num_heads", 0);
  if (shape.threeD) {
    if (qHeadsAttr <= 0 || kvHeadsAttr <= 0)
      return ctx.unsupported("3-d Q, K and V without positive q_num_heads "
                             "and kv_num_heads");
    if (qs[2] % qHeadsAttr || ks[2] % kvHeadsAttr || vs[2] % kvHeadsAttr)
      return ctx.unsupported("hidden sizes not divisible by the head counts");
    q = splitHeads(c, q, qHeadsAttr);
    k = splitHeads(c, k, kvHeadsAttr);
    v = splitHeads(c, v, kvHeadsAttr);
  }
  qs = shapeOf(q);
  ks = shapeOf(k);
  vs = shapeOf(v);
  if (!shape.threeD && ((qHeadsAttr && qHeadsAttr != qs[1]) ||
                        (kvHeadsAttr && kvHeadsAttr != ks[1])))
    return ctx.unsupported("q_num_heads or kv_num_heads that differ from the "
                           "4-d inputs' head dims");
  if (qs[0] != ks[0] || qs[0] != vs[0] || ks[1] != vs[1] || ks[2] != vs[2] ||
      qs[3] != ks[3])
    return ctx.unsupported("Q, K and V whose batch, head, sequence or head "
                           "size dims disagree");
  if (ks[1] == 0 || qs[1] % ks[1])
    return ctx.unsupported(std::to_string(qs[1]) + " query heads over " +
                           std::to_string(ks[1]) +
                           " key/value heads (not a multiple)");
  shape.batch = qs[0];
  shape.qHeads = qs[1];
  shape.kvHeads = ks[1];
  shape.qLen = qs[2];
  shape.headSize = qs[3];
  shape.vHeadSize = vs[3];
  return llvm::Error::success();
}

/// The constant part of the bias: 0 where is_causal and the windows let
/// query i see key j, −inf elsewhere ([qLen, totalLen], row-major). Empty
/// when nothing is masked.
std::vector<double> frontierBias(NodeContext &ctx, const AttentionShape &s) {
  bool causal = ctx.attrInt("is_causal", 0) != 0;
  int64_t left = ctx.attrInt("left_window_size", -1);
  int64_t right = ctx.attrInt("right_window_size", -1);
  if (!causal && left < 0 && right < 0)
    return {};
  std::vector<double> bias;
  bias.reserve(s.qLen * s.totalLen);
  for (int64_t i = 0; i < s.qLen; ++i) {
    for (int64_t j = 0; j < s.totalLen; ++j) {
      // The query's absolute position minus the key's.
      int64_t diff = i + s.pastLen - j;
      bool seen = !(causal && diff < 0) && !(left >= 0 && diff > left) &&
                  !(right >= 0 && -diff > right);
      bias.push_back(seen ? 0.0 : kNegInf);
    }
  }
  return bias;
}

/// attn_mask as an additive bias of element type `element`, its last dim
/// padded with −inf to `totalLen`.
llvm::Expected<mlir::Value> maskBias(NodeContext &ctx, Composer &c,
                                     mlir::Value mask, mlir::Type element,
                                     int64_t totalLen) {
  llvm::ArrayRef<int64_t> ms = shapeOf(mask);
  if (ms.empty() || ms.size() > 4)
    return ctx.unsupported("an attn_mask of rank " + std::to_string(ms.size()));
  if (ms.back() > totalLen)
    return ctx.unsupported("an attn_mask longer than the total sequence (" +
                           std::to_string(ms.back()) + " > " +
                           std::to_string(totalLen) + ")");
  mlir::Type maskElement = elementOf(mask);
  mlir::Value bias;
  if (maskElement.isInteger(1))
    bias = c.select(mask, c.scalar(element, 0), c.scalar(element, kNegInf));
  else if (maskElement.isa<mlir::FloatType>())
    bias = c.cast(mask, element);
  else
    return ctx.unsupported("an attn_mask that is neither bool nor float");
  if (ms.back() < totalLen) {
    llvm::SmallVector<int64_t> fillShape(ms.begin(), ms.end());
    fillShape.back() = totalLen - ms.back();
    mlir::Value fill = c.constant(fillShape, element, {kNegInf});
    llvm::SmallVector<int64_t> padded(ms.begin(), ms.end());
    padded.back() = totalLen;
    auto type = mlir::RankedTensorType::get(padded, element);
    bias = ctx.builder().create<g::ConcatOp>(
        ctx.loc(), type, mlir::ValueRange{bias, fill},
        ctx.builder().getI64IntegerAttr(int64_t(ms.size()) - 1));
  }
  return bias;
}

/// The additive bias (null when there is none) and the query rows it masks
/// entirely (null when no row can be: a constant bias without such rows).
struct Bias {
  mlir::Value bias, rowMasked;
};

llvm::Expected<Bias> biasOf(NodeContext &ctx, Composer &c, mlir::Type element,
                            const AttentionShape &s) {
  Bias out;
  std::vector<double> frontier = frontierBias(ctx, s);
  mlir::Value constantBias;
  if (!frontier.empty())
    constantBias = c.constant({s.qLen, s.totalLen}, element, frontier);
  auto mask = ctx.optionalInput(3);
  if (!mask)
    return mask.takeError();
  if (!*mask) {
    if (!constantBias)
      return out;
    out.bias = constantBias;
    // Rows the frontier masks entirely, known now.
    llvm::SmallVector<bool> rows;
    bool any = false;
    for (int64_t i = 0; i < s.qLen; ++i) {
      bool all = llvm::all_of(
          llvm::ArrayRef(frontier).slice(i * s.totalLen, s.totalLen),
          [](double b) { return std::isinf(b); });
      rows.push_back(all);
      any |= all;
    }
    if (any)
      out.rowMasked = c.mask({s.qLen, 1}, rows);
    return out;
  }
  auto fromMask = maskBias(ctx, c, *mask, element, s.totalLen);
  if (!fromMask)
    return fromMask.takeError();
  out.bias = constantBias ? c.add(*fromMask, constantBias) : *fromMask;
  mlir::Value rowMax = c.reduce<g::ReduceMaxOp>(
      out.bias, {int64_t(shapeOf(out.bias).size()) - 1},
      /*keepdims=*/true);
  out.rowMasked = c.compare("eq", rowMax, c.scalar(element, kNegInf));
  return out;
}

llvm::Error attention(NodeContext &ctx) {
  auto q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  if (!q)
    return q.takeError();
  if (!k)
    return k.takeError();
  if (!v)
    return v.takeError();
  if (ctx.hasInput(6))
    return ctx.unsupported("nonpad_kv_seqlen (a key/value cache kept outside "
                           "the op)");
  auto pastKey = ctx.optionalInput(4), pastValue = ctx.optionalInput(5);
  if (!pastKey)
    return pastKey.takeError();
  if (!pastValue)
    return pastValue.takeError();
  if (bool(*pastKey) != bool(*pastValue))
    return ctx.unsupported("past_key without past_value or the reverse");
  int64_t mode = ctx.attrInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return ctx.unsupported("qk_matmul_output_mode " + std::to_string(mode) +
                           " (ONNX defines 0 to 3)");
  if (ctx.attrInt("left_window_size", -1) < -1 ||
      ctx.attrInt("right_window_size", -1) < -1)
    return ctx.unsupported("a window size below -1");
  Composer c(ctx);
  mlir::OpBuilder &b = ctx.builder();
  mlir::Type softmaxType;
  if (ctx.hasAttr("softmax_precision")) {
    int64_t code = ctx.attrInt("softmax_precision", 0);
    softmaxType = precisionType(b, code);
    if (!softmaxType)
      return ctx.unsupported("softmax_precision " + std::to_string(code) +
                             " (ONNX defines 1, 10, 11 and 16)");
  }

  AttentionShape s;
  mlir::Value query = *q, key = *k, value = *v;
  if (auto err = headsOf(ctx, c, query, key, value, s))
    return err;
  mlir::Type element = elementOf(query);
  if (*pastKey) {
    llvm::ArrayRef<int64_t> pk = shapeOf(*pastKey), pv = shapeOf(*pastValue);
    if (pk.size() != 4 || pv.size() != 4 || pk[0] != s.batch ||
        pk[1] != s.kvHeads || pk[3] != s.headSize || pv[0] != s.batch ||
        pv[1] != s.kvHeads || pv[3] != s.vHeadSize || pk[2] != pv[2] ||
        elementOf(*pastKey) != element || elementOf(*pastValue) != element)
      return ctx.unsupported("past_key or past_value whose type does not "
                             "match K or V");
    s.pastLen = pk[2];
    auto concat = [&](mlir::Value past, mlir::Value now) -> mlir::Value {
      llvm::SmallVector<int64_t> joined(shapeOf(now));
      joined[2] += s.pastLen;
      return b.create<g::ConcatOp>(
          ctx.loc(), mlir::RankedTensorType::get(joined, element),
          mlir::ValueRange{past, now}, b.getI64IntegerAttr(2));
    };
    key = concat(*pastKey, key);
    value = concat(*pastValue, value);
  }
  s.totalLen = shapeOf(key)[2];
  for (unsigned i : {1u, 2u})
    if (wantsOutput(ctx, i))
      if (auto err = c.finish(i == 1 ? key : value, i))
        return err;

  double scale = ctx.hasAttr("scale") ? ctx.attrFloat("scale", 1)
                                      : 1 / std::sqrt(double(s.headSize));
  mlir::Value root = c.scalar(element, std::sqrt(scale));
  int64_t group = s.qHeads / s.kvHeads;
  mlir::Value keys = repeatHeads(c, c.mul(key, root), group);
  mlir::Value scores =
      c.matmul(c.mul(query, root), c.transpose(keys, {0, 1, 3, 2}));
  mlir::Value capped = scores;
  double softcap = ctx.attrFloat("softcap", 0);
  if (softcap > 0) {
    mlir::Value cap = c.scalar(element, softcap);
    capped = c.mul(c.unary<g::TanhOp>(c.div(scores, cap)), cap);
  }
  auto bias = biasOf(ctx, c, element, s);
  if (!bias)
    return bias.takeError();
  mlir::Value logits = bias->bias ? c.add(capped, bias->bias) : capped;

  mlir::Value zero = c.scalar(element, 0);
  mlir::Value safe =
      bias->rowMasked ? c.select(bias->rowMasked, zero, logits) : logits;
  mlir::Type precision = softmaxType ? softmaxType : element;
  mlir::Value wide = c.cast(safe, precision);
  mlir::Value probs = b.create<g::SoftmaxOp>(ctx.loc(), wide.getType(), wide,
                                             b.getI64IntegerAttr(-1));
  if (bias->rowMasked)
    probs = c.select(bias->rowMasked, c.scalar(precision, 0), probs);
  probs = c.cast(probs, element);

  if (wantsOutput(ctx, 3)) {
    mlir::Value shown[] = {scores, capped, logits, probs};
    if (auto err = c.finish(shown[mode], 3))
      return err;
  }
  mlir::Value y = c.matmul(probs, repeatHeads(c, value, group));
  if (s.threeD)
    y = c.reshape(c.transpose(y, {0, 2, 1, 3}),
                  {s.batch, s.qLen, s.qHeads * s.vHeadSize});
  return c.finish(y);
}

} // namespace

void import::registerAttentionHandler(HandlerTable &t) {
  t["Attention"] = attention;
}
