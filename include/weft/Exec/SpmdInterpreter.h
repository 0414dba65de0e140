//===- SpmdInterpreter.h - Run an spmd plan on N virtual devices --*- C++
//-*-===//
//
// Executes `func.func @main` of an spmd module on every device of its mesh,
// all in one process, op by op in lockstep: each device holds its own shard
// of every value (integer segment sizes, uneven and zero allowed, placed by
// ShardGeometry), `spmd.local` runs its graph op's per-axis recipes on the
// shards (docs/ShardingRules.md), collectives move data with exact
// semantics. The backward pass runs the program in reverse under the
// partial-sum convention (docs/Duals.md): each collective's backward from
// the dual table, parameter gradients synchronised per storage strategy.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EXEC_SPMDINTERPRETER_H
#define WEFT_EXEC_SPMDINTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "weft/Exec/Interpreter.h"
#include "weft/Exec/SpmdDuals.h"
#include "weft/Exec/Tensor.h"
#include "weft/Spmd/ShardGeometry.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"
#include <deque>
#include <memory>
#include <vector>

namespace weft::exec {

/// The shards of one distributed value, one per mesh device.
struct DistValue {
  spmd::DistAttr dist;
  std::vector<Tensor> shards;
  /// When not empty, device x reads device alias[x]'s shard (equal values,
  /// e.g. a replicated parameter stored once); shards of aliased devices
  /// are left empty. Read shards with shard(x).
  std::vector<unsigned> alias;

  const Tensor &shard(unsigned x) const {
    return alias.empty() ? shards[x] : shards[alias[x]];
  }
  /// Every device's shard as its own tensor (copies aliased ones).
  std::vector<Tensor> materialized() const {
    if (alias.empty())
      return shards;
    std::vector<Tensor> out;
    for (unsigned x = 0; x < shards.size(); ++x)
      out.push_back(shard(x));
    return out;
  }
};

/// A parameter's synchronised gradient on every device: the gradient of the
/// device's stored shard, valid in the flat element range [begin, end) of
/// the shard (ZeRO-1/2 keep a reduce-scattered part; others all of it).
struct ParameterGradient {
  std::string name;
  spmd::DistAttr dist;
  std::string strategy;
  std::vector<Tensor> shards;
  std::vector<std::pair<int64_t, int64_t>> ranges;
};

struct SpmdRunOptions {
  /// Seed of dropout masks (the reference's).
  uint64_t seed = 0;
  /// The collective dual table (empty: the real one).
  DualLookup duals;
  /// Graph input names of @main's arguments, in order (the reference's
  /// `graph.input` names); "arg<i>" when empty.
  std::vector<std::string> inputNames;
  /// The reference's number of the plan's first dropout (a later stage of
  /// a pipelined plan starts after the earlier stages' dropouts).
  uint64_t firstDropoutId = 0;
  /// Keep the gradient of every value after the backward pass (for
  /// locating the first differing gradient; costs memory).
  bool keepGradients = false;
};

class SpmdInterpreter {
public:
  /// Checks the plan's shape (mesh, segments, one graph op per local,
  /// known variants) and prepares the per-device recipes. Errors: exit
  /// code 1.
  static llvm::Expected<std::unique_ptr<SpmdInterpreter>>
  create(mlir::ModuleOp plan, SpmdRunOptions options);
  ~SpmdInterpreter();

  const spmd::ShardGeometry &geometry() const;
  mlir::func::FuncOp getMain();

  /// Runs the forward pass; `whole` holds the unsharded values of inputs,
  /// parameters and buffers (the reference's bindings): every device takes
  /// its shard. Errors name the op (exit code 1 for bad shapes, 3 when a
  /// local op cannot run on the shards the plan gives it).
  llvm::Error forward(const Bindings &whole);
  /// The loss: the returned value on device 0, combined over its partial
  /// axes.
  double getLoss() const;
  /// Shards of `v` from the last forward pass, or nullptr.
  const DistValue *lookup(mlir::Value v) const;

  /// Reverse pass from the loss (seed 1/|id group| per device) and the
  /// parameter gradient synchronisation.
  llvm::Error backward();
  /// With `keepGradients`: the per-device gradient of `v` (before any
  /// parameter synchronisation; partial over `v`'s id axes), or nullptr.
  const std::vector<Tensor> *lookupGradient(mlir::Value v) const;
  /// With `keepGradients`: what the backward of `op` added to the gradient
  /// of its operand `operand` (per device, in that operand's layout; for an
  /// spmd.local, `operand` indexes its graph op's operands), or nullptr when
  /// it added nothing.
  const std::vector<Tensor> *lookupContribution(mlir::Operation *op,
                                                unsigned operand) const;
  /// Runs the plan as one stage of a pipelined plan (docs/Pipeline.md):
  /// @main may return nothing (no loss; the backward pass starts from the
  /// gradients of its sends), recvs read inbox() and sends read their
  /// gradients from gradientInbox(), both already in the op's layout.
  void setStage();
  /// Values of the sends of the last forward pass, in program order.
  std::deque<DistValue> &sentValues();
  /// Values the recvs of the next forward pass read, in program order.
  std::deque<DistValue> &inbox();
  /// Gradients of the recvs' results after the backward pass, in program
  /// order (laid out as the recv's result).
  std::deque<DistValue> &gradientsSentBack();
  /// Gradients of the sends' inputs the next backward pass reads, in
  /// program order.
  std::deque<DistValue> &gradientInbox();

  /// Synchronised gradients of trainable parameters, in program order.
  const std::vector<ParameterGradient> &getParameterGradients() const;

private:
  SpmdInterpreter();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace weft::exec

#endif // WEFT_EXEC_SPMDINTERPRETER_H
