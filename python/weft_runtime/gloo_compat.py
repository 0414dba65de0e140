"""The communication primitives the collectives are built on, per backend.

The plan's collectives move uneven shards (integer sizes per device, zero
allowed). torch.distributed's calls differ per backend in what they accept;
`Comm` offers five primitives with uneven sizes along dim 0 and, for each,
uses the native call where the backend has it and an emulation from calls
every backend has otherwise:

| primitive | native call | emulation |
| --- | --- | --- |
| all_gather_dim0, mode "grouped" | all_gather into a list of unequal tensors | one broadcast per non-empty shard |
| all_gather_dim0, mode "padded" | all_gather_into_tensor of shards padded to the largest | all_gather into a list of equal (padded) tensors |
| reduce_scatter_dim0 | reduce_scatter of a list of unequal chunks | all_reduce of the whole, then the rank's slice |
| all_to_all_dim0 | all_to_all_single with split sizes | batch_isend_irecv, one pair per peer |
| all_reduce "avg" | ReduceOp.AVG | SUM, then a division by the group size |

`NATIVE` says which native calls each backend has. Gloo's row is measured
on the pinned torch (`python -m weft_runtime.probe`, docs/Emit.md); on
another torch every gloo call above is emulated until it is measured. The
NCCL row is what NCCL documents (no GPU measured it here). Setting
WEFT_RUNTIME_EMULATE=1, or Comm(emulate=True), forces every emulation: the
tests run both paths.
"""

import os

import torch
import torch.distributed as dist

from . import timing

# What each backend runs natively. Keys: see CAPABILITIES.
CAPABILITIES = (
    "reduce_scatter",            # reduce_scatter(list), chunks of unequal sizes
    "reduce_scatter_tensor",     # reduce_scatter_tensor, equal chunks
    "all_gather_uneven",         # all_gather(list), tensors of unequal sizes
    "all_gather_into_tensor",    # all_gather_into_tensor, equal shards
    "all_to_all_uneven",         # all_to_all(list), tensors of unequal sizes
    "all_to_all_single_uneven",  # all_to_all_single with split sizes
    "avg",                       # all_reduce with ReduceOp.AVG
)

# Measured with weft_runtime.probe on torch 2.15.0 (CPU, gloo), 2 and 3
# ranks, shards of sizes (2, 0) and (2, 0, 3): values checked, not just calls.
GLOO_MEASURED = {
    "2.15": {
        "reduce_scatter": True,
        "reduce_scatter_tensor": True,
        "all_gather_uneven": False,
        "all_gather_into_tensor": True,
        "all_to_all_uneven": False,
        "all_to_all_single_uneven": True,
        "avg": True,
    },
}

NCCL_DOCUMENTED = {c: True for c in CAPABILITIES}


def torch_minor():
    return ".".join(torch.__version__.split("+")[0].split(".")[:2])


def native_table(backend):
    """The native calls of `backend` on this torch (all False when unknown)."""
    if backend == "nccl":
        return dict(NCCL_DOCUMENTED)
    if backend == "gloo" and torch_minor() in GLOO_MEASURED:
        return dict(GLOO_MEASURED[torch_minor()])
    return {c: False for c in CAPABILITIES}


