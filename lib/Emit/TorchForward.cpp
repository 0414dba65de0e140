//===- TorchForward.cpp - The forward function of an emitted program ------===//
//
// One line per plan op, in program order, on this rank's shards:
// parameters read from the ParamSet, relayouts as the runtime's collectives
// (whose backward is the dual), an spmd.local as its graph op in
// weft_runtime.ops or, for the variants that talk across an axis or need a
// global offset, as the runtime recipe the SPMD interpreter runs for it
// (lib/Exec/SpmdLocal.cpp decides which: the same prepareLocal is used
// here). Runs of recomputing locals become one recomputed function.
//
//===----------------------------------------------------------------------===//

#include "Graph/IR/GraphOps.h"
#include "PyLiteral.h"
#include "TorchWriter.h"
#include "weft/Exec/SpmdKernels.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace weft;
using namespace weft::emit;
namespace g = weft::graph;
using Special = exec::LocalStep::Special;

namespace {

int64_t product(llvm::ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return v.getType().cast<mlir::RankedTensorType>().getShape();
}

/// An axis attribute (its getter gives the i64's bits unsigned) counted from
/// the front of a rank-`rank` operand.
int64_t axisFromFront(uint64_t axis, size_t rank) {
  int64_t a = int64_t(axis);
  return a < 0 ? a + int64_t(rank) : a;
}

/// The location's name (an ONNX node name), for a comment.
std::string locationName(mlir::Operation *op) {
  if (auto loc = op->getLoc().dyn_cast<mlir::NameLoc>())
    return loc.getName().str();
  if (auto fused = op->getLoc().dyn_cast<mlir::FusedLoc>())
    for (mlir::Location l : fused.getLocations())
      if (auto n = l.dyn_cast<mlir::NameLoc>())
        return n.getName().str();
  return "";
}

/// Emits the body of `forward`.
class ForwardWalk {
public:
  ForwardWalk(TorchWriter &w, const spmd::ShardGeometry &geo)
      : w(w), geo(geo) {}

  llvm::Error run(mlir::func::FuncOp main,
                  llvm::ArrayRef<std::string> inputIdents, std::string &text,
                  std::string &lossDist, unsigned &numLocals,
                  unsigned &numCollectives);

private:
  std::string name(mlir::Value v) const { return names.lookup(v); }
  std::string define(mlir::Value v) {
    std::string n = "v" + std::to_string(next++);
    names[v] = n;
    return n;
  }
  std::string shapeText(mlir::Value v) { return pyTuple(shapeOf(v)); }
  TransferSpec transferOf(mlir::Value v, spmd::DistAttr d) {
    TransferSpec t;
    t.type = elementTypeName(v.getType());
    auto shape = shapeOf(v);
    t.shape.assign(shape.begin(), shape.end());
    t.dist = w.distName(d);
    return t;
  }
  std::string extents(mlir::Value v, spmd::DistAttr d) {
    return "rt.extents(" + shapeText(v) + ", " + w.distName(d) + ")";
  }
  void line(const std::string &s, const std::string &comment = "") {
    body += indent + s;
    if (!comment.empty())
      body += "  # " + comment;
    body += "\n";
  }

  llvm::Error visit(mlir::Operation &op);
  llvm::Error visitLocal(spmd::LocalOp local);
  llvm::Expected<std::string> localCall(exec::LocalStep &step);
  std::string specialCall(exec::LocalStep &step,
                          llvm::ArrayRef<std::string> args);
  std::string opCall(exec::LocalStep &step, llvm::ArrayRef<std::string> args);
  llvm::Error visitRun(llvm::ArrayRef<mlir::Operation *> run);

  TorchWriter &w;
  const spmd::ShardGeometry &geo;
  llvm::DenseMap<mlir::Value, std::string> names;
  llvm::DenseMap<mlir::Value, std::string> zero3Params;
  /// All-gathers emitted as part of a ZeRO-3 parameter's p.gathered.
  llvm::DenseSet<mlir::Operation *> folded;
  mlir::Block scratch;
  std::string body, indent = "    ";
  /// A stage's sent values, in order.
  std::vector<std::string> sends;
  unsigned next = 0, dropouts = 0, runs = 0;
};

} // namespace

