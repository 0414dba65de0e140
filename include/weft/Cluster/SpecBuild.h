//===- SpecBuild.h - Building a cluster spec node by node -------*- C++ -*-===//
//
// What the spec reader (lib/Cluster/ClusterSpec.cpp) and other builders of a
// ClusterSpec (lib/Cell's sub-clusters) do the same way.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CLUSTER_SPECBUILD_H
#define WEFT_CLUSTER_SPECBUILD_H

#include "weft/Cluster/ClusterSpec.h"

namespace weft {

/// Appends `node` (name, type and links set) and its devices to a spec being
/// built: sets `firstDevice` and each device's id, node and local rank.
void appendNode(ClusterSpec &spec, Node node);
/// Groups a built spec's devices into classes by (type, node shape, links),
/// in order of first appearance (docs/ClusterSpec.md "Device classes");
/// `spec.classes` must be empty.
void buildDeviceClasses(ClusterSpec &spec);

} // namespace weft

#endif // WEFT_CLUSTER_SPECBUILD_H
