//===- LegalizeGridSample.cpp - GridSample as graph ops -------------------===//
//
// ONNX's GridSample (opset 16; 20 and later: any number of spatial dims,
// modes renamed linear and cubic) samples X [N, C, d1, ..., dr] at the
// normalised positions of grid [N, o1, ..., or, r] (component 0 is the
// last spatial dim). It is legalised into existing graph ops
// (docs/Import.md, "GridSample"):
//
//  1. each grid component becomes a pixel coordinate p of its spatial dim
//     (size s): (g + 1) / 2 · (s − 1) with align_corners, else
//     ((g + 1) · s − 1) / 2;
//  2. the padding mode moves p into the image: border clips it to
//     [0, s − 1]; reflection folds it at the borders (−0.5 and s − 0.5, or
//     0 and s − 1 with align_corners) until it lies between them, then
//     clips; zeros leaves it. Cubic applies the padding to each of its
//     four integer taps instead, as PyTorch's grid_sample;
//  3. each dim gives taps (an integer position and a weight): nearest one
//     (round, halves to even) of weight 1; linear floor(p) and floor(p) + 1
//     of weights 1 − f and f (f = p − floor(p)); cubic floor(p) − 1 ..
//     floor(p) + 2 with the cubic convolution weights of A = −0.75;
//  4. a tap outside [0, s − 1] gets weight 0 (zeros padding) and its
//     position is clipped so the gather stays in bounds;
//  5. for each combination of one tap per dim, the flat position
//     Σ position · stride is cast to i64 and gathers (gather_elements
//     along the flattened spatial dims of X [N, C, d1 · ... · dr]) the
//     values, which are multiplied by the product of the tap weights and
//     summed.
//
// Gradients reach X through gather_elements and the grid through the
// weights (not through floor and round, whose gradient is zero).
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"

using namespace weft;
using namespace weft::import;
namespace g = weft::graph;

