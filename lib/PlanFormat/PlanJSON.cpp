//===- PlanJSON.cpp - A plan as plan.json ---------------------------------===//
//
// docs/PlanFormat.md is the schema; keep the two in step (a lit test reads
// every documented top-level key back from a written plan).
//
//===----------------------------------------------------------------------===//

#include "weft/PlanFormat/PlanJSON.h"
#include "Spmd/IR/SpmdDialect.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace weft;
using namespace weft::spmd;
using llvm::json::Array;
using llvm::json::Object;

std::string weft::distToString(mlir::Attribute dist) {
  std::string text;
  llvm::raw_string_ostream os(text);
  dist.print(os);
  llvm::StringRef s(text);
  // "#spmd.dist<[...]>" -> "[...]"
  if (s.consume_front("#spmd.dist<") && s.consume_back(">"))
    return s.str();
  return text;
}

static Array shapeOf(mlir::Type type) {
  Array dims;
  if (auto ranked = type.dyn_cast<mlir::RankedTensorType>())
    for (int64_t d : ranked.getShape())
      dims.push_back(d);
  return dims;
}

static std::string locationName(mlir::Location loc) {
  if (auto name = loc.dyn_cast<mlir::NameLoc>())
    return name.getName().str();
  if (auto fused = loc.dyn_cast<mlir::FusedLoc>())
    for (mlir::Location inner : fused.getLocations())
      if (auto name = inner.dyn_cast<mlir::NameLoc>())
        return name.getName().str();
  return "";
}

static std::string distOfValue(mlir::Value v, unsigned numAxes) {
  if (DistAttr d = getDist(v))
    return distToString(d);
  return distToString(DistAttr::replicated(v.getContext(), numAxes));
}

static Object devicesAndClasses(const MeshLayout &layout, MeshAttr mesh) {
  Array devices;
  for (unsigned d = 0; d < layout.numDevices(); ++d) {
    Array coords;
    for (unsigned a = 0; a < layout.numAxes(); ++a)
      coords.push_back(layout.coord(d, a));
    devices.push_back(Object{{"mesh_device", d},
                             {"cluster_device", layout.clusterDevice(d)},
                             {"type", layout.typeOf(d).name},
                             {"class", layout.meshClass(d)},
                             {"node", layout.coord(d, 0)},
                             {"coords", std::move(coords)}});
  }
  Array classes;
  for (mlir::Attribute a : mesh.getClasses()) {
    auto c = a.cast<DeviceClassAttr>();
    classes.push_back(
        Object{{"type", c.getType().str()},
               {"peak_flops_per_s", double(c.getPeakGflops()) * 1e9},
               {"memory_bytes", double(c.getMemoryMb()) * 1e6},
               {"nodes", Array(c.getNodes().asArrayRef())}});
  }
  Array axes;
  for (unsigned a = 0; a < layout.numAxes(); ++a)
    axes.push_back(layout.axisSize(a));
  return Object{{"axes", std::move(axes)},
                {"devices", std::move(devices)},
                {"classes", std::move(classes)}};
}

static Array segmentsOf(mlir::ModuleOp plan) {
  Array out;
  auto segments =
      plan->getAttrOfType<mlir::ArrayAttr>(SpmdDialect::kSegmentsAttr);
  if (!segments)
    return out;
  for (mlir::Attribute a : segments) {
    auto s = a.dyn_cast<SegmentAttr>();
    if (!s)
      continue;
    Object seg{{"id", s.getId()},
               {"extent", s.getExtent()},
               {"align", s.getAlign()},
               {"ratios", Array(s.getRatios().asArrayRef())}};
    if (s.getSizes())
      seg["sizes"] = Array(s.getSizes().asArrayRef());
    out.push_back(std::move(seg));
  }
  return out;
}

static Array variantsOf(llvm::StringRef variant) {
  llvm::SmallVector<llvm::StringRef> parts;
  variant.split(parts, ',', -1, /*KeepEmpty=*/false);
  Array out;
  for (llvm::StringRef p : parts)
    out.push_back(p.trim().str());
  return out;
}

