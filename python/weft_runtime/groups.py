"""torch.distributed process groups for the plan's mesh axes.

A collective of the plan runs along one mesh axis; a parameter's gradient
sync along the set of its id axes. For a set of axes, the mesh falls into
groups of ranks that agree on every other axis (Mesh.groups_along); every
rank must create every group, in the same order (torch.distributed.new_group
is collective), and keeps the one it belongs to. A group of one rank needs no
process group: its collectives are the identity. A pipeline stage's mesh
(pipeline.py) is a sub-mesh of the world: its device i is the world's rank
`global_ranks[i]`, and every rank of the world creates the stage's groups.
"""

from dataclasses import dataclass
import datetime

import torch.distributed as dist

from .mesh import normalize_axes


@dataclass
class AxisGroup:
    """Rank's group along `axes`: the members' global ranks in group order,
    rank's position among them, and the process group (None for one rank)."""
    axes: tuple
    ranks: list
    index: int
    pg: object = None

    @property
    def size(self):
        return len(self.ranks)

    def __repr__(self):
        return "AxisGroup(axes=%s, ranks=%s, index=%d)" % (self.axes, self.ranks, self.index)


class Groups:
    """The groups of one rank, created once per axis set on demand.

    `get(axes)` is collective the first time an axis set is asked for: call
    it on every rank in the same order, or create them all up front with
    `create(list_of_axis_sets)` (what emitted programs do, right after
    launch).
    """

    def __init__(self, mesh, rank, timeout_s=None, global_ranks=None):
        """`rank`: this process's device of `mesh` (None when it holds none of
        a sub-mesh's); `global_ranks`: the world rank of each mesh device
        (default: the same numbers)."""
        self.mesh = mesh
        self.rank = rank
        self.global_ranks = (list(global_ranks) if global_ranks is not None
                             else list(range(mesh.num_devices)))
        self.timeout = (datetime.timedelta(seconds=timeout_s)
                        if timeout_s is not None else None)
        self._groups = {}

    def create(self, axis_sets):
        for axes in axis_sets:
            self.get(axes)
        return self

    def get(self, axes):
        axes = normalize_axes(axes, self.mesh.num_axes)
        if axes in self._groups:
            return self._groups[axes]
        mine = None
        for members in self.mesh.groups_along(axes):
            ranks = [self.global_ranks[m] for m in members]
            pg = None
            if len(ranks) > 1 and ranks == list(range(dist.get_world_size())):
                pg = dist.group.WORLD
            elif len(ranks) > 1:
                kwargs = {"timeout": self.timeout} if self.timeout else {}
                pg = dist.new_group(ranks, **kwargs)
            if self.rank in members:
                mine = AxisGroup(axes, ranks, members.index(self.rank), pg)
        self._groups[axes] = mine
        return mine

    def solo(self, axes=()):
        """A group of this rank alone (collectives are the identity)."""
        return AxisGroup(tuple(axes), [self.global_ranks[self.rank]], 0, None)
