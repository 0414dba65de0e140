"""The plan's mesh, distributions and shard geometry, on the host.

A mesh (the plan's `spmd.mesh`) is devices grouped by node: axis 0 is the
node axis, the other axes factor the devices of a node (`local`). Each node
belongs to one device class. A mesh device's id is node-major, row-major
over the axes, and the runtime's torch.distributed rank *is* that id, so
rank r sits at node r // devices_per_node.

A distribution (`#spmd.dist`) has one entry per mesh axis: ID, SUM, MAX or
Gather(dim, segment). Geometry answers, from the mesh and the segments'
integer sizes alone, which box of a global tensor a rank holds; it follows
weft::spmd::ShardGeometry entry for entry (include/weft/Spmd/ShardGeometry.h):
a dim split on the axis set A is held by rank x as the sum of the segment's
per-device sizes over the devices that agree with x on every axis of A, at
the offset of the groups (keyed by their coordinates on A, axis 0 major)
before x's.

Nothing here talks to other processes: groups.py builds the process groups.
"""

import re
from dataclasses import dataclass

from .errors import WeftRuntimeError


@dataclass(frozen=True)
class DeviceClass:
    """Interchangeable devices: a type name and the nodes of the mesh of it."""
    type: str
    nodes: tuple


class Mesh:
    """Axis sizes [nodes, *local] and the class of each node."""

    def __init__(self, nodes, local=(), classes=None):
        self.local = tuple(int(f) for f in local)
        self.axis_sizes = (int(nodes),) + self.local
        if any(s <= 0 for s in self.axis_sizes):
            raise WeftRuntimeError("the mesh has an axis of size <= 0: %s" %
                                   (list(self.axis_sizes),))
        self.classes = tuple(classes or (DeviceClass("any", tuple(range(nodes))),))
        self._class_of_node = {}
        for i, c in enumerate(self.classes):
            for n in c.nodes:
                if n in self._class_of_node or not 0 <= n < nodes:
                    raise WeftRuntimeError("mesh node %d is in no class or in two" % n)
                self._class_of_node[n] = i
        if len(self._class_of_node) != nodes:
            raise WeftRuntimeError("every mesh node needs exactly one device class")

    @property
    def num_axes(self):
        return len(self.axis_sizes)

    @property
    def num_nodes(self):
        return self.axis_sizes[0]

    @property
    def devices_per_node(self):
        n = 1
        for f in self.local:
            n *= f
        return n

    @property
    def num_devices(self):
        return self.num_nodes * self.devices_per_node

    def coords(self, rank):
        """The coordinates of mesh device `rank`, one per axis."""
        c = []
        for s in reversed(self.axis_sizes):
            c.append(rank % s)
            rank //= s
        return tuple(reversed(c))

    def rank_at(self, coords):
        r = 0
        for c, s in zip(coords, self.axis_sizes):
            r = r * s + c
        return r

    def node_of(self, rank):
        return rank // self.devices_per_node

    def local_index(self, rank):
        return rank % self.devices_per_node

    def class_of(self, rank):
        return self.classes[self._class_of_node[self.node_of(rank)]]

    def group_ranks(self, rank, axes):
        """Ranks agreeing with `rank` outside `axes`, ascending (groupAlong).

        The position of a rank in this list is its rank in the group
        (rankInGroup): row-major over the group's axes.
        """
        axes = normalize_axes(axes, self.num_axes)
        mine = self.coords(rank)
        return [y for y in range(self.num_devices)
                if all(a in axes or self.coords(y)[a] == mine[a]
                       for a in range(self.num_axes))]

    def groups_along(self, axes):
        """Every group along `axes`, each ascending, ordered by first rank."""
        seen, out = set(), []
        for r in range(self.num_devices):
            if r not in seen:
                g = self.group_ranks(r, axes)
                seen.update(g)
                out.append(g)
        return out

    def size_of(self, axes):
        n = 1
        for a in normalize_axes(axes, self.num_axes):
            n *= self.axis_sizes[a]
        return n


def normalize_axes(axes, num_axes):
    """A sorted tuple of mesh axes from an int or an iterable of ints."""
    if isinstance(axes, int):
        axes = (axes,)
    out = tuple(sorted(set(int(a) for a in axes)))
    for a in out:
        if not 0 <= a < num_axes:
            raise WeftRuntimeError("axis %d is not a mesh axis (the mesh has %d)" %
                                   (a, num_axes))
    return out


# --- distributions -----------------------------------------------------------

ID, SUM, MAX = "id", "sum", "max"


@dataclass(frozen=True)
class Gather:
    """Split along tensor dim `dim` with the shares of segment `segment`."""
    dim: int
    segment: int

    def __str__(self):
        return "gather(%d, %d)" % (self.dim, self.segment)


_ENTRY = re.compile(r"\s*(?:(id|sum|max)|gather\(\s*(\d+)\s*,\s*(\d+)\s*\))\s*$")


def parse_dist(text):
    """A distribution from its text: `[gather(0, 1), id]`, with or without
    the `#spmd.dist<...>` wrapper, or a tuple of entries already."""
    if not isinstance(text, str):
        return tuple(text)
    body = text.strip()
    if body.startswith("#spmd.dist<") and body.endswith(">"):
        body = body[len("#spmd.dist<"):-1].strip()
    if not (body.startswith("[") and body.endswith("]")):
        raise WeftRuntimeError("not a distribution: '%s'" % text)
    body = body[1:-1]
    entries = []
    for part in re.split(r",(?![^(]*\))", body) if body.strip() else []:
        m = _ENTRY.match(part)
        if not m:
            raise WeftRuntimeError("not a distribution entry: '%s' in '%s'" % (part.strip(), text))
        entries.append(m.group(1) if m.group(1) else Gather(int(m.group(2)), int(m.group(3))))
    return tuple(entries)


