//===- StageAssembly.cpp - Stage plans into a pipelined plan --------------===//

#include "StageAssembly.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/BitVector.h"
#include <cmath>
#include <numeric>

using namespace weft;
using namespace weft::spmd;

ClusterSpec synth::subCluster(const ClusterSpec &spec,
                              llvm::ArrayRef<unsigned> clusterNodes,
                              unsigned devicesPerNode) {
  // Nodes larger than devicesPerNode become several nodes of that size.
  std::vector<unsigned> nodes;
  std::vector<unsigned> pieceOf;
  for (unsigned n : clusterNodes) {
    unsigned size = spec.nodes[n].numDevices;
    unsigned pieces =
        devicesPerNode && size > devicesPerNode ? size / devicesPerNode : 1;
    for (unsigned r = 0; r < pieces; ++r) {
      nodes.push_back(n);
      pieceOf.push_back(pieces > 1 ? r : ~0u);
    }
  }
  ClusterSpec sub;
  sub.name = spec.name;
  sub.fileName = spec.fileName;
  sub.deviceTypes = spec.deviceTypes;
  sub.topology.numSpines = spec.topology.numSpines;
  sub.topology.spineLatencyUs = spec.topology.spineLatencyUs;
  std::map<int, int> leafOf;
  for (auto [i, n] : llvm::enumerate(nodes)) {
    Node node = spec.nodes[n];
    if (pieceOf[i] != ~0u) {
      node.name += "/" + std::to_string(pieceOf[i]);
      node.numDevices = devicesPerNode;
    }
    node.firstDevice = sub.devices.size();
    unsigned index = sub.nodes.size();
    if (node.leafIndex >= 0) {
      auto [it, fresh] =
          leafOf.try_emplace(node.leafIndex, int(sub.topology.leaves.size()));
      if (fresh) {
        LeafSwitch leaf = spec.topology.leaves[node.leafIndex];
        leaf.nodes.clear();
        sub.topology.leaves.push_back(leaf);
      }
      node.leafIndex = it->second;
      sub.topology.leaves[it->second].nodes.push_back(index);
    }
    for (unsigned d = 0; d < node.numDevices; ++d) {
      Device dev;
      dev.id = sub.devices.size();
      dev.node = index;
      dev.localRank = d;
      sub.devices.push_back(dev);
    }
    sub.nodes.push_back(std::move(node));
  }
  // Classes as the cluster's, members renumbered; those without members
  // dropped.
  std::map<unsigned, unsigned> classOf;
  for (auto [index, n] : llvm::enumerate(nodes)) {
    unsigned old = spec.classOf(spec.nodes[n].firstDevice).id;
    auto [it, fresh] = classOf.try_emplace(old, sub.classes.size());
    if (fresh) {
      DeviceClass c = spec.classes[old];
      c.id = it->second;
      c.devices.clear();
      c.nodes.clear();
      sub.classes.push_back(std::move(c));
    }
    DeviceClass &c = sub.classes[it->second];
    const Node &node = sub.nodes[index];
    c.devicesPerNode = node.numDevices;
    c.nodes.push_back(index);
    for (unsigned d = 0; d < node.numDevices; ++d) {
      sub.devices[node.firstDevice + d].deviceClass = c.id;
      c.devices.push_back(node.firstDevice + d);
    }
  }
  return sub;
}

std::vector<unsigned> synth::meshNodesOf(const ClusterSpec &spec,
                                         llvm::ArrayRef<unsigned> nodes) {
  int64_t k = devicesPerMeshNode(spec);
  std::vector<unsigned> first(spec.numNodes() + 1, 0);
  for (unsigned n = 0; n < spec.numNodes(); ++n)
    first[n + 1] = first[n] + spec.nodes[n].numDevices / k;
  std::vector<unsigned> out;
  for (unsigned n : nodes)
    for (unsigned m = first[n]; m < first[n + 1]; ++m)
      out.push_back(m);
  return out;
}

int64_t synth::devicesPerMeshNode(const ClusterSpec &spec) {
  int64_t k = 0;
  for (const Node &n : spec.nodes)
    k = std::gcd<int64_t>(k, n.numDevices);
  return std::max<int64_t>(k, 1);
}

MeshAttr synth::clusterMesh(mlir::MLIRContext *ctx, const ClusterSpec &spec,
                            DType dtype) {
  int64_t k = devicesPerMeshNode(spec);
  std::vector<llvm::SmallVector<int64_t>> nodesOfClass(spec.classes.size());
  int64_t meshNode = 0;
  for (const Node &n : spec.nodes) {
    unsigned cls = spec.classOf(n.firstDevice).id;
    for (unsigned r = 0; r < n.numDevices / k; ++r)
      nodesOfClass[cls].push_back(meshNode++);
  }
  llvm::SmallVector<mlir::Attribute> classes;
  for (const DeviceClass &c : spec.classes) {
    const DeviceType &type = spec.deviceTypes[c.typeIndex];
    classes.push_back(DeviceClassAttr::get(
        ctx, type.name, std::llround(type.peakFlops(dtype) / 1e9),
        std::llround(type.memoryGB * 1000),
        mlir::DenseI64ArrayAttr::get(ctx, nodesOfClass[c.id])));
  }
  return MeshAttr::get(ctx, mlir::DenseI64ArrayAttr::get(ctx, {k}),
                       mlir::ArrayAttr::get(ctx, classes));
}