class Comm:
    """Uneven collectives over an AxisGroup (groups.py), native or emulated.

    Tensors are split along dim 0; callers (collectives.py) move the dim a
    collective works on to the front. `calls` counts the torch.distributed
    calls made, by name (the tests read it).
    """

    def __init__(self, backend="gloo", native=None, emulate=None):
        if emulate is None:
            emulate = os.environ.get("WEFT_RUNTIME_EMULATE", "") not in ("", "0")
        self.backend = backend
        self.native = ({c: False for c in CAPABILITIES} if emulate
                       else dict(native if native is not None else native_table(backend)))
        self.calls = {}
        if timing.enabled():
            for kind, name in (("all_reduce", "all_reduce"), ("broadcast", "broadcast"),
                               ("all_gather", "all_gather_dim0"),
                               ("reduce_scatter", "reduce_scatter_dim0"),
                               ("all_to_all", "all_to_all_dim0")):
                setattr(self, name, timing.timed(kind, getattr(self, name)))

    def _count(self, name):
        self.calls[name] = self.calls.get(name, 0) + 1

    # --- all_reduce ----------------------------------------------------------
    def all_reduce(self, t, group, op="sum"):
        """In place over the group; returns t. op: sum, max or avg."""
        if group is None or group.size == 1:
            return t
        if op == "avg" and not self.native["avg"]:
            self._count("all_reduce")
            dist.all_reduce(t, op=dist.ReduceOp.SUM, group=group.pg)
            return t.div_(group.size)
        red = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX,
               "avg": dist.ReduceOp.AVG}[op]
        self._count("all_reduce")
        dist.all_reduce(t, op=red, group=group.pg)
        return t

    # --- all_gather ------------------------------------------------------------
    def _gather_equal(self, x, group):
        """Equal shards (x is this rank's) concatenated along dim 0."""
        k = group.size
        if self.native["all_gather_into_tensor"]:
            out = x.new_empty((k * x.shape[0],) + tuple(x.shape[1:]))
            self._count("all_gather_into_tensor")
            dist.all_gather_into_tensor(out, x, group=group.pg)
            return out
        outs = [torch.empty_like(x) for _ in range(k)]
        self._count("all_gather")
        dist.all_gather(outs, x, group=group.pg)
        return torch.cat(outs, 0)

    def all_gather_dim0(self, x, sizes, group, mode="padded"):
        """Member i's shard has sizes[i] rows; returns all shards in order."""
        x = x.contiguous()
        if group is None or group.size == 1:
            return x
        rest = tuple(x.shape[1:])
        if len(set(sizes)) == 1:
            return self._gather_equal(x, group)
        if mode == "grouped":
            if self.native["all_gather_uneven"]:
                outs = [x.new_empty((s,) + rest) for s in sizes]
                self._count("all_gather")
                dist.all_gather(outs, x, group=group.pg)
                return torch.cat(outs, 0)
            pieces = []
            for i, s in enumerate(sizes):
                if s == 0:
                    continue
                buf = x if i == group.index else x.new_empty((s,) + rest)
                self._count("broadcast")
                dist.broadcast(buf, src=group.ranks[i], group=group.pg)
                pieces.append(buf)
            return torch.cat(pieces, 0) if pieces else x.new_empty((0,) + rest)
        if mode != "padded":
            raise ValueError("all_gather mode '%s' (padded or grouped)" % mode)
        m = max(sizes)
        if m == 0:
            return x.new_empty((0,) + rest)
        padded = x
        if x.shape[0] < m:
            padded = torch.cat([x, x.new_zeros((m - x.shape[0],) + rest)], 0)
        out = self._gather_equal(padded, group)
        return torch.cat([out[i * m:i * m + s] for i, s in enumerate(sizes)], 0)

    # --- reduce_scatter -----------------------------------------------------------
    def reduce_scatter_dim0(self, x, sizes, group):
        """x has sum(sizes) rows, a partial sum; returns this rank's rows of the total."""
        x = x.contiguous()
        if group is None or group.size == 1:
            return x
        me = group.index
        rest = tuple(x.shape[1:])
        if len(set(sizes)) == 1 and self.native["reduce_scatter_tensor"]:
            out = x.new_empty((sizes[me],) + rest)
            self._count("reduce_scatter_tensor")
            dist.reduce_scatter_tensor(out, x, group=group.pg)
            return out
        if self.native["reduce_scatter"]:
            chunks = [c.contiguous() for c in x.split(list(sizes), 0)]
            out = x.new_empty((sizes[me],) + rest)
            self._count("reduce_scatter")
            dist.reduce_scatter(out, chunks, group=group.pg)
            return out
        total = x.clone()
        self._count("all_reduce")
        dist.all_reduce(total, op=dist.ReduceOp.SUM, group=group.pg)
        start = sum(sizes[:me])
        return total.narrow(0, start, sizes[me]).clone()

    # --- all_to_all ------------------------------------------------------------------
    def all_to_all_dim0(self, chunks, recv_shapes, group):
        """Sends chunks[j] to member j; returns what each member sent here,
        shaped recv_shapes[j]."""
        if group is None or group.size == 1:
            return [chunks[0].reshape(recv_shapes[0])]
        me = group.index
        flat = [c.contiguous().reshape(-1) for c in chunks]
        numels = []
        for s in recv_shapes:
            n = 1
            for d in s:
                n *= d
            numels.append(n)
        like = flat[0]
        if self.native["all_to_all_single_uneven"]:
            inp = torch.cat(flat, 0)
            out = like.new_empty((sum(numels),))
            self._count("all_to_all_single")
            dist.all_to_all_single(out, inp, output_split_sizes=numels,
                                   input_split_sizes=[f.numel() for f in flat],
                                   group=group.pg)
            parts = out.split(numels, 0)
        else:
            parts = [None] * group.size
            ops = []
            for j in range(group.size):
                if j == me:
                    parts[j] = flat[j]
                    continue
                parts[j] = like.new_empty((numels[j],))
                if flat[j].numel():
                    ops.append(dist.P2POp(dist.isend, flat[j], group.ranks[j], group.pg))
                if numels[j]:
                    ops.append(dist.P2POp(dist.irecv, parts[j], group.ranks[j], group.pg))
            if ops:
                self._count("batch_isend_irecv")
                for w in dist.batch_isend_irecv(ops):
                    w.wait()
        return [p.reshape(s) for p, s in zip(parts, recv_shapes)]

    # --- broadcast -------------------------------------------------------------------
    def broadcast(self, t, group, src_index=0):
        """In place from member src_index; returns t."""
        if group is None or group.size == 1:
            return t
        self._count("broadcast")
        dist.broadcast(t, src=group.ranks[src_index], group=group.pg)
        return t
