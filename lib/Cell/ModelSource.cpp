//===- ModelSource.cpp - A job's model at its global batch ----------------===//

#include "weft/Cell/ModelSource.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "weft/Analysis/ModelSummary.h"
#include "weft/Import/OnnxImport.h"
#include "weft/Spmd/ProgramBuilder.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace weft;
using namespace weft::cell;

/// Sets the zoo size `key` of `o` to `value`.
static llvm::Error setZooSize(zoo::ZooOptions &o, llvm::StringRef key,
                              llvm::StringRef value, llvm::StringRef jobType) {
  if (!llvm::is_contained(zoo::zooSizeFlags(o.kind), key))
    return badInput("job type '{0}': {1} has no option '{2}' (it has {3})",
                    jobType, zoo::zooModelName(o.kind), key,
                    llvm::join(zoo::zooSizeFlags(o.kind), ", "));
  if (key == "capacity-factor") {
    double x = 0;
    if (value.getAsDouble(x) || !(x > 0))
      return badInput("job type '{0}': capacity-factor must be a positive "
                      "number, found '{1}'",
                      jobType, value);
    o.capacityFactor = x;
    return llvm::Error::success();
  }
  int64_t n = 0;
  if (value.getAsInteger(10, n) || n <= 0)
    return badInput("job type '{0}': {1} must be a positive integer, found "
                    "'{2}'",
                    jobType, key, value);
  int64_t *field = llvm::StringSwitch<int64_t *>(key)
                       .Case("layers", &o.layers)
                       .Case("hidden", &o.hidden)
                       .Case("heads", &o.heads)
                       .Case("ffn", &o.ffn)
                       .Case("seq", &o.seq)
                       .Case("vocab", &o.vocab)
                       .Case("experts", &o.experts)
                       .Case("image", &o.image)
                       .Case("classes", &o.classes)
                       .Default(nullptr);
  if (!field)
    return badInput("job type '{0}': unknown option '{1}'", jobType, key);
  *field = n;
  return llvm::Error::success();
}

llvm::Expected<JobModelSpec> cell::parseJobModel(llvm::StringRef jobType) {
  llvm::SmallVector<llvm::StringRef> fields;
  jobType.trim().split(fields, ';', -1, false);
  if (fields.empty())
    return badInput("job type '{0}': expected MODEL[:OPTIONS];batch=N",
                    jobType);
  JobModelSpec spec;
  llvm::StringRef head = fields.front().trim();
  llvm::SmallVector<llvm::StringRef> options(fields.begin() + 1, fields.end());
  bool isFile = head.endswith(".onnx") || head.endswith(".onnxtext");
  if (isFile) {
    spec.path = head.str();
  } else {
    auto [family, first] = head.split(':');
    auto kind = zoo::parseZooModelKind(family.trim());
    if (!kind)
      return badInput("job type '{0}': {1}; or name an ONNX file "
                      "(PATH.onnx;batch=N)",
                      jobType, llvm::toString(kind.takeError()));
    spec.zoo = zoo::defaultZooOptions(*kind);
    if (!first.trim().empty())
      options.insert(options.begin(), first);
  }
  for (llvm::StringRef option : options) {
    auto [key, value] = option.split('=');
    key = key.trim();
    value = value.trim();
    if (value.empty())
      return badInput("job type '{0}': expected KEY=VALUE, found '{1}'",
                      jobType, option);
    if (key == "batch") {
      if (value.getAsInteger(10, spec.batch) || spec.batch <= 0)
        return badInput("job type '{0}': batch must be a positive integer, "
                        "found '{1}'",
                        jobType, value);
      continue;
    }
    if (!spec.zoo)
      return badInput("job type '{0}': an ONNX file takes only batch=N, "
                      "found '{1}'",
                      jobType, key);
    if (auto err = setZooSize(*spec.zoo, key, value, jobType))
      return std::move(err);
  }
  if (spec.batch <= 0)
    return badInput("job type '{0}': no batch (add ;batch=N, the global "
                    "batch of one iteration)",
                    jobType);
  if (spec.zoo)
    if (auto err = zoo::validateZooOptions(*spec.zoo))
      return badInput("job type '{0}': {1}", jobType,
                      llvm::toString(std::move(err)));
  return spec;
}

llvm::Expected<std::unique_ptr<ModelGraphs>>
ModelGraphs::open(mlir::MLIRContext &context, const JobModelSpec &spec) {
  context.getOrLoadDialect<spmd::SpmdDialect>();
  std::unique_ptr<ModelGraphs> graphs(new ModelGraphs(context));
  graphs->batch = spec.batch;
  if (spec.zoo) {
    llvm::SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("weft-cell", "onnx", path))
      return badInput("cannot create a temporary model file: {0}",
                      ec.message());
    graphs->path = std::string(path);
    graphs->temporary = true;
    auto written = zoo::writeZooModel(*spec.zoo, path);
    if (!written)
      return written.takeError();
  } else {
    graphs->path = spec.path;
  }
  ImportOptions io;
  io.batch = spec.batch;
  ImportReport report;
  auto module = importOnnxFile(context, graphs->path, io, &report);
  if (!module)
    return module.takeError();
  graphs->symbolic = report.batchSymbolic;
  if (!graphs->symbolic) {
    // A fixed batch dim ignores the batch asked for: refuse a mismatch.
    int64_t fixed = 0;
    for (auto f : (*module)->getOps<mlir::func::FuncOp>())
      if (f.getNumArguments() > 0)
        if (auto t = f.getArgumentTypes()[0].dyn_cast<mlir::RankedTensorType>())
          if (t.getRank() > 0)
            fixed = t.getDimSize(0);
    if (fixed > 0 && fixed != spec.batch)
      return badInput("{0}: the model's batch is fixed at {1} samples (no "
                      "symbolic batch dim), not {2}",
                      spec.path, fixed, spec.batch);
  }
  graphs->flops = summarizeModel(**module).trainingFlops();
  graphs->print = modelFingerprint(**module);
  graphs->graphs[1] = std::move(*module);
  return graphs;
}

ModelGraphs::~ModelGraphs() {
  if (temporary)
    llvm::sys::fs::remove(path);
}

llvm::Expected<mlir::ModuleOp> ModelGraphs::graph(unsigned m) {
  auto it = graphs.find(m);
  if (it != graphs.end())
    return *it->second;
  if (m == 0 || batch % m != 0)
    return badInput("{0} micro-batches do not divide the batch of {1}", m,
                    batch);
  if (!symbolic)
    return badInput("the model's batch is fixed: no gradient accumulation");
  ImportOptions io;
  io.batch = batch / m;
  auto module = importOnnxFile(context, path, io);
  if (!module)
    return module.takeError();
  (**module)->setAttr(spmd::SpmdDialect::kMicroBatchesAttr,
                      mlir::Builder(&context).getI64IntegerAttr(m));
  mlir::ModuleOp result = **module;
  graphs[m] = std::move(*module);
  return result;
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
ModelGraphs::importAt(int64_t m) {
  if (m <= 0 || batch % m != 0)
    return badInput("{0} micro-batches do not divide the batch of {1}", m,
                    batch);
  if (m > 1 && !symbolic)
    return badInput("the model's batch is fixed: {0} micro-batches need a "
                    "symbolic batch dim",
                    m);
  ImportOptions io;
  io.batch = batch / m;
  return importOnnxFile(context, path, io);
}
