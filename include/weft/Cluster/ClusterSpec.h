//===- ClusterSpec.h - A heterogeneous cluster: nodes, devices, links -*- C++
//-*-//
//
// The parsed, validated form of a cluster spec (docs/ClusterSpec.md): device
// types (catalog entries after the spec's overrides), nodes, devices, device
// classes and the optional leaf/spine topology. Everything downstream (cost
// model, ratio LP, scheduler) reads this; nothing here depends on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CLUSTER_CLUSTERSPEC_H
#define WEFT_CLUSTER_CLUSTERSPEC_H

#include "weft/Cluster/DeviceType.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <map>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace weft {

/// One machine. `count:` in a spec replicates an entry into several Nodes.
struct Node {
  /// Unique name ("v100-node-1").
  std::string name;
  /// Name of the device type (an entry of ClusterSpec::deviceTypes).
  std::string deviceType;
  /// Index of that type in ClusterSpec::deviceTypes.
  unsigned typeIndex = 0;
  /// Devices in this node (>= 1).
  unsigned numDevices = 0;
  /// Per-device bandwidth of the intra-node link (NVLink, PCIe) in GB/s and
  /// its one-hop latency in microseconds; 0 when the node has one device.
  double intraBandwidthGBps = 0, intraLatencyUs = 0;
  /// The node's network interface: total bandwidth in Gbit/s and one-way
  /// latency between two nodes (alpha) in microseconds.
  double nicBandwidthGbps = 0, nicLatencyUs = 0;
  /// Leaf switch this node hangs from; empty without a topology.
  std::string leaf;
  /// Index of the leaf in Topology::leaves, or -1.
  int leafIndex = -1;
  /// Id of the node's first device; devices of a node are contiguous.
  unsigned firstDevice = 0;

  /// Intra-node link bandwidth in bytes/s.
  double intraBandwidth() const { return intraBandwidthGBps * 1e9; }
  /// Intra-node link latency in seconds.
  double intraLatency() const { return intraLatencyUs * 1e-6; }
  /// NIC bandwidth in bytes/s.
  double nicBandwidth() const { return nicBandwidthGbps * 1e9 / 8; }
  /// NIC latency in seconds.
  double nicLatency() const { return nicLatencyUs * 1e-6; }
};

/// One device (GPU). Ids are dense, in node order then local rank.
struct Device {
  unsigned id = 0;
  /// Index into ClusterSpec::nodes.
  unsigned node = 0;
  /// Rank inside the node.
  unsigned localRank = 0;
  /// Index into ClusterSpec::classes.
  unsigned deviceClass = 0;
};

/// Interchangeable devices: same device type, same devices per node, same
/// intra-node link and same NIC. (The leaf switch is not part of the key, so
/// the number of classes stays small on large clusters.) The ratio LP has one
/// variable per (segment, class) (docs/Design.md §5).
struct DeviceClass {
  unsigned id = 0;
  std::string deviceType;
  unsigned typeIndex = 0;
  /// The node shape shared by every member.
  unsigned devicesPerNode = 0;
  double intraBandwidthGBps = 0, intraLatencyUs = 0;
  double nicBandwidthGbps = 0, nicLatencyUs = 0;
  /// Member device ids, ascending.
  std::vector<unsigned> devices;
  /// Nodes holding the members, ascending.
  std::vector<unsigned> nodes;
};

/// A leaf switch: the nodes below it and its uplink capacity to the spines.
struct LeafSwitch {
  std::string name;
  /// Total uplink bandwidth to the spine layer in Gbit/s.
  double uplinkBandwidthGbps = 0;
  /// Σ NIC bandwidth of the nodes below / uplink bandwidth (>= 1 means
  /// oversubscribed). Computed when the spec gives the uplink bandwidth,
  /// and the other way round.
  double oversubscription = 1;
  /// Node indices below this leaf.
  std::vector<unsigned> nodes;

  /// Uplink bandwidth in bytes/s (each direction).
  double uplinkBandwidth() const { return uplinkBandwidthGbps * 1e9 / 8; }
};

/// Optional two-level leaf/spine network. Without it every node reaches every
/// other through a non-blocking switch at its NIC's speed.
struct Topology {
  std::vector<LeafSwitch> leaves;
  /// Number of spine switches (informational; capacity is in the uplinks).
  unsigned numSpines = 0;
  /// Extra one-way latency of a path that crosses the spine layer, seconds.
  double spineLatencyUs = 0;

  bool empty() const { return leaves.empty(); }
};

/// A validated cluster.
struct ClusterSpec {
  /// `name:` from the spec, or the file's stem.
  std::string name;
  /// The file the spec came from ("<string>" when parsed from text).
  std::string fileName;
  /// The device types the nodes use, after the spec's overrides, in order of
  /// first use.
  std::vector<DeviceType> deviceTypes;
  std::vector<Node> nodes;
  std::vector<Device> devices;
  std::vector<DeviceClass> classes;
  Topology topology;

  unsigned numDevices() const { return devices.size(); }
  unsigned numNodes() const { return nodes.size(); }
  /// The device type of device `deviceId`.
  const DeviceType &typeOf(unsigned deviceId) const;
  /// The node holding device `deviceId`.
  const Node &nodeOf(unsigned deviceId) const;
  /// The class of device `deviceId`.
  const DeviceClass &classOf(unsigned deviceId) const;
  /// The spec's device type named `name` (exact), or null.
  const DeviceType *findType(llvm::StringRef name) const;
  /// Σ over devices of peak FLOP/s in `dtype`.
  double totalPeakFlops(DType dtype) const;
  /// Device count per type name (sorted by name).
  std::map<std::string, unsigned> gpuCountsByType() const;
  /// Device count per Gavel worker type ("v100", ...).
  std::map<std::string, unsigned> gpuCountsByGavelName() const;
};

/// Reads and validates the spec at `path`. Errors are bad input (exit code 1)
/// with one message `file:line:col: field 'f': what was found, what was
/// expected`.
llvm::Expected<ClusterSpec> loadClusterSpec(llvm::StringRef path);

/// Parses spec text; `fileName` is used in messages and as the default name.
llvm::Expected<ClusterSpec> parseClusterSpec(llvm::StringRef text,
                                             llvm::StringRef fileName);

/// Prints devices, types (with figures), classes and peak TFLOPS totals for
/// every dtype, all with units.
void printClusterSummary(const ClusterSpec &spec, llvm::raw_ostream &os);

} // namespace weft

#endif // WEFT_CLUSTER_CLUSTERSPEC_H
