//===- SpecYaml.cpp - YAML I/O traits of the cluster spec
//------------------===//
//
// Every value is checked where YAML I/O reads it (scalar traits for units,
// counts and names; validate() for cross-field rules), so the diagnostic
// handler sees the position of the offending text. The handler keeps the
// first message only and formats it as `file:line:col: field 'key': ...`.
//
//===----------------------------------------------------------------------===//

#include "SpecYaml.h"
#include "weft/Cluster/Quantity.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"
#include "llvm/Support/YAMLTraits.h"

using namespace weft;
using namespace weft::detail;
using llvm::StringRef;
using llvm::yaml::IO;
using llvm::yaml::QuotingType;

LLVM_YAML_IS_SEQUENCE_VECTOR(weft::detail::RawDeviceType)
LLVM_YAML_IS_SEQUENCE_VECTOR(weft::detail::RawNode)
LLVM_YAML_IS_SEQUENCE_VECTOR(weft::detail::RawLeaf)

static ParseContext &contextOf(IO &io) {
  return *static_cast<ParseContext *>(io.getContext());
}

/// Scalar-trait errors must outlive input(); they live here until the
/// diagnostic handler has copied them.
static StringRef keep(std::string message) {
  static thread_local std::string storage;
  storage = std::move(message);
  return storage;
}

