//===- PlanCheck.h - Verify an spmd plan against its model --------*- C++
//-*-===//
//
// Runs the single-device reference (GraphInterpreter) and the spmd plan on
// N virtual devices (SpmdInterpreter) with the same seeded inputs and
// weights, and compares the loss and every parameter gradient
// (|a − b| ≤ atol + rtol·|b|), the reference taking the plan's side of
// ties at kinks of piecewise ops. When they differ, the first forward value
// (op, result, device) that differs is named; when the forward pass agrees,
// the first op whose own backward computation differs. docs/Exec.md
// describes it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EXEC_PLANCHECK_H
#define WEFT_EXEC_PLANCHECK_H

#include "mlir/IR/BuiltinOps.h"
#include "weft/Exec/SpmdDuals.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weft::exec {

struct PlanCheckOptions {
  /// Seed of random parameters, inputs and dropout masks.
  uint64_t seed = 0;
  /// Tolerances of the loss and gradient comparison.
  double rtol = 1e-4, atol = 1e-6;
  /// Data inputs read from .npy files, by input name.
  llvm::StringMap<std::string> npyFiles;
  /// The collective dual table the spmd backward uses; empty = the real
  /// table (weft::spmd::dualOf). Tests inject wrong duals here.
  DualLookup duals;
  /// Resolve ties at kinks: where an input of a piecewise op (relu, clip,
  /// max, min, compare, max_pool, reduce_max, top2_gating) lies within the
  /// tolerance of a kink in the reference and the plan's value agrees
  /// within the tolerance, the reference takes the plan's value (either
  /// side is right; docs/Exec.md). Off only to show what it prevents.
  bool resolveTies = true;
  /// Testing: a pipelined plan's accumulation leaves out this micro-batch's
  /// parameter gradients (-1: none), to show it is caught.
  int64_t testDropMicroBatch = -1;
};

/// Where the spmd run first differs from the reference.
struct PlanMismatch {
  /// The op: a graph op's description with its location name
  /// (`graph.matmul ("fc1")`), an spmd collective, or `loss`.
  std::string op;
  /// The tensor: `result 0`, `gradient of parameter 'fc1.weight'`, ...
  std::string tensor;
  /// Mesh device (node-major) and the flat element index in its shard.
  unsigned device = 0;
  int64_t element = 0;
  /// The spmd value and the reference value there.
  double got = 0, want = 0;
};

struct PlanCheckResult {
  /// Loss and every parameter gradient agree within the tolerances.
  bool agree = true;
  double referenceLoss = 0, spmdLoss = 0;
  /// max |spmd − reference| of the loss and over every parameter gradient.
  double lossDifference = 0, maxGradientDifference = 0;
  /// The parameter with the largest gradient difference.
  std::string worstParameter;
  /// max |spmd − reference| of each parameter's gradient, in program order.
  std::vector<std::pair<std::string, double>> gradientDifferences;
  unsigned numDevices = 0, numParameters = 0;
  /// Wall seconds of the reference and of the spmd run (forward +
  /// backward).
  double referenceSeconds = 0, spmdSeconds = 0;
  /// Input elements of piecewise ops at which the reference took the plan's
  /// side of a kink, and the number of ops they belong to.
  int64_t tiesResolved = 0;
  unsigned tieOps = 0;
  /// A pipelined plan: the steps in the order they ran (`s1:F0` is the
  /// forward of micro-batch 0 on stage 1, `B` a backward).
  std::string pipelineOrder;
  /// Set when !agree.
  std::optional<PlanMismatch> mismatch;
};

/// Runs `graph` (a graph program with @main) and `plan` (an spmd module made
/// from it) and compares them. Errors: exit code 1 when the plan does not
/// belong to the model (fingerprint, op, shape or parameter mismatch — the
/// first named) or is malformed; other errors as the interpreters report.
llvm::Expected<PlanCheckResult> checkPlan(mlir::ModuleOp graph,
                                          mlir::ModuleOp plan,
                                          const PlanCheckOptions &options);

} // namespace weft::exec

#endif // WEFT_EXEC_PLANCHECK_H
