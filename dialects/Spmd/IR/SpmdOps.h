//===- SpmdOps.h - The spmd dialect's operations -----------------*- C++
//-*-===//

#ifndef WEFT_SPMD_IR_SPMDOPS_H
#define WEFT_SPMD_IR_SPMDOPS_H

#include "Spmd/IR/SpmdAttrs.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "Spmd/IR/SpmdOps.h.inc"

namespace weft::spmd {

/// The mesh of the module holding `op`, or null.
MeshAttr getMesh(mlir::Operation *op);

/// The segment `id` of the module holding `op`, or null.
SegmentAttr lookupSegment(mlir::Operation *op, int64_t id);

/// The distribution of `value`: from its defining spmd op, or its function
/// argument attribute; values without one (constants) are replicated.
/// Null when no mesh is in scope.
DistAttr getDist(mlir::Value value);

/// Checks that `dist` is a valid distribution of a value of type `type` in
/// the module of `op`; emits an error on `op` naming `what` otherwise.
mlir::LogicalResult verifyDist(mlir::Operation *op, mlir::Type type,
                               DistAttr dist, llvm::StringRef what);

/// Whether `module` is a pipelined plan (has `spmd.schedule`,
/// docs/Pipeline.md).
bool isPipelined(mlir::Operation *module);

/// The stage modules of a pipelined plan, in order (none for a
/// single-stage plan).
llvm::SmallVector<mlir::ModuleOp> getStages(mlir::ModuleOp module);

/// Checks the stage structure of a pipelined plan (docs/Pipeline.md);
/// emits one error naming the op otherwise.
mlir::LogicalResult verifyPipeline(mlir::ModuleOp module);

} // namespace weft::spmd

#endif // WEFT_SPMD_IR_SPMDOPS_H
