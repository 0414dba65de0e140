//===- PlanCheckTest.cpp - checkPlan in-process, with injected duals ------===//

#include "weft/Exec/PlanCheck.h"
#include "Graph/IR/GraphDialect.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "weft/Support/Error.h"
#include "gtest/gtest.h"

using namespace weft;
using namespace weft::exec;

namespace {

class PlanCheckTest : public ::testing::Test {
protected:
  PlanCheckTest() {
    context.loadDialect<graph::GraphDialect, spmd::SpmdDialect,
                        mlir::func::FuncDialect>();
  }

  mlir::OwningOpRef<mlir::ModuleOp> load(llvm::StringRef name) {
    std::string path =
        std::string(WEFT_SOURCE_DIR) + "/test/lit/Exec/Inputs/" + name.str();
    auto m = mlir::parseSourceFile<mlir::ModuleOp>(path, &context);
    EXPECT_TRUE(m) << path;
    return m;
  }

  mlir::MLIRContext context;
};

TEST_F(PlanCheckTest, HandWrittenPlansAgree) {
  for (auto [model, plan] : {std::pair<const char *, const char *>{
                                 "spmd-mean.mlir", "spmd-mean-plan.mlir"},
                             {"spmd-block.mlir", "spmd-block-plan.mlir"}}) {
    auto g = load(model), p = load(plan);
    ASSERT_TRUE(g && p);
    for (uint64_t seed : {0, 1, 2}) {
      PlanCheckOptions opts;
      opts.seed = seed;
      auto r = checkPlan(*g, *p, opts);
      ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
      EXPECT_TRUE(r->agree) << plan << " seed " << seed << ": "
                            << (r->mismatch ? r->mismatch->op : "");
      EXPECT_NEAR(r->spmdLoss, r->referenceLoss,
                  1e-6 + 1e-4 * std::fabs(r->referenceLoss));
      EXPECT_GT(r->numDevices, 2u);
    }
  }
}

// The backward reads the dual table it is given: a shard whose gradient is
// all-gathered instead of zero-padded counts the weight's gradient on every
// device.
TEST_F(PlanCheckTest, InjectedWrongDualIsCaught) {
  auto g = load("spmd-mean.mlir"), p = load("spmd-mean-plan.mlir");
  ASSERT_TRUE(g && p);
  PlanCheckOptions opts;
  opts.duals = [](mlir::Operation *op) {
    std::optional<spmd::CollectiveDual> row = spmd::dualOf(op);
    if (row && op->getName().getStringRef() == "spmd.shard")
      row->backward = spmd::Collective::AllGather;
    return row;
  };
  auto r = checkPlan(*g, *p, opts);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_FALSE(r->agree);
  ASSERT_TRUE(r->mismatch.has_value());
  EXPECT_NE(r->mismatch->tensor.find("'w'"), std::string::npos)
      << r->mismatch->tensor;
  // The forward pass is untouched.
  EXPECT_NEAR(r->spmdLoss, r->referenceLoss, 1e-5);

  // Dropping the all_gather's dual loses the bias gradient.
  opts.duals = [](mlir::Operation *op) {
    std::optional<spmd::CollectiveDual> row = spmd::dualOf(op);
    if (row && op->getName().getStringRef() == "spmd.all_gather")
      row->backward = spmd::Collective::None;
    return row;
  };
  r = checkPlan(*g, *p, opts);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_FALSE(r->agree);
  ASSERT_TRUE(r->mismatch.has_value());
  EXPECT_NE(r->mismatch->tensor.find("'b'"), std::string::npos);
}

TEST_F(PlanCheckTest, PlanOfAnotherModelIsBadInput) {
  auto g = load("spmd-mean.mlir"), p = load("spmd-block-plan.mlir");
  ASSERT_TRUE(g && p);
  auto r = checkPlan(*g, *p, PlanCheckOptions());
  ASSERT_FALSE(bool(r));
  int code = ExitSuccess;
  llvm::handleAllErrors(r.takeError(),
                        [&](const WeftError &e) { code = e.getCode(); });
  EXPECT_EQ(code, ExitBadInput);
}

} // namespace