llvm::Error ForwardWalk::run(mlir::func::FuncOp main,
                             llvm::ArrayRef<std::string> inputIdents,
                             std::string &text, std::string &lossDist,
                             unsigned &numLocals, unsigned &numCollectives) {
  for (auto [arg, ident] : llvm::zip(main.getArguments(), inputIdents))
    names[arg] = ident;
  mlir::Block &block = main.getBody().front();
  // Items: single ops, or runs of consecutive recomputing locals.
  std::vector<llvm::SmallVector<mlir::Operation *, 1>> items;
  bool inRun = false;
  for (mlir::Operation &op : block) {
    auto local = llvm::dyn_cast<spmd::LocalOp>(op);
    bool recomputes = local && local.getRecompute();
    if (!recomputes || !inRun)
      items.emplace_back();
    items.back().push_back(&op);
    inRun = recomputes;
    if (local)
      ++numLocals;
    else if (op.getDialect() && op.getDialect()->getNamespace() == "spmd" &&
             !llvm::isa<spmd::ParameterOp, spmd::SendOp, spmd::RecvOp>(op))
      ++numCollectives;
  }
  for (auto &item : items) {
    auto local = llvm::dyn_cast<spmd::LocalOp>(item.front());
    if (local && local.getRecompute()) {
      if (auto err = visitRun(item))
        return err;
      continue;
    }
    if (auto err = visit(*item.front()))
      return err;
  }
  auto ret = llvm::cast<mlir::func::ReturnOp>(block.getTerminator());
  if (StageIO *io = w.stageIO()) {
    // A stage: its sends' shards and the loss (the last stage's only).
    std::string list;
    for (const std::string &n : sends)
      list += (list.empty() ? "" : ", ") + n;
    if (ret.getNumOperands() > 1)
      return badInput("a stage's @main returns {0} values; the last returns "
                      "its loss, the others nothing",
                      ret.getNumOperands());
    if (ret.getNumOperands() == 0) {
      line("return [" + list + "], None");
      lossDist = "None";
      text = body;
      return llvm::Error::success();
    }
    line("return [" + list + "], " + name(ret.getOperand(0)));
  } else {
    if (ret.getNumOperands() != 1)
      return badInput("@main returns {0} values; a training plan returns "
                      "its loss",
                      ret.getNumOperands());
    line("return " + name(ret.getOperand(0)));
  }
  spmd::DistAttr d = spmd::getDist(ret.getOperand(0));
  lossDist = d ? w.distName(d)
               : w.distName(spmd::DistAttr::replicated(main.getContext(),
                                                       geo.numAxes()));
  text = body;
  return llvm::Error::success();
}

llvm::Error ForwardWalk::visitRun(llvm::ArrayRef<mlir::Operation *> run) {
  llvm::DenseSet<mlir::Operation *> inRun(run.begin(), run.end());
  llvm::SetVector<mlir::Value> ins, outs;
  for (mlir::Operation *op : run) {
    for (mlir::Value v : op->getOperands())
      if (!v.getDefiningOp() || !inRun.contains(v.getDefiningOp()))
        ins.insert(v);
    for (mlir::Value r : op->getResults())
      for (mlir::Operation *user : r.getUsers())
        if (!inRun.contains(user))
          outs.insert(r);
  }
  std::string fn = "run" + std::to_string(runs++);
  std::string params;
  for (mlir::Value v : ins)
    params += (params.empty() ? "" : ", ") + name(v);
  line("def " + fn + "(" + params + "):", "recomputed in the backward pass");
  indent = "        ";
  for (mlir::Operation *op : run)
    if (auto err = visit(*op))
      return err;
  std::string results;
  for (mlir::Value v : outs)
    results += (results.empty() ? "" : ", ") + name(v);
  if (outs.size() == 1)
    results += ",";
  line("return " + (outs.empty() ? std::string("()") : results));
  indent = "    ";
  line((outs.empty() ? std::string("_") : results) + " = recompute(" + fn +
       (params.empty() ? "" : ", " + params) + ")");
  return llvm::Error::success();
}

