//===- ShardingRulesZooTest.cpp - Every rule on every zoo model -----------===//
//
// Imports each zoo model (two layers) and checks, for every op and every
// sharding variant it offers, that the variant is shape-consistent:
//
//  - one layout per operand and result; split dims exist, their extents are
//    multiples of the alignment, and every split of a variant cuts the same
//    number (≥ 2) of units, so one ratio vector splits them all;
//  - partial values are floating point, and a partial operand never becomes
//    a whole result locally; operands counted once are whole;
//  - the local op, rebuilt on each device's shard shapes for an uneven split
//    over 2 and 3 devices, passes the op's own verifier (which derives the
//    result shape from the operands independently of the rules); leaves are
//    exempt (their recipe slices their value);
//  - for reshape and flatten, each device's input shard holds exactly the
//    elements (by row-major global index) of its output shard.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "weft/Import/OnnxImport.h"
#include "weft/Zoo/Zoo.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <numeric>

using namespace weft;
using namespace weft::graph;
using namespace mlir;

namespace {

/// Writes a zoo model to a temporary file and imports it.
OwningOpRef<ModuleOp> importZoo(MLIRContext &context,
                                const zoo::ZooOptions &zooOptions,
                                int64_t batch) {
  llvm::SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("weft-rules", "onnx", path))
    return {};
  auto written = zoo::writeZooModel(zooOptions, path);
  EXPECT_TRUE(bool(written)) << llvm::toString(written.takeError());
  ImportOptions options;
  options.batch = batch;
  auto imported = importOnnxFile(context, path, options);
  llvm::sys::fs::remove(path);
  if (!imported) {
    ADD_FAILURE() << llvm::toString(imported.takeError());
    return {};
  }
  return std::move(*imported);
}

ArrayRef<int64_t> shapeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getShape();
}

std::string str(const ShardingVariant &v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << v;
  return os.str();
}

/// The layout of value `i` of a variant: operands first, then results.
struct LayoutOf {
  Value value;
  AxisLayout layout;
};

SmallVector<LayoutOf> layoutsOf(Operation *op, const ShardingVariant &v) {
  SmallVector<LayoutOf> all;
  for (auto [value, layout] : llvm::zip(op->getOperands(), v.operands))
    all.push_back({value, layout});
  for (auto [value, layout] : llvm::zip(op->getResults(), v.results))
    all.push_back({value, layout});
  return all;
}

/// Checks layouts against shapes; returns the number of units every split
/// of the variant cuts (0 if it splits nothing). Failures are reported.
int64_t checkLayouts(Operation *op, const ShardingVariant &v,
                     const std::string &where) {
  EXPECT_TRUE(llvm::StringRef(v.name).startswith(
      (op->getName().stripDialect() + ".").str()))
      << where;
  EXPECT_EQ(v.operands.size(), op->getNumOperands()) << where;
  EXPECT_EQ(v.results.size(), op->getNumResults()) << where;
  if (v.operands.size() != op->getNumOperands() ||
      v.results.size() != op->getNumResults())
    return 0;
  int64_t units = 0;
  bool partialOperand = false;
  for (const LayoutOf &l : layoutsOf(op, v)) {
    auto type = l.value.getType().cast<RankedTensorType>();
    if (l.layout.isReduce())
      EXPECT_TRUE(type.getElementType().isa<FloatType>())
          << where << ": a partial value must be floating point";
    if (!l.layout.isGather())
      continue;
    int64_t dim = l.layout.dim, align = l.layout.align;
    EXPECT_TRUE(dim >= 0 && dim < type.getRank())
        << where << ": split dim " << dim << " of a rank-" << type.getRank()
        << " tensor";
    if (dim < 0 || dim >= type.getRank())
      return 0;
    int64_t extent = type.getDimSize(dim);
    EXPECT_GE(align, 1) << where;
    EXPECT_EQ(extent % align, 0)
        << where << ": extent " << extent << " vs alignment " << align;
    EXPECT_GE(extent / align, 2) << where << ": nothing to split";
    if (units == 0)
      units = extent / align;
    EXPECT_EQ(extent / align, units)
        << where << ": splits of one variant cut different unit counts";
  }
  for (const AxisLayout &l : v.operands)
    partialOperand |= l.isReduce();
  if (partialOperand)
    EXPECT_TRUE(v.hasPartialResult())
        << where << ": a partial operand cannot give a whole result locally";
  for (unsigned i : v.onceOperands) {
    EXPECT_LT(i, v.operands.size()) << where;
    if (i < v.operands.size())
      EXPECT_TRUE(v.operands[i].isIdentity())
          << where << ": an operand counted once is whole";
  }
  return units;
}

