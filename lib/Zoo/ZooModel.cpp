//===- ZooModel.cpp - Assembling, checking and writing zoo models ---------===//

#include "weft/Zoo/ZooModel.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "weft/Support/Error.h"
#include "weft/Support/FileOutput.h"
#include "weft/Zoo/Families.h"
#include "weft/Zoo/Weights.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <map>

using namespace weft;
using namespace weft::zoo;

/// Protobuf refuses messages of 2 GiB or more; leave room for the graph.
static constexpr uint64_t kMaxWeightBytes = (uint64_t(3) << 29); // 1.5 GiB

/// Adds the family's graph to `model` and returns its parameters.
static std::vector<ParamInfo> buildGraph(const ZooOptions &o,
                                         onnx::ModelProto &model) {
  model.set_ir_version(onnx::IR_VERSION);
  model.set_producer_name("weft-zoo");
  model.set_producer_version("0.1");
  model.set_doc_string(("weft-zoo " + zooModelName(o.kind)).str());
  onnx::OperatorSetIdProto *opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  if (o.kind == ZooModelKind::BertMoe) {
    onnx::OperatorSetIdProto *weft = model.add_opset_import();
    weft->set_domain("weft");
    weft->set_version(1);
  }
  onnx::GraphProto &graph = *model.mutable_graph();
  graph.set_name(zooModelName(o.kind).str());
  GraphBuilder b(graph, o.batch);
  switch (o.kind) {
  case ZooModelKind::Mlp:
    buildMlp(b, o);
    break;
  case ZooModelKind::Vgg19:
    buildVgg19(b, o);
    break;
  case ZooModelKind::Vit:
    buildVit(b, o);
    break;
  case ZooModelKind::Bert:
  case ZooModelKind::BertMoe:
    buildBert(b, o);
    break;
  case ZooModelKind::Gpt:
    buildGpt(b, o);
    break;
  }
  return b.params();
}

/// The first line of an exception message (ONNX's span several).
static std::string firstLine(const char *what) {
  return llvm::StringRef(what).split('\n').first.trim().str();
}

llvm::Error zoo::checkAndInferShapes(onnx::ModelProto &model, ExitCode code) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return makeError(code, "ONNX checker rejected the model: {0}",
                     firstLine(e.what()));
  }
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/true,
                                        /*strict_mode=*/1,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    return makeError(code, "ONNX shape inference failed: {0}",
                     firstLine(e.what()));
  }
  return llvm::Error::success();
}

/// Whether `type` is a tensor with a rank and every dim named or sized.
static bool hasFullShape(const onnx::TypeProto &type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return false;
  for (const auto &dim : type.tensor_type().shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() > 0)
      continue;
    if (dim.has_dim_param() && !dim.dim_param().empty() &&
        !llvm::StringRef(dim.dim_param()).startswith("unk__"))
      continue;
    return false;
  }
  return true;
}

llvm::Error zoo::verifyFullShapes(const onnx::ModelProto &model) {
  const onnx::GraphProto &graph = model.graph();
  llvm::StringMap<const onnx::TypeProto *> types;
  for (const auto &info : graph.output())
    types[info.name()] = &info.type();
  // value_info wins over outputs: inference may leave `unk__` in outputs.
  for (const auto &info : graph.value_info())
    types[info.name()] = &info.type();
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &out : node.output()) {
      auto it = types.find(out);
      if (it == types.end() || !hasFullShape(*it->second))
        return makeError(ExitInternal,
                         "no full shape for '{0}' (output of {1} node '{2}')",
                         out, node.op_type(), node.name());
    }
  }
  return llvm::Error::success();
}

std::vector<std::string> zoo::listedParameters(const onnx::ModelProto &model) {
  std::vector<std::string> names;
  for (const auto &entry : model.metadata_props()) {
    if (entry.key() != kParametersKey)
      continue;
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(entry.value()).split(parts, ',', -1, false);
    for (llvm::StringRef p : parts)
      names.push_back(p.str());
  }
  return names;
}

llvm::Expected<uint64_t> zoo::countZooParameters(const ZooOptions &options) {
  if (auto err = validateZooOptions(options))
    return std::move(err);
  onnx::ModelProto model;
  return countParameters(buildGraph(options, model));
}

llvm::Expected<onnx::ModelProto> zoo::buildZooModel(const ZooOptions &options) {
  if (auto err = validateZooOptions(options))
    return std::move(err);
  onnx::ModelProto model;
  std::vector<ParamInfo> params = buildGraph(options, model);
  uint64_t bytes = countParameters(params) * sizeof(float);
  if (options.withWeights && bytes > kMaxWeightBytes)
    return badInput("--with-weights would write {0} MiB of weights; protobuf "
                    "caps a model at 2 GiB (limit {1} MiB): drop "
                    "--with-weights or make the model smaller",
                    bytes >> 20, kMaxWeightBytes >> 20);
  attachParameters(model, params, options.withWeights, options.seed);
  onnx::StringStringEntryProto *entry = model.add_metadata_props();
  entry->set_key("weft.model");
  entry->set_value(zooModelName(options.kind).str());
  if (auto err = checkAndInferShapes(model, ExitInternal))
    return std::move(err);
  if (auto err = verifyFullShapes(model))
    return std::move(err);
  return std::move(model);
}

/// Counts what `model` holds.
static ZooSummary summarize(const onnx::ModelProto &model) {
  ZooSummary summary;
  std::map<std::string, uint64_t> ops;
  for (const onnx::NodeProto &node : model.graph().node()) {
    std::string type = node.domain().empty()
                           ? node.op_type()
                           : node.domain() + "." + node.op_type();
    ++ops[type];
  }
  summary.nodes = uint64_t(model.graph().node_size());
  summary.opCounts.assign(ops.begin(), ops.end());
  llvm::StringMap<uint64_t> sizes;
  auto elements = [](const auto &dims) {
    uint64_t n = 1;
    for (int64_t d : dims)
      n *= uint64_t(d);
    return n;
  };
  for (const auto &input : model.graph().input()) {
    std::vector<int64_t> dims;
    for (const auto &dim : input.type().tensor_type().shape().dim())
      dims.push_back(dim.dim_value());
    sizes[input.name()] = elements(dims);
  }
  for (const auto &init : model.graph().initializer())
    sizes[init.name()] = elements(init.dims());
  for (const std::string &name : listedParameters(model))
    summary.parameters += sizes.lookup(name);
  return summary;
}

/// Serializes a built model.
static llvm::Expected<std::string> serialize(const onnx::ModelProto &model) {
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return makeError(ExitInternal, "protobuf could not serialize the model");
  return bytes;
}

llvm::Expected<std::string> zoo::serializeZooModel(const ZooOptions &options) {
  llvm::Expected<onnx::ModelProto> model = buildZooModel(options);
  if (!model)
    return model.takeError();
  return serialize(*model);
}

llvm::Expected<ZooSummary> zoo::writeZooModel(const ZooOptions &options,
                                              llvm::StringRef path) {
  llvm::Expected<onnx::ModelProto> model = buildZooModel(options);
  if (!model)
    return model.takeError();
  llvm::Expected<std::string> bytes = serialize(*model);
  if (!bytes)
    return bytes.takeError();
  if (auto err = writeFile(path, [&](llvm::raw_ostream &os) { os << *bytes; }))
    return std::move(err);
  ZooSummary summary = summarize(*model);
  summary.fileBytes = bytes->size();
  return summary;
}
