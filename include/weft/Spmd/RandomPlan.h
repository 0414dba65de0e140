//===- RandomPlan.h - Random meshes, graph programs and valid plans -*- C++
//-*-===//
//
// Seeded generators for property tests (issue 6 item 4, issue 7 item 6):
//
//  - `randomMesh`: a heterogeneous mesh of 2–8 devices (1–3 device classes,
//    multi-device nodes, one or two local factors);
//  - `randomGraphProgram`: a small graph program (text, parsed) chaining
//    embedding lookups, matmuls, bias and residual adds, ReLU, softmax,
//    layer norm, reshapes and transposes, a mean reduction and a
//    cross-entropy loss, with small extents (often prime, so not divisible by
//    the device count, and sometimes 1);
//  - `randomPlan`: a random VALID plan of a graph program on a mesh: random
//    argument and parameter distributions and strategies, and per op and
//    axis a random sharding variant among those whose preconditions the
//    operands can reach by relayout, with random integer shard sizes (a
//    device or a whole class holding 0, shards of size 1).
//
// Everything is a pure function of the seed.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_SPMD_RANDOMPLAN_H
#define WEFT_SPMD_RANDOMPLAN_H

#include "weft/Spmd/ProgramBuilder.h"
#include <cstdint>
#include <string>
#include <vector>

namespace weft::spmd {

/// A random mesh of `minDevices`..`maxDevices` devices.
MeshAttr randomMesh(mlir::MLIRContext *ctx, uint64_t seed,
                    unsigned minDevices = 2, unsigned maxDevices = 8);

/// The text of a random graph program (`func.func @main` returning a scalar
/// loss).
std::string randomGraphProgramText(uint64_t seed);

/// `randomGraphProgramText` parsed (the graph and func dialects are loaded).
mlir::OwningOpRef<mlir::ModuleOp> randomGraphProgram(mlir::MLIRContext *ctx,
                                                     uint64_t seed);

/// Knobs of `randomPlan`.
struct RandomPlanOptions {
  /// Probability that an op axis takes its replicate variant when others are
  /// reachable.
  double replicateProbability = 0.25;
  /// Probability that a function argument / parameter axis is split.
  double splitProbability = 0.4;
  /// Probability that a new segment gives one device class nothing.
  double zeroClassProbability = 0.25;
  /// Variant names never chosen (their op is then computed by another
  /// variant), e.g. to keep a known interpreter gap out of a property run.
  std::vector<std::string> excludedVariants;
};

/// A random plan and what it was built from.
struct RandomPlan {
  PlanChoice choice;
  mlir::OwningOpRef<mlir::ModuleOp> plan;
};

/// A random valid plan of `graph` on `mesh`, built (and verified) with
/// `buildProgram`. An error means the generator or the builder is wrong.
llvm::Expected<RandomPlan> randomPlan(mlir::ModuleOp graph, MeshAttr mesh,
                                      uint64_t seed,
                                      const RandomPlanOptions &options = {});

} // namespace weft::spmd

#endif // WEFT_SPMD_RANDOMPLAN_H