llvm::Error ForwardWalk::visit(mlir::Operation &op) {
  using llvm::Error;
  auto relayout = [&](mlir::Value in, mlir::Value out,
                      const std::string &call) -> Error {
    std::string input = name(in);
    if (input.empty())
      return badInput("{0}: operand has no value", op.getName().getStringRef());
    line(define(out) + " = " + call, locationName(&op));
    return Error::success();
  };
  if (auto p = llvm::dyn_cast<spmd::ParameterOp>(op)) {
    std::string n = define(p.getResult());
    if (p.getStrategy() == spmd::ParamStrategy::Zero3)
      zero3Params[p.getResult()] = p.getName().str();
    line(n + " = p[" + pyString(p.getName()) + "]");
    return Error::success();
  }
  if (auto local = llvm::dyn_cast<spmd::LocalOp>(op))
    return visitLocal(local);
  if (auto c = llvm::dyn_cast<g::ConstantOp>(op)) {
    auto k = w.constantName(c.getValue(), c.getType());
    if (!k)
      return k.takeError();
    line(define(c.getResult()) + " = " + *k + ".value(rt.device)");
    return Error::success();
  }
  if (auto s = llvm::dyn_cast<spmd::ShardOp>(op))
    return relayout(s.getInput(), s.getResult(),
                    llvm::formatv("rt.shard({0}, {1}, {2}, {3})",
                                  name(s.getInput()), shapeText(s.getInput()),
                                  w.distName(s.getDist()), s.getAxis()));
  if (folded.contains(&op))
    return Error::success();
  if (auto s = llvm::dyn_cast<spmd::AllGatherOp>(op)) {
    spmd::DistAttr before = spmd::getDist(s.getInput());
    if (!before)
      return badInput("spmd.all_gather: operand has no distribution");
    std::string mode = spmd::stringifyGatherMode(s.getMode()).str();
    if (auto it = zero3Params.find(s.getInput()); it != zero3Params.end()) {
      // ZeRO-3: gathered for the forward, gathered again for the backward.
      // The chain of all-gathers that only feed each other (one per split
      // axis, minor axis first) is one call, so that the backward regathers
      // the whole parameter rather than the first step's result.
      std::string axes = std::to_string(s.getAxis());
      spmd::AllGatherOp last = s;
      while (last.getResult().hasOneUse()) {
        auto next = llvm::dyn_cast<spmd::AllGatherOp>(
            *last.getResult().getUsers().begin());
        if (!next || next.getMode() != s.getMode())
          break;
        axes += ", " + std::to_string(next.getAxis());
        folded.insert(next);
        last = next;
      }
      if (last == s)
        axes += ",";
      return relayout(s.getInput(), last.getResult(),
                      llvm::formatv("p.gathered({0}, {1}, {2}, ({3}), {4})",
                                    pyString(it->second),
                                    shapeText(s.getInput()), w.distName(before),
                                    axes, pyString(mode)));
    }
    return relayout(s.getInput(), s.getResult(),
                    llvm::formatv("rt.all_gather({0}, {1}, {2}, {3}, {4})",
                                  name(s.getInput()), shapeText(s.getInput()),
                                  w.distName(before), s.getAxis(),
                                  pyString(mode)));
  }
  if (auto s = llvm::dyn_cast<spmd::ReduceScatterOp>(op))
    return relayout(s.getInput(), s.getResult(),
                    llvm::formatv("rt.reduce_scatter({0}, {1}, {2}, {3})",
                                  name(s.getInput()), shapeText(s.getInput()),
                                  w.distName(s.getDist()), s.getAxis()));
  if (auto s = llvm::dyn_cast<spmd::AllReduceOp>(op)) {
    spmd::DistAttr before = spmd::getDist(s.getInput());
    if (!before)
      return badInput("spmd.all_reduce: operand has no distribution");
    return relayout(s.getInput(), s.getResult(),
                    llvm::formatv("rt.all_reduce({0}, {1}, {2})",
                                  name(s.getInput()), w.distName(before),
                                  s.getAxis()));
  }
  if (auto s = llvm::dyn_cast<spmd::AllToAllOp>(op)) {
    spmd::DistAttr before = spmd::getDist(s.getInput());
    if (!before)
      return badInput("spmd.all_to_all: operand has no distribution");
    return relayout(s.getInput(), s.getResult(),
                    llvm::formatv("rt.all_to_all({0}, {1}, {2}, {3}, {4})",
                                  name(s.getInput()), shapeText(s.getInput()),
                                  w.distName(before), w.distName(s.getDist()),
                                  s.getAxis()));
  }
  if (llvm::isa<spmd::SendOp, spmd::RecvOp>(op) && !w.stageIO())
    return badInput("{0}: spmd.send/spmd.recv outside the stage modules of a "
                    "pipelined plan (docs/Pipeline.md)",
                    op.getName().getStringRef());
  if (auto recv = llvm::dyn_cast<spmd::RecvOp>(op)) {
    StageIO &io = *w.stageIO();
    line(define(recv.getResult()) + " = recv[" +
             std::to_string(io.recvs.size()) + "]",
         locationName(&op));
    io.recvs.push_back(transferOf(recv.getResult(), recv.getDist()));
    return Error::success();
  }
  if (auto send = llvm::dyn_cast<spmd::SendOp>(op)) {
    spmd::DistAttr d = spmd::getDist(send.getInput());
    if (!d || name(send.getInput()).empty())
      return badInput("spmd.send: operand has no distribution");
    w.stageIO()->sends.push_back(transferOf(send.getInput(), d));
    sends.push_back(name(send.getInput()));
    return Error::success();
  }
  if (llvm::isa<mlir::func::ReturnOp>(op))
    return Error::success();
  return badInput("the PyTorch emitter does not know '{0}'",
                  op.getName().getStringRef());
}

