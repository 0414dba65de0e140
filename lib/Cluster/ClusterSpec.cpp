//===- ClusterSpec.cpp - Build a ClusterSpec from its YAML form
//------------===//
//
// Turns the checked raw spec into nodes, devices, device classes and the
// topology: applies device-type overrides, expands `count:`, fills links from
// `defaults`, and groups interchangeable devices into classes.
//
//===----------------------------------------------------------------------===//

#include "weft/Cluster/ClusterSpec.h"
#include "SpecYaml.h"
#include "weft/Cluster/SpecBuild.h"
#include "weft/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <map>
#include <tuple>

using namespace weft;
using namespace weft::detail;

const DeviceType &ClusterSpec::typeOf(unsigned deviceId) const {
  return deviceTypes[nodeOf(deviceId).typeIndex];
}

const Node &ClusterSpec::nodeOf(unsigned deviceId) const {
  return nodes[devices[deviceId].node];
}

const DeviceClass &ClusterSpec::classOf(unsigned deviceId) const {
  return classes[devices[deviceId].deviceClass];
}

const DeviceType *ClusterSpec::findType(llvm::StringRef name) const {
  for (const DeviceType &t : deviceTypes)
    if (t.name == name)
      return &t;
  return nullptr;
}

double ClusterSpec::totalPeakFlops(DType dtype) const {
  double total = 0;
  for (const Node &n : nodes)
    total += n.numDevices * deviceTypes[n.typeIndex].peakFlops(dtype);
  return total;
}

std::map<std::string, unsigned> ClusterSpec::gpuCountsByType() const {
  std::map<std::string, unsigned> counts;
  for (const Node &n : nodes)
    counts[n.deviceType] += n.numDevices;
  return counts;
}

std::map<std::string, unsigned> ClusterSpec::gpuCountsByGavelName() const {
  std::map<std::string, unsigned> counts;
  for (const Node &n : nodes)
    counts[deviceTypes[n.typeIndex].gavelName] += n.numDevices;
  return counts;
}

/// Applies the overrides of `raw` on top of `base`.
static DeviceType applyOverrides(DeviceType t, const RawDeviceType &raw) {
  t.name = raw.name;
  if (raw.fp32)
    t.fp32Tflops = raw.fp32->flops / 1e12;
  if (raw.fp16)
    t.fp16Tflops = raw.fp16->flops / 1e12;
  if (raw.bf16)
    t.bf16Tflops = raw.bf16->flops / 1e12;
  if (raw.memory)
    t.memoryGB = raw.memory->bytes / 1e9;
  if (raw.memBandwidth)
    t.memBandwidthGBps = raw.memBandwidth->bytesPerSec / 1e9;
  if (raw.memEfficiency)
    t.memEfficiency = raw.memEfficiency->value;
  auto apply = [](const std::optional<RawEfficiencies> &from,
                  std::array<double, kNumOpClasses> &to) {
    for (unsigned i = 0; from && i < kNumOpClasses; ++i)
      if (from->perClass[i])
        to[i] = from->perClass[i]->value;
  };
  apply(raw.efficiency, t.efficiency.fp32);
  apply(raw.fp16Efficiency, t.efficiency.fp16);
  apply(raw.bf16Efficiency, t.efficiency.bf16);
  if (raw.gavelName)
    t.gavelName = *raw.gavelName;
  return t;
}

/// A type the spec defines from scratch: missing peaks fall back to fp32,
/// efficiencies to a generic GPU profile.
static DeviceType newType(const RawDeviceType &raw) {
  DeviceType t;
  t.fp32Tflops = raw.fp32->flops / 1e12;
  t.fp16Tflops = t.bf16Tflops = t.fp32Tflops;
  t.memEfficiency = 0.85;
  t.efficiency.fp32 = {0.7, 0.6, 0.5, 0.4, 0.25, 0.25};
  t.efficiency.fp16 = t.efficiency.bf16 = t.efficiency.fp32;
  t.gavelName = llvm::StringRef(raw.name).lower();
  t.source = "defined in the cluster spec";
  return applyOverrides(t, raw);
}

