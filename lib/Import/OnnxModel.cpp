//===- OnnxModel.cpp - Reading and checking an ONNX model -----------------===//
//
// ONNX and protobuf report failures with exceptions; they are caught here and
// turned into llvm::Error so none unwinds through MLIR code.
//
//===----------------------------------------------------------------------===//

#include "OnnxModel.h"
#include "OpsetBridge.h"
#include "SequenceSplits.h"
#include "ShapeFolding.h"
#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <optional>

using namespace weft;
using namespace weft::import;

std::string import::oneLine(llvm::StringRef message) {
  llvm::SmallVector<llvm::StringRef> lines;
  message.split(lines, '\n');
  std::string out;
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (line.empty() || line.startswith("Error context:"))
      continue;
    out += (out.empty() ? "" : "; ") + line.str();
  }
  return out;
}

static bool isTextual(llvm::StringRef path) {
  return path.endswith(".onnxtext") || path.endswith(".txt");
}

llvm::Error import::readOnnxModel(llvm::StringRef path,
                                  onnx::ModelProto &model) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/true);
  if (!buffer)
    return badInput("cannot read '{0}': {1}", path,
                    buffer.getError().message());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (bytes.empty())
    return badInput("'{0}' is empty, not an ONNX model", path);

  if (isTextual(path)) {
    try {
      onnx::OnnxParser parser(bytes.data());
      auto status = parser.Parse(model);
      if (!status.IsOK())
        return badInput("'{0}' is not a valid textual ONNX model: {1}", path,
                        oneLine(status.ErrorMessage()));
    } catch (const std::exception &e) {
      return badInput("'{0}' is not a valid textual ONNX model: {1}", path,
                      oneLine(e.what()));
    }
    return llvm::Error::success();
  }

  if (bytes.size() > size_t(INT32_MAX))
    return badInput("'{0}' is larger than protobuf's 2 GB limit; export it "
                    "with external data or weightless",
                    path);
  if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
    return badInput("'{0}' is not a valid ONNX model (truncated or corrupt "
                    "protobuf)",
                    path);
  if (!model.has_graph() || model.ir_version() == 0)
    return badInput("'{0}' is not a valid ONNX model (no graph or IR version)",
                    path);
  return llvm::Error::success();
}

llvm::StringSet<> import::listedParameters(const onnx::ModelProto &model) {
  llvm::StringSet<> names;
  for (const auto &prop : model.metadata_props()) {
    if (prop.key() != kParametersKey)
      continue;
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(prop.value()).split(parts, ',', -1, false);
    for (llvm::StringRef p : parts)
      names.insert(p.trim());
  }
  return names;
}

static std::string shapeText(llvm::ArrayRef<int64_t> dims) {
  return llvm::join(
      llvm::map_range(dims, [](int64_t d) { return std::to_string(d); }), "x");
}

/// Values of the symbolic dims (dim_param) bound while resolving inputs.
using SymbolTable = llvm::StringMap<int64_t>;

/// Resolves the dims of one data input in place, binding its symbols.
/// Sets `batchUsed` when the batch option resolved a dim.
static llvm::Error resolveInputShape(onnx::ValueInfoProto &input,
                                     const ImportOptions &options,
                                     SymbolTable &symbols, bool &batchUsed) {
  const std::string &name = input.name();
  if (!input.type().has_tensor_type())
    return badInput("input '{0}' is not a tensor", name);
  auto *shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();

  auto given = options.inputShapes.find(name);
  if (given != options.inputShapes.end()) {
    if (shape->dim_size() && shape->dim_size() != int(given->second.size()))
      return badInput("--input-shape {0}={1} has rank {2}, the model's input "
                      "has rank {3}",
                      name, shapeText(given->second), given->second.size(),
                      shape->dim_size());
    for (int i = 0; i < shape->dim_size(); ++i)
      if (shape->dim(i).has_dim_param())
        symbols[shape->dim(i).dim_param()] = given->second[i];
    shape->clear_dim();
    for (int64_t d : given->second)
      shape->add_dim()->set_dim_value(d);
    return llvm::Error::success();
  }

  for (int i = 0; i < shape->dim_size(); ++i) {
    auto *dim = shape->mutable_dim(i);
    if (dim->has_dim_value() && dim->dim_value() > 0)
      continue;
    std::string symbol =
        dim->has_dim_param() ? "'" + dim->dim_param() + "'" : "unnamed";
    if (i != 0)
      return badInput("dim {0} ({1}) of input '{2}' cannot be resolved; pass "
                      "--input-shape {2}=<dims>",
                      i, symbol, name);
    if (!options.batch)
      return badInput("the batch dim ({0}) of input '{1}' is symbolic; pass "
                      "--global-batch N, --batch-per-device N or "
                      "--input-shape {1}=<dims>",
                      symbol, name);
    if (dim->has_dim_param())
      symbols[dim->dim_param()] = *options.batch;
    dim->set_dim_value(*options.batch);
    batchUsed = true;
  }
  return llvm::Error::success();
}

