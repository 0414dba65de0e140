//===- TorchProgram.cpp - An spmd plan as a PyTorch program ---------------===//
//
// Assembles the program (docs/Emit.md, "An emitted program"): a docstring,
// the mesh and segments, the distributions and constants the forward pass
// names, the specs of inputs and parameters, the forward function, and the
// Plan object weft_runtime.driver runs. Also writes the program folder.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "PyLiteral.h"
#include "Spmd/IR/SpmdDialect.h"
#include "Spmd/IR/SpmdOps.h"
#include "TorchWriter.h"
#include "weft/Exec/Npy.h"
#include "weft/Exec/OpKernels.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace weft;
using namespace weft::emit;

TorchWriter::TorchWriter(mlir::ModuleOp plan,
                         const spmd::ShardGeometry &geometry,
                         const TorchEmitOptions &options)
    : plan(plan), geo(geometry), options(options) {}

llvm::Error TorchWriter::run() {
  auto main = plan.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main || main.getBody().empty())
    return badInput("the plan has no func.func @main");
  if (auto mb = plan->getAttrOfType<mlir::IntegerAttr>("spmd.micro_batches"))
    microBatches = mb.getInt();
  if (auto err = collectSpecs(main))
    return err;
  return emitForward(main);
}

void weft::emit::printMeshLiteral(llvm::raw_ostream &os, spmd::MeshAttr mesh,
                                  int64_t numNodes) {
  os << "Mesh(" << numNodes << ", " << pyTuple(mesh.getLocal().asArrayRef())
     << ", [";
  for (auto [i, a] : llvm::enumerate(mesh.getClasses())) {
    auto c = a.cast<spmd::DeviceClassAttr>();
    os << (i ? ",\n    " : "") << "DeviceClass(" << pyString(c.getType())
       << ", " << pyTuple(c.getNodes().asArrayRef()) << ")";
  }
  os << "])";
}

void TorchWriter::printMesh(llvm::raw_ostream &os,
                            llvm::StringRef prefix) const {
  os << prefix << "MESH = ";
  printMeshLiteral(os, spmd::getMesh(plan), geo.axisSize(0));
  os << "\n";
  std::string indent(prefix.size() + 12, ' ');
  os << prefix << "SEGMENTS = {";
  if (auto segs = plan->getAttrOfType<mlir::ArrayAttr>("spmd.segments"))
    for (auto [i, a] : llvm::enumerate(segs)) {
      auto s = a.cast<spmd::SegmentAttr>();
      os << (i ? ",\n" + indent : "") << s.getId() << ": ["
         << llvm::join(
                llvm::map_range(geo.segmentSizes(s.getId()),
                                [](int64_t v) { return std::to_string(v); }),
                ", ")
         << "]";
    }
  os << "}\n";
}

void TorchWriter::printHeader(llvm::raw_ostream &os) const {
  auto mesh = spmd::getMesh(plan);
  auto fingerprint = plan->getAttrOfType<mlir::StringAttr>("spmd.fingerprint");
  std::string shape = std::to_string(geo.axisSize(0));
  for (int64_t l : mesh.getLocal().asArrayRef())
    shape += "x" + std::to_string(l);
  os << "#!/usr/bin/env python3\n";
  os << "\"\"\"" << options.title << ": an spmd plan as the PyTorch program "
     << "every rank runs.\n\n";
  os << llvm::formatv("Mesh {0} ({1} devices), {2} local ops, {3} "
                      "collectives, {4} parameters, {5} micro-batch(es).\n",
                      shape, geo.numDevices(), numLocals, numCollectives,
                      params.size(), microBatches);
  os << "Written by weft-translate --spmd-to-torch; the runtime it calls is "
        "weft_runtime/\n(docs/Emit.md). Run every rank under torchrun, e.g. "
        "../launch/local.sh, or\nsee `python program.py --help`.\n\"\"\"\n\n";
  os << "import os\nimport sys\n\n"
        "sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n\n"
        "from weft_runtime import ops  # noqa: E402\n"
        "from weft_runtime import recipes as R  # noqa: E402\n"
        "from weft_runtime.driver import Constant, InputSpec, ParamSpec, "
        "Plan, main  # noqa: E402,F401\n"
        "from weft_runtime.mesh import DeviceClass, Mesh  # noqa: E402\n"
        "from weft_runtime.recompute import recompute  # noqa: E402,F401\n\n";
  printMesh(os, "");
  os << "FINGERPRINT = "
     << pyString(fingerprint ? fingerprint.getValue() : options.title)
     << "\nMICRO_BATCHES = " << microBatches << "\n";
  // The gradient sync's bucket size (params.ParamSet); None: the runtime's.
  int64_t bucket = spmd::SpmdDialect::getGradientBucketBytes(plan, -1);
  os << "BUCKET_BYTES = " << (bucket < 0 ? "None" : std::to_string(bucket))
     << "\n\n";
}

