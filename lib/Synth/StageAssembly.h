//===- StageAssembly.h - Stage plans into a pipelined plan (lib/Synth) -*- C++
//-*-===//
//
// docs/Pipeline.md "Synthesis": a stage's sub-cluster (the cluster's nodes
// of its group), the cluster's mesh, a synthesised stage plan turned into a
// stage module (crossing arguments become spmd.recv, crossing results
// spmd.send) and the stage modules assembled into one pipelined plan.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SYNTH_STAGEASSEMBLY_H
#define WEFT_LIB_SYNTH_STAGEASSEMBLY_H

#include "Spmd/IR/SpmdAttrs.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "weft/Cluster/ClusterSpec.h"
#include "llvm/Support/Error.h"
#include <vector>

namespace weft::synth {

/// The cluster of `spec`'s nodes `nodes` (ascending), renumbered from 0:
/// devices, classes and leaf switches (with their uplinks) rebuilt. A node
/// of more than `devicesPerNode` devices (when not 0) becomes several
/// nodes of that many, so that the stage's mesh has the cluster mesh's
/// node size; the search then prices the links between those pieces as
/// the NIC's (an approximation; the evaluator prices the plan on the
/// cluster).
ClusterSpec subCluster(const ClusterSpec &spec, llvm::ArrayRef<unsigned> nodes,
                       unsigned devicesPerNode = 0);

/// Devices per mesh node of `spec`: the gcd of its nodes' device counts.
int64_t devicesPerMeshNode(const ClusterSpec &spec);

/// The mesh nodes of clusterMesh(spec) on cluster nodes `nodes`.
std::vector<unsigned> meshNodesOf(const ClusterSpec &spec,
                                  llvm::ArrayRef<unsigned> nodes);

/// The mesh synthesize() gives `spec` (one node axis of mesh nodes of
/// devicesPerMeshNode devices, one class per cluster class), peak FLOP/s
/// in `dtype`.
spmd::MeshAttr clusterMesh(mlir::MLIRContext *ctx, const ClusterSpec &spec,
                           DType dtype);

/// Turns `plan`, synthesised for a stage sub-program whose last
/// `crossingArgs` arguments are activations from the previous stage, into
/// stage `index` of `stages` on mesh nodes `nodes` of the cluster's mesh
/// (clusterMesh): those arguments
/// become spmd.recv, and unless it is the last stage its results become
/// spmd.send of the values before the final relayouts to replicated.
llvm::Error makeStageModule(mlir::ModuleOp plan, unsigned index,
                            unsigned stages, unsigned crossingArgs,
                            llvm::ArrayRef<unsigned> nodes);

/// The pipelined plan of `stages` (stage modules, moved in), on `mesh`,
/// running `microBatches` micro-batches under 1F1B; verified.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
assemblePipeline(spmd::MeshAttr mesh, int64_t microBatches,
                 std::vector<mlir::OwningOpRef<mlir::ModuleOp>> stages,
                 llvm::StringRef fingerprint);

} // namespace weft::synth

#endif // WEFT_LIB_SYNTH_STAGEASSEMBLY_H