/// Evaluates a dim_param that is a product of bound symbols and integers
/// ("batch", "batch*128"), as exporters write for flattened dims.
static std::optional<int64_t> evaluateSymbol(llvm::StringRef text,
                                             const SymbolTable &symbols) {
  int64_t value = 1;
  llvm::SmallVector<llvm::StringRef> factors;
  text.split(factors, '*');
  for (llvm::StringRef f : factors) {
    f = f.trim();
    int64_t n;
    if (!f.getAsInteger(10, n)) {
      value *= n;
      continue;
    }
    auto it = symbols.find(f);
    if (it == symbols.end())
      return std::nullopt;
    value *= it->second;
  }
  return value;
}

/// Replaces the bound symbols in the model's recorded intermediate and
/// output shapes, which shape inference keeps (and needs for custom ops).
static void bindSymbols(onnx::GraphProto &graph, const SymbolTable &symbols) {
  auto bind = [&](onnx::ValueInfoProto &vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
      return;
    auto *shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (auto &dim : *shape->mutable_dim())
      if (dim.has_dim_param())
        if (auto v = evaluateSymbol(dim.dim_param(), symbols))
          dim.set_dim_value(*v);
  };
  for (auto &vi : *graph.mutable_value_info())
    bind(vi);
  for (auto &vi : *graph.mutable_output())
    bind(vi);
}

/// Turns initializers whose data lives in external files into graph inputs
/// listed as parameters (the weightless form), so that neither the checker
/// nor anything after it opens the data files: a planner needs shapes only.
static void detachExternalData(onnx::ModelProto &model) {
  auto *graph = model.mutable_graph();
  auto *inits = graph->mutable_initializer();
  std::vector<std::string> detached;
  for (int i = inits->size() - 1; i >= 0; --i) {
    const onnx::TensorProto &t = inits->Get(i);
    if (t.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    bool listedAsInput = llvm::any_of(
        graph->input(), [&](const auto &in) { return in.name() == t.name(); });
    if (!listedAsInput) {
      onnx::ValueInfoProto *input = graph->add_input();
      input->set_name(t.name());
      auto *tensor = input->mutable_type()->mutable_tensor_type();
      tensor->set_elem_type(t.data_type());
      for (int64_t d : t.dims())
        tensor->mutable_shape()->add_dim()->set_dim_value(d);
    }
    detached.push_back(t.name());
    inits->DeleteSubrange(i, 1);
  }
  if (detached.empty())
    return;
  auto *prop = model.add_metadata_props();
  prop->set_key(kParametersKey);
  prop->set_value(llvm::join(detached, ","));
}

/// The bytes of one external tensor: `location` (relative to the model's
/// folder, never leaving it), `offset` and `length` as the ONNX external
/// data format gives them.
static llvm::Error readExternalTensor(
    onnx::TensorProto &t, llvm::StringRef modelDir,
    llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> &files) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto &entry : t.external_data()) {
    uint64_t n = 0;
    if (entry.key() == "location")
      location = entry.value();
    else if ((entry.key() == "offset" || entry.key() == "length") &&
             llvm::StringRef(entry.value()).getAsInteger(10, n))
      return badInput("external data of '{0}': {1} '{2}' is not a number",
                      t.name(), entry.key(), entry.value());
    if (entry.key() == "offset")
      offset = n;
    if (entry.key() == "length")
      length = n;
  }
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(location).split(parts, '/');
  if (location.empty() || llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(parts, ".."))
    return badInput("external data of '{0}': location '{1}' is not a file "
                    "inside the model's folder",
                    t.name(), location);
  auto &file = files[location];
  if (!file) {
    llvm::SmallString<256> full(modelDir);
    llvm::sys::path::append(full, location);
    auto buffer = llvm::MemoryBuffer::getFile(full, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return badInput("cannot read external data '{0}' of '{1}': {2}", full,
                      t.name(), buffer.getError().message());
    file = std::move(*buffer);
  }
  uint64_t size = file->getBufferSize();
  uint64_t count = offset <= size ? size - offset : 0;
  if (offset > size || (length && *length > count))
    return badInput("external data of '{0}': bytes {1}..{2} lie beyond the "
                    "end of '{3}' ({4} bytes)",
                    t.name(), offset, offset + length.value_or(0), location,
                    size);
  t.set_raw_data(file->getBufferStart() + offset, length.value_or(count));
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
  return llvm::Error::success();
}

