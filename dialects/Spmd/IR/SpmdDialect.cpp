//===- SpmdDialect.cpp - The spmd dialect and its module attributes -------===//

#include "Spmd/IR/SpmdDialect.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>

using namespace mlir;
using namespace weft::spmd;

#include "Spmd/IR/SpmdDialect.cpp.inc"

void SpmdDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Spmd/IR/SpmdOps.cpp.inc"
      >();
  registerAttributes();
}

/// A double as the shortest readable text ("0.75", "1e-10").
static std::string num(double v) {
  return llvm::formatv("{0}", llvm::format("%g", v)).str();
}

/// Checks one segment against the mesh (docs/Design.md §3.2, §5).
static LogicalResult verifySegment(Operation *op, MeshAttr mesh,
                                   SegmentAttr seg) {
  auto fail = [&]() {
    return op->emitError() << "segment " << seg.getId() << ": ";
  };
  if (seg.getExtent() <= 0)
    return fail() << "extent must be positive";
  ArrayRef<double> ratios = seg.getRatios().asArrayRef();
  if (ratios.size() != mesh.getClasses().size())
    return fail() << "expected " << mesh.getClasses().size()
                  << " ratios (one per device class), found " << ratios.size();
  double total = 0;
  for (auto [i, r] : llvm::enumerate(ratios)) {
    if (r < 0 || std::isnan(r))
      return fail() << "ratio of class " << i << " is " << num(r)
                    << "; ratios must be >= 0";
    auto cls = mesh.getClasses()[i].cast<DeviceClassAttr>();
    total += r * double(cls.getNodes().size()) * mesh.getDevicesPerNode();
  }
  if (std::fabs(total - 1) > 1e-9)
    return fail() << "ratios sum to " << num(total)
                  << " over the mesh's devices, expected 1";
  if (seg.getAlign() < 1)
    return fail() << "align must be >= 1";
  if (!seg.getSizes())
    return success();
  ArrayRef<int64_t> sizes = seg.getSizes().asArrayRef();
  if (int64_t(sizes.size()) != mesh.getNumDevices())
    return fail() << "expected " << mesh.getNumDevices()
                  << " integer sizes (one per device), found " << sizes.size();
  int64_t sum = 0;
  for (auto [d, s] : llvm::enumerate(sizes)) {
    if (s < 0)
      return fail() << "device " << d << " has negative size " << s;
    if (s % seg.getAlign())
      return fail() << "device " << d << " has size " << s
                    << ", not a multiple of the alignment " << seg.getAlign();
    sum += s;
  }
  if (sum != seg.getExtent())
    return fail() << "integer sizes sum to " << sum << ", expected the extent "
                  << seg.getExtent();
  return success();
}

int64_t SpmdDialect::getMicroBatches(Operation *module) {
  auto v = module->getAttrOfType<IntegerAttr>(kMicroBatchesAttr);
  return v && v.getInt() > 0 ? v.getInt() : 1;
}

int64_t SpmdDialect::getGradientBucketBytes(Operation *module, int64_t absent) {
  auto v = module->getAttrOfType<IntegerAttr>(kGradientBucketAttr);
  return v && v.getInt() >= 0 ? v.getInt() : absent;
}

LogicalResult SpmdDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kVersionAttr) {
    auto v = attr.getValue().dyn_cast<IntegerAttr>();
    if (!v || v.getInt() != kFormatVersion)
      return op->emitError()
             << "unsupported plan format version " << attr.getValue()
             << ": this build reads version " << kFormatVersion
             << " (write the plan again with this weftc)";
    return success();
  }
  if (name == kFingerprintAttr) {
    if (!attr.getValue().isa<StringAttr>())
      return op->emitError() << "'" << name << "' must be a string";
    return success();
  }
  if (!isa<ModuleOp>(op))
    return op->emitError() << "'" << name << "' belongs on the module";
  if (name == kScheduleAttr)
    return verifyPipeline(cast<ModuleOp>(op));
  if (name == kStageAttr || name == kNodesAttr) {
    Operation *parent = op->getParentOp();
    if (!parent || !isPipelined(parent))
      return op->emitError()
             << "'" << name << "' belongs on a stage module "
             << "inside a pipelined plan ('" << kScheduleAttr << "')";
    bool ok = name == kStageAttr ? attr.getValue().isa<IntegerAttr>()
                                 : attr.getValue().isa<DenseI64ArrayAttr>();
    if (!ok)
      return op->emitError()
             << "'" << name << "' must be "
             << (name == kStageAttr ? "an i64" : "an array<i64: ...>");
    return success();
  }
  if (name == kMicroBatchesAttr) {
    auto v = attr.getValue().dyn_cast<IntegerAttr>();
    if (!v || !v.getType().isInteger(64) || v.getInt() < 1)
      return op->emitError() << "'" << name << "' must be a positive i64";
    return success();
  }
  if (name == kGradientBucketAttr) {
    auto v = attr.getValue().dyn_cast<IntegerAttr>();
    if (!v || !v.getType().isInteger(64) || v.getInt() < 0)
      return op->emitError() << "'" << name << "' must be a non-negative i64";
    return success();
  }
  if (name == kMeshAttr) {
    if (!attr.getValue().isa<MeshAttr>())
      return op->emitError() << "'" << name << "' must be a #spmd.mesh";
    return success();
  }
  if (name == kSegmentsAttr) {
    auto mesh = op->getAttrOfType<MeshAttr>(kMeshAttr);
    if (!mesh)
      return op->emitError() << "segments need a mesh ('" << kMeshAttr << "')";
    auto segments = attr.getValue().dyn_cast<ArrayAttr>();
    if (!segments)
      return op->emitError() << "'" << name << "' must be an array";
    llvm::SmallSet<int64_t, 16> ids;
    for (Attribute a : segments) {
      auto seg = a.dyn_cast<SegmentAttr>();
      if (!seg)
        return op->emitError() << "expected #spmd.segment, found " << a;
      if (!ids.insert(seg.getId()).second)
        return op->emitError()
               << "segment id " << seg.getId() << " is used twice";
      if (failed(verifySegment(op, mesh, seg)))
        return failure();
    }
    return success();
  }
  return op->emitError() << "unknown spmd attribute '" << name << "'";
}

LogicalResult SpmdDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName().getValue() != kDistAttr)
    return op->emitError() << "unknown spmd argument attribute '"
                           << attr.getName().getValue() << "'";
  auto dist = attr.getValue().dyn_cast<DistAttr>();
  if (!dist)
    return op->emitError() << "'" << kDistAttr << "' must be a #spmd.dist";
  auto func = dyn_cast<func::FuncOp>(op);
  if (!func)
    return success();
  return verifyDist(op, func.getArgumentTypes()[argIndex], dist,
                    "argument #" + std::to_string(argIndex));
}