namespace {

enum class Mode { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

/// An integer position along one spatial dim (as a float tensor) and its
/// weight, both of the grid's output shape.
struct Tap {
  mlir::Value position, weight;
};

/// |x| as select(x < 0, −x, x).
mlir::Value absOf(Composer &c, mlir::Value x) {
  mlir::Value zero = c.scalarLike(x, 0);
  return c.select(c.compare("lt", x, zero), c.sub(zero, x), x);
}

/// `p` clipped to [0, size − 1].
mlir::Value clipInside(Composer &c, mlir::Value p, int64_t size) {
  return c.min(c.max(p, c.scalarLike(p, 0)), c.scalarLike(p, size - 1));
}

/// `p` folded at `lo` and `hi` until it lies between them.
mlir::Value reflect(Composer &c, mlir::Value p, double lo, double hi) {
  double span = hi - lo;
  if (span <= 0)
    return c.mul(p, c.scalarLike(p, 0));
  mlir::Value distance = absOf(c, c.sub(p, c.scalarLike(p, lo)));
  mlir::Value flips =
      c.unary<g::FloorOp>(c.div(distance, c.scalarLike(p, span)));
  mlir::Value extra = c.sub(distance, c.mul(flips, c.scalarLike(p, span)));
  mlir::Value half = c.unary<g::FloorOp>(c.mul(flips, c.scalarLike(p, 0.5)));
  mlir::Value even = c.compare("eq", c.mul(half, c.scalarLike(p, 2)), flips);
  return c.select(even, c.add(extra, c.scalarLike(p, lo)),
                  c.sub(c.scalarLike(p, hi), extra));
}

/// The padding mode applied to a coordinate or tap `p` of a dim of `size`.
mlir::Value pad(Composer &c, mlir::Value p, int64_t size, Padding padding,
                bool alignCorners) {
  switch (padding) {
  case Padding::Zeros:
    return p;
  case Padding::Border:
    return clipInside(c, p, size);
  case Padding::Reflection:
    return clipInside(c,
                      alignCorners ? reflect(c, p, 0, double(size - 1))
                                   : reflect(c, p, -0.5, size - 0.5),
                      size);
  }
  return p;
}

/// The cubic convolution weights (A = −0.75) of the taps at distances
/// 1 + t, t, 1 − t and 2 − t from a point t past the second tap.
llvm::SmallVector<mlir::Value, 4> cubicWeights(Composer &c, mlir::Value t) {
  const double a = -0.75;
  auto s = [&](double v) { return c.scalarLike(t, v); };
  // |d| <= 1: ((A + 2)|d| − (A + 3))|d|² + 1.
  auto near = [&](mlir::Value d) {
    return c.add(c.mul(c.sub(c.mul(s(a + 2), d), s(a + 3)), c.mul(d, d)), s(1));
  };
  // 1 < |d| < 2: ((A|d| − 5A)|d| + 8A)|d| − 4A.
  auto far = [&](mlir::Value d) {
    mlir::Value inner =
        c.add(c.mul(c.sub(c.mul(s(a), d), s(5 * a)), d), s(8 * a));
    return c.sub(c.mul(inner, d), s(4 * a));
  };
  mlir::Value one = s(1);
  return {far(c.add(t, one)), near(t), near(c.sub(one, t)),
          far(c.sub(s(2), t))};
}

/// The taps of one spatial dim of `size` for pixel coordinates `p`.
llvm::SmallVector<Tap, 4> tapsOf(Composer &c, mlir::Value p, int64_t size,
                                 Mode mode, Padding padding,
                                 bool alignCorners) {
  llvm::SmallVector<Tap, 4> taps;
  mlir::Value one = c.scalarLike(p, 1);
  switch (mode) {
  case Mode::Nearest:
    taps.push_back(
        {c.unary<g::RoundOp>(pad(c, p, size, padding, alignCorners)), nullptr});
    break;
  case Mode::Linear: {
    mlir::Value q = pad(c, p, size, padding, alignCorners);
    mlir::Value lo = c.unary<g::FloorOp>(q);
    mlir::Value frac = c.sub(q, lo);
    taps.push_back({lo, c.sub(one, frac)});
    taps.push_back({c.add(lo, one), frac});
    break;
  }
  case Mode::Cubic: {
    mlir::Value lo = c.unary<g::FloorOp>(p);
    llvm::SmallVector<mlir::Value, 4> weights = cubicWeights(c, c.sub(p, lo));
    for (int64_t k = 0; k < 4; ++k) {
      mlir::Value at = c.add(lo, c.scalarLike(p, double(k - 1)));
      taps.push_back({pad(c, at, size, padding, alignCorners), weights[k]});
    }
    break;
  }
  }
  // Taps outside the image read 0; their positions are clipped for the
  // gather.
  for (Tap &tap : taps) {
    mlir::Value inside = c.select(
        c.compare("lt", tap.position, c.scalarLike(p, 0)), c.scalarLike(p, 0),
        c.select(c.compare("gt", tap.position, c.scalarLike(p, size - 1)),
                 c.scalarLike(p, 0), one));
    tap.weight = tap.weight ? c.mul(tap.weight, inside) : inside;
    tap.position = clipInside(c, tap.position, size);
  }
  return taps;
}

llvm::Error gridSample(NodeContext &ctx) {
  auto x = ctx.input(0), grid = ctx.input(1);
  if (!x)
    return x.takeError();
  if (!grid)
    return grid.takeError();
  std::string modeName = ctx.attrString("mode", "linear");
  Mode mode;
  if (modeName == "nearest")
    mode = Mode::Nearest;
  else if (modeName == "linear" || modeName == "bilinear")
    mode = Mode::Linear;
  else if (modeName == "cubic" || modeName == "bicubic")
    mode = Mode::Cubic;
  else
    return ctx.unsupported("mode '" + modeName + "'");
  std::string paddingName = ctx.attrString("padding_mode", "zeros");
  Padding padding;
  if (paddingName == "zeros")
    padding = Padding::Zeros;
  else if (paddingName == "border")
    padding = Padding::Border;
  else if (paddingName == "reflection")
    padding = Padding::Reflection;
  else
    return ctx.unsupported("padding_mode '" + paddingName + "'");
  bool alignCorners = ctx.attrInt("align_corners", 0) != 0;

  llvm::ArrayRef<int64_t> xs = shapeOf(*x), gs = shapeOf(*grid);
  int64_t rank = int64_t(xs.size()) - 2;
  mlir::Type element = elementOf(*x);
  if (rank < 1 || int64_t(gs.size()) != rank + 2 || gs[0] != xs[0] ||
      gs.back() != rank || !element.isa<mlir::FloatType>() ||
      !elementOf(*grid).isa<mlir::FloatType>())
    return ctx.unsupported("X and grid whose shapes do not match ([N, C, d1, "
                           "..., dr] and [N, o1, ..., or, r] of floats)");
  if (mode == Mode::Cubic && rank != 2)
    return ctx.unsupported("cubic mode over " + std::to_string(rank) +
                           " spatial dims (ONNX defines it for 2)");

  Composer c(ctx);
  int64_t batch = xs[0], channels = xs[1];
  llvm::ArrayRef<int64_t> outDims = gs.drop_front().drop_back();
  int64_t points = 1, pixels = 1;
  for (int64_t d : outDims)
    points *= d;
  for (int64_t d : xs.drop_front(2))
    pixels *= d;
  mlir::Value coords = c.cast(*grid, element);
  mlir::Value flat = c.reshape(*x, {batch, channels, pixels});

  // Per spatial dim (X's order) its taps, and the stride of the dim in the
  // flattened pixels.
  llvm::SmallVector<llvm::SmallVector<Tap, 4>> taps;
  llvm::SmallVector<int64_t> strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * xs[i + 3];
  for (int64_t i = 0; i < rank; ++i) {
    int64_t size = xs[i + 2];
    mlir::Value component = c.reshape(
        c.slice(coords, rank + 1, rank - 1 - i, rank - i), gs.drop_back());
    mlir::Value p = c.add(component, c.scalarLike(coords, 1));
    p = alignCorners ? c.mul(p, c.scalarLike(coords, 0.5 * double(size - 1)))
                     : c.mul(c.sub(c.mul(p, c.scalarLike(coords, double(size))),
                                   c.scalarLike(coords, 1)),
                             c.scalarLike(coords, 0.5));
    taps.push_back(tapsOf(c, p, size, mode, padding, alignCorners));
  }

  // Every combination of one tap per dim, as an odometer over the dims.
  mlir::OpBuilder &b = ctx.builder();
  llvm::SmallVector<size_t> pick(rank, 0);
  mlir::Value sum;
  while (true) {
    mlir::Value position, weight;
    for (int64_t i = 0; i < rank; ++i) {
      const Tap &tap = taps[i][pick[i]];
      mlir::Value scaled =
          c.mul(tap.position, c.scalarLike(tap.position, double(strides[i])));
      position = position ? c.add(position, scaled) : scaled;
      weight = weight ? c.mul(weight, tap.weight) : tap.weight;
    }
    mlir::Value index =
        c.reshape(c.cast(position, b.getI64Type()), {batch, 1, points});
    index = c.expand(index, {batch, channels, points});
    mlir::Value picked = b.create<g::GatherElementsOp>(
        ctx.loc(),
        index.getType().cast<mlir::RankedTensorType>().clone(element), flat,
        index, b.getI64IntegerAttr(2));
    mlir::Value term = c.mul(picked, c.reshape(weight, {batch, 1, points}));
    sum = sum ? c.add(sum, term) : term;
    int64_t d = rank - 1;
    while (d >= 0 && ++pick[d] == taps[d].size())
      pick[d--] = 0;
    if (d < 0)
      break;
  }
  llvm::SmallVector<int64_t> outShape{batch, channels};
  outShape.append(outDims.begin(), outDims.end());
  return c.finish(c.reshape(sum, outShape));
}

} // namespace

void import::registerGridSampleHandler(HandlerTable &t) {
  t["GridSample"] = gridSample;
}
