//===- StageProgram.cpp - A graph program cut into stages -----------------===//

#include "StageProgram.h"
#include "Graph/IR/GraphOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "weft/Support/Error.h"
#include <algorithm>
#include <functional>
#include <limits>

using namespace weft;
using namespace weft::synth;

/// Bytes of a tensor value in its IR element type.
static double bytesOf(mlir::Value v) {
  auto type = v.getType().dyn_cast<mlir::RankedTensorType>();
  if (!type)
    return 0;
  unsigned bits = type.getElementTypeBitWidth();
  return double(type.getNumElements()) * double(std::max(bits, 8u) / 8);
}

llvm::Expected<StageProgram> StageProgram::of(mlir::ModuleOp graph) {
  StageProgram p;
  p.module = graph;
  p.func = graph.lookupSymbol<mlir::func::FuncOp>("main");
  if (!p.func || p.func.isExternal())
    return badInput("the graph program has no func.func @main");
  mlir::Block &body = p.func.getBody().front();
  for (mlir::Operation &op : body) {
    if (llvm::isa<mlir::func::ReturnOp>(op))
      continue;
    if (op.getNumRegions())
      return badInput("stages cannot cut '{0}' (an op with regions)",
                      op.getName().getStringRef().str());
    // A leaf: a parameter, a buffer, or an op computed from leaves alone
    // (constants, views of parameters). Every stage using it copies it.
    bool leaf = llvm::isa<graph::ParameterOp, graph::BufferOp>(op) ||
                llvm::all_of(op.getOperands(), [&](mlir::Value v) {
                  mlir::Operation *def = v.getDefiningOp();
                  return def && p.leaves.contains(def);
                });
    if (leaf) {
      p.leaves.insert(&op);
      continue;
    }
    p.position[&op] = p.order.size();
    p.order.push_back(&op);
  }
  // The parameters each op reads through its leaves.
  llvm::DenseMap<mlir::Operation *, std::vector<mlir::Operation *>> leafParams;
  for (mlir::Operation &op : body) {
    if (!p.leaves.contains(&op))
      continue;
    auto &mine = leafParams[&op];
    if (llvm::isa<graph::ParameterOp>(op))
      mine.push_back(&op);
    for (mlir::Value v : op.getOperands())
      for (mlir::Operation *q : leafParams[v.getDefiningOp()])
        if (!llvm::is_contained(mine, q))
          mine.push_back(q);
  }
  p.params.resize(p.order.size());
  for (auto [i, op] : llvm::enumerate(p.order)) {
    for (mlir::Value v : op->getOperands())
      if (mlir::Operation *def = v.getDefiningOp(); def && p.isLeaf(def))
        for (mlir::Operation *q : leafParams[def])
          if (!llvm::is_contained(p.params[i], q))
            p.params[i].push_back(q);
    for (mlir::Value r : op->getResults()) {
      unsigned last = i;
      for (mlir::OpOperand &use : r.getUses()) {
        mlir::Operation *user = use.getOwner();
        last = std::max(last, llvm::isa<mlir::func::ReturnOp>(user)
                                  ? unsigned(p.order.size())
                                  : p.position.lookup(user));
      }
      p.lastUse[r] = last;
    }
  }
  return p;
}

std::vector<mlir::Value> StageProgram::crossing(unsigned c) const {
  std::vector<mlir::Value> out;
  for (unsigned i = 0; i < c && i < order.size(); ++i)
    for (mlir::Value r : order[i]->getResults())
      if (lastUse.lookup(r) >= c)
        out.push_back(r);
  return out;
}

double StageProgram::crossingBytes(unsigned c) const {
  double total = 0;
  for (mlir::Value v : crossing(c))
    total += bytesOf(v);
  return total;
}

