//===- LegalizeDecomposeNN.cpp - Normalisations and GELU from graph ops ---===//
//
// InstanceNormalization, GroupNormalization and RMSNormalization, and Gelu
// (opset 20), as compositions of graph ops (docs/Import.md,
// "Decompositions"). The instance and group normalisations reuse
// graph.layer_norm (statistics in double in the interpreter, one op the
// sharding rules already split along the batch and channels) with a unit
// scale and zero bias, then apply the ONNX op's own scale and bias.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include <numeric>

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

namespace {

llvm::Error floatInputs(NodeContext &ctx, unsigned count,
                        llvm::SmallVectorImpl<mlir::Value> &out) {
  for (unsigned i = 0; i < count; ++i) {
    auto v = ctx.input(i);
    if (!v)
      return v.takeError();
    if (!elementOf(*v).isa<mlir::FloatType>())
      return ctx.unsupported("integer input " + std::to_string(i));
    out.push_back(*v);
  }
  return llvm::Error::success();
}

int64_t product(llvm::ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// `v` (one value per channel, shape [C]) as [C, 1, ..., 1] to broadcast
/// against an N×C×... tensor of rank `rank`.
mlir::Value perChannel(Composer &c, mlir::Value v, int64_t rank) {
  llvm::SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = shapeOf(v).empty() ? 1 : shapeOf(v)[0];
  return c.reshape(v, shape);
}

/// Gelu (opset 20). approximate="none" is graph.gelu (erf form);
/// approximate="tanh" is 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), written
/// with 0.5·(1 + tanh(z)) = sigmoid(2z) as x · sigmoid(x · (a + b·x²)),
/// a = 2√(2/π), b = 0.044715·a.
llvm::Error gelu(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> in;
  if (auto err = floatInputs(ctx, 1, in))
    return err;
  mlir::Value x = in[0];
  Composer c(ctx);
  std::string approximate = ctx.attrString("approximate", "none");
  if (approximate == "none")
    return c.finish(c.unary<g::GeluOp>(x));
  if (approximate != "tanh")
    return ctx.unsupported("approximate='" + approximate + "'");
  const double a = 2.0 * 0.79788456080286535588; // 2·sqrt(2/pi)
  mlir::Value poly = c.add(c.mul(c.mul(x, x), c.scalarLike(x, 0.044715 * a)),
                           c.scalarLike(x, a));
  return c.finish(c.mul(x, c.unary<g::SigmoidOp>(c.mul(x, poly))));
}

/// InstanceNormalization(x, scale[C], bias[C]) on N×C×D1×...: each (n, c)
/// slice normalised over D1... = layer_norm from axis 2, then
/// · scale[C,1,...] + bias[C,1,...].
llvm::Error instanceNorm(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> in;
  if (auto err = floatInputs(ctx, 3, in))
    return err;
  int64_t rank = shapeOf(in[0]).size();
  if (rank < 3)
    return ctx.unsupported("an input of rank below 3");
  Composer c(ctx);
  mlir::Value y = c.normalize(in[0], 2, ctx.attrFloat("epsilon", 1e-5));
  y = c.add(c.mul(y, perChannel(c, in[1], rank)), perChannel(c, in[2], rank));
  return c.finish(y);
}

/// GroupNormalization(x, scale, bias; num_groups G) on N×C×D1×...: x is
/// viewed as N×G×(C/G·D1·...) and normalised over its last dim
/// (layer_norm from axis 2), then viewed as N×C×D1×... again.
///
/// Which scale and bias: opset 18 defines them per group (G values, applied
/// in the grouped view), opset 21 per channel (C values, applied after the
/// view back); the node's opset (ctx.opset(), the model's own opset even
/// when the opset bridge rewrote the model for the checker) decides, and a
/// scale or bias of the other form is bad input. When G = C both forms are
/// the same.
llvm::Error groupNorm(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> in;
  if (auto err = floatInputs(ctx, 3, in))
    return err;
  llvm::ArrayRef<int64_t> shape = shapeOf(in[0]);
  int64_t rank = shape.size();
  int64_t groups = ctx.attrInt("num_groups", 0);
  if (rank < 2)
    return ctx.unsupported("an input of rank below 2");
  int64_t channels = shape[1];
  if (groups <= 0 || channels % groups != 0)
    return badInput("ONNX GroupNormalization node '{0}': num_groups {1} does "
                    "not divide the {2} channels",
                    ctx.getNode().name(), groups, channels);
  bool perChannelForm = ctx.opset() >= 21;
  int64_t want = perChannelForm ? channels : groups;
  for (unsigned i = 1; i < 3; ++i)
    if (shapeOf(in[i]) != llvm::ArrayRef<int64_t>(want))
      return badInput("ONNX GroupNormalization node '{0}' (opset {1}): input "
                      "{2} must hold one value per {3} ({4}), not {5} values",
                      ctx.getNode().name(), ctx.opset(), i,
                      perChannelForm ? "channel" : "group", want,
                      product(shapeOf(in[i])));
  Composer c(ctx);
  int64_t n = shape[0];
  llvm::SmallVector<int64_t> grouped{n, groups,
                                     product(shape.drop_front(1)) / groups};
  mlir::Value y =
      c.normalize(c.reshape(in[0], grouped), 2, ctx.attrFloat("epsilon", 1e-5));
  if (!perChannelForm) {
    y = c.add(c.mul(y, c.reshape(in[1], {groups, 1})),
              c.reshape(in[2], {groups, 1}));
    return c.finish(c.reshape(y, shape));
  }
  y = c.reshape(y, shape);
  y = c.add(c.mul(y, perChannel(c, in[1], rank)), perChannel(c, in[2], rank));
  return c.finish(y);
}

/// RMSNormalization (opset 23): x · rsqrt(mean(x², dims axis..) + epsilon)
/// · scale, scale broadcasting against those dims.
llvm::Error rmsNorm(NodeContext &ctx) {
  llvm::SmallVector<mlir::Value> in;
  if (auto err = floatInputs(ctx, 2, in))
    return err;
  int64_t rank = shapeOf(in[0]).size();
  auto axis = normalizeAxis(ctx, ctx.attrInt("axis", -1), rank, "axis");
  if (!axis)
    return axis.takeError();
  llvm::SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  Composer c(ctx);
  mlir::Value x = in[0];
  mlir::Value meanSq = c.reduce<g::ReduceMeanOp>(c.mul(x, x), axes, true);
  mlir::Value inv = c.unary<g::RsqrtOp>(
      c.add(meanSq, c.scalarLike(x, ctx.attrFloat("epsilon", 1e-5))));
  return c.finish(c.mul(c.mul(x, inv), in[1]));
}

} // namespace

void import::registerDecomposeNNHandlers(HandlerTable &t) {
  t["Gelu"] = gelu;
  t["InstanceNormalization"] = instanceNorm;
  t["GroupNormalization"] = groupNorm;
  t["RMSNormalization"] = rmsNorm;
}
