//===- RandomPlan.cpp - Random meshes, graph programs and valid plans -----===//

#include "weft/Spmd/RandomPlan.h"
#include "Graph/IR/GraphDialect.h"
#include "Graph/IR/GraphOps.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Parser/Parser.h"
#include "weft/Spmd/Relayout.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include <numeric>
#include <random>

using namespace weft;
using namespace weft::spmd;

namespace {

using Rng = std::mt19937_64;

int64_t uniform(Rng &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
bool chance(Rng &rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}
template <typename T> const T &pick(Rng &rng, llvm::ArrayRef<T> items) {
  return items[uniform(rng, 0, items.size() - 1)];
}

} // namespace

//===----------------------------------------------------------------------===//
// Meshes
//===----------------------------------------------------------------------===//

MeshAttr spmd::randomMesh(mlir::MLIRContext *ctx, uint64_t seed,
                          unsigned minDevices, unsigned maxDevices) {
  Rng rng(seed);
  int64_t devices =
      uniform(rng, std::max(1u, minDevices), std::max(minDevices, maxDevices));
  llvm::SmallVector<int64_t> perNodeChoices;
  for (int64_t k = 1; k <= devices; ++k)
    if (devices % k == 0)
      perNodeChoices.push_back(k);
  int64_t perNode = pick<int64_t>(rng, perNodeChoices);
  int64_t nodes = devices / perNode;
  llvm::SmallVector<int64_t> local{perNode};
  // Factor the local axis in two when it can be.
  for (int64_t f = 2; f < perNode; ++f)
    if (perNode % f == 0 && chance(rng, 0.5)) {
      local = {f, perNode / f};
      break;
    }
  int64_t numClasses = uniform(rng, 1, std::min<int64_t>(3, nodes));
  std::vector<llvm::SmallVector<int64_t>> nodesOf(numClasses);
  for (int64_t n = 0; n < nodes; ++n)
    nodesOf[n < numClasses ? n : uniform(rng, 0, numClasses - 1)].push_back(n);
  static const char *types[] = {"V100", "P100", "A100", "T4"};
  llvm::SmallVector<mlir::Attribute> classes;
  for (int64_t c = 0; c < numClasses; ++c)
    classes.push_back(DeviceClassAttr::get(
        ctx, types[c], uniform(rng, 1000, 20000), uniform(rng, 8000, 80000),
        mlir::DenseI64ArrayAttr::get(ctx, nodesOf[c])));
  return MeshAttr::get(ctx, mlir::DenseI64ArrayAttr::get(ctx, local),
                       mlir::ArrayAttr::get(ctx, classes));
}

//===----------------------------------------------------------------------===//
// Graph programs
//===----------------------------------------------------------------------===//

namespace {

class ProgramText {
public:
  explicit ProgramText(uint64_t seed) : rng(seed) {}
  std::string generate();

private:
  using Shape = llvm::SmallVector<int64_t, 4>;
  static std::string type(llvm::ArrayRef<int64_t> shape,
                          llvm::StringRef elt = "f32") {
    std::string s = "tensor<";
    for (int64_t d : shape)
      s += std::to_string(d) + "x";
    return s + elt.str() + ">";
  }
  std::string value() { return "%v" + std::to_string(next++); }
  std::string argument(Shape shape, llvm::StringRef elt) {
    std::string name = "%a" + std::to_string(args.size());
    args.push_back(name + ": " + type(shape, elt));
    return name;
  }
  std::string parameter(Shape shape) {
    std::string v = value();
    body += llvm::formatv("  {0} = graph.parameter \"p{1}\" : {2}\n", v,
                          params++, type(shape));
    return v;
  }
  void emit(const std::string &line) { body += "  " + line + "\n"; }
  /// One random step on x (shape updated).
  void step();