/// The shard (offset, size) in units of device `k` of `n` for `units`
/// units, the first devices taking the extra units: an uneven split.
std::pair<int64_t, int64_t> shardOf(int64_t units, int64_t n, int64_t k) {
  int64_t base = units / n, extra = units % n;
  int64_t offset = k * base + std::min(k, extra);
  return {offset, base + (k < extra ? 1 : 0)};
}

Type shardType(Value v, const AxisLayout &l, int64_t size) {
  auto type = v.getType().cast<RankedTensorType>();
  if (!l.isGather())
    return type;
  SmallVector<int64_t> shape(type.getShape());
  shape[l.dim] = size * l.align;
  return RankedTensorType::get(shape, type.getElementType());
}

/// Rebuilds `op` on device `k`'s shard types and runs its verifier. The
/// recipes that adjust attributes do so here as their local op would.
void checkLocalOp(Operation *op, const ShardingVariant &v, int64_t units,
                  int64_t n, int64_t k, const std::string &where) {
  auto [offset, size] = shardOf(units, n, k);
  Block block;
  SmallVector<Value> operands;
  for (auto [value, layout] : llvm::zip(op->getOperands(), v.operands))
    operands.push_back(
        block.addArgument(shardType(value, layout, size), op->getLoc()));
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(operands);
  for (auto [value, layout] : llvm::zip(op->getResults(), v.results))
    state.addTypes(shardType(value, layout, size));
  state.addAttributes(op->getAttrs());
  Operation *local = Operation::create(state);
  Builder b(op->getContext());
  if (v.name == "conv2d.split-groups")
    local->setAttr("group", b.getI64IntegerAttr(size));
  if (v.name == "slice.split") {
    // The whole window of the split dim is the local shard.
    int64_t d = v.results[0].dim;
    SmallVector<int64_t> limits(cast<SliceOp>(op).getLimits());
    limits[d] = size * v.results[0].align;
    local->setAttr("limits", b.getDenseI64ArrayAttr(limits));
  }
  if (v.name == "slice.split-sliced") {
    auto slice = cast<SliceOp>(op);
    int64_t d = v.results[0].dim;
    SmallVector<int64_t> starts(slice.getStarts()), limits(slice.getLimits());
    int64_t step = slice.getSteps()[d];
    starts[d] += offset * step;
    limits[d] = starts[d] + (size - 1) * step + 1;
    local->setAttr("starts", b.getDenseI64ArrayAttr(starts));
    local->setAttr("limits", b.getDenseI64ArrayAttr(limits));
  }
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(op->getContext(), [&](Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return success();
    });
    EXPECT_TRUE(succeeded(verify(local)))
        << where << " on device " << k << " of " << n << ": " << diagnostics;
  }
  local->destroy();
}

/// Row-major global indices of the elements of `shape` whose index along
/// `dim` lies in [begin, end).
std::vector<int64_t> boxIndices(ArrayRef<int64_t> shape, int64_t dim,
                                int64_t begin, int64_t end) {
  int64_t inner = 1, outer = 1;
  for (int64_t d = dim + 1, e = shape.size(); d < e; ++d)
    inner *= shape[d];
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  std::vector<int64_t> indices;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = begin * inner; i < end * inner; ++i)
      indices.push_back(o * shape[dim] * inner + i);
  return indices;
}

/// For a view op, device k's input shard and output shard hold the same
/// global elements. Returns false when the tensor is too big to enumerate.
bool checkViewElements(Operation *op, const ShardingVariant &v, int64_t units,
                       int64_t n, int64_t k, const std::string &where) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0)),
                    out = shapeOf(op->getResult(0));
  if (std::accumulate(in.begin(), in.end(), int64_t(1),
                      std::multiplies<int64_t>()) > (int64_t(1) << 20))
    return false;
  auto [offset, size] = shardOf(units, n, k);
  const AxisLayout &a = v.operands[0], &b = v.results[0];
  std::vector<int64_t> src =
      boxIndices(in, a.dim, offset * a.align, (offset + size) * a.align);
  std::vector<int64_t> dst =
      boxIndices(out, b.dim, offset * b.align, (offset + size) * b.align);
  std::sort(src.begin(), src.end());
  std::sort(dst.begin(), dst.end());
  EXPECT_TRUE(src == dst) << where << " on device " << k << " of " << n
                          << ": the shards hold different elements";
  return true;
}

