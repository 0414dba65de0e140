"""Launch: one rank of a plan, checked against the plan, with timeouts.

`Runtime.launch(mesh, segments, ...)` is the first call of an emitted
program. It reads the launcher's environment (torchrun's WORLD_SIZE, RANK,
LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT), refuses a
launch that does not match the plan before any network traffic, joins the
process group with a timeout, checks that every rank runs the same plan, and
creates the process groups of the mesh axes. Every refusal is a
WeftRuntimeError (exit 1, one line: errors.main).

The Runtime then offers the plan's collectives by global shape and
distribution: it derives the member sizes from the geometry (mesh.py) and
calls collectives.py.
"""

import datetime
import hashlib
import os

import torch
import torch.distributed as dist

from . import collectives
from .errors import (EXIT_BAD_INPUT, WeftRuntimeError, _plain,
                     describe_distributed_failure)
from .gloo_compat import Comm
from .groups import Groups
from .mesh import Geometry, MAX, SUM, parse_dist, dist_str, restrict_dist

DEFAULT_TIMEOUT_S = 300.0


def _env_int(env, name, required=False):
    v = env.get(name)
    if v is None or v == "":
        if required:
            raise WeftRuntimeError(
                "%s is not set: launch every rank with torchrun (or set WORLD_SIZE, "
                "RANK, MASTER_ADDR and MASTER_PORT)" % name)
        return None
    try:
        return int(v)
    except ValueError:
        raise WeftRuntimeError("%s is '%s', not an integer" % (name, v))


def check_launch(mesh, env, expected_rank=None):
    """The rank and world size of this process, checked against the mesh.

    Refuses: WORLD_SIZE other than the plan's device count; RANK outside it;
    a program emitted for another rank; LOCAL_WORLD_SIZE, LOCAL_RANK or
    GROUP_RANK (torchrun's node rank) that disagree with the mesh's nodes.
    """
    world = _env_int(env, "WORLD_SIZE", required=True)
    rank = _env_int(env, "RANK", required=True)
    n, per = mesh.num_devices, mesh.devices_per_node
    shape = "x".join(str(s) for s in mesh.axis_sizes)
    if world != n:
        raise WeftRuntimeError(
            "the plan runs on %d devices (mesh %s: %d node(s) of %d), but WORLD_SIZE is %d"
            % (n, shape, mesh.num_nodes, per, world))
    if not 0 <= rank < n:
        raise WeftRuntimeError("RANK is %d, outside the plan's %d devices" % (rank, n))
    if expected_rank is not None and rank != expected_rank:
        raise WeftRuntimeError(
            "this program was emitted for rank %d but was launched as rank %d"
            % (expected_rank, rank))
    lws = _env_int(env, "LOCAL_WORLD_SIZE")
    if lws is not None and lws != per:
        raise WeftRuntimeError(
            "LOCAL_WORLD_SIZE is %d, the plan has %d devices per node" % (lws, per))
    lr = _env_int(env, "LOCAL_RANK")
    if lr is not None and lr != mesh.local_index(rank):
        raise WeftRuntimeError(
            "rank %d is local device %d of node %d in the plan, but LOCAL_RANK is %d"
            % (rank, mesh.local_index(rank), mesh.node_of(rank), lr))
    gr = _env_int(env, "GROUP_RANK")
    if gr is not None and gr != mesh.node_of(rank):
        raise WeftRuntimeError(
            "rank %d is on node %d in the plan, but GROUP_RANK (the node's rank) is %d"
            % (rank, mesh.node_of(rank), gr))
    return rank, world


def plan_digest(plan_id):
    """A signed 63-bit integer naming the plan (rank agreement check)."""
    h = hashlib.sha256(str(plan_id).encode()).digest()
    return int.from_bytes(h[:8], "little") & ((1 << 62) - 1)


