//===- ZooModelTest.cpp - Zoo models are valid weightless ONNX ------------===//

#include "ZooTestUtils.h"
#include "onnx/checker.h"

using namespace weft;
using namespace weft::zoo;

namespace {

/// Inputs that carry data rather than parameters, per family.
std::set<std::string> dataInputs(ZooModelKind kind) {
  if (kind == ZooModelKind::Bert || kind == ZooModelKind::BertMoe ||
      kind == ZooModelKind::Gpt)
    return {"input_ids", "labels"};
  return {"input", "labels"};
}

/// The exact ONNX op vocabulary of each family (the importer's contract).
std::set<std::string> expectedOps(ZooModelKind kind) {
  std::set<std::string> transformer = {"Add",
                                       "Constant",
                                       "Div",
                                       "Erf",
                                       "Gather",
                                       "LayerNormalization",
                                       "MatMul",
                                       "Mul",
                                       "Reshape",
                                       "Softmax",
                                       "SoftmaxCrossEntropyLoss",
                                       "Transpose"};
  switch (kind) {
  case ZooModelKind::Mlp:
    return {"Add", "MatMul", "Relu", "SoftmaxCrossEntropyLoss"};
  case ZooModelKind::Vgg19:
    return {"Add",
            "Conv",
            "Flatten",
            "MatMul",
            "MaxPool",
            "Relu",
            "SoftmaxCrossEntropyLoss"};
  case ZooModelKind::Vit:
    transformer.insert({"Conv", "Shape", "Slice", "Concat", "Expand"});
    return transformer;
  case ZooModelKind::Bert:
    return transformer;
  case ZooModelKind::BertMoe:
    transformer.insert({"Unsqueeze", "weft.Top2Gating"});
    return transformer;
  case ZooModelKind::Gpt:
    transformer.insert({"Slice", "Where"});
    return transformer;
  }
  return {};
}

/// Runs ONNX's checker directly; returns its message or "".
std::string checkerMessage(const onnx::ModelProto &model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

class ZooModelTest : public ::testing::TestWithParam<ZooModelKind> {};

TEST_P(ZooModelTest, PassesCheckerAndShapeInference) {
  ZooOptions o = defaultZooOptions(GetParam());
  llvm::Expected<std::string> bytes = serializeZooModel(o);
  ASSERT_TRUE(bool(bytes)) << llvm::toString(bytes.takeError());
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(*bytes));
  EXPECT_EQ(checkerMessage(model), "");
  EXPECT_FALSE(bool(checkAndInferShapes(model, ExitInternal)));
  EXPECT_FALSE(bool(verifyFullShapes(model)));
  ASSERT_GE(model.opset_import_size(), 1);
  EXPECT_EQ(model.opset_import(0).domain(), "");
  EXPECT_EQ(model.opset_import(0).version(), 17);
}

TEST_P(ZooModelTest, IsWeightlessAndListsEveryParameter) {
  ZooModelKind kind = GetParam();
  onnx::ModelProto model = buildOrFail(defaultZooOptions(kind));
  EXPECT_EQ(model.graph().initializer_size(), 0);
  std::vector<std::string> listed = listedParameters(model);
  std::set<std::string> listedSet(listed.begin(), listed.end());
  EXPECT_EQ(listedSet.size(), listed.size()) << "duplicate parameter names";
  ASSERT_FALSE(listed.empty());
  std::set<std::string> data = dataInputs(kind), seenData;
  for (const auto &input : model.graph().input()) {
    const auto &tensor = input.type().tensor_type();
    if (data.count(input.name())) {
      seenData.insert(input.name());
      EXPECT_FALSE(listedSet.count(input.name()));
      // Symbolic batch first.
      ASSERT_GE(tensor.shape().dim_size(), 1);
      EXPECT_EQ(tensor.shape().dim(0).dim_param(), "batch") << input.name();
      continue;
    }
    EXPECT_TRUE(listedSet.count(input.name()))
        << input.name() << " is neither data nor a listed parameter";
    EXPECT_EQ(tensor.elem_type(), onnx::TensorProto::FLOAT);
    for (const auto &dim : tensor.shape().dim())
      EXPECT_GT(dim.dim_value(), 0) << input.name();
  }
  EXPECT_EQ(seenData, data);
  EXPECT_EQ(size_t(model.graph().input_size()), listed.size() + data.size());
}

TEST_P(ZooModelTest, EndsInScalarMeanCrossEntropy) {
  onnx::ModelProto model = buildOrFail(defaultZooOptions(GetParam()));
  ASSERT_EQ(model.graph().output_size(), 1);
  const auto &output = model.graph().output(0);
  EXPECT_EQ(output.name(), "loss");
  EXPECT_EQ(output.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(output.type().tensor_type().shape().dim_size(), 0);
  const onnx::NodeProto &last = *model.graph().node().rbegin();
  EXPECT_EQ(last.op_type(), "SoftmaxCrossEntropyLoss");
  ASSERT_EQ(last.attribute_size(), 1);
  EXPECT_EQ(last.attribute(0).s(), "mean");
  // Labels are int64.
  for (const auto &input : model.graph().input())
    if (input.name() == "labels")
      EXPECT_EQ(input.type().tensor_type().elem_type(),
                onnx::TensorProto::INT64);
}

TEST_P(ZooModelTest, EveryIntermediateHasValueInfo) {
  onnx::ModelProto model = buildOrFail(defaultZooOptions(GetParam()));
  std::set<std::string> known;
  for (const auto &info : model.graph().value_info())
    known.insert(info.name());
  for (const auto &node : model.graph().node())
    for (const std::string &out : node.output())
      if (out != "loss")
        EXPECT_TRUE(known.count(out)) << out;
}

TEST_P(ZooModelTest, UsesExactlyItsOpVocabulary) {
  ZooModelKind kind = GetParam();
  onnx::ModelProto model = buildOrFail(defaultZooOptions(kind));
  EXPECT_EQ(opTypes(model), expectedOps(kind));
}

TEST_P(ZooModelTest, FixedBatchLeavesNoSymbols) {
  ZooOptions o = defaultZooOptions(GetParam());
  o.batch = 3;
  onnx::ModelProto model = buildOrFail(o);
  auto expectStatic = [](const onnx::ValueInfoProto &info) {
    for (const auto &dim : info.type().tensor_type().shape().dim())
      EXPECT_TRUE(dim.has_dim_value() && dim.dim_value() > 0) << info.name();
  };
  for (const auto &info : model.graph().input())
    expectStatic(info);
  for (const auto &info : model.graph().value_info())
    expectStatic(info);
  EXPECT_EQ(
      model.graph().input(0).type().tensor_type().shape().dim(0).dim_value(),
      3);
}

INSTANTIATE_TEST_SUITE_P(
    AllModels, ZooModelTest, ::testing::ValuesIn(allZooModelKinds()),
    [](const ::testing::TestParamInfo<ZooModelKind> &info) {
      std::string name = zooModelName(info.param).str();
      name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
      return name;
    });

/// value_info of `name`'s dims as strings ("batch", "40").
std::vector<std::string> dimsOf(const onnx::ModelProto &model,
                                const std::string &name) {
  std::vector<std::string> dims;
  for (const auto &info : model.graph().value_info()) {
    if (info.name() != name)
      continue;
    for (const auto &dim : info.type().tensor_type().shape().dim())
      dims.push_back(dim.has_dim_value() ? std::to_string(dim.dim_value())
                                         : dim.dim_param());
  }
  return dims;
}

TEST(ZooModel, BertMoeGatingIsCustomAndShaped) {
  onnx::ModelProto model =
      buildOrFail(defaultZooOptions(ZooModelKind::BertMoe));
  bool hasWeftOpset = false;
  for (const auto &opset : model.opset_import())
    hasWeftOpset |= opset.domain() == "weft" && opset.version() == 1;
  EXPECT_TRUE(hasWeftOpset);
  EXPECT_EQ(countOps(model, "Top2Gating"), 6); // every other of 12 layers
  std::vector<std::string> expected = {"batch", "128", "16", "40"};
  for (const auto &node : model.graph().node()) {
    if (node.op_type() != "Top2Gating")
      continue;
    EXPECT_EQ(node.domain(), "weft");
    ASSERT_EQ(node.input_size(), 2);
    ASSERT_EQ(node.output_size(), 2);
    EXPECT_EQ(dimsOf(model, node.output(0)), expected);
    EXPECT_EQ(dimsOf(model, node.output(1)), expected);
    // The gate weight is a listed parameter [H, E].
    EXPECT_EQ(parameterShape(model, node.input(1)),
              (std::vector<int64_t>{768, 16}));
  }
}

TEST(ZooModel, BertFlattensTokensForTheLoss) {
  onnx::ModelProto model = buildOrFail(defaultZooOptions(ZooModelKind::Bert));
  const onnx::NodeProto &loss = *model.graph().node().rbegin();
  EXPECT_EQ(dimsOf(model, loss.input(0)),
            (std::vector<std::string>{"batch*128", "30522"}));
  EXPECT_EQ(dimsOf(model, loss.input(1)),
            (std::vector<std::string>{"batch*128"}));
  EXPECT_EQ(countOps(model, "LayerNormalization"), 1 + 2 * 12);
  EXPECT_EQ(countOps(model, "Softmax"), 12);
  EXPECT_EQ(countOps(model, "Erf"), 12);
}

TEST(ZooModel, GptIsCausalWithNextTokenLoss) {
  onnx::ModelProto model = buildOrFail(defaultZooOptions(ZooModelKind::Gpt));
  EXPECT_EQ(countOps(model, "Where"), 24);
  const onnx::NodeProto &loss = *model.graph().node().rbegin();
  EXPECT_EQ(dimsOf(model, loss.input(0)),
            (std::vector<std::string>{"batch*1023", "50257"}));
}

TEST(ZooModel, VerifyFullShapesCatchesMissingShapes) {
  onnx::ModelProto model = buildOrFail(defaultZooOptions(ZooModelKind::Mlp));
  ASSERT_GT(model.graph().value_info_size(), 0);
  model.mutable_graph()->mutable_value_info()->RemoveLast();
  llvm::Error err = verifyFullShapes(model);
  EXPECT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("no full shape"),
            std::string::npos);
}

TEST(ZooModel, CheckerErrorsBecomeErrors) {
  onnx::ModelProto model = buildOrFail(defaultZooOptions(ZooModelKind::Mlp));
  model.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  llvm::Error err = checkAndInferShapes(model, ExitInternal);
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("ONNX checker rejected"),
            std::string::npos);
}

} // namespace