struct ZooRuleCounts {
  int64_t ops = 0, variants = 0, localOps = 0, viewElementChecks = 0;
};

ZooRuleCounts checkEveryRule(ModuleOp module, llvm::StringRef model) {
  ZooRuleCounts counts;
  module.walk([&](Operation *op) {
    if (!isa<GraphDialect>(op->getDialect()))
      return;
    ++counts.ops;
    auto rules = dyn_cast<ShardingRuleOpInterface>(op);
    EXPECT_TRUE(rules) << op->getName().getStringRef().str()
                       << " has no sharding rules";
    if (!rules)
      return;
    SmallVector<ShardingVariant, 8> variants;
    rules.getShardingVariants(variants);
    EXPECT_FALSE(variants.empty());
    EXPECT_EQ(variants.front().name,
              (op->getName().stripDialect() + ".replicate").str());
    for (const ShardingVariant &v : variants) {
      ++counts.variants;
      std::string where;
      llvm::raw_string_ostream os(where);
      os << model << ": " << op->getLoc() << ": " << str(v);
      int64_t units = checkLayouts(op, v, os.str());
      // A leaf's local recipe materialises its shard of the value: only
      // its layouts are checked.
      if (units == 0 || isa<ParameterOp, BufferOp, ConstantOp>(op))
        continue;
      for (int64_t n : {2, 3}) {
        if (units < n)
          continue;
        for (int64_t k = 0; k < n; ++k) {
          checkLocalOp(op, v, units, n, k, where);
          ++counts.localOps;
          if (isa<ReshapeOp, FlattenOp>(op) &&
              checkViewElements(op, v, units, n, k, where))
            ++counts.viewElementChecks;
        }
      }
    }
  });
  return counts;
}

class EveryZooModelRule : public ::testing::TestWithParam<zoo::ZooModelKind> {};

TEST_P(EveryZooModelRule, IsShapeConsistent) {
  zoo::ZooOptions options = zoo::defaultZooOptions(GetParam());
  options.layers = 2;
  MLIRContext context;
  OwningOpRef<ModuleOp> module = importZoo(context, options, /*batch=*/4);
  ASSERT_TRUE(module);
  std::string model = zoo::zooModelName(GetParam()).str();
  ZooRuleCounts counts = checkEveryRule(*module, model);
  EXPECT_GE(counts.ops, 10);
  EXPECT_GT(counts.variants, counts.ops);
  EXPECT_GT(counts.localOps, counts.ops);
  RecordProperty("ops", int(counts.ops));
  RecordProperty("variants", int(counts.variants));
  RecordProperty("local_ops", int(counts.localOps));
  RecordProperty("view_element_checks", int(counts.viewElementChecks));
}

INSTANTIATE_TEST_SUITE_P(Zoo, EveryZooModelRule,
                         ::testing::ValuesIn(zoo::allZooModelKinds()),
                         [](const auto &info) {
                           std::string name =
                               zoo::zooModelName(info.param).str();
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

/// BERT's attention reshapes hidden 768 into 12 heads of 64: the hidden
/// split maps to a head split with shards of 64 hidden units.
TEST(BertRules, HiddenToHeadsReshapeAlignsTo64) {
  zoo::ZooOptions options = zoo::defaultZooOptions(zoo::ZooModelKind::Bert);
  options.layers = 1;
  MLIRContext context;
  OwningOpRef<ModuleOp> module = importZoo(context, options, /*batch=*/2);
  ASSERT_TRUE(module);
  int found = 0;
  module->walk([&](ReshapeOp op) {
    ArrayRef<int64_t> in = shapeOf(op.getInput()),
                      out = shapeOf(op.getResult());
    if (in.back() != 768 || out.size() != in.size() + 1 ||
        out[out.size() - 2] != 12 || out.back() != 64)
      return;
    ++found;
    SmallVector<ShardingVariant, 8> variants;
    op.getShardingVariants(variants);
    int64_t hidden = in.size() - 1, heads = out.size() - 2;
    auto isHeadSplit = [&](const ShardingVariant &v) {
      return v.operands[0] == AxisLayout::gather(hidden, 64) &&
             v.results[0] == AxisLayout::gather(heads, 1);
    };
    EXPECT_EQ(llvm::count_if(variants, isHeadSplit), 1);
    // The head dim 64 itself is never split.
    for (const ShardingVariant &v : variants)
      EXPECT_NE(v.results[0].dim, int64_t(out.size() - 1)) << str(v);
  });
  // Q, K and V are each reshaped into heads.
  EXPECT_GE(found, 3);
}

} // namespace
