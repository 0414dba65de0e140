//===- Baselines.cpp - DP-EV, DP-CP and TP-DP as spmd programs ------------===//

#include "weft/Baselines/Baselines.h"
#include "Graph/IR/GraphOps.h"
#include "Spmd/IR/SpmdOps.h"
#include "TensorParallel.h"
#include "VariantChooser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include <numeric>

using namespace weft;
using namespace weft::baselines;
using namespace weft::spmd;

llvm::ArrayRef<BaselineKind> weft::allBaselines() {
  static const BaselineKind kinds[] = {
      BaselineKind::DPEven, BaselineKind::DPCompute, BaselineKind::TPDP};
  return kinds;
}

llvm::StringRef weft::baselineName(BaselineKind kind) {
  switch (kind) {
  case BaselineKind::DPEven:
    return "DP-EV";
  case BaselineKind::DPCompute:
    return "DP-CP";
  case BaselineKind::TPDP:
    return "TP-DP";
  }
  return "";
}

namespace {

/// Devices per mesh node: the gcd of the nodes' device counts, so that every
/// cluster node is a whole number of mesh nodes and no device is idle.
int64_t devicesPerMeshNode(const ClusterSpec &spec) {
  int64_t k = 0;
  for (const Node &n : spec.nodes)
    k = std::gcd<int64_t>(k, n.numDevices);
  return std::max<int64_t>(k, 1);
}

/// The mesh of `spec`: cluster nodes in order, each cut into mesh nodes of
/// devicesPerMeshNode devices; one class per cluster device class.
struct ClusterMesh {
  MeshAttr mesh;
  MeshShape shape;
  int64_t devicesPerNode = 0;
};

ClusterMesh meshFor(mlir::MLIRContext *ctx, const ClusterSpec &spec,
                    DType dtype, int64_t tensorParallel) {
  ClusterMesh out;
  out.devicesPerNode = devicesPerMeshNode(spec);
  llvm::SmallVector<int64_t> local{out.devicesPerNode};
  if (tensorParallel > 1)
    local = {out.devicesPerNode / tensorParallel, tensorParallel};
  // Every cluster node is cut into mesh nodes of devicesPerNode devices.
  std::vector<unsigned> classOfMeshNode;
  std::vector<llvm::SmallVector<int64_t>> meshNodesOfClass(spec.classes.size());
  for (const Node &n : spec.nodes) {
    unsigned cls = spec.classOf(n.firstDevice).id;
    for (unsigned r = 0; r < n.numDevices / out.devicesPerNode; ++r) {
      meshNodesOfClass[cls].push_back(classOfMeshNode.size());
      classOfMeshNode.push_back(cls);
    }
  }
  llvm::SmallVector<mlir::Attribute> classes;
  for (const DeviceClass &c : spec.classes) {
    const DeviceType &type = spec.deviceTypes[c.typeIndex];
    classes.push_back(DeviceClassAttr::get(
        ctx, type.name, std::llround(type.peakFlops(dtype) / 1e9),
        std::llround(type.memoryGB * 1000),
        mlir::DenseI64ArrayAttr::get(ctx, meshNodesOfClass[c.id])));
    out.shape.devicesPerClass.push_back(int64_t(meshNodesOfClass[c.id].size()) *
                                        out.devicesPerNode);
  }
  out.mesh = MeshAttr::get(ctx, mlir::DenseI64ArrayAttr::get(ctx, local),
                           mlir::ArrayAttr::get(ctx, classes));
  out.shape.axisSizes.push_back(classOfMeshNode.size());
  out.shape.axisSizes.append(local.begin(), local.end());
  for (unsigned cls : classOfMeshNode)
    for (int64_t l = 0; l < out.devicesPerNode; ++l)
      out.shape.classOfDevice.push_back(cls);
  return out;
}

/// Ratios per class: equal for every device, or proportional to peak.
std::vector<double> batchRatios(const ClusterSpec &spec,
                                const ClusterMesh &mesh, DType dtype,
                                bool proportional) {
  std::vector<double> weight;
  double total = 0;
  for (auto [i, c] : llvm::enumerate(spec.classes)) {
    double w =
        proportional ? spec.deviceTypes[c.typeIndex].peakFlops(dtype) : 1.0;
    weight.push_back(w);
    total += w * mesh.shape.devicesPerClass[i];
  }
  for (double &w : weight)
    w /= total;
  return weight;
}

} // namespace

