//===- SubCluster.cpp - The cluster of one Cell ---------------------------===//

#include "weft/Cell/SubCluster.h"
#include "weft/Cluster/SpecBuild.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringExtras.h"

using namespace weft;
using namespace weft::cell;

DeviceMultiset cell::devicesOf(const ClusterSpec &cluster) {
  DeviceMultiset devices;
  for (const Node &node : cluster.nodes)
    devices[node.deviceType] += node.numDevices;
  return devices;
}

llvm::Expected<ClusterSpec>
cell::buildSubCluster(const ClusterSpec &cluster,
                      const DeviceMultiset &devices) {
  if (devices.empty())
    return badInput("a Cell needs at least one device");
  DeviceMultiset available = devicesOf(cluster);
  ClusterSpec spec;
  spec.name = cluster.name + "[" + formatMultiset(devices) + "]";
  spec.fileName = cluster.fileName;
  for (const auto &[type, count] : devices) {
    auto have = available.find(type);
    if (have == available.end()) {
      std::vector<std::string> names;
      for (const auto &entry : available)
        names.push_back(entry.first);
      return badInput("cluster '{0}' has no device type '{1}' (it has {2})",
                      cluster.name, type, llvm::join(names, ", "));
    }
    if (count == 0 || count > have->second)
      return badInput("cluster '{0}' has {1} {2}, a Cell asks for {3}",
                      cluster.name, have->second, type, count);
    // The type's largest node is the template: its shape and links.
    const Node *shape = nullptr;
    for (const Node &node : cluster.nodes)
      if (node.deviceType == type &&
          (!shape || node.numDevices > shape->numDevices))
        shape = &node;
    unsigned typeIndex = spec.deviceTypes.size();
    spec.deviceTypes.push_back(cluster.deviceTypes[shape->typeIndex]);
    unsigned left = count;
    for (unsigned i = 0; left > 0; ++i) {
      Node node = *shape;
      node.name = llvm::StringRef(type).lower() + "-" + std::to_string(i);
      node.typeIndex = typeIndex;
      node.numDevices = std::min(left, shape->numDevices);
      if (node.numDevices == 1)
        node.intraBandwidthGBps = node.intraLatencyUs = 0;
      node.leaf.clear();
      node.leafIndex = -1;
      left -= node.numDevices;
      appendNode(spec, std::move(node));
    }
  }
  buildDeviceClasses(spec);
  return spec;
}