llvm::Error ForwardWalk::visitLocal(spmd::LocalOp local) {
  exec::LocalStep step;
  step.local = local;
  if (auto err = exec::prepareLocal(step, geo, scratch))
    return err;
  auto cleanup = llvm::make_scope_exit([&] {
    for (mlir::Operation *c : step.clones)
      c->destroy();
  });
  if (auto err = exec::verifyLocalClones(step))
    return err;
  if (llvm::isa<g::DropoutOp>(step.inner))
    step.dropoutId = dropouts++;
  auto call = localCall(step);
  if (!call)
    return call.takeError();
  std::string results;
  for (mlir::Value r : local.getResults())
    results += (results.empty() ? "" : ", ") + define(r);
  std::string comment = locationName(step.inner);
  comment += (comment.empty() ? "" : " ") + local.getVariant().str();
  line(results + " = " + *call, comment);
  return llvm::Error::success();
}

llvm::Expected<std::string> ForwardWalk::localCall(exec::LocalStep &step) {
  auto local = llvm::cast<spmd::LocalOp>(step.local);
  mlir::Operation *inner = step.inner;
  // Operands: this rank's shards; a once-operand only on coordinate 0.
  llvm::SmallVector<std::string, 4> args;
  for (auto [i, v] : llvm::enumerate(inner->getOperands())) {
    mlir::Value outer =
        local.getOperand(v.cast<mlir::BlockArgument>().getArgNumber());
    std::string a = name(outer);
    if (a.empty())
      return badInput("{0}: operand {1} has no value",
                      inner->getName().getStringRef(), i);
    if (step.onceAxes[i])
      a = "R.once(" + a + ", rt.first_on(" + w.axesTuple(step.onceAxes[i]) +
          "))";
    args.push_back(a);
  }
  if (step.special == Special::Constant) {
    auto c = llvm::cast<g::ConstantOp>(inner);
    auto k = w.constantName(c.getValue(), c.getType());
    if (!k)
      return k.takeError();
    return "rt.shard_of(" + *k + ".value(rt.device), " +
           w.distName(step.resultDists[0]) + ")";
  }
  if (step.special != Special::None)
    return specialCall(step, args);
  if (auto d = llvm::dyn_cast<g::DropoutOp>(inner)) {
    // Keyed by global index along the axes whose rule is dropout.split.
    spmd::MeshAxes split = 0;
    for (auto [a, v] : llvm::enumerate(step.variants))
      if (v.name == "dropout.split")
        split |= 1u << a;
    spmd::DistAttr keyed = exec::restrictDist(step.resultDists[0], split);
    return llvm::formatv("R.dropout({0}, {1}, rt.dropout_seed, {2}, {3}, "
                         "rt.offsets({3}, {4}))",
                         args[0], pyFloat(d.getRatio().convertToDouble()),
                         step.dropoutId, shapeText(d.getResult()),
                         w.distName(keyed))
        .str();
  }
  return opCall(step, args);
}

