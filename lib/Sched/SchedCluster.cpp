//===- SchedCluster.cpp - The scheduler's view of a cluster --------------===//

#include "weft/Sched/SchedCluster.h"
#include "ParseNumber.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace weft;
using namespace weft::sched;
using llvm::StringRef;

unsigned SchedCluster::totalGpus() const {
  unsigned total = 0;
  for (const SchedNode &node : nodes)
    total += node.numGpus;
  return total;
}

int SchedCluster::findType(StringRef typeName) const {
  for (unsigned i = 0; i < types.size(); ++i)
    if (StringRef(types[i].name).equals_insensitive(typeName))
      return i;
  return -1;
}

int SchedCluster::findNode(StringRef nodeName) const {
  for (unsigned i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == nodeName)
      return i;
  return -1;
}

void SchedCluster::recount() {
  for (GpuType &type : types)
    type.total = type.maxPerNode = 0;
  for (const SchedNode &node : nodes) {
    types[node.type].total += node.numGpus;
    types[node.type].maxPerNode =
        std::max(types[node.type].maxPerNode, node.numGpus);
  }
}

llvm::Expected<SchedCluster> sched::parseInlineCluster(StringRef text) {
  StringRef body = text;
  if (!body.consume_front("gpus:"))
    return badInput("cluster '{0}': expected 'gpus:TYPE=N,...'", text);
  unsigned perNode = 4;
  double nicGbps = 10;
  llvm::SmallVector<std::pair<std::string, unsigned>> counts;
  llvm::SmallVector<StringRef> items;
  body.split(items, ',', -1, false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    if (key == "per-node") {
      if (value.getAsInteger(10, perNode) || perNode == 0)
        return badInput("cluster '{0}': per-node '{1}' is not a positive "
                        "integer",
                        text, value);
      continue;
    }
    if (key == "nic") {
      if (parseFinite(value, nicGbps) || nicGbps <= 0)
        return badInput("cluster '{0}': nic '{1}' is not a positive Gbit/s "
                        "figure",
                        text, value);
      continue;
    }
    unsigned count = 0;
    if (key.empty() || value.getAsInteger(10, count) || count == 0)
      return badInput("cluster '{0}': item '{1}' is not TYPE=N with N > 0",
                      text, item);
    counts.push_back({key.lower(), count});
  }
  if (counts.empty())
    return badInput("cluster '{0}': no GPUs", text);
  SchedCluster cluster;
  cluster.name = text.str();
  for (auto &[typeName, count] : counts) {
    unsigned type = cluster.types.size();
    cluster.types.push_back({typeName, typeName, 1.0, 0, 0});
    for (unsigned i = 0, left = count; left > 0; ++i) {
      unsigned n = std::min(left, perNode);
      cluster.nodes.push_back(
          {typeName + "-" + std::to_string(i), type, n, nicGbps, -1});
      left -= n;
    }
  }
  cluster.recount();
  return cluster;
}
