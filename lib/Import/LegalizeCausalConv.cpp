//===- LegalizeCausalConv.cpp - CausalConvWithState as graph ops ----------===//
//
// ONNX's CausalConvWithState (opset 27) is a depthwise 1-d convolution over
// [batch, channels, length] that sees only the current and earlier
// positions, carrying the last k - 1 positions between calls
// (docs/Import.md, "CausalConvWithState"). It is legalised into existing
// graph ops:
//
//  1. past_state [batch, channels, k - 1] (zeros when absent) is
//     concatenated in front of the input along the length;
//  2. the output at t is the sum over taps j < k of weight[c, 0, j] times
//     the padded input at t + j: k slices of the padded input, each scaled
//     by one column of the weight (broadcast over batch and length);
//  3. the bias is added per channel, and activation 'silu' (or its alias
//     'swish') gives x · sigmoid(x);
//  4. present_state is the last k - 1 positions of the padded input.
//
// No convolution op is needed, so any float type, gradients and the
// interpreter are covered by the ops used.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

namespace {

std::string dims(llvm::ArrayRef<int64_t> shape) {
  std::string out = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    out += (i ? ", " : "") + std::to_string(d);
  return out + "]";
}

llvm::Error causalConv(NodeContext &ctx) {
  auto input = ctx.input(0), weight = ctx.input(1);
  if (!input)
    return input.takeError();
  if (!weight)
    return weight.takeError();
  auto bias = ctx.optionalInput(2), past = ctx.optionalInput(3);
  if (!bias)
    return bias.takeError();
  if (!past)
    return past.takeError();
  std::string activation = ctx.attrString("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    return ctx.unsupported("activation '" + activation +
                           "' (ONNX defines 'none', 'silu' and 'swish')");

  llvm::ArrayRef<int64_t> xs = shapeOf(*input), ws = shapeOf(*weight);
  mlir::Type element = elementOf(*input);
  if (xs.size() != 3 || !element.isa<mlir::FloatType>())
    return ctx.unsupported("an input that is not a rank-3 float tensor");
  int64_t batch = xs[0], channels = xs[1], length = xs[2];
  if (ws.size() != 3 || ws[0] != channels || ws[1] != 1 || ws[2] < 1 ||
      elementOf(*weight) != element)
    return ctx.unsupported("a weight of shape " + dims(ws) + " for " +
                           std::to_string(channels) +
                           " channels (want [channels, 1, k], k >= 1)");
  int64_t k = ws[2];
  if (*bias && (shapeOf(*bias) != llvm::ArrayRef<int64_t>{channels} ||
                elementOf(*bias) != element))
    return ctx.unsupported("a bias of shape " + dims(shapeOf(*bias)) +
                           " (want [channels] of the input's type)");
  llvm::SmallVector<int64_t> stateShape{batch, channels, k - 1};
  if (*past && (shapeOf(*past) != llvm::ArrayRef<int64_t>(stateShape) ||
                elementOf(*past) != element))
    return ctx.unsupported("a past_state of shape " + dims(shapeOf(*past)) +
                           " (want " + dims(stateShape) + ")");

  Composer c(ctx);
  mlir::Value padded = *input;
  if (k > 1) {
    mlir::Value state = *past ? *past : c.constant(stateShape, element, {0.0});
    padded = c.concat({state, *input}, 2);
  }
  mlir::Value sum;
  for (int64_t j = 0; j < k; ++j) {
    mlir::Value tap = c.reshape(c.slice(*weight, 2, j, j + 1), {channels, 1});
    mlir::Value term = c.mul(c.slice(padded, 2, j, j + length), tap);
    sum = sum ? c.add(sum, term) : term;
  }
  if (*bias)
    sum = c.add(sum, c.reshape(*bias, {channels, 1}));
  if (activation != "none")
    sum = c.mul(sum, c.unary<g::SigmoidOp>(sum));
  if (auto err = c.finish(sum, 0))
    return err;
  const onnx::NodeProto &node = ctx.getNode();
  if (node.output_size() < 2 || node.output(1).empty())
    return llvm::Error::success();
  int64_t total = shapeOf(padded)[2];
  return c.finish(c.slice(padded, 2, total - (k - 1), total), 1);
}

} // namespace

void import::registerCausalConvHandler(HandlerTable &t) {
  t["CausalConvWithState"] = causalConv;
}