std::string ForwardWalk::specialCall(exec::LocalStep &step,
                                     llvm::ArrayRef<std::string> args) {
  mlir::Operation *inner = step.inner;
  std::string group = w.groupOf(step.reducedAxes);
  switch (step.special) {
  case Special::Softmax:
  case Special::LogSoftmax: {
    int64_t axis = inner->getAttrOfType<mlir::IntegerAttr>("axis").getInt();
    return llvm::formatv(
        "R.split_softmax({0}, {1}, {2}, rt.comm, log={3})", args[0], axis,
        group, step.special == Special::LogSoftmax ? "True" : "False");
  }
  case Special::LayerNorm: {
    auto ln = llvm::cast<g::LayerNormOp>(inner);
    llvm::ArrayRef<int64_t> shape = shapeOf(ln.getInput());
    int64_t axis = axisFromFront(ln.getAxis(), shape.size());
    return llvm::formatv(
        "R.split_layer_norm({0}, {1}, {2}, {3}, {4}, {5}, {6}, rt.comm)",
        args[0], args[1], args[2], axis,
        pyFloat(ln.getEpsilon().convertToDouble()),
        product(shape.drop_front(axis)), group);
  }
  case Special::BatchNorm: {
    auto bn = llvm::cast<g::BatchNormOp>(inner);
    llvm::ArrayRef<int64_t> shape = shapeOf(bn.getInput());
    if (!bn.getTraining())
      break;
    return llvm::formatv(
        "R.sync_batch_norm({0}, {1}, {2}, {3}, {4}, {5}, rt.comm)", args[0],
        args[1], args[2], pyFloat(bn.getEpsilon().convertToDouble()),
        product(shape) / std::max<int64_t>(1, shape[1]), group);
  }
  case Special::Loss: {
    mlir::Value x = inner->getOperand(0), labels = inner->getOperand(1);
    std::string reduction =
        inner->getAttrOfType<mlir::StringAttr>("reduction").getValue().str();
    auto ignore = inner->getAttrOfType<mlir::IntegerAttr>("ignore_index");
    std::string offset =
        step.reducedAxes
            ? llvm::formatv("rt.offset({0}, {1}, 1, axes={2})", shapeText(x),
                            w.distName(step.operandDists[0]),
                            w.axesTuple(step.reducedAxes))
                  .str()
            : "0";
    std::string first =
        step.reducedAxes ? "rt.first_on(" + w.axesTuple(step.reducedAxes) + ")"
                         : "True";
    return llvm::formatv(
        "R.cross_entropy({0}, {1}, count={2}, reduction={3}, "
        "ignore_index={4}, from_logits={5}, class_group={6}, offset={7}, "
        "first={8}, batch_group={9}, comm=rt.comm)",
        args[0], args[1], product(shapeOf(labels)), pyString(reduction),
        ignore ? std::to_string(ignore.getInt()) : "None",
        llvm::isa<g::CrossEntropyOp>(inner) ? "True" : "False", group, offset,
        first, w.groupOf(step.batchAxes));
  }
  case Special::GatherVocab: {
    auto gather = llvm::cast<g::GatherOp>(inner);
    llvm::ArrayRef<int64_t> shape = shapeOf(gather.getData());
    int64_t axis = axisFromFront(gather.getAxis(), shape.size());
    return llvm::formatv(
        "R.vocab_embedding({0}, {1}, {2}, rt.offset({3}, {4}, {2}, "
        "axes={5}), {6})",
        args[0], args[1], axis, pyTuple(shape),
        w.distName(step.operandDists[0]), w.axesTuple(step.reducedAxes),
        shape[axis]);
  }
  case Special::ReduceMean: {
    auto mean = llvm::cast<g::ReduceMeanOp>(inner);
    llvm::ArrayRef<int64_t> shape = shapeOf(mean.getInput());
    llvm::SmallVector<int64_t, 4> dims;
    int64_t count = 1;
    for (int64_t a : mean.getAxes()) {
      a = a < 0 ? a + int64_t(shape.size()) : a;
      dims.push_back(a);
      count *= shape[a];
    }
    llvm::sort(dims);
    return llvm::formatv("R.split_mean({0}, {1}, {2}, keepdim={3})", args[0],
                         pyTuple(dims), count,
                         mean.getKeepdims() ? "True" : "False");
  }
  case Special::None:
  case Special::Constant:
    break;
  }
  return opCall(step, args);
}