void TorchWriter::printNames(llvm::raw_ostream &os) const {
  os << "# Distributions (#spmd.dist): one entry per mesh axis.\n";
  for (auto &[text, name] : dists)
    os << name << " = " << pyString(text) << "\n";
  if (!constants.empty()) {
    os << "\n# Constants of the forward pass.\n";
    for (auto &[name, expr] : constants)
      os << name << " = " << expr << "\n";
  }
}

void TorchWriter::printSpecs(llvm::raw_ostream &os,
                             llvm::StringRef prefix) const {
  os << prefix << "INPUTS = [\n";
  for (const InputSpec &in : inputs) {
    os << "    InputSpec(" << pyString(in.name) << ", " << pyTuple(in.shape)
       << ", " << pyString(in.type) << ", " << in.dist;
    if (in.type == "i64" || in.type == "i32")
      os << ", bound=" << in.bound;
    os << "),\n";
  }
  os << "]\n" << prefix << "PARAMETERS = [\n";
  for (const ParamSpec &p : params)
    os << "    ParamSpec(" << pyString(p.name) << ", " << pyTuple(p.shape)
       << ", " << pyString(p.type) << ", " << p.dist << ", "
       << pyString(p.strategy) << ", init=" << pyString(p.init) << "),\n";
  os << "]\n";
}

void TorchWriter::printForward(llvm::raw_ostream &os, llvm::StringRef name,
                               llvm::StringRef extra) const {
  os << "def " << name << "(rt, p, " << extra << (extra.empty() ? "" : ", ") <<
      [&] {
        std::string s;
        for (auto [i, in] : llvm::enumerate(inputs))
          s += (i ? ", " : "") + in.ident;
        return s;
      }()
     << "):\n";
  if (stage)
    os << "    \"\"\"One micro-batch of the stage on this rank's shards, "
          "the plan's ops in order;\n    recv: this rank's shards of the "
          "received values; returns this rank's\n    shards of the sent "
          "values and its value of the loss (None before the last\n    "
          "stage).\"\"\"\n";
  else
    os << "    \"\"\"One micro-batch on this rank's shards, the plan's ops "
          "in order; returns\n    this rank's value of the loss.\"\"\"\n";
  os << forwardText;
}

std::string TorchWriter::axisSetsText() const {
  std::string out = "[";
  for (auto [i, set] : llvm::enumerate(axisSets)) {
    out += i ? ", (" : "(";
    for (auto [j, a] : llvm::enumerate(set))
      out += (j ? ", " : "") + std::to_string(a);
    out += set.size() == 1 ? ",)" : ")";
  }
  return out + "]";
}

void TorchWriter::print(llvm::raw_ostream &os) const {
  printHeader(os);
  printNames(os);
  os << "\n";
  printSpecs(os, "");
  os << "\n\n";
  printForward(os, "forward", "");
  os << "\n\n";
  os << "PLAN = Plan(MESH, SEGMENTS, INPUTS, PARAMETERS, forward, "
        "loss_dist="
     << lossDist
     << ",\n            micro_batches=MICRO_BATCHES, "
        "fingerprint=FINGERPRINT,\n            bucket_bytes=BUCKET_BYTES, "
        "axis_sets="
     << axisSetsText() << ")\n\nif __name__ == \"__main__\":\n    main(PLAN)\n";
}