class Runtime:
    """One rank of a plan: mesh, geometry, groups, communication, device."""

    def __init__(self, mesh, segments, rank, comm, groups, device, timeout_s):
        self.mesh = mesh
        self.geometry = Geometry(mesh, segments)
        self.rank = rank
        self.comm = comm
        self.groups = groups
        self.device = device
        self.timeout_s = timeout_s
        # The seed of dropout masks (the driver sets seed + step).
        self.dropout_seed = 0

    # --- launch ----------------------------------------------------------------
    @classmethod
    def launch(cls, mesh, segments, plan_id="", backend=None, timeout_s=None,
               expected_rank=None, env=None, axis_sets=None, emulate=None,
               axis_groups=True):
        """Checks the launch, joins the process group, checks the peers.

        timeout_s bounds every wait: the rendezvous, each collective (the
        process group's timeout) and the groups' creation; default
        WEFT_RUNTIME_TIMEOUT_S or 300. axis_sets: extra axis sets to create
        groups for (every single axis is, unless `axis_groups` is False: a
        pipelined program makes its stages' groups instead).
        """
        env = os.environ if env is None else env
        if timeout_s is None:
            timeout_s = float(env.get("WEFT_RUNTIME_TIMEOUT_S", DEFAULT_TIMEOUT_S))
        os.environ["WEFT_RUNTIME_TIMEOUT_S"] = str(timeout_s)
        rank, world = check_launch(mesh, env, expected_rank)
        if backend is None:
            backend = "nccl" if torch.cuda.is_available() else "gloo"
        if backend == "nccl":
            device = torch.device("cuda", mesh.local_index(rank) % max(1, torch.cuda.device_count()))
            torch.cuda.set_device(device)
        else:
            device = torch.device("cpu")
        for name in ("MASTER_ADDR", "MASTER_PORT"):
            if not env.get(name):
                raise WeftRuntimeError("%s is not set: the ranks cannot meet" % name)
        timeout = datetime.timedelta(seconds=timeout_s)
        try:
            dist.init_process_group(
                backend, init_method="tcp://%s:%s" % (env["MASTER_ADDR"], env["MASTER_PORT"]),
                rank=rank, world_size=world, timeout=timeout)
        except Exception as e:  # noqa: BLE001 - named in one line
            raise WeftRuntimeError(
                "rank %d: the %d ranks did not all join within %g s at %s:%s (a "
                "missing rank, or another job on the port): %s"
                % (rank, world, timeout_s, env["MASTER_ADDR"], env["MASTER_PORT"], _plain(e)),
                EXIT_BAD_INPUT)
        comm = Comm(backend, emulate=emulate)
        rt = cls(mesh, segments, rank, comm, Groups(mesh, rank, timeout_s), device, timeout_s)
        try:
            rt._check_peers(plan_id)
            sets = ([(a,) for a in range(mesh.num_axes)] if axis_groups else []) + list(
                axis_sets or [])
            rt.groups.create(sets)
        except WeftRuntimeError:
            raise
        except Exception as e:  # noqa: BLE001
            raise WeftRuntimeError(describe_distributed_failure(e, rank, timeout_s))
        return rt

    @classmethod
    def attach(cls, mesh, segments, emulate=None, timeout_s=None):
        """A Runtime for `mesh` on the process group this process already
        joined (several plans, or sub-meshes in tests, in one world)."""
        if not dist.is_initialized():
            raise WeftRuntimeError("attach: no process group (call Runtime.launch first)")
        rank, world = dist.get_rank(), dist.get_world_size()
        if world != mesh.num_devices:
            raise WeftRuntimeError("the plan runs on %d devices, the process group has %d"
                                   % (mesh.num_devices, world))
        backend = dist.get_backend()
        device = (torch.device("cuda", torch.cuda.current_device()) if backend == "nccl"
                  else torch.device("cpu"))
        if timeout_s is None:
            timeout_s = float(os.environ.get("WEFT_RUNTIME_TIMEOUT_S", DEFAULT_TIMEOUT_S))
        return cls(mesh, segments, rank, Comm(backend, emulate=emulate),
                   Groups(mesh, rank, timeout_s), device, timeout_s)

    def _check_peers(self, plan_id):
        """Every rank runs the same plan, and holds the rank it claims."""
        mine = torch.tensor([plan_digest(plan_id), self.rank], dtype=torch.int64,
                            device=self.device)
        out = torch.empty(self.mesh.num_devices * 2, dtype=torch.int64, device=self.device)
        dist.all_gather_into_tensor(out, mine)
        seen = out.view(-1, 2).tolist()
        for r, (digest, claimed) in enumerate(seen):
            if claimed != r:
                raise WeftRuntimeError("rank %d: the process at position %d claims rank %d"
                                       % (self.rank, r, claimed))
            if digest != seen[0][0]:
                raise WeftRuntimeError(
                    "rank %d: rank %d runs another plan than rank 0 (every rank must "
                    "run a program emitted from the same plan)" % (self.rank, r))

    def close(self):
        if dist.is_initialized():
            dist.destroy_process_group()

    # --- geometry ----------------------------------------------------------------
    def group(self, axes):
        return self.groups.get(axes)

    def box(self, shape, dist_):
        return self.geometry.box(shape, parse_dist(dist_), self.rank)

    def extents(self, shape, dist_):
        """This rank's shard shape of a `shape` value laid out as `dist_`."""
        return tuple(self.geometry.box(shape, parse_dist(dist_), self.rank)[1])

    def offsets(self, shape, dist_):
        """The global offsets of this rank's shard, one per dim."""
        return tuple(self.geometry.box(shape, parse_dist(dist_), self.rank)[0])

    def shard_of(self, whole, dist_):
        """This rank's shard of a whole tensor (a copy), e.g. a parameter's."""
        return self.geometry.slice_of(whole, parse_dist(dist_), self.rank).clone()

    def offset(self, shape, dist_, dim, axes=None):
        """Global offset of this rank's shard along `dim`; with `axes`, of the
        distribution restricted to those axes (a recipe's own axes)."""
        d = parse_dist(dist_)
        if axes is not None:
            d = restrict_dist(d, tuple(axes))
        return self.geometry.offset(shape, d, dim, self.rank)

    def first_on(self, axes):
        """Whether this rank has coordinate 0 on every axis of `axes`."""
        c = self.mesh.coords(self.rank)
        return all(c[a] == 0 for a in axes)

    # --- the plan's collectives by global shape and distribution -----------
    def shard(self, x, shape, after, axis):
        """spmd.shard: whole on `axis` -> after[axis] = gather(d, s)."""
        after = parse_dist(after)
        dim, sizes, index = self.geometry.member_split(shape, after, axis, self.rank)
        return collectives.shard(x, dim, sizes, index)

    def all_gather(self, x, shape, before, axis, mode="padded"):
        """spmd.all_gather: before[axis] = gather(d, s) -> id."""
        before = parse_dist(before)
        dim, sizes, _ = self.geometry.member_split(shape, before, axis, self.rank)
        return collectives.all_gather(x, dim, sizes, self.group(axis), self.comm, mode)

    def reduce_scatter(self, x, shape, after, axis, mode="padded"):
        """spmd.reduce_scatter: sum on `axis` -> after[axis] = gather(d, s)."""
        after = parse_dist(after)
        dim, sizes, _ = self.geometry.member_split(shape, after, axis, self.rank)
        return collectives.reduce_scatter(x, dim, sizes, self.group(axis), self.comm, mode)

    def all_reduce(self, x, before, axis):
        """spmd.all_reduce: before[axis] is sum or max -> id."""
        entry = parse_dist(before)[axis]
        if entry not in (SUM, MAX):
            raise WeftRuntimeError("all_reduce: axis %d of %s is not partial"
                                   % (axis, dist_str(parse_dist(before))), code=4)
        return collectives.all_reduce(x, self.group(axis), self.comm, entry)

    def all_to_all(self, x, shape, before, after, axis):
        """spmd.all_to_all: before[axis] = gather(i, s) -> after[axis] = gather(j, t)."""
        before, after = parse_dist(before), parse_dist(after)
        i, src, _ = self.geometry.member_split(shape, before, axis, self.rank)
        j, dst, _ = self.geometry.member_split(shape, after, axis, self.rank)
        return collectives.all_to_all(x, i, src, j, dst, self.group(axis), self.comm)