/// Reads every external tensor into the model (--with-weights).
static llvm::Error loadExternalData(onnx::ModelProto &model,
                                    llvm::StringRef modelPath) {
  llvm::StringRef dir = llvm::sys::path::parent_path(modelPath);
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> files;
  for (auto &init : *model.mutable_graph()->mutable_initializer())
    if (init.data_location() == onnx::TensorProto::EXTERNAL)
      if (auto err = readExternalTensor(init, dir, files))
        return err;
  return llvm::Error::success();
}

llvm::Error import::prepareOnnxModel(onnx::ModelProto &model,
                                     const ImportOptions &options,
                                     ImportReport &report,
                                     llvm::StringRef modelPath) {
  for (const auto &init : model.graph().initializer())
    if (init.data_location() == onnx::TensorProto::EXTERNAL)
      report.externalData = true;
  if (report.externalData && options.withWeights)
    if (auto err = loadExternalData(model, modelPath))
      return err;
  detachExternalData(model);
  llvm::StringSet<> params = listedParameters(model);
  report.weightless = !params.empty() && !report.externalData;
  report.producer = model.producer_name();
  for (const auto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      report.opsetVersion = opset.version();
  if (report.opsetVersion == 0)
    return badInput("the model imports no default-domain opset");

  SymbolTable symbols;
  llvm::StringSet<> initializers;
  for (const auto &init : model.graph().initializer())
    initializers.insert(init.name());
  for (const auto &entry : options.inputShapes)
    if (llvm::none_of(model.graph().input(), [&](const auto &in) {
          return in.name() == entry.getKey();
        }))
      return badInput("--input-shape names '{0}', which is not an input of "
                      "the model",
                      entry.getKey());
  for (const std::string &name : options.frozen)
    if (!initializers.contains(name) &&
        llvm::none_of(model.graph().input(),
                      [&](const auto &in) { return in.name() == name; }))
      return badInput("--frozen names '{0}', which is neither an input nor "
                      "an initializer of the model",
                      name);
  for (auto &input : *model.mutable_graph()->mutable_input()) {
    if (params.contains(input.name()) || initializers.contains(input.name()))
      continue;
    if (auto err =
            resolveInputShape(input, options, symbols, report.batchSymbolic))
      return err;
  }
  bindSymbols(*model.mutable_graph(), symbols);

  auto bridged = bridgeToCheckerOpset(model);
  if (!bridged)
    return bridged.takeError();
  report.bridgedNodes = *bridged;

  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return badInput("the model fails ONNX's checker: {0}", oneLine(e.what()));
  }
  // Bridged ops (OpsetBridge.h) have no schema: each round types the
  // results of those whose inputs the last round typed, and folding can
  // reveal more. A chain of n such ops needs n rounds.
  bool typed;
  do {
    do {
      if (auto err = inferShapes(model))
        return err;
    } while (typeBridgedOutputs(model));
    auto folded = foldShapeComputations(model, options.frozen);
    if (!folded)
      return folded.takeError();
    report.foldedNodes += *folded;
    typed = typeBridgedOutputs(model);
    // Split sizes can need the shapes just inferred.
    typed |= splitSequences(model);
  } while (typed);
  restoreBridgedOps(model);
  return llvm::Error::success();
}