llvm::Expected<BaselinePlan> weft::buildBaseline(BaselineKind kind,
                                                 mlir::ModuleOp graph,
                                                 const ClusterSpec &spec,
                                                 DType dtype) {
  mlir::MLIRContext *ctx = graph.getContext();
  ctx->getOrLoadDialect<SpmdDialect>();
  auto main = graph.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main || main.isExternal() || main.getNumArguments() == 0)
    return badInput("the model has no @main function with inputs");
  auto first = main.getArgument(0).getType().dyn_cast<mlir::RankedTensorType>();
  if (!first || first.getRank() == 0)
    return badInput("the model's first input has no batch dim");
  int64_t batch = first.getDimSize(0);

  // Tensor parallelism: degree gcd(heads, devices per node), or for models
  // without heads gcd(split extents, devices per node).
  TensorParallelRoles roles;
  int64_t degree = 1;
  int64_t perNode = devicesPerMeshNode(spec);
  if (kind == BaselineKind::TPDP) {
    roles = findTensorParallelRoles(main);
    if (roles.heads > 0)
      degree = std::gcd(roles.heads, perNode);
    else if (!roles.splitExtents.empty()) {
      degree = perNode;
      for (int64_t e : roles.splitExtents)
        degree = std::gcd(degree, e);
    }
  }
  ClusterMesh mesh = meshFor(ctx, spec, dtype, degree);
  SegmentTable segments(ctx, mesh.shape);
  unsigned numAxes = mesh.shape.axisSizes.size();
  // Data parallel over every axis but the tensor-parallel one.
  uint32_t dataAxes = degree > 1 ? 0b011u : (1u << numAxes) - 1;
  std::vector<double> ratios =
      batchRatios(spec, mesh, dtype, kind == BaselineKind::DPCompute);
  int64_t batchSegment = segments.get(batch, ratios, dataAxes);

  spmd::PlanChoice choice;
  choice.mesh = mesh.mesh;
  for (mlir::BlockArgument arg : main.getArguments()) {
    auto type = arg.getType().dyn_cast<mlir::RankedTensorType>();
    llvm::SmallVector<AxisDist> axes(numAxes, AxisDist::identity());
    if (type && type.getRank() > 0 && type.getDimSize(0) == batch)
      for (unsigned a = 0; a < numAxes; ++a)
        if (dataAxes & (1u << a))
          axes[a] = AxisDist::gather(0, batchSegment);
    choice.arguments.push_back(DistAttr::get(ctx, axes));
  }
  if (degree > 1) {
    std::vector<double> even =
        batchRatios(spec, mesh, dtype, /*proportional=*/false);
    unsigned tpAxis = numAxes - 1;
    for (const auto &entry : roles.parameters) {
      const TensorParallelRole &role = entry.getValue();
      if (role.extent % degree || (role.extent / degree) % role.align)
        continue;
      int64_t seg = segments.get(role.extent, even, 1u << tpAxis, role.align);
      auto param = llvm::find_if(main.getOps<weft::graph::ParameterOp>(),
                                 [&](weft::graph::ParameterOp p) {
                                   return p.getName() == entry.getKey();
                                 });
      auto type = (*param).getType().cast<mlir::RankedTensorType>();
      int64_t dim = role.columns ? type.getRank() - 1 : 0;
      llvm::SmallVector<AxisDist> axes(numAxes, AxisDist::identity());
      axes[tpAxis] = AxisDist::gather(dim, seg);
      choice.parameters[entry.getKey()] = {DistAttr::get(ctx, axes),
                                           ParamStrategy::Replicated};
    }
  }

  // New splits (rare: a whole value split for free) are even.
  std::vector<std::vector<double>> fresh(
      numAxes, batchRatios(spec, mesh, dtype, /*proportional=*/false));
  choice.segments.assign(segments.all().begin(), segments.all().end());
  auto plan = spmd::buildProgram(graph, choice, greedyChooser(fresh));
  if (!plan)
    return makeError(ExitInternal, "the {0} plan cannot be built: {1}",
                     baselineName(kind).str(),
                     llvm::toString(plan.takeError()));
  BaselinePlan out{kind, "", std::move(*plan)};
  int64_t devices = mesh.shape.numDevices();
  switch (kind) {
  case BaselineKind::DPEven:
    out.strategy = llvm::formatv("data parallel x{0}, even batch", devices);
    break;
  case BaselineKind::DPCompute:
    out.strategy =
        llvm::formatv("data parallel x{0}, batch by peak FLOP/s", devices);
    break;
  case BaselineKind::TPDP:
    if (degree > 1)
      out.strategy =
          llvm::formatv("tensor parallel x{0} in nodes, data parallel x{1}",
                        degree, devices / degree);
    else if (roles.parameters.empty())
      out.strategy = llvm::formatv(
          "no tensor-parallel split found: data parallel x{0}, even batch",
          devices);
    else
      out.strategy = llvm::formatv("tensor-parallel degree 1 ({0} device(s) "
                                   "per node): data parallel x{1}, even batch",
                                   perNode, devices);
    break;
  }
  return out;
}