namespace llvm {
namespace yaml {

/// Quantities with units.
template <typename T, QuantityKind kind, double T::*field>
struct QuantityTraits {
  static void output(const T &v, void *, raw_ostream &os) { os << v.*field; }
  static StringRef input(StringRef text, void *, T &v) {
    std::string err = parseQuantityInto(text, kind, v.*field);
    return err.empty() ? StringRef() : keep(std::move(err));
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};

template <>
struct ScalarTraits<Bandwidth>
    : QuantityTraits<Bandwidth, QuantityKind::Bandwidth,
                     &Bandwidth::bytesPerSec> {};
template <>
struct ScalarTraits<Latency>
    : QuantityTraits<Latency, QuantityKind::Latency, &Latency::seconds> {};
template <>
struct ScalarTraits<MemorySize>
    : QuantityTraits<MemorySize, QuantityKind::Memory, &MemorySize::bytes> {};
template <>
struct ScalarTraits<FlopRate>
    : QuantityTraits<FlopRate, QuantityKind::Flops, &FlopRate::flops> {};

template <> struct ScalarTraits<PositiveCount> {
  static void output(const PositiveCount &v, void *, raw_ostream &os) {
    os << v.value;
  }
  static StringRef input(StringRef text, void *, PositiveCount &v) {
    unsigned long long n = 0;
    if (text.trim().getAsInteger(10, n) || n == 0 || n > (1u << 24))
      return keep("expected a positive integer, found '" + text.trim().str() +
                  "'");
    v.value = static_cast<unsigned>(n);
    return {};
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};

template <> struct ScalarTraits<Fraction> {
  static void output(const Fraction &v, void *, raw_ostream &os) {
    os << v.value;
  }
  static StringRef input(StringRef text, void *, Fraction &v) {
    double x = 0;
    if (text.trim().getAsDouble(x) || !(x > 0 && x <= 1))
      return keep("expected a fraction in (0, 1], found '" + text.trim().str() +
                  "'");
    v.value = x;
    return {};
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};

template <> struct ScalarTraits<PositiveNumber> {
  static void output(const PositiveNumber &v, void *, raw_ostream &os) {
    os << v.value;
  }
  static StringRef input(StringRef text, void *, PositiveNumber &v) {
    double x = 0;
    if (text.trim().getAsDouble(x) || !(x > 0) || x > 1e9)
      return keep("expected a positive number, found '" + text.trim().str() +
                  "'");
    v.value = x;
    return {};
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};

template <> struct ScalarTraits<TypeRef> {
  static void output(const TypeRef &v, void *, raw_ostream &os) {
    os << v.name;
  }
  static StringRef input(StringRef text, void *ctxt, TypeRef &v) {
    auto &ctx = *static_cast<ParseContext *>(ctxt);
    StringRef name = text.trim();
    if (!ctx.specTypes.count(name.str()) && !lookupDeviceType(name)) {
      std::string known = knownDeviceTypeNames();
      for (const std::string &t : ctx.specTypes)
        known += ", " + t;
      return keep("unknown device type '" + name.str() + "' (known: " + known +
                  ")");
    }
    v.name = name.str();
    return {};
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};

template <> struct ScalarTraits<LeafRef> {
  static void output(const LeafRef &v, void *, raw_ostream &os) {
    os << v.name;
  }
  static StringRef input(StringRef text, void *ctxt, LeafRef &v) {
    auto &ctx = *static_cast<ParseContext *>(ctxt);
    StringRef name = text.trim();
    if (!ctx.hasTopology)
      return keep("leaf switch '" + name.str() +
                  "' given but the spec has no 'topology' section");
    if (!ctx.leaves.count(name.str()))
      return keep("unknown leaf switch '" + name.str() +
                  "' (known: " + llvm::join(ctx.leaves, ", ") + ")");
    v.name = name.str();
    return {};
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};

template <> struct MappingTraits<RawEfficiencies> {
  static void mapping(IO &io, RawEfficiencies &eff) {
    for (unsigned i = 0; i < kNumOpClasses; ++i)
      io.mapOptional(toString(static_cast<OpClass>(i)).data(), eff.perClass[i]);
  }
};

template <> struct MappingTraits<RawDeviceType> {
  static void mapping(IO &io, RawDeviceType &t) {
    io.mapRequired("name", t.name);
    io.mapOptional("base", t.base);
    io.mapOptional("fp32_peak", t.fp32);
    io.mapOptional("fp16_peak", t.fp16);
    io.mapOptional("bf16_peak", t.bf16);
    io.mapOptional("memory", t.memory);
    io.mapOptional("memory_bandwidth", t.memBandwidth);
    io.mapOptional("memory_efficiency", t.memEfficiency);
    io.mapOptional("efficiency", t.efficiency);
    io.mapOptional("fp16_efficiency", t.fp16Efficiency);
    io.mapOptional("bf16_efficiency", t.bf16Efficiency);
    io.mapOptional("gavel_name", t.gavelName);
  }
  static std::string validate(IO &io, RawDeviceType &t) {
    ParseContext &ctx = contextOf(io);
    if (ctx.failed)
      return "";
    if (t.name.empty())
      return "field 'name': a device type needs a non-empty name";
    if (!ctx.specTypes.insert(t.name).second)
      return "field 'name': device type '" + t.name + "' is defined twice";
    bool hasBase = t.base || lookupDeviceType(t.name);
    if (!hasBase && (!t.fp32 || !t.memory || !t.memBandwidth))
      return "device type '" + t.name +
             "' is not in the catalog and has no 'base': it needs "
             "'fp32_peak', 'memory' and 'memory_bandwidth'";
    return "";
  }
};

static void mapLinks(IO &io, RawLinks &links) {
  io.mapOptional("intra_bandwidth", links.intraBandwidth);
  io.mapOptional("intra_latency", links.intraLatency);
  io.mapOptional("nic_bandwidth", links.nicBandwidth);
  io.mapOptional("nic_latency", links.nicLatency);
}

template <> struct MappingTraits<RawLinks> {
  static void mapping(IO &io, RawLinks &links) { mapLinks(io, links); }
  static std::string validate(IO &io, RawLinks &links) {
    contextOf(io).defaults = &links;
    return "";
  }
};

/// The names `count:` expands an entry into.
static std::vector<std::string> expandedNames(const RawNode &n) {
  if (!n.count)
    return {n.name};
  std::vector<std::string> names;
  for (unsigned i = 0; i < n.count->value; ++i)
    names.push_back(n.name + "-" + std::to_string(i));
  return names;
}

template <> struct MappingTraits<RawNode> {
  static void mapping(IO &io, RawNode &n) {
    io.mapRequired("name", n.name);
    io.mapOptional("count", n.count);
    io.mapRequired("type", n.type);
    io.mapRequired("devices", n.devices);
    mapLinks(io, n.links);
    io.mapOptional("leaf", n.leaf);
  }
  static std::string validate(IO &io, RawNode &n) {
    ParseContext &ctx = contextOf(io);
    if (ctx.failed)
      return "";
    if (n.name.empty())
      return "field 'name': a node needs a non-empty name";
    for (const std::string &name : expandedNames(n))
      if (!ctx.nodeNames.insert(name).second)
        return "field 'name': duplicate node name '" + name + "'";
    const RawLinks *d = ctx.defaults;
    bool hasIntra = n.links.intraBandwidth || (d && d->intraBandwidth);
    if (n.devices.value > 1 && !hasIntra)
      return "node '" + n.name + "' has " + std::to_string(n.devices.value) +
             " devices but no 'intra_bandwidth' (set it here or under "
             "'defaults')";
    if (ctx.autoLeaves && n.leaf)
      return "field 'leaf': node '" + n.name +
             "' names a leaf but the topology assigns leaves itself "
             "('nodes_per_leaf')";
    if (ctx.hasTopology && !ctx.autoLeaves && !n.leaf)
      return "node '" + n.name +
             "' has no 'leaf' while the topology lists leaf switches";
    return "";
  }
};

template <> struct MappingTraits<RawLeaf> {
  static void mapping(IO &io, RawLeaf &l) {
    io.mapRequired("name", l.name);
    io.mapOptional("uplink_bandwidth", l.uplinkBandwidth);
    io.mapOptional("oversubscription", l.oversubscription);
  }
  static std::string validate(IO &io, RawLeaf &l) {
    ParseContext &ctx = contextOf(io);
    if (ctx.failed)
      return "";
    if (l.name.empty())
      return "field 'name': a leaf switch needs a non-empty name";
    if (!ctx.leaves.insert(l.name).second)
      return "field 'name': duplicate leaf switch '" + l.name + "'";
    if (l.uplinkBandwidth && l.oversubscription)
      return "leaf '" + l.name +
             "' gives both 'uplink_bandwidth' and 'oversubscription'; "
             "give one";
    return "";
  }
};

template <> struct MappingTraits<RawTopology> {
  static void mapping(IO &io, RawTopology &t) {
    ParseContext &ctx = contextOf(io);
    ctx.hasTopology = true;
    io.mapOptional("spines", t.spines);
    io.mapOptional("spine_latency", t.spineLatency);
    io.mapOptional("nodes_per_leaf", t.nodesPerLeaf);
    io.mapOptional("uplink_bandwidth", t.uplinkBandwidth);
    io.mapOptional("oversubscription", t.oversubscription);
    io.mapOptional("leaves", t.leaves);
    ctx.autoLeaves = t.nodesPerLeaf.has_value();
  }
  static std::string validate(IO &io, RawTopology &t) {
    if (contextOf(io).failed)
      return "";
    if (t.nodesPerLeaf && !t.leaves.empty())
      return "topology gives both 'leaves' and 'nodes_per_leaf'; give one";
    if (!t.nodesPerLeaf && t.leaves.empty())
      return "topology needs 'leaves' (a list of leaf switches) or "
             "'nodes_per_leaf'";
    if (!t.nodesPerLeaf && (t.uplinkBandwidth || t.oversubscription))
      return "topology-level 'uplink_bandwidth' and 'oversubscription' go "
             "with 'nodes_per_leaf'; with 'leaves', set them per leaf";
    if (t.uplinkBandwidth && t.oversubscription)
      return "topology gives both 'uplink_bandwidth' and "
             "'oversubscription'; give one";
    return "";
  }
};

template <> struct MappingTraits<RawSpec> {
  static void mapping(IO &io, RawSpec &s) {
    // Order matters: types, defaults and leaves are known before the nodes
    // that refer to them, whatever the order of keys in the file.
    io.mapOptional("name", s.name);
    io.mapOptional("device_types", s.deviceTypes);
    io.mapOptional("defaults", s.defaults);
    io.mapOptional("topology", s.topology);
    io.mapOptional("nodes", s.nodes);
  }
  static std::string validate(IO &io, RawSpec &s) {
    ParseContext &ctx = contextOf(io);
    if (ctx.failed)
      return "";
    if (s.nodes.empty()) {
      // A misspelt 'nodes' is better reported as the unknown key it is,
      // which YAML I/O does after this hook.
      static const char *const known[] = {"name", "device_types", "defaults",
                                          "topology", "nodes"};
      for (StringRef key : io.keys())
        if (!llvm::is_contained(known, key))
          return "";
      return "field 'nodes': the cluster has no devices";
    }
    if (ctx.nodeNames.size() < 2)
      return "";
    const RawLinks *d = ctx.defaults;
    for (const RawNode &n : s.nodes)
      if (!n.links.nicBandwidth && !(d && d->nicBandwidth))
        return "field 'nic_bandwidth': node '" + n.name +
               "' has no NIC bandwidth (set it on the node or under "
               "'defaults'); a cluster of several nodes needs one";
    return "";
  }
};

} // namespace yaml
} // namespace llvm

/// The mapping key in front of column `col` of `line`, if the diagnostic
/// points at a value ("  nic_bandwidth: 5 us" → "nic_bandwidth").
static std::string keyBefore(StringRef line, unsigned col) {
  StringRef prefix = line.take_front(col).rtrim();
  if (!prefix.consume_back(":"))
    return "";
  prefix = prefix.rtrim();
  size_t start = prefix.find_last_of(" \t{,-");
  StringRef key = start == StringRef::npos ? prefix : prefix.substr(start + 1);
  key = key.trim("\"'");
  return key.str();
}

static void recordDiagnostic(const llvm::SMDiagnostic &diag, void *ctxt) {
  auto &ctx = *static_cast<ParseContext *>(ctxt);
  std::string message = diag.getMessage().str();
  // A misspelt required key is reported as missing before it is reported as
  // unknown; the unknown key is the better message.
  bool betterThanFirst =
      StringRef(message).startswith("unknown key") &&
      ctx.firstError.find("missing required key") != std::string::npos;
  if (ctx.failed && !betterThanFirst)
    return;
  ctx.failed = true;
  std::string key = keyBefore(diag.getLineContents(), diag.getColumnNo());
  if (!key.empty() && !StringRef(message).startswith("field '"))
    message = "field '" + key + "': " + message;
  ctx.firstError =
      llvm::formatv("{0}:{1}:{2}: {3}", diag.getFilename(), diag.getLineNo(),
                    diag.getColumnNo() + 1, message)
          .str();
}

/// True when `text` holds no YAML content: only blanks, comments and
/// document markers. YAML I/O has no node to hang a message on then.
static bool isBlankDocument(StringRef text) {
  llvm::SmallVector<StringRef> lines;
  text.split(lines, '\n');
  return llvm::all_of(lines, [](StringRef line) {
    line = line.trim();
    return line.empty() || line.startswith("#") || line == "---" ||
           line == "...";
  });
}

/// Checks that the first document of `text` has a mapping at its root, as
/// a spec does: YAML I/O would otherwise look for keys in a node that has
/// none (a directive line, a scalar or a list at the top).
static llvm::Error checkRootIsMapping(StringRef text, StringRef fileName) {
  ParseContext ctx;
  llvm::SourceMgr sm;
  sm.setDiagHandler(recordDiagnostic, &ctx);
  llvm::yaml::Stream stream(llvm::MemoryBufferRef(text, fileName), sm,
                            /*ShowColors=*/false);
  auto doc = stream.begin();
  llvm::yaml::Node *root = doc == stream.end() ? nullptr : doc->getRoot();
  if (ctx.failed)
    return badInput("{0}", ctx.firstError);
  if (!root || !llvm::isa<llvm::yaml::MappingNode>(root))
    return badInput("{0}:1:1: malformed cluster spec: expected a mapping of "
                    "name, device_types, defaults, topology and nodes",
                    fileName);
  return llvm::Error::success();
}

llvm::Expected<RawSpec> weft::detail::readRawSpec(StringRef text,
                                                  StringRef fileName) {
  if (isBlankDocument(text))
    return badInput("{0}:1:1: field 'nodes': the cluster has no devices",
                    fileName);
  if (auto err = checkRootIsMapping(text, fileName))
    return std::move(err);
  ParseContext ctx;
  RawSpec spec;
  llvm::MemoryBufferRef buffer(text, fileName);
  llvm::yaml::Input yin(buffer, &ctx, recordDiagnostic, &ctx);
  yin >> spec;
  if (ctx.failed)
    return badInput("{0}", ctx.firstError);
  if (yin.error())
    return badInput("{0}: malformed cluster spec", fileName);
  if (spec.nodes.empty())
    return badInput("{0}:1:1: field 'nodes': the cluster has no devices",
                    fileName);
  return spec;
}
