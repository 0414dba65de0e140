//===- ZooImportTest.cpp - Importing every zoo model ----------------------===//
//
// The importer against the zoo: every model imports and verifies, and BERT's
// training FLOPs match the closed form of the foundation issue.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/MLIRContext.h"
#include "weft/Analysis/ModelSummary.h"
#include "weft/Import/OnnxImport.h"
#include "weft/Zoo/Zoo.h"
#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"

using namespace weft;

namespace {

/// Writes a zoo model to a temporary file and imports it.
struct ImportedZooModel {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ImportReport report;

  ImportedZooModel(const zoo::ZooOptions &zooOptions, int64_t batch) {
    load(zooOptions, batch);
  }

  void load(const zoo::ZooOptions &zooOptions, int64_t batch) {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("weft-zoo", "onnx", path));
    auto written = zoo::writeZooModel(zooOptions, path);
    ASSERT_TRUE(bool(written)) << llvm::toString(written.takeError());
    ImportOptions options;
    options.batch = batch;
    auto imported = importOnnxFile(context, path, options, &report);
    llvm::sys::fs::remove(path);
    ASSERT_TRUE(bool(imported)) << llvm::toString(imported.takeError());
    module = std::move(*imported);
  }
};

class EveryZooModel : public ::testing::TestWithParam<zoo::ZooModelKind> {};

TEST_P(EveryZooModel, ImportsWithItsParametersAndALoss) {
  zoo::ZooOptions options = zoo::defaultZooOptions(GetParam());
  // Small shapes keep the test fast; the structure is the default's.
  options.layers = 2;
  ImportedZooModel model(options, /*batch=*/4);
  ASSERT_TRUE(model.module);
  EXPECT_TRUE(model.report.weightless);
  EXPECT_EQ(model.report.lossName, "loss");
  ModelSummary s = summarizeModel(*model.module);
  auto expected = zoo::countZooParameters(options);
  ASSERT_TRUE(bool(expected));
  EXPECT_EQ(uint64_t(s.parameterElements), *expected);
  EXPECT_GT(s.forwardFlops, 0);
  EXPECT_GT(s.backwardFlops, s.forwardFlops);
}

INSTANTIATE_TEST_SUITE_P(Zoo, EveryZooModel,
                         ::testing::ValuesIn(zoo::allZooModelKinds()),
                         [](const auto &info) {
                           std::string name =
                               zoo::zooModelName(info.param).str();
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(BertFlops, MatchTheClosedFormAtGlobalBatch256) {
  zoo::ZooOptions options = zoo::defaultZooOptions(zoo::ZooModelKind::Bert);
  const double b = 256, s = options.seq, h = options.hidden, v = options.vocab,
               layers = options.layers;
  ImportedZooModel model(options, int64_t(b));
  ASSERT_TRUE(model.module);
  ModelSummary summary = summarizeModel(*model.module);

  // Forward: per layer 24·B·S·H² + 4·B·S²·H, plus the LM head 2·B·S·H·V;
  // training (forward + backward) is three times that.
  double perLayer = 24 * b * s * h * h + 4 * b * s * s * h;
  double closedForm = 3 * (layers * perLayer + 2 * b * s * h * v);

  double matmul = summary.trainingFlopsByClass["matmul"];
  EXPECT_NEAR(matmul / closedForm, 1.0, 0.01)
      << "matmul " << matmul << " vs closed form " << closedForm;
  EXPECT_NEAR(summary.trainingFlops() / closedForm, 1.0, 0.03)
      << "total " << summary.trainingFlops();
  EXPECT_GT(summary.trainingFlops(), matmul);
}

} // namespace
