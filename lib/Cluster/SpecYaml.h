//===- SpecYaml.h - The cluster spec as written, before validation -*- C++ -*-//
//
// Internal to lib/Cluster. YAML I/O maps the file into these "raw" structs;
// scalar traits and validate() hooks check each value where it is read so
// that every error carries the line and column of the offending text.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_CLUSTER_SPECYAML_H
#define WEFT_LIB_CLUSTER_SPECYAML_H

#include "weft/Cluster/DeviceType.h"
#include "llvm/Support/Error.h"
#include <array>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace weft {
namespace detail {

/// Quantities in SI base units.
struct Bandwidth {
  double bytesPerSec = 0;
};
struct Latency {
  double seconds = 0;
};
struct MemorySize {
  double bytes = 0;
};
struct FlopRate {
  double flops = 0;
};
/// An integer >= 1.
struct PositiveCount {
  unsigned value = 0;
};
/// A number in (0, 1].
struct Fraction {
  double value = 0;
};
/// A number > 0.
struct PositiveNumber {
  double value = 0;
};
/// A device type name, checked against the catalog and the spec's types.
struct TypeRef {
  std::string name;
};
/// A leaf switch name, checked against the topology.
struct LeafRef {
  std::string name;
};

struct RawEfficiencies {
  std::array<std::optional<Fraction>, kNumOpClasses> perClass;
};

struct RawDeviceType {
  std::string name;
  std::optional<TypeRef> base;
  std::optional<FlopRate> fp32, fp16, bf16;
  std::optional<MemorySize> memory;
  std::optional<Bandwidth> memBandwidth;
  std::optional<Fraction> memEfficiency;
  std::optional<RawEfficiencies> efficiency, fp16Efficiency, bf16Efficiency;
  std::optional<std::string> gavelName;
};

struct RawLinks {
  std::optional<Bandwidth> intraBandwidth;
  std::optional<Latency> intraLatency;
  std::optional<Bandwidth> nicBandwidth;
  std::optional<Latency> nicLatency;
};

struct RawNode {
  std::string name;
  std::optional<PositiveCount> count;
  TypeRef type;
  PositiveCount devices;
  RawLinks links;
  std::optional<LeafRef> leaf;
};

struct RawLeaf {
  std::string name;
  std::optional<Bandwidth> uplinkBandwidth;
  std::optional<PositiveNumber> oversubscription;
};

struct RawTopology {
  std::optional<PositiveCount> spines;
  std::optional<Latency> spineLatency;
  /// Either the leaves are listed (and nodes name theirs) ...
  std::vector<RawLeaf> leaves;
  /// ... or nodes fill generated leaves "leaf-<i>" in order, this many each,
  /// with this uplink (or oversubscription) per leaf.
  std::optional<PositiveCount> nodesPerLeaf;
  std::optional<Bandwidth> uplinkBandwidth;
  std::optional<PositiveNumber> oversubscription;
};

struct RawSpec {
  std::optional<std::string> name;
  std::vector<RawDeviceType> deviceTypes;
  std::optional<RawLinks> defaults;
  std::optional<RawTopology> topology;
  std::vector<RawNode> nodes;
};

/// State shared by the YAML traits while one file is read.
struct ParseContext {
  /// Device types the spec defines (exact names).
  std::set<std::string> specTypes;
  /// Leaf switch names from the topology section.
  std::set<std::string> leaves;
  bool hasTopology = false;
  /// The topology generates leaves (`nodes_per_leaf`).
  bool autoLeaves = false;
  /// Node names after `count:` expansion.
  std::set<std::string> nodeNames;
  /// Defaults for node links, once read.
  const RawLinks *defaults = nullptr;
  /// Set by the diagnostic handler on the first error; later hooks are quiet.
  bool failed = false;
  std::string firstError;
};

/// Reads `text` into a RawSpec, with every value checked. The error message
/// is `fileName:line:col: ...`.
llvm::Expected<RawSpec> readRawSpec(llvm::StringRef text,
                                    llvm::StringRef fileName);

} // namespace detail
} // namespace weft

#endif // WEFT_LIB_CLUSTER_SPECYAML_H