std::vector<unsigned> StageProgram::cutPoints() const {
  unsigned n = order.size();
  if (n < 2)
    return {};
  // Values crossing each position: +1 after the def, −1 after the last use.
  std::vector<int> delta(n + 2, 0);
  for (auto [i, op] : llvm::enumerate(order))
    for (mlir::Value r : op->getResults()) {
      unsigned last = lastUse.lookup(r);
      if (last > i) {
        ++delta[i + 1];
        --delta[last + 1];
      }
    }
  // A parameter read on both sides of c: its first and last readers.
  std::vector<int> split(n + 2, 0);
  llvm::DenseMap<mlir::Operation *, std::pair<unsigned, unsigned>> span;
  for (unsigned i = 0; i < n; ++i)
    for (mlir::Operation *q : params[i]) {
      auto [it, fresh] = span.try_emplace(q, i, i);
      it->second.second = i;
    }
  for (auto &[q, s] : span)
    if (s.second > s.first) {
      ++split[s.first + 1];
      --split[s.second + 1];
    }
  std::vector<int> count(n + 1, 0), splits(n + 1, 0);
  int running = 0, runningSplit = 0;
  for (unsigned c = 0; c <= n; ++c) {
    running += delta[c];
    runningSplit += split[c];
    count[c] = running;
    splits[c] = runningSplit;
  }
  int least = std::numeric_limits<int>::max();
  for (unsigned c = 1; c < n; ++c)
    if (!splits[c])
      least = std::min(least, count[c]);
  std::vector<unsigned> out;
  for (unsigned c = 1; c < n; ++c)
    if (!splits[c] && count[c] == least)
      out.push_back(c);
  return out;
}

mlir::OwningOpRef<mlir::ModuleOp> StageProgram::subProgram(unsigned a,
                                                           unsigned b) const {
  mlir::MLIRContext *ctx = module.getContext();
  mlir::OpBuilder builder(ctx);
  mlir::OwningOpRef<mlir::ModuleOp> sub = mlir::ModuleOp::create(func.getLoc());
  for (mlir::NamedAttribute attr : module->getAttrs())
    if (attr.getName() != "spmd.micro_batches")
      sub->getOperation()->setAttr(attr.getName(), attr.getValue());
  std::vector<mlir::Value> in = crossing(a);
  std::vector<mlir::Value> out;
  if (b >= order.size()) {
    for (mlir::Value v : func.getBody().front().getTerminator()->getOperands())
      out.push_back(v);
  } else {
    out = crossing(b);
  }
  llvm::SmallVector<mlir::Type> inputs(func.getArgumentTypes());
  for (mlir::Value v : in)
    inputs.push_back(v.getType());
  llvm::SmallVector<mlir::Type> results;
  for (mlir::Value v : out)
    results.push_back(v.getType());
  builder.setInsertionPointToEnd(sub->getBody());
  auto main = builder.create<mlir::func::FuncOp>(
      func.getLoc(), "main", builder.getFunctionType(inputs, results));
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (mlir::DictionaryAttr attrs = func.getArgAttrDict(i))
      main.setArgAttrs(i, attrs);
  mlir::Block *entry = main.addEntryBlock();
  builder.setInsertionPointToEnd(entry);
  mlir::IRMapping map;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    map.map(func.getArgument(i), entry->getArgument(i));
  for (auto [i, v] : llvm::enumerate(in))
    map.map(v, entry->getArgument(func.getNumArguments() + i));
  // Leaves are copied where first needed, their own operands first.
  std::function<void(mlir::Value)> need = [&](mlir::Value v) {
    if (map.contains(v))
      return;
    mlir::Operation *def = v.getDefiningOp();
    if (!def || !isLeaf(def))
      return;
    for (mlir::Value operand : def->getOperands())
      need(operand);
    builder.clone(*def, map);
  };
  for (unsigned p = a; p < b && p < order.size(); ++p) {
    for (mlir::Value v : order[p]->getOperands())
      need(v);
    builder.clone(*order[p], map);
  }
  llvm::SmallVector<mlir::Value> returned;
  for (mlir::Value v : out) {
    need(v);
    returned.push_back(map.lookupOrDefault(v));
  }
  builder.create<mlir::func::ReturnOp>(func.getLoc(), returned);
  return sub;
}