/// The value to send for `v`: before the relayouts that made it
/// replicated, as long as those are not partial.
static mlir::Value sendable(mlir::Value v) {
  while (mlir::Operation *def = v.getDefiningOp()) {
    if (llvm::isa<LocalOp, ParameterOp, RecvOp>(def) || !def->getDialect() ||
        def->getDialect()->getNamespace() != "spmd" ||
        def->getNumOperands() != 1 || def->getNumResults() != 1)
      break;
    mlir::Value from = def->getOperand(0);
    DistAttr dist = getDist(from);
    if (from.getType() != v.getType() || !dist || dist.isPartial())
      break;
    v = from;
  }
  return v;
}

llvm::Error synth::makeStageModule(mlir::ModuleOp plan, unsigned index,
                                   unsigned stages, unsigned crossingArgs,
                                   llvm::ArrayRef<unsigned> nodes) {
  auto main = plan.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main || main.isExternal())
    return makeError(ExitInternal, "stage {0}: the plan has no @main", index);
  mlir::MLIRContext *ctx = plan.getContext();
  mlir::OpBuilder b(ctx);
  mlir::Block &entry = main.getBody().front();
  b.setInsertionPointToStart(&entry);
  unsigned numArgs = main.getNumArguments();
  llvm::BitVector erase(numArgs);
  for (unsigned i = numArgs - crossingArgs; i < numArgs; ++i) {
    mlir::BlockArgument arg = main.getArgument(i);
    auto recv =
        b.create<RecvOp>(arg.getLoc(), arg.getType(),
                         b.getI64IntegerAttr(int64_t(index) - 1), getDist(arg));
    arg.replaceAllUsesWith(recv.getResult());
    erase.set(i);
  }
  main.eraseArguments(erase);
  if (index + 1 < stages) {
    auto ret = llvm::cast<mlir::func::ReturnOp>(entry.getTerminator());
    b.setInsertionPoint(ret);
    for (mlir::Value v : ret.getOperands())
      b.create<SendOp>(ret.getLoc(), sendable(v),
                       b.getI64IntegerAttr(int64_t(index) + 1));
    b.create<mlir::func::ReturnOp>(ret.getLoc());
    ret.erase();
    main.setType(b.getFunctionType(main.getArgumentTypes(), {}));
    main->removeAttr("res_attrs");
    // The relayouts to replicated that nothing reads any more.
    for (mlir::Operation &op :
         llvm::make_early_inc_range(llvm::reverse(entry.getOperations())))
      if (op.getDialect() && op.getDialect()->getNamespace() == "spmd" &&
          !llvm::isa<LocalOp, ParameterOp, SendOp, RecvOp>(op) &&
          op.use_empty() && op.getNumResults() > 0)
        op.erase();
  }
  for (llvm::StringRef name :
       {SpmdDialect::kFingerprintAttr, SpmdDialect::kVersionAttr,
        SpmdDialect::kMicroBatchesAttr})
    plan->removeAttr(name);
  plan.setSymNameAttr(b.getStringAttr("stage" + std::to_string(index)));
  plan->setAttr(SpmdDialect::kStageAttr, b.getI64IntegerAttr(index));
  llvm::SmallVector<int64_t> ids(nodes.begin(), nodes.end());
  plan->setAttr(SpmdDialect::kNodesAttr, b.getDenseI64ArrayAttr(ids));
  return llvm::Error::success();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
synth::assemblePipeline(MeshAttr mesh, int64_t microBatches,
                        std::vector<mlir::OwningOpRef<mlir::ModuleOp>> stages,
                        llvm::StringRef fingerprint) {
  mlir::MLIRContext *ctx = mesh.getContext();
  mlir::OpBuilder b(ctx);
  mlir::OwningOpRef<mlir::ModuleOp> plan =
      mlir::ModuleOp::create(b.getUnknownLoc());
  plan->getOperation()->setAttr(SpmdDialect::kMeshAttr, mesh);
  plan->getOperation()->setAttr(SpmdDialect::kFingerprintAttr,
                                b.getStringAttr(fingerprint));
  plan->getOperation()->setAttr(
      SpmdDialect::kVersionAttr,
      b.getI64IntegerAttr(SpmdDialect::kFormatVersion));
  plan->getOperation()->setAttr(SpmdDialect::kMicroBatchesAttr,
                                b.getI64IntegerAttr(microBatches));
  plan->getOperation()->setAttr(SpmdDialect::kScheduleAttr,
                                b.getStringAttr("1f1b"));
  for (auto &stage : stages)
    plan->getBody()->push_back(stage.release());
  std::string message;
  mlir::ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic &diag) {
    if (message.empty())
      message = diag.str();
    return mlir::success();
  });
  if (mlir::failed(mlir::verify(*plan)))
    return makeError(ExitInternal,
                     "the assembled pipelined plan does not verify: {0}",
                     message);
  return plan;
}
