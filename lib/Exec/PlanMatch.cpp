//===- PlanMatch.cpp - Which graph value each plan value holds ------------===//

#include "PlanMatch.h"
#include "Graph/IR/GraphOps.h"
#include "OpUtils.h"
#include "Spmd/IR/SpmdOps.h"
#include "weft/Exec/Interpreter.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringSet.h"
#include <deque>

using namespace weft;
using namespace weft::exec;
namespace g = weft::graph;

static std::string typeString(mlir::Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

llvm::Error PlanMatcher::match() {
  if (graphMain.getNumArguments() != planMain.getNumArguments())
    return badInput("the plan's @main has {0} inputs, the model {1}",
                    planMain.getNumArguments(), graphMain.getNumArguments());
  for (unsigned i = 0; i < graphMain.getNumArguments(); ++i) {
    mlir::Value a = graphMain.getArgument(i), b = planMain.getArgument(i);
    if (a.getType() != b.getType())
      return badInput("input {0} ('{1}') is {2} in the model but {3} in the "
                      "plan",
                      i, inputName(graphMain, i), typeString(a.getType()),
                      typeString(b.getType()));
    toGraph[b] = a;
  }
  // Leaves and compute ops of the model, in program order.
  llvm::StringMap<mlir::Value> leaves;
  std::vector<mlir::Operation *> compute;
  mlir::Value graphLoss;
  for (mlir::Operation &op : graphMain.getBody().front()) {
    if (auto p = llvm::dyn_cast<g::ParameterOp>(op))
      leaves.try_emplace(p.getName(), p.getResult());
    else if (auto b = llvm::dyn_cast<g::BufferOp>(op))
      leaves.try_emplace(b.getName(), b.getResult());
    else if (auto r = llvm::dyn_cast<mlir::func::ReturnOp>(op))
      graphLoss = r.getNumOperands() ? r.getOperand(0) : mlir::Value();
    else
      compute.push_back(&op);
  }
  llvm::StringSet<> seen;
  llvm::DenseSet<mlir::Operation *> usedConstants;
  std::deque<mlir::Value> inFlight;
  size_t k = 0;
  for (mlir::Operation &op : planMain.getBody().front()) {
    if (auto c = llvm::dyn_cast<g::ConstantOp>(op)) {
      // A replicated constant outside any local: the same constant of the
      // model (equal constants are interchangeable).
      mlir::Operation *match = nullptr;
      for (mlir::Operation *o : compute)
        if (llvm::isa<g::ConstantOp>(o) && !usedConstants.contains(o) &&
            o->getAttrDictionary() == c->getAttrDictionary() &&
            o->getResultTypes() == c->getResultTypes()) {
          match = o;
          break;
        }
      if (!match)
        return badInput("{0}: the model has no such constant", describeOp(c));
      usedConstants.insert(match);
      toGraph[c.getResult()] = match->getResult(0);
      continue;
    }
    if (auto p = llvm::dyn_cast<spmd::ParameterOp>(op)) {
      auto it = leaves.find(p.getName());
      if (it == leaves.end())
        return badInput("spmd.parameter '{0}' is not a parameter or buffer "
                        "of the model",
                        p.getName());
      if (it->second.getType() != p.getType())
        return badInput("parameter '{0}' is {1} in the model but {2} in the "
                        "plan",
                        p.getName(), typeString(it->second.getType()),
                        typeString(p.getType()));
      toGraph[p.getResult()] = it->second;
      seen.insert(p.getName());
      continue;
    }
    if (auto local = llvm::dyn_cast<spmd::LocalOp>(op)) {
      mlir::Operation *inner = nullptr;
      for (mlir::Operation &o : local.getBody().front())
        if (!llvm::isa<spmd::YieldOp>(o) && !inner)
          inner = &o;
      // Constants the plan keeps outside locals are matched above.
      while (k < compute.size() && llvm::isa<g::ConstantOp>(compute[k]) &&
             !(inner && llvm::isa<g::ConstantOp>(inner)))
        ++k;
      if (k >= compute.size())
        return badInput("the plan has more compute ops than the model ({0}); "
                        "the extra one is {1}",
                        compute.size(),
                        inner ? describeOp(inner) : std::string("empty"));
      mlir::Operation *want = compute[k++];
      if (!inner || inner->getName() != want->getName())
        return badInput("op {0} of the model is {1}, the plan has {2}", k - 1,
                        describeOp(want),
                        inner ? describeOp(inner) : std::string("nothing"));
      if (inner->getAttrDictionary() != want->getAttrDictionary())
        return badInput("op {0} ({1}): the plan's attributes differ from the "
                        "model's",
                        k - 1, describeOp(want));
      if (inner->getNumOperands() != want->getNumOperands() ||
          inner->getNumResults() != want->getNumResults() ||
          local.getNumResults() != want->getNumResults())
        return badInput("op {0} ({1}): operand or result count differs", k - 1,
                        describeOp(want));
      for (auto [i, pair] : llvm::enumerate(
               llvm::zip(inner->getOperands(), want->getOperands()))) {
        auto [mine, theirs] = pair;
        if (mine.getType() != theirs.getType())
          return badInput("op {0} ({1}): operand {2} is {3} in the model but "
                          "{4} in the plan",
                          k - 1, describeOp(want), i,
                          typeString(theirs.getType()),
                          typeString(mine.getType()));
        auto arg = mine.dyn_cast<mlir::BlockArgument>();
        mlir::Value outer = arg && arg.getOwner() == &local.getBody().front()
                                ? local.getOperand(arg.getArgNumber())
                                : mlir::Value();
        if (!outer || toGraph.lookup(outer) != theirs)
          return badInput("op {0} ({1}): operand {2} is not the model's "
                          "operand",
                          k - 1, describeOp(want), i);
      }
      for (auto [i, pair] :
           llvm::enumerate(llvm::zip(local.getResults(), want->getResults()))) {
        auto [mine, theirs] = pair;
        if (mine.getType() != theirs.getType())
          return badInput("op {0} ({1}): result {2} is {3} in the model but "
                          "{4} in the plan",
                          k - 1, describeOp(want), i,
                          typeString(theirs.getType()),
                          typeString(mine.getType()));
        toGraph[mine] = theirs;
      }
      opToGraph[local] = want;
      graphToOp[want] = local;
      continue;
    }
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      if (ret.getNumOperands() != 1 ||
          toGraph.lookup(ret.getOperand(0)) != graphLoss)
        return badInput("the plan does not return the model's loss");
      continue;
    }
    if (auto send = llvm::dyn_cast<spmd::SendOp>(op)) {
      inFlight.push_back(toGraph.lookup(send.getInput()));
      continue;
    }
    if (auto recv = llvm::dyn_cast<spmd::RecvOp>(op)) {
      // Values arrive in the order they were sent.
      if (inFlight.empty())
        return badInput("{0}: nothing was sent before this recv",
                        describeOp(recv));
      toGraph[recv.getResult()] = inFlight.front();
      inFlight.pop_front();
      continue;
    }
    // A collective: the same value, laid out differently.
    if (op.getNumOperands() == 1 && op.getNumResults() == 1)
      toGraph[op.getResult(0)] = toGraph.lookup(op.getOperand(0));
  }
  while (k < compute.size() && llvm::isa<g::ConstantOp>(compute[k]) &&
         usedConstants.contains(compute[k]))
    ++k;
  if (k != compute.size())
    return badInput("the plan computes {0} ops of the model's {1}; the first "
                    "missing is {2}",
                    k, compute.size(), describeOp(compute[k]));
  for (auto &entry : leaves)
    if (!seen.contains(entry.getKey()) &&
        llvm::isa<g::ParameterOp>(entry.getValue().getDefiningOp()))
      return badInput("parameter '{0}' of the model is not in the plan",
                      entry.getKey());
  return llvm::Error::success();
}