/// Resolves the spec's device types into `types` by name.
static void resolveTypes(const RawSpec &raw,
                         std::map<std::string, DeviceType> &types) {
  for (const RawDeviceType &r : raw.deviceTypes) {
    std::string baseName = r.base ? r.base->name : r.name;
    const DeviceType *base = nullptr;
    auto it = types.find(baseName);
    if (it != types.end() && r.base)
      base = &it->second;
    else
      base = lookupDeviceType(baseName);
    DeviceType t = base ? applyOverrides(*base, r) : newType(r);
    if (base)
      t.source = "spec override of " + base->name + ": " + base->source;
    types[r.name] = std::move(t);
  }
}

/// The type a node names: the spec's own definition first, then the
/// catalog. Returns its index in spec.deviceTypes, adding it on first use.
static unsigned typeIndexFor(llvm::StringRef name,
                             const std::map<std::string, DeviceType> &defined,
                             ClusterSpec &spec) {
  const DeviceType *t = nullptr;
  auto it = defined.find(name.str());
  if (it != defined.end())
    t = &it->second;
  // Catalog names are case-insensitive, so "v100" also finds an override of
  // "V100".
  for (const auto &[definedName, type] : defined)
    if (!t && name.equals_insensitive(definedName))
      t = &type;
  if (!t)
    t = lookupDeviceType(name);
  for (unsigned i = 0; i < spec.deviceTypes.size(); ++i)
    if (spec.deviceTypes[i].name == t->name)
      return i;
  spec.deviceTypes.push_back(*t);
  return spec.deviceTypes.size() - 1;
}

/// Sets a leaf's uplink from either its uplink bandwidth or its
/// oversubscription (default 1: non-blocking), given the NICs below it.
static void sizeUplink(LeafSwitch &leaf, const ClusterSpec &spec,
                       const std::optional<Bandwidth> &uplink,
                       const std::optional<PositiveNumber> &oversubscription) {
  double down = 0;
  for (unsigned n : leaf.nodes)
    down += spec.nodes[n].nicBandwidthGbps;
  if (uplink) {
    leaf.uplinkBandwidthGbps = uplink->bytesPerSec * 8 / 1e9;
    leaf.oversubscription = down / leaf.uplinkBandwidthGbps;
    return;
  }
  leaf.oversubscription = oversubscription ? oversubscription->value : 1.0;
  leaf.uplinkBandwidthGbps = down / leaf.oversubscription;
}

static void buildTopology(const RawSpec &raw, ClusterSpec &spec) {
  if (!raw.topology)
    return;
  const RawTopology &rt = *raw.topology;
  Topology &topo = spec.topology;
  topo.numSpines = rt.spines ? rt.spines->value : 1;
  topo.spineLatencyUs = rt.spineLatency ? rt.spineLatency->seconds * 1e6 : 0;
  if (rt.nodesPerLeaf) {
    unsigned perLeaf = rt.nodesPerLeaf->value;
    for (unsigned i = 0; i < spec.nodes.size(); ++i) {
      if (i % perLeaf == 0) {
        topo.leaves.emplace_back();
        topo.leaves.back().name = "leaf-" + std::to_string(i / perLeaf);
      }
      spec.nodes[i].leaf = topo.leaves.back().name;
      spec.nodes[i].leafIndex = topo.leaves.size() - 1;
      topo.leaves.back().nodes.push_back(i);
    }
    for (LeafSwitch &leaf : topo.leaves)
      sizeUplink(leaf, spec, rt.uplinkBandwidth, rt.oversubscription);
    return;
  }
  for (const RawLeaf &r : rt.leaves) {
    topo.leaves.emplace_back();
    topo.leaves.back().name = r.name;
  }
  for (unsigned i = 0; i < spec.nodes.size(); ++i) {
    Node &n = spec.nodes[i];
    for (unsigned l = 0; l < topo.leaves.size(); ++l)
      if (topo.leaves[l].name == n.leaf)
        n.leafIndex = l;
    if (n.leafIndex >= 0)
      topo.leaves[n.leafIndex].nodes.push_back(i);
  }
  for (unsigned l = 0; l < topo.leaves.size(); ++l)
    sizeUplink(topo.leaves[l], spec, rt.leaves[l].uplinkBandwidth,
               rt.leaves[l].oversubscription);
}