std::string ForwardWalk::opCall(exec::LocalStep &step,
                                llvm::ArrayRef<std::string> args) {
  mlir::Operation *inner = step.inner;
  llvm::StringRef opName = inner->getName().stripDialect();
  std::string call = "ops." + opName.str() + "(";
  for (auto [i, a] : llvm::enumerate(args))
    call += (i ? ", " : "") + a;
  auto kwarg = [&](llvm::StringRef key, const std::string &value) {
    call += (call.back() == '(' ? "" : ", ") + key.str() + "=" + value;
  };
  for (mlir::NamedAttribute attr : inner->getAttrs())
    if (std::optional<std::string> v = pyAttribute(attr.getValue()))
      kwarg(attr.getName().getValue(), *v);
  mlir::Value r0 = inner->getNumResults() ? inner->getResult(0) : nullptr;
  if (llvm::isa<g::CastOp>(inner))
    kwarg("to", pyString(elementTypeName(r0.getType())));
  // A transposed convolution's shard group count needs its result channels.
  if (llvm::isa<g::ReshapeOp, g::ExpandOp, g::ResizeOp, g::FlattenOp,
                g::ConvTranspose2dOp>(inner))
    kwarg("shape", extents(r0, step.resultDists[0]));
  if (llvm::isa<g::SplitOp, g::Top2GatingOp>(inner)) {
    std::string shapes = "[";
    for (auto [i, r] : llvm::enumerate(inner->getResults()))
      shapes += (i ? ", " : "") + extents(r, step.resultDists[i]);
    kwarg("shapes", shapes + "]");
  }
  if (llvm::isa<g::SliceOp>(inner)) {
    kwarg("global_in", shapeText(inner->getOperand(0)));
    kwarg("global_out", shapeText(r0));
    kwarg("box", "rt.box(" + shapeText(r0) + ", " +
                     w.distName(step.resultDists[0]) + ")");
  }
  if (llvm::isa<g::ScatterElementsOp, g::ScatterNdOp>(inner)) {
    kwarg("global_shape", shapeText(r0));
    kwarg("box", "rt.box(" + shapeText(r0) + ", " +
                     w.distName(step.resultDists[0]) + ")");
  }
  return call + ")";
}

llvm::Error TorchWriter::emitForward(mlir::func::FuncOp main) {
  ForwardWalk walk(*this, geo);
  std::vector<std::string> idents;
  for (const InputSpec &in : inputs)
    idents.push_back(in.ident);
  return walk.run(main, idents, forwardText, lossDist, numLocals,
                  numCollectives);
}