llvm::Error weft::emitTorchProgram(mlir::ModuleOp plan,
                                   const TorchEmitOptions &options,
                                   llvm::raw_ostream &os) {
  if (spmd::isPipelined(plan))
    return emitPipelineProgram(plan, options, os);
  auto geo = spmd::ShardGeometry::get(plan);
  if (!geo)
    return geo.takeError();
  TorchWriter writer(plan, *geo, options);
  if (auto err = writer.run())
    return err;
  writer.print(os);
  return llvm::Error::success();
}

/// A parameter's file in weights/: its name with `%` and `/` escaped as
/// %25 and %2F (weft_runtime/driver.py reads it back).
static std::string weightFileName(llvm::StringRef name) {
  std::string out;
  for (char c : name)
    out += c == '%' ? "%25" : c == '/' ? "%2F" : std::string(1, c);
  return out + ".npy";
}

/// Writes `text` to `path`.
static llvm::Error writeText(llvm::StringRef path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return badInput("cannot write '{0}': {1}", path, ec.message());
  os << text;
  return llvm::Error::success();
}

llvm::Error weft::writeTorchDir(mlir::ModuleOp plan,
                                const TorchEmitOptions &options,
                                llvm::StringRef dir) {
  std::string program;
  {
    llvm::raw_string_ostream os(program);
    if (auto err = emitTorchProgram(plan, options, os))
      return err;
  }
  llvm::SmallString<256> runtimeDir(dir);
  llvm::sys::path::append(runtimeDir, "weft_runtime");
  if (std::error_code ec = llvm::sys::fs::create_directories(runtimeDir))
    return badInput("cannot create '{0}': {1}", runtimeDir, ec.message());
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "program.py");
  if (auto err = writeText(path, program))
    return err;
  llvm::sys::fs::setPermissions(path, llvm::sys::fs::perms(0755));
  for (auto [name, text] : runtimeFiles()) {
    llvm::SmallString<256> file(dir);
    llvm::sys::path::append(file, name);
    if (auto err = writeText(file, text))
      return err;
  }
  // Parameter values of a model imported --with-weights.
  if (!options.graph)
    return llvm::Error::success();
  llvm::SmallString<256> weights(dir);
  llvm::sys::path::append(weights, "weights");
  bool made = false;
  mlir::ModuleOp graph = options.graph;
  for (mlir::Operation &op : graph.getBodyRegion().front()) {
    auto main = llvm::dyn_cast<mlir::func::FuncOp>(op);
    if (!main || main.getName() != "main")
      continue;
    auto walked = main.walk([&](mlir::Operation *leaf) {
      auto name = leaf->getAttrOfType<mlir::StringAttr>("name");
      auto value = leaf->getAttrOfType<mlir::ElementsAttr>("value");
      if (!name || !value ||
          !llvm::isa<graph::ParameterOp, graph::BufferOp>(leaf))
        return mlir::WalkResult::advance();
      auto t = exec::tensorFromAttr(value);
      if (!t) {
        llvm::consumeError(t.takeError());
        return mlir::WalkResult::advance();
      }
      if (!made) {
        if (llvm::sys::fs::create_directories(weights))
          return mlir::WalkResult::interrupt();
        made = true;
      }
      llvm::SmallString<256> file(weights);
      llvm::sys::path::append(file, weightFileName(name.getValue()));
      if (auto err = exec::writeNpy(file, *t)) {
        llvm::consumeError(std::move(err));
        return mlir::WalkResult::interrupt();
      }
      return mlir::WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return badInput("cannot write the weights to '{0}'", weights);
  }
  return llvm::Error::success();
}