void weft::appendNode(ClusterSpec &spec, Node node) {
  node.firstDevice = spec.devices.size();
  for (unsigned d = 0; d < node.numDevices; ++d) {
    Device dev;
    dev.id = spec.devices.size();
    dev.node = spec.nodes.size();
    dev.localRank = d;
    spec.devices.push_back(dev);
  }
  spec.nodes.push_back(std::move(node));
}

void weft::buildDeviceClasses(ClusterSpec &spec) {
  using Key = std::tuple<unsigned, unsigned, double, double, double, double>;
  std::map<Key, unsigned> classOfKey;
  for (unsigned i = 0; i < spec.nodes.size(); ++i) {
    const Node &n = spec.nodes[i];
    Key key{n.typeIndex,      n.numDevices,       n.intraBandwidthGBps,
            n.intraLatencyUs, n.nicBandwidthGbps, n.nicLatencyUs};
    auto [it, inserted] = classOfKey.try_emplace(key, spec.classes.size());
    if (inserted) {
      DeviceClass c;
      c.id = it->second;
      c.deviceType = n.deviceType;
      c.typeIndex = n.typeIndex;
      c.devicesPerNode = n.numDevices;
      c.intraBandwidthGBps = n.intraBandwidthGBps;
      c.intraLatencyUs = n.intraLatencyUs;
      c.nicBandwidthGbps = n.nicBandwidthGbps;
      c.nicLatencyUs = n.nicLatencyUs;
      spec.classes.push_back(c);
    }
    DeviceClass &c = spec.classes[it->second];
    c.nodes.push_back(i);
    for (unsigned d = 0; d < n.numDevices; ++d) {
      spec.devices[n.firstDevice + d].deviceClass = c.id;
      c.devices.push_back(n.firstDevice + d);
    }
  }
}

static ClusterSpec buildSpec(const RawSpec &raw, llvm::StringRef fileName) {
  ClusterSpec spec;
  spec.fileName = fileName.str();
  spec.name = raw.name ? *raw.name : llvm::sys::path::stem(fileName).str();
  std::map<std::string, DeviceType> defined;
  resolveTypes(raw, defined);
  RawLinks defaults = raw.defaults ? *raw.defaults : RawLinks();
  for (const RawNode &r : raw.nodes) {
    unsigned count = r.count ? r.count->value : 1;
    auto pick = [](const auto &own, const auto &fallback) {
      return own ? own : fallback;
    };
    auto intraBW = pick(r.links.intraBandwidth, defaults.intraBandwidth);
    auto intraLat = pick(r.links.intraLatency, defaults.intraLatency);
    auto nicBW = pick(r.links.nicBandwidth, defaults.nicBandwidth);
    auto nicLat = pick(r.links.nicLatency, defaults.nicLatency);
    for (unsigned i = 0; i < count; ++i) {
      Node n;
      n.name = r.count ? r.name + "-" + std::to_string(i) : r.name;
      n.typeIndex = typeIndexFor(r.type.name, defined, spec);
      n.deviceType = spec.deviceTypes[n.typeIndex].name;
      n.numDevices = r.devices.value;
      if (n.numDevices > 1) {
        n.intraBandwidthGBps = intraBW ? intraBW->bytesPerSec / 1e9 : 0;
        n.intraLatencyUs = intraLat ? intraLat->seconds * 1e6 : 0;
      }
      n.nicBandwidthGbps = nicBW ? nicBW->bytesPerSec * 8 / 1e9 : 0;
      n.nicLatencyUs = nicLat ? nicLat->seconds * 1e6 : 0;
      n.leaf = r.leaf ? r.leaf->name : "";
      appendNode(spec, std::move(n));
    }
  }
  buildTopology(raw, spec);
  buildDeviceClasses(spec);
  return spec;
}

llvm::Expected<ClusterSpec> weft::parseClusterSpec(llvm::StringRef text,
                                                   llvm::StringRef fileName) {
  llvm::Expected<RawSpec> raw = readRawSpec(text, fileName);
  if (!raw)
    return raw.takeError();
  return buildSpec(*raw, fileName);
}

llvm::Expected<ClusterSpec> weft::loadClusterSpec(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return badInput("{0}: cannot read cluster spec: {1}", path,
                    buffer.getError().message());
  return parseClusterSpec((*buffer)->getBuffer(), path);
}
