//===- ShardingRulesDocTest.cpp - docs/ShardingRules.md matches the code --===//
//
// Builds a function using every graph op (in the configurations that give
// every recipe), checks that every registered graph op implements
// ShardingRuleOpInterface and appears in it, and that the variant names the
// ops produce are exactly the names docs/ShardingRules.md lists.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphDialect.h"
#include "Graph/IR/GraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "gtest/gtest.h"
#include <set>

using namespace weft::graph;

namespace {

/// One use of every op; conv2d, conv_transpose2d, batch_norm, matmul and
/// the scatters twice (their recipes depend on `group`, `training`, batch
/// dims and `reduction`).
constexpr const char *kEveryOp = R"mlir(
func.func @every(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %i: tensor<4x8xi64>,
                 %img: tensor<2x4x8x8xf32>, %labels: tensor<4xi64>) {
  %p = graph.parameter "p" : tensor<4x8xf32>
  %b = graph.buffer "b" : tensor<4x8xi64>
  %c = graph.constant dense<1.0> : tensor<4x8xf32> : tensor<4x8xf32>
  %w = graph.parameter "w" : tensor<8x8xf32>
  %mm = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %cw = graph.parameter "cw" : tensor<4x4x3x3xf32>
  %cb = graph.parameter "cb" : tensor<4xf32>
  %conv = graph.conv2d %img, %cw, %cb {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %gw = graph.parameter "gw" : tensor<4x2x1x1xf32>
  %gconv = graph.conv2d %img, %gw {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x4x8x8xf32>, tensor<4x2x1x1xf32>) -> tensor<2x4x8x8xf32>
  %add = graph.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sub = graph.sub %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %mul = graph.mul %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %div = graph.div %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %pow = graph.pow %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %min = graph.min %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %max = graph.max %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %cmp = graph.compare %x, %y {predicate = "lt"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %sel = graph.select %cmp, %x, %y : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sqrt = graph.sqrt %x : tensor<4x8xf32>
  %rsqrt = graph.rsqrt %x : tensor<4x8xf32>
  %neg = graph.neg %x : tensor<4x8xf32>
  %relu = graph.relu %x : tensor<4x8xf32>
  %gelu = graph.gelu %x : tensor<4x8xf32>
  %tanh = graph.tanh %x : tensor<4x8xf32>
  %sigmoid = graph.sigmoid %x : tensor<4x8xf32>
  %erf = graph.erf %x : tensor<4x8xf32>
  %exp = graph.exp %x : tensor<4x8xf32>
  %log = graph.log %x : tensor<4x8xf32>
  %sin = graph.sin %x : tensor<4x8xf32>
  %cos = graph.cos %x : tensor<4x8xf32>
  %tan = graph.tan %x : tensor<4x8xf32>
  %asin = graph.asin %x : tensor<4x8xf32>
  %acos = graph.acos %x : tensor<4x8xf32>
  %atan = graph.atan %x : tensor<4x8xf32>
  %sinh = graph.sinh %x : tensor<4x8xf32>
  %cosh = graph.cosh %x : tensor<4x8xf32>
  %asinh = graph.asinh %x : tensor<4x8xf32>
  %acosh = graph.acosh %x : tensor<4x8xf32>
  %atanh = graph.atanh %x : tensor<4x8xf32>
  %floor = graph.floor %x : tensor<4x8xf32>
  %ceil = graph.ceil %x : tensor<4x8xf32>
  %round = graph.round %x : tensor<4x8xf32>
  %clip = graph.clip %x {min = 0.0, max = 6.0} : tensor<4x8xf32>
  %cast = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
  %expand = graph.expand %x : tensor<4x8xf32> -> tensor<2x4x8xf32>
  %bmm = graph.matmul %expand, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %sm = graph.softmax %x {axis = -1 : i64} : tensor<4x8xf32>
  %lsm = graph.log_softmax %x {axis = -1 : i64} : tensor<4x8xf32>
  %g = graph.parameter "g" : tensor<8xf32>
  %beta = graph.parameter "beta" : tensor<8xf32>
  %ln = graph.layer_norm %x, %g, %beta {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %s4 = graph.parameter "s4" : tensor<4xf32>
  %bn = graph.batch_norm %img, %s4, %s4, %s4, %s4 {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64, training = true} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %bni = graph.batch_norm %img, %s4, %s4, %s4, %s4 {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64, training = false} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %rs = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : tensor<4x8xf32> -> tensor<4xf32>
  %rm = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : tensor<4x8xf32> -> tensor<4xf32>
  %rx = graph.reduce_max %x {axes = array<i64: 1>, keepdims = false} : tensor<4x8xf32> -> tensor<4xf32>
  %rsh = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %tr = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %cat = graph.concat %x, %y {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  %s0, %s1 = graph.split %x {axis = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %sl = graph.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 6>, steps = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<4x4xf32>
  %emb = graph.gather %w, %i {axis = 0 : i64} : (tensor<8x8xf32>, tensor<4x8xi64>) -> tensor<4x8x8xf32>
  %ge = graph.gather_elements %x, %i {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xi64>) -> tensor<4x8xf32>
  %fl = graph.flatten %img {axis = 1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x256xf32>
  %mp = graph.max_pool %img {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %ap = graph.avg_pool %img {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %gap = graph.global_avg_pool %img : tensor<2x4x8x8xf32> -> tensor<2x4x1x1xf32>
  %drop = graph.dropout %x {ratio = 0.1 : f64} : tensor<4x8xf32>
  %ce = graph.cross_entropy %x, %labels {reduction = "mean", ignore_index = -100 : i64} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  %nll = graph.nll_loss %x, %labels {reduction = "mean"} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  %tok = graph.expand %x : tensor<4x8xf32> -> tensor<2x4x8xf32>
  %gate = graph.parameter "gate" : tensor<8x4xf32>
  %ctw = graph.parameter "ctw" : tensor<4x4x3x3xf32>
  %ct = graph.conv_transpose2d %img, %ctw, %cb {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<2x4x16x16xf32>
  %gctw = graph.parameter "gctw" : tensor<4x2x1x1xf32>
  %gct = graph.conv_transpose2d %img, %gctw {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, group = 2 : i64} : (tensor<2x4x8x8xf32>, tensor<4x2x1x1xf32>) -> tensor<2x4x8x8xf32>
  %up = graph.resize %img {mode = "nearest", coordinate_transformation_mode = "asymmetric", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<2x4x8x8xf32>) -> tensor<2x4x16x16xf32>
  %se = graph.scatter_elements %x, %i, %y {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sem = graph.scatter_elements %x, %i, %y {axis = 1 : i64, reduction = "mul"} : (tensor<4x8xf32>, tensor<4x8xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ndi = graph.reshape %labels : tensor<4xi64> -> tensor<4x1xi64>
  %snd = graph.scatter_nd %x, %ndi, %y : (tensor<4x8xf32>, tensor<4x1xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sndm = graph.scatter_nd %x, %ndi, %y {reduction = "mul"} : (tensor<4x8xf32>, tensor<4x1xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d, %cmb = graph.top2_gating %tok, %gate : (tensor<2x4x8xf32>, tensor<8x4xf32>) -> (tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>)
  return
}
)mlir";

class ShardingRulesDocTest : public ::testing::Test {
protected:
  ShardingRulesDocTest() {
    context.loadDialect<GraphDialect, mlir::func::FuncDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(kEveryOp, &context);
  }

  /// The names of the registered graph ops, without the dialect prefix.
  std::set<std::string> graphOpNames() {
    std::set<std::string> names;
    for (mlir::RegisteredOperationName name : context.getRegisteredOperations())
      if (name.getDialectNamespace() == "graph")
        names.insert(name.stripDialect().str());
    return names;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(ShardingRulesDocTest, EveryOpHasRulesAndIsExercised) {
  ASSERT_TRUE(module);
  std::set<std::string> seen;
  module->walk([&](mlir::Operation *op) {
    if (op->getDialect()->getNamespace() != "graph")
      return;
    auto rules = llvm::dyn_cast<ShardingRuleOpInterface>(op);
    ASSERT_TRUE(rules) << op->getName().getStringRef().str();
    llvm::SmallVector<ShardingVariant, 8> variants;
    rules.getShardingVariants(variants);
    ASSERT_FALSE(variants.empty());
    seen.insert(op->getName().stripDialect().str());
  });
  EXPECT_EQ(seen, graphOpNames());
}

/// The variant names of docs/ShardingRules.md: explicit `op.recipe` names,
/// and `<op>.recipe` expanded over the ops named in the row's first column.
std::set<std::string> documentedNames(llvm::StringRef doc,
                                      const std::set<std::string> &ops) {
  std::set<std::string> names;
  llvm::SmallVector<llvm::StringRef> lines;
  doc.split(lines, '\n');
  llvm::Regex name("`(<op>|[a-z0-9_]+)\\.([a-z-]+)`");
  for (llvm::StringRef line : lines) {
    if (!line.startswith("| "))
      continue;
    llvm::SmallVector<llvm::StringRef> cells;
    line.split(cells, '|');
    // Only the rule tables' rows: seven columns.
    if (cells.size() != 9)
      continue;
    llvm::StringRef variantCell = cells[2];
    llvm::SmallVector<llvm::StringRef, 3> m;
    while (name.match(variantCell, &m)) {
      if (m[1] != "<op>") {
        names.insert((m[1] + "." + m[2]).str());
      } else {
        llvm::SmallVector<llvm::StringRef> rowOps;
        cells[1].split(rowOps, ',');
        for (llvm::StringRef op : rowOps) {
          std::string first = op.trim().split(' ').first.str();
          if (ops.count(first))
            names.insert(first + "." + m[2].str());
        }
      }
      variantCell =
          variantCell.drop_front(variantCell.find(m[0]) + m[0].size());
    }
  }
  return names;
}

TEST_F(ShardingRulesDocTest, DocumentedNamesAreExactlyTheCodes) {
  ASSERT_TRUE(module);
  auto buffer =
      llvm::MemoryBuffer::getFile(WEFT_SOURCE_DIR "/docs/ShardingRules.md");
  ASSERT_TRUE(bool(buffer));
  std::set<std::string> code;
  module->walk([&](ShardingRuleOpInterface op) {
    llvm::SmallVector<ShardingVariant, 8> variants;
    op.getShardingVariants(variants);
    for (const ShardingVariant &v : variants)
      if (!llvm::StringRef(v.name).endswith(".replicate"))
        code.insert(v.name);
  });
  std::set<std::string> doc =
      documentedNames((*buffer)->getBuffer(), graphOpNames());
  for (const std::string &n : code)
    EXPECT_TRUE(doc.count(n)) << n << " is not in docs/ShardingRules.md";
  for (const std::string &n : doc)
    EXPECT_TRUE(code.count(n)) << n << " is documented but not produced";
  EXPECT_GE(code.size(), 100u);
}

} // namespace