  Rng rng;
  std::string body;
  std::vector<std::string> args;
  unsigned next = 0, params = 0;
  std::string x;
  Shape shape;
  /// x may be nearly constant along its last dim, or have gradients that
  /// are exactly zero in theory (after a softmax or a layer norm, until a
  /// matmul or a bias): a layer norm there amplifies rounding noise past
  /// any tolerance, so none is generated.
  bool flat = false;
  /// Earlier values with their shapes (residuals).
  std::vector<std::pair<std::string, Shape>> history;
};

void ProgramText::step() {
  int64_t rank = shape.size();
  int64_t h = shape.back();
  std::string in = x, t = type(shape);
  switch (uniform(rng, 0, 9)) {
  case 0: { // matmul by a weight
    int64_t out = uniform(rng, 1, 7);
    std::string w = parameter({h, out});
    Shape s = shape;
    s.back() = out;
    x = value();
    emit(llvm::formatv("{0} = graph.matmul {1}, {2} : ({3}, {4}) -> {5}", x, in,
                       w, t, type({h, out}), type(s)));
    shape = s;
    flat = false;
    break;
  }
  case 1: { // bias
    std::string b = parameter({h});
    x = value();
    emit(llvm::formatv("{0} = graph.add {1}, {2} : ({3}, {4}) -> {3}", x, in, b,
                       t, type({h})));
    flat = false;
    break;
  }
  case 2: { // residual with an earlier value of this shape, else relu
    for (auto &[v, s] : history)
      if (s == shape && v != in) {
        x = value();
        emit(llvm::formatv("{0} = graph.add {1}, {2} : ({3}, {3}) -> {3}", x,
                           in, v, t));
        return;
      }
    [[fallthrough]];
  }
  case 3:
    x = value();
    emit(llvm::formatv("{0} = graph.relu {1} : {2}", x, in, t));
    break;
  case 4:
    x = value();
    emit(llvm::formatv("{0} = graph.softmax {1} {{axis = -1 : i64} : {2}", x,
                       in, t));
    flat = true;
    break;
  case 5: {
    if (flat || h < 3)
      return;
    std::string g = parameter({h}), b = parameter({h});
    x = value();
    emit(llvm::formatv("{0} = graph.layer_norm {1}, {2}, {3} {{axis = -1 : "
                       "i64, epsilon = 1.0e-05 : f64} : ({4}, {5}, {5}) -> {4}",
                       x, in, g, b, t, type({h})));
    flat = true; // zero mean along the last dim
    break;
  }
  case 6: { // merge the two leading dims, or split the first
    Shape s;
    if (rank == 3)
      s = {shape[0] * shape[1], shape[2]};
    else if (shape[0] % 2 == 0 && shape[0] > 2)
      s = {2, shape[0] / 2, shape[1]};
    else
      return;
    x = value();
    emit(llvm::formatv("{0} = graph.reshape {1} : {2} -> {3}", x, in, t,
                       type(s)));
    shape = s;
    break;
  }
  case 7: { // heads: [.., H] -> [.., h, d] -> transpose -> back
    if (rank != 3)
      return;
    int64_t heads = 0;
    for (int64_t f = 2; f < h; ++f)
      if (h % f == 0)
        heads = f;
    if (!heads)
      return;
    Shape split = {shape[0], shape[1], heads, h / heads};
    Shape swapped = {shape[0], heads, shape[1], h / heads};
    std::string r = value(), p = value(), q = value();
    x = value();
    emit(llvm::formatv("{0} = graph.reshape {1} : {2} -> {3}", r, in, t,
                       type(split)));
    emit(llvm::formatv("{0} = graph.transpose {1} {{perm = array<i64: 0, 2, "
                       "1, 3>} : {2} -> {3}",
                       p, r, type(split), type(swapped)));
    emit(llvm::formatv("{0} = graph.transpose {1} {{perm = array<i64: 0, 2, "
                       "1, 3>} : {2} -> {3}",
                       q, p, type(swapped), type(split)));
    emit(llvm::formatv("{0} = graph.reshape {1} : {2} -> {3}", x, q,
                       type(split), t));
    break;
  }
  case 8: { // swap the last two dims
    if (rank != 3)
      return;
    Shape s = {shape[0], shape[2], shape[1]};
    x = value();
    emit(llvm::formatv("{0} = graph.transpose {1} {{perm = array<i64: 0, 2, "
                       "1>} : {2} -> {3}",
                       x, in, t, type(s)));
    shape = s;
    break;
  }
  case 9: { // mean over dim 1
    if (rank != 3)
      return;
    Shape s = {shape[0], shape[2]};
    x = value();
    emit(llvm::formatv("{0} = graph.reduce_mean {1} {{axes = array<i64: 1>, "
                       "keepdims = false} : {2} -> {3}",
                       x, in, t, type(s)));
    shape = s;
    break;
  }
  }
  history.push_back({x, shape});
}

std::string ProgramText::generate() {
  int64_t batch = uniform(rng, 1, 6), seq = uniform(rng, 1, 5),
          hidden = uniform(rng, 2, 8);
  if (chance(rng, 0.4)) { // embedding lookup
    std::string ids = argument({batch, seq}, "i64");
    int64_t vocab = uniform(rng, 2, 9);
    std::string table = parameter({vocab, hidden});
    x = value();
    shape = {batch, seq, hidden};
    emit(llvm::formatv("{0} = graph.gather {1}, {2} {{axis = 0 : i64} : ({3}, "
                       "{4}) -> {5}",
                       x, table, ids, type({vocab, hidden}),
                       type({batch, seq}, "i64"), type(shape)));
  } else {
    shape = chance(rng, 0.7) ? Shape{batch, seq, hidden} : Shape{batch, hidden};
    x = argument(shape, "f32");
  }
  history.push_back({x, shape});
  for (int64_t i = 0, n = uniform(rng, 1, 6); i < n; ++i)
    step();
  // Logits and loss.
  int64_t classes = uniform(rng, 2, 6);
  std::string w = parameter({shape.back(), classes});
  Shape logits = shape;
  logits.back() = classes;
  std::string l = value();
  emit(llvm::formatv("{0} = graph.matmul {1}, {2} : ({3}, {4}) -> {5}", l, x, w,
                     type(shape), type({shape.back(), classes}), type(logits)));
  std::string labels, loss = value();
  if (logits.size() == 3) {
    // [N, d, C] -> [N, C, d]; labels [N, d].
    Shape t = {logits[0], logits[2], logits[1]};
    std::string lt = value();
    emit(llvm::formatv("{0} = graph.transpose {1} {{perm = array<i64: 0, 2, "
                       "1>} : {2} -> {3}",
                       lt, l, type(logits), type(t)));
    labels = argument({logits[0], logits[1]}, "i64");
    emit(llvm::formatv("{0} = graph.cross_entropy {1}, {2} {{reduction = "
                       "\"mean\"} : ({3}, {4}) -> tensor<f32>",
                       loss, lt, labels, type(t),
                       type({logits[0], logits[1]}, "i64")));
  } else {
    labels = argument({logits[0]}, "i64");
    emit(llvm::formatv("{0} = graph.cross_entropy {1}, {2} {{reduction = "
                       "\"mean\"} : ({3}, {4}) -> tensor<f32>",
                       loss, l, labels, type(logits),
                       type({logits[0]}, "i64")));
  }
  emit("return " + loss + " : tensor<f32>");
  std::string signature;
  for (const std::string &a : args)
    signature += (signature.empty() ? "" : ", ") + a;
  return "func.func @main(" + signature + ") -> tensor<f32> {\n" + body + "}\n";
}

} // namespace

std::string spmd::randomGraphProgramText(uint64_t seed) {
  return ProgramText(seed).generate();
}

mlir::OwningOpRef<mlir::ModuleOp>
spmd::randomGraphProgram(mlir::MLIRContext *ctx, uint64_t seed) {
  ctx->loadDialect<graph::GraphDialect, mlir::func::FuncDialect>();
  return mlir::parseSourceString<mlir::ModuleOp>(randomGraphProgramText(seed),
                                                 ctx);
}

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

namespace {

class PlanGenerator {
public:
  PlanGenerator(uint64_t seed, const RandomPlanOptions &options)
      : rng(seed), options(options) {}