def dist_str(dist):
    return "[" + ", ".join(str(e) for e in dist) + "]"


def with_entry(dist, axis, entry):
    d = list(dist)
    d[axis] = entry
    return tuple(d)


def split_axes(dist, dim):
    """The mesh axes on which `dist` splits tensor dim `dim`."""
    return tuple(a for a, e in enumerate(dist) if isinstance(e, Gather) and e.dim == dim)


def id_axes(dist):
    return tuple(a for a, e in enumerate(dist) if e == ID)


def partial_axes(dist, kind=SUM):
    return tuple(a for a, e in enumerate(dist) if e == kind)


def restrict_dist(dist, keep):
    """`dist` with every axis outside `keep` made ID (restrictDist)."""
    return tuple(e if a in keep else ID for a, e in enumerate(dist))


class Geometry:
    """Shard boxes from a mesh and the segments' integer sizes.

    `segments` maps a segment id to its per-device sizes (one per mesh
    device, summing to the extent), as `#spmd.segment<... sizes = [...]>`.
    """

    def __init__(self, mesh, segments):
        self.mesh = mesh
        self.sizes = {}
        for sid, sizes in dict(segments).items():
            sizes = [int(s) for s in sizes]
            if len(sizes) != mesh.num_devices:
                raise WeftRuntimeError("segment %d has %d sizes for %d devices" %
                                       (sid, len(sizes), mesh.num_devices))
            if any(s < 0 for s in sizes):
                raise WeftRuntimeError("segment %d has a negative size" % sid)
            self.sizes[int(sid)] = sizes
        self._splits = {}

    def _split(self, segment, axes):
        key = (segment, axes)
        if key not in self._splits:
            sz = self.sizes[segment]
            keys = [tuple(self.mesh.coords(d)[a] for a in axes)
                    for d in range(self.mesh.num_devices)]
            totals = {}
            for d, k in enumerate(keys):
                totals[k] = totals.get(k, 0) + sz[d]
            starts, running = {}, 0
            for k in sorted(totals):
                starts[k] = running
                running += totals[k]
            self._splits[key] = ([totals[k] for k in keys], [starts[k] for k in keys])
        return self._splits[key]

    def _segment_of(self, dist, dim):
        seg = None
        for e in dist:
            if isinstance(e, Gather) and e.dim == dim:
                seg = e.segment
        return seg

    def extent(self, shape, dist, dim, rank):
        """Extent of dim `dim` of rank's shard of a `shape` value laid out as `dist`."""
        dist = parse_dist(dist)
        axes = split_axes(dist, dim)
        seg = self._segment_of(dist, dim)
        if not axes or seg not in self.sizes:
            return int(shape[dim])
        return self._split(seg, axes)[0][rank]

    def offset(self, shape, dist, dim, rank):
        """Global offset of rank's shard along dim `dim`."""
        dist = parse_dist(dist)
        axes = split_axes(dist, dim)
        seg = self._segment_of(dist, dim)
        if not axes or seg not in self.sizes:
            return 0
        return self._split(seg, axes)[1][rank]

    def box(self, shape, dist, rank):
        """(offsets, extents) of rank's shard, one entry per dim."""
        dist = parse_dist(dist)
        return ([self.offset(shape, dist, d, rank) for d in range(len(shape))],
                [self.extent(shape, dist, d, rank) for d in range(len(shape))])

    def shard_shape(self, shape, dist, rank):
        return tuple(self.box(shape, dist, rank)[1])

    def slice_of(self, whole, dist, rank):
        """Rank's shard of the whole tensor `whole` (a view)."""
        offsets, extents = self.box(tuple(whole.shape), dist, rank)
        out = whole
        for d, (o, e) in enumerate(zip(offsets, extents)):
            if e != whole.shape[d]:
                out = out.narrow(d, o, e)
        return out

    def member_split(self, shape, dist, axis, rank):
        """For a collective along `axis` on a value laid out as `dist` with
        `dist[axis] = gather(d, s)`: (d, the extents along d of the members
        of rank's group in group order, rank's position in the group).

        The members' pieces must lie end to end in group order inside the
        box the gathered value has (a dim split on several axes is split
        major axis first and gathered minor axis first); otherwise the
        collective cannot be a concatenation and the plan is refused.
        """
        dist = parse_dist(dist)
        entry = dist[axis]
        if not isinstance(entry, Gather):
            raise WeftRuntimeError("axis %d of %s is not split" % (axis, dist_str(dist)))
        dim = entry.dim
        group = self.mesh.group_ranks(rank, axis)
        sizes = [self.extent(shape, dist, dim, y) for y in group]
        offs = [self.offset(shape, dist, dim, y) for y in group]
        whole = with_entry(dist, axis, ID)
        start = self.offset(shape, whole, dim, rank)
        for k, y in enumerate(group):
            if sizes[k] and offs[k] != start + sum(sizes[:k]):
                raise WeftRuntimeError(
                    "the shards of dim %d along mesh axis %d are not consecutive in "
                    "group order (%s): a dim split on several mesh axes is gathered "
                    "minor axis first" % (dim, axis, dist_str(dist)), code=3)
        if sum(sizes) != self.extent(shape, whole, dim, rank):
            raise WeftRuntimeError(
                "the shards of dim %d along mesh axis %d do not cover the gathered "
                "extent (%s)" % (dim, axis, dist_str(dist)), code=3)
        return dim, sizes, group.index(rank)