/// Ops, parameters and collectives in program order.
static void walkProgram(mlir::func::FuncOp main, unsigned numAxes,
                        const PlanEstimate &estimate, Array &ops,
                        Array &parameters, Array &collectives) {
  size_t nextCollective = 0;
  for (mlir::Operation &op : main.getBody().front()) {
    if (auto param = llvm::dyn_cast<ParameterOp>(&op)) {
      parameters.push_back(Object{
          {"name", param.getName().str()},
          {"shape", shapeOf(param.getType())},
          {"strategy", spmd::stringifyParamStrategy(param.getStrategy()).str()},
          {"dist", distOfValue(param.getResult(), numAxes)}});
      continue;
    }
    if (auto local = llvm::dyn_cast<LocalOp>(&op)) {
      Array operands, results;
      for (mlir::Value v : local.getInputs())
        operands.push_back(distOfValue(v, numAxes));
      for (mlir::Attribute d : local.getDists())
        results.push_back(distToString(d));
      std::string kind;
      for (mlir::Operation &inner : local.getBody().front())
        if (!llvm::isa<YieldOp>(inner))
          kind = inner.getName().getStringRef().str();
      ops.push_back(Object{{"index", int64_t(ops.size())},
                           {"op", kind},
                           {"location", locationName(local.getLoc())},
                           {"variant", variantsOf(local.getVariant())},
                           {"operand_dists", std::move(operands)},
                           {"result_dists", std::move(results)},
                           {"recompute", local.getRecompute()}});
      continue;
    }
    if (op.getNumOperands() == 1 && op.getNumResults() == 1 &&
        op.getDialect() && op.getDialect()->getNamespace() == "spmd") {
      Object c{{"op", op.getName().getStringRef().str()},
               {"before", distOfValue(op.getOperand(0), numAxes)},
               {"after", distOfValue(op.getResult(0), numAxes)},
               {"before_op", int64_t(ops.size())}};
      if (auto axis = op.getAttrOfType<mlir::IntegerAttr>("axis"))
        c["axis"] = axis.getInt();
      if (nextCollective < estimate.collectives.size() &&
          estimate.collectives[nextCollective].op ==
              op.getName().getStringRef()) {
        const CollectiveEstimate &e = estimate.collectives[nextCollective++];
        c["bytes"] = e.bytes;
        c["forward_s"] = e.forwardSeconds;
        c["dual_s"] = e.dualSeconds;
        c["estimate"] = true;
      }
      collectives.push_back(std::move(c));
    }
  }
}

llvm::json::Value weft::planToJSON(mlir::ModuleOp plan,
                                   const MeshLayout &layout,
                                   const PlanEstimate &estimate,
                                   const PlanContext &context) {
  Object root{{"format", "weft-plan"},   {"version", kPlanFormatVersion},
              {"model", context.model},  {"cluster", context.cluster},
              {"dtype", context.dtype},  {"global_batch", context.globalBatch},
              {"source", context.source}};
  if (auto fp =
          plan->getAttrOfType<mlir::StringAttr>(SpmdDialect::kFingerprintAttr))
    root["fingerprint"] = fp.getValue().str();
  // Gradient accumulation: the program is one micro-batch of the step.
  int64_t micro = SpmdDialect::getMicroBatches(plan);
  root["micro_batches"] = micro;
  root["micro_batch"] = context.globalBatch / micro;
  // The gradient sync's bucket size: the plan's, else the default the
  // evaluator and the emitted program use.
  root["gradient_bucket_bytes"] = SpmdDialect::getGradientBucketBytes(
      plan, int64_t(EvalOptions().gradientBucketBytes));
  root["mesh"] = devicesAndClasses(layout, layout.mesh());
  root["segments"] = segmentsOf(plan);

  Array ops, parameters, collectives;
  plan.walk([&](mlir::func::FuncOp main) {
    if (main.getName() == "main")
      walkProgram(main, layout.numAxes(), estimate, ops, parameters,
                  collectives);
  });
  root["ops"] = std::move(ops);
  root["parameters"] = std::move(parameters);
  root["collectives"] = std::move(collectives);

  Array memory;
  for (const DeviceMemoryEstimate &m : estimate.memory)
    memory.push_back(Object{{"mesh_device", m.device},
                            {"type", m.type},
                            {"peak_bytes", m.peakBytes()},
                            {"capacity_bytes", m.capacityBytes},
                            {"fits", m.fits}});
  root["memory"] = std::move(memory);
  root["step_time_s"] = estimate.stepSeconds;
  root["lower_bound_s"] = context.lowerBoundSeconds;
  // A pipelined plan: the step above is the whole pipeline's; each stage
  // with its nodes, devices, per-micro-batch time, peak and bubble.
  if (!estimate.stages.empty()) {
    root["schedule"] = estimate.schedule;
    root["bubble_fraction"] = estimate.bubbleFraction;
    root["stages"] = stagesToJSON(estimate.stages);
  }
  Object baselines;
  for (const auto &[name, seconds] : context.baselines)
    baselines[name] = seconds;
  root["baselines"] = std::move(baselines);
  if (context.searchStepSeconds)
    root["search"] =
        Object{{"step_time_s", *context.searchStepSeconds}, {"estimate", true}};
  if (const auto &s = context.synthesis) {
    Object synth{{"wall_s", s->wallSeconds},
                 {"expansions", int64_t(s->expansions)},
                 {"gap", s->gap},
                 {"capped", s->capped},
                 {"alternations", s->alternations},
                 {"cached", s->cached}};
    if (s->continuousStepSeconds)
      synth["continuous_step_time_s"] = *s->continuousStepSeconds;
    if (s->integerStepSeconds)
      synth["integer_step_time_s"] = *s->integerStepSeconds;
    root["synthesis"] = std::move(synth);
  }
  root["estimate"] = toJSON(estimate);
  return root;
}
