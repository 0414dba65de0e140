"""The spmd dialect's relayouts as autograd functions.

Each forward is the collective of the dialect (docs/Dialects/Spmd.md) along
one AxisGroup, on uneven shards: `sizes[i]` is the extent member i holds
along the split dim (zero allowed). Each backward is the collective's dual
of docs/Duals.md, in the partial-sum convention (the gradient a rank holds of
a whole value is its partial contribution):

| function | forward | backward (dual) |
| --- | --- | --- |
| shard | keep the rank's slice (spmd.shard; no traffic) | zero-pad the slice's gradient |
| all_gather | all_gather | reduce_scatter |
| reduce_scatter | reduce_scatter | all_gather |
| all_reduce, op "sum" | all_reduce | all_reduce |
| all_reduce, op "max" | all_reduce(max) | none: a stop-gradient (the result does not require grad) |
| all_to_all | re-split from one dim to another | the all_to_all back |

The functions take the sizes and the group explicitly; Runtime (runtime.py)
derives both from the plan's global shapes and distributions.
"""

import torch

from .errors import WeftRuntimeError


def _check(x, dim, sizes, index, what):
    if x.shape[dim] != sizes[index]:
        raise WeftRuntimeError(
            "%s: member %d holds %d along dim %d, the plan says %d (sizes %s)" %
            (what, index, x.shape[dim], dim, sizes[index], list(sizes)), code=4)


def _gather(x, dim, sizes, group, comm, mode):
    if group is None or group.size == 1:
        return x.clone(memory_format=torch.contiguous_format)
    y = comm.all_gather_dim0(x.movedim(dim, 0), list(sizes), group, mode)
    return y.movedim(0, dim).contiguous()


def _scatter(x, dim, sizes, group, comm):
    if group is None or group.size == 1:
        return x.clone(memory_format=torch.contiguous_format)
    y = comm.reduce_scatter_dim0(x.movedim(dim, 0), list(sizes), group)
    return y.movedim(0, dim).contiguous()


def _exchange(x, src_dim, src_sizes, dst_dim, dst_sizes, group, comm):
    me = group.index if group is not None else 0
    chunks = list(x.split(list(dst_sizes), dst_dim))
    shapes = []
    for j in range(len(src_sizes)):
        s = list(x.shape)
        s[src_dim] = src_sizes[j]
        s[dst_dim] = dst_sizes[me]
        shapes.append(tuple(s))
    parts = comm.all_to_all_dim0(chunks, shapes, group)
    return torch.cat(parts, src_dim)


class _Shard(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim, sizes, index):
        ctx.dim, ctx.start, ctx.shape = dim, sum(sizes[:index]), tuple(x.shape)
        return x.narrow(dim, ctx.start, sizes[index]).clone()

    @staticmethod
    def backward(ctx, g):
        full = g.new_zeros(ctx.shape)
        full.narrow(ctx.dim, ctx.start, g.shape[ctx.dim]).copy_(g)
        return full, None, None, None


class _AllGather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim, sizes, group, comm, mode):
        ctx.args = (dim, sizes, group, comm)
        return _gather(x, dim, sizes, group, comm, mode)

    @staticmethod
    def backward(ctx, g):
        dim, sizes, group, comm = ctx.args
        return _scatter(g, dim, sizes, group, comm), None, None, None, None, None


class _ReduceScatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim, sizes, group, comm, mode):
        ctx.args = (dim, sizes, group, comm, mode)
        return _scatter(x, dim, sizes, group, comm)

    @staticmethod
    def backward(ctx, g):
        dim, sizes, group, comm, mode = ctx.args
        return _gather(g, dim, sizes, group, comm, mode), None, None, None, None, None


class _AllReduceSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group, comm):
        ctx.args = (group, comm)
        return comm.all_reduce(x.clone(memory_format=torch.contiguous_format), group, "sum")

    @staticmethod
    def backward(ctx, g):
        group, comm = ctx.args
        return comm.all_reduce(g.clone(memory_format=torch.contiguous_format), group, "sum"), None, None


class _AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, src_dim, src_sizes, dst_dim, dst_sizes, group, comm):
        ctx.args = (src_dim, src_sizes, dst_dim, dst_sizes, group, comm)
        return _exchange(x, src_dim, src_sizes, dst_dim, dst_sizes, group, comm)

    @staticmethod
    def backward(ctx, g):
        src_dim, src_sizes, dst_dim, dst_sizes, group, comm = ctx.args
        back = _exchange(g, dst_dim, dst_sizes, src_dim, src_sizes, group, comm)
        return back, None, None, None, None, None, None


def shard(x, dim, sizes, index):
    """spmd.shard: this member's slice of a whole value (sizes[index] along dim)."""
    if sum(sizes) != x.shape[dim]:
        raise WeftRuntimeError("shard: sizes %s do not sum to the extent %d of dim %d" %
                               (list(sizes), x.shape[dim], dim), code=4)
    return _Shard.apply(x, dim, tuple(sizes), index)


def all_gather(x, dim, sizes, group, comm, mode="padded"):
    """spmd.all_gather: the members' shards concatenated along dim, in group order.

    mode "padded" pads every shard to the largest and gathers once; "grouped"
    moves each shard as it is (gloo_compat.Comm.all_gather_dim0).
    """
    _check(x, dim, sizes, group.index if group else 0, "all_gather")
    return _AllGather.apply(x, dim, tuple(sizes), group, comm, mode)


def reduce_scatter(x, dim, sizes, group, comm, mode="padded"):
    """spmd.reduce_scatter: sum the members' partial values, keep this member's
    slice (sizes[index] along dim). `mode` is the all_gather mode of the dual."""
    if sum(sizes) != x.shape[dim]:
        raise WeftRuntimeError("reduce_scatter: sizes %s do not sum to the extent %d" %
                               (list(sizes), x.shape[dim]), code=4)
    return _ReduceScatter.apply(x, dim, tuple(sizes), group, comm, mode)


def all_reduce(x, group, comm, op="sum"):
    """spmd.all_reduce of a partial `sum` (dual: all_reduce) or `max`
    (stop-gradient: the result carries no gradient back)."""
    if op == "sum":
        return _AllReduceSum.apply(x, group, comm)
    if op == "max":
        with torch.no_grad():
            return comm.all_reduce(x.detach().clone(memory_format=torch.contiguous_format),
                                   group, "max")
    raise WeftRuntimeError("all_reduce: op '%s' (sum or max)" % op, code=4)


def all_to_all(x, src_dim, src_sizes, dst_dim, dst_sizes, group, comm):
    """spmd.all_to_all: from split along src_dim (member i holds src_sizes[i])
    to split along dst_dim (member i holds dst_sizes[i])."""
    me = group.index if group else 0
    _check(x, src_dim, src_sizes, me, "all_to_all")
    if src_dim == dst_dim:
        raise WeftRuntimeError("all_to_all: the dims must differ", code=4)
    if x.shape[dst_dim] != sum(dst_sizes):
        raise WeftRuntimeError("all_to_all: dst sizes %s do not sum to dim %d's extent %d" %
                               (list(dst_sizes), dst_dim, x.shape[dst_dim]), code=4)
    return _AllToAll.apply(x, src_dim, tuple(src_sizes), dst_dim, tuple(dst_sizes), group, comm)