  /// A new segment of `extent` in units of `align` with random sizes.
  int64_t newSegment(SegmentTable &table, int64_t extent, int64_t align);
  /// An existing segment of `extent` and `align` (or a new one).
  int64_t someSegment(SegmentTable &table, int64_t extent, int64_t align);
  /// A random distribution (no partial entries) of a value of `type`.
  DistAttr randomDist(SegmentTable &table, mlir::Type type, unsigned numAxes);
  llvm::Expected<OpChoice> choose(mlir::Operation *op,
                                  llvm::ArrayRef<DistAttr> operands,
                                  SegmentTable &segments);
  Rng rng;

private:
  const RandomPlanOptions &options;
};

int64_t PlanGenerator::newSegment(SegmentTable &table, int64_t extent,
                                  int64_t align) {
  const MeshShape &mesh = table.mesh();
  if (align < 1 || extent % align)
    align = 1;
  int64_t units = extent / align;
  unsigned n = mesh.numDevices();
  size_t numClasses = mesh.devicesPerClass.size();
  int64_t zeroClass =
      numClasses > 1 && chance(rng, options.zeroClassProbability)
          ? uniform(rng, 0, numClasses - 1)
          : -1;
  std::vector<double> weight(n);
  double total = 0;
  for (unsigned d = 0; d < n; ++d) {
    if (int64_t(mesh.classOfDevice[d]) == zeroClass)
      continue;
    // Mostly alike, sometimes idle or heavy.
    int64_t k = uniform(rng, 0, 9);
    weight[d] = k == 0 ? 0.0 : k == 9 ? 4.0 : 1.0 + 0.25 * uniform(rng, 0, 4);
    total += weight[d];
  }
  if (total == 0) {
    unsigned d = 0;
    while (int64_t(mesh.classOfDevice[d]) == zeroClass)
      ++d;
    weight[d] = total = 1;
  }
  std::vector<double> shares;
  for (double w : weight)
    shares.push_back(w / total * double(units));
  std::vector<int64_t> unitsPer = largestRemainder(shares, units);
  llvm::SmallVector<int64_t> sizes;
  std::vector<double> ratios(numClasses, 0.0);
  for (unsigned d = 0; d < n; ++d) {
    sizes.push_back(unitsPer[d] * align);
    ratios[mesh.classOfDevice[d]] += double(unitsPer[d]) / double(units);
  }
  for (size_t c = 0; c < numClasses; ++c)
    ratios[c] /= double(mesh.devicesPerClass[c]);
  return table.add(extent, ratios, sizes, align);
}

int64_t PlanGenerator::someSegment(SegmentTable &table, int64_t extent,
                                   int64_t align) {
  llvm::SmallVector<int64_t> existing;
  for (SegmentAttr s : table.all())
    if (s.getExtent() == extent && s.getAlign() == std::max<int64_t>(align, 1))
      existing.push_back(s.getId());
  if (!existing.empty() && chance(rng, 0.6))
    return pick<int64_t>(rng, existing);
  return newSegment(table, extent, align);
}

DistAttr PlanGenerator::randomDist(SegmentTable &table, mlir::Type type,
                                   unsigned numAxes) {
  auto tensor = type.cast<mlir::RankedTensorType>();
  llvm::SmallVector<AxisDist, 4> axes(numAxes, AxisDist::identity());
  for (unsigned a = 0; a < numAxes; ++a) {
    if (tensor.getRank() == 0 || !chance(rng, options.splitProbability))
      continue;
    int64_t dim = uniform(rng, 0, tensor.getRank() - 1);
    int64_t seg = -1;
    for (unsigned b = 0; b < a; ++b)
      if (axes[b].isGather() && axes[b].dim == dim)
        seg = axes[b].segment;
    if (seg < 0)
      seg = someSegment(table, tensor.getDimSize(dim), 1);
    axes[a] = AxisDist::gather(dim, seg);
  }
  return DistAttr::get(type.getContext(), axes);
}

llvm::Expected<OpChoice>
PlanGenerator::choose(mlir::Operation *op, llvm::ArrayRef<DistAttr> operands,
                      SegmentTable &segments) {
  unsigned numAxes = segments.mesh().axisSizes.size();
  auto variants = shardingVariantsOf(op);
  auto replicate = llvm::find_if(variants, [](const auto &v) {
    return llvm::StringRef(v.name).endswith(".replicate");
  });
  if (replicate == variants.end())
    return badInput("{0} has no replicate variant",
                    op->getName().getStringRef().str());
  OpChoice choice;
  choice.variants.assign(numAxes, *replicate);
  choice.segments.assign(numAxes, -1);
  for (unsigned a = 0; a < numAxes; ++a) {
    // Reachable (variant, segment) options, grouped by variant.
    std::vector<std::vector<OpChoice>> reachableByVariant;
    for (const graph::ShardingVariant &v : variants) {
      if (&v == &*replicate ||
          llvm::is_contained(options.excludedVariants, v.name))
        continue;
      llvm::SmallVector<int64_t, 4> candidates;
      const graph::AxisLayout *first = nullptr;
      mlir::Value firstValue;
      for (auto [i, l] : llvm::enumerate(v.operands))
        if (!first && l.isGather())
          first = &l, firstValue = op->getOperand(i);
      for (auto [i, l] : llvm::enumerate(v.results))
        if (!first && l.isGather())
          first = &l, firstValue = op->getResult(i);
      if (first) {
        int64_t extent =
            firstValue.getType().cast<mlir::RankedTensorType>().getDimSize(
                first->dim);
        for (auto [i, l] : llvm::enumerate(v.operands)) {
          if (!l.isGather())
            continue;
          for (const AxisDist &e : operands[i].getAxes())
            if (e.isGather() && e.dim == l.dim) {
              int64_t s =
                  segments.scaled(e.segment, l.align, extent, first->align);
              if (s >= 0)
                candidates.push_back(s);
            }
        }
        for (unsigned b = 0; b < a; ++b)
          if (choice.segments[b] >= 0 &&
              segments.extentOf(choice.segments[b]) == extent)
            candidates.push_back(choice.segments[b]);
        candidates.push_back(someSegment(segments, extent, first->align));
      } else {
        candidates.push_back(-1);
      }
      std::vector<OpChoice> reachable;
      for (int64_t seg : candidates) {
        OpChoice trial = choice;
        trial.variants[a] = v;
        trial.segments[a] = seg;
        auto dists = deriveDists(op, trial, segments);
        if (!dists) {
          llvm::consumeError(dists.takeError());
          continue;
        }
        // Later axes are still replicate (id) in `dists`: only the axes
        // chosen so far can need a partial operand.
        bool ok = true;
        for (size_t i = 0; i < dists->operands.size(); ++i)
          ok &= mlir::succeeded(planRelayout(operands[i], dists->operands[i]));
        if (ok)
          reachable.push_back(trial);
      }
      if (!reachable.empty())
        reachableByVariant.push_back(std::move(reachable));
    }
    if (reachableByVariant.empty() || chance(rng, options.replicateProbability))
      continue; // keep replicate on this axis
    const std::vector<OpChoice> &group =
        reachableByVariant[uniform(rng, 0, reachableByVariant.size() - 1)];
    choice = group[uniform(rng, 0, group.size() - 1)];
  }
  return choice;
}

} // namespace

llvm::Expected<RandomPlan> spmd::randomPlan(mlir::ModuleOp graph, MeshAttr mesh,
                                            uint64_t seed,
                                            const RandomPlanOptions &options) {
  mlir::MLIRContext *ctx = graph.getContext();
  auto main = graph.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main)
    return badInput("the model has no @main function");
  PlanGenerator gen(seed, options);
  RandomPlan out;
  out.choice.mesh = mesh;
  unsigned numAxes = mesh.getNumAxes();
  SegmentTable table(ctx, MeshShape::of(mesh));
  for (mlir::BlockArgument arg : main.getArguments())
    out.choice.arguments.push_back(
        gen.randomDist(table, arg.getType(), numAxes));
  main.walk([&](mlir::Operation *op) {
    llvm::StringRef name;
    mlir::Type type;
    bool buffer = false;
    if (auto p = llvm::dyn_cast<graph::ParameterOp>(op))
      name = p.getName(), type = p.getType();
    else if (auto b = llvm::dyn_cast<graph::BufferOp>(op))
      name = b.getName(), type = b.getType(), buffer = true;
    else
      return;
    ParameterChoice pc;
    pc.dist = gen.randomDist(table, type, numAxes);
    bool split = llvm::any_of(pc.dist.getAxes(),
                              [](const AxisDist &e) { return e.isGather(); });
    bool whole = llvm::any_of(pc.dist.getAxes(),
                              [](const AxisDist &e) { return e.isIdentity(); });
    llvm::SmallVector<ParamStrategy, 4> strategies{ParamStrategy::Replicated};
    if (whole)
      strategies.append({ParamStrategy::Zero1, ParamStrategy::Zero2});
    if (split)
      strategies.push_back(ParamStrategy::Zero3);
    pc.strategy = buffer ? ParamStrategy::Buffer
                         : pick<ParamStrategy>(gen.rng, strategies);
    out.choice.parameters[name] = pc;
  });
  out.choice.segments.assign(table.all().begin(), table.all().end());
  OpChooser chooser = [&](mlir::Operation *op,
                          llvm::ArrayRef<DistAttr> operands,
                          SegmentTable &segments) {
    return gen.choose(op, operands, segments);
  };
  auto plan = buildProgram(graph, out.choice, chooser);
  if (!plan)
    return plan.takeError();
  out.plan = std::move(*plan);
  return out;
}
