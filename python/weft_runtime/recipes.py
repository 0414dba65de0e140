"""The local recipes that talk across a mesh axis or need a global offset.

Each mirrors lib/Exec's recipe of the same variant (SpmdNormRecipes.cpp,
SpmdLossRecipes.cpp, Dropout.cpp; docs/ShardingRules.md): the same
statistics, kept in float64 ("double") and all-reduced over the recipe's
group (the group along the mesh axes whose variant asks for it), the same
formulas forward and backward, the result rounded to the input's dtype.
Where the C++ backward recomputes a forward statistic (layer_norm,
batch_norm, the loss's log-sum-exp), the function saves it instead: the
values are the same, the forward's all-reduces are not made twice.

| function | variant(s) |
| --- | --- |
| split_softmax(log=False/True) | softmax / log_softmax `.split-reduced` |
| split_layer_norm | layer_norm `.split-normalized` |
| sync_batch_norm | batch_norm `.split-batch-sync-stats` (training) |
| cross_entropy | cross_entropy / nll_loss `.split-batch` and `.split-classes` |
| vocab_embedding | gather `.split-vocab` |
| dropout | dropout `.split` (and whole) |
| split_mean | reduce_mean `.split-reduced` |
| once | the `once` operands of `*.partial-once` |
| split_slice | slice `.split-sliced` |

`group` is an AxisGroup (None or one rank: no communication) and `comm` a
gloo_compat.Comm; offsets and counts come from the Runtime (Runtime.offset,
first_on) as lib/Exec derives them from the geometry.
"""

import torch

from .keyed_random import dropout_mask

STATS = torch.float64  # the C++ recipes' double


def _prod(dims):
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _all_reduce(t, group, comm, op="sum"):
    if group is None or group.size == 1:
        return t
    return comm.all_reduce(t.contiguous(), group, op)


# --- softmax / log_softmax over a split axis -----------------------------------

def _softmax_stats(x, axis, group, comm):
    """Row maxima and log-sum-exps over `axis` (kept as size 1), all-reduced."""
    xs = x.detach().to(STATS)
    if xs.shape[axis] == 0:
        shape = list(xs.shape)
        shape[axis] = 1
        m = xs.new_full(shape, float("-inf"))
    else:
        m = xs.amax(axis, keepdim=True)
    m = _all_reduce(m, group, comm, "max")
    s = torch.exp(xs - m).sum(axis, keepdim=True)
    s = _all_reduce(s, group, comm, "sum")
    return m + torch.log(s)


class _SplitSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, axis, group, comm, log):
        lse = _softmax_stats(x, axis, group, comm)
        v = x.detach().to(STATS) - lse
        y = (v if log else torch.exp(v)).to(x.dtype)
        ctx.save_for_backward(y)
        ctx.args = (axis, group, comm, log)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        axis, group, comm, log = ctx.args
        yd, g = y.to(STATS), dy.to(STATS)
        dots = (g if log else g * yd).sum(axis, keepdim=True)
        dots = _all_reduce(dots, group, comm, "sum")
        dx = g - torch.exp(yd) * dots if log else yd * (g - dots)
        return dx.to(dy.dtype), None, None, None, None


def split_softmax(x, axis, group, comm, log=False):
    """softmax (or log_softmax) of x over `axis`, which is split over `group`:
    local max -> all_reduce(max) -> Σ exp -> all_reduce(sum)."""
    return _SplitSoftmax.apply(x, axis % x.dim(), group, comm, log)


# --- layer_norm over split normalised dims ---------------------------------------

class _SplitLayerNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, bias, axis, eps, count, group, comm):
        rows = tuple(x.shape[:axis])
        xs = x.detach().to(STATS).reshape(rows + (_prod(x.shape[axis:]),))
        mean = _all_reduce(xs.sum(-1, keepdim=True), group, comm) / count
        var = _all_reduce(((xs - mean) ** 2).sum(-1, keepdim=True), group, comm)
        rstd = 1.0 / torch.sqrt(var / count + eps)
        xhat = (xs - mean) * rstd
        y = xhat * scale.detach().to(STATS).reshape(-1) + bias.detach().to(STATS).reshape(-1)
        ctx.save_for_backward(x, scale, mean, rstd)
        ctx.args = (axis, count, group, comm, bias.shape)
        return y.reshape(x.shape).to(x.dtype)

    @staticmethod
    def backward(ctx, dy):
        x, scale, mean, rstd = ctx.saved_tensors
        axis, count, group, comm, bias_shape = ctx.args
        rows, cols = tuple(x.shape[:axis]), _prod(x.shape[axis:])
        xhat = (x.to(STATS).reshape(rows + (cols,)) - mean) * rstd
        g = dy.to(STATS).reshape(rows + (cols,))
        dxhat = g * scale.to(STATS).reshape(-1)
        sums = torch.cat([dxhat.sum(-1, keepdim=True), (dxhat * xhat).sum(-1, keepdim=True)], -1)
        sums = _all_reduce(sums, group, comm)
        dx = rstd * (dxhat - sums[..., :1] / count - xhat * sums[..., 1:] / count)
        flat = (_prod(rows), cols)
        dscale = (g * xhat).reshape(flat).sum(0).reshape(scale.shape)
        dbias = g.reshape(flat).sum(0).reshape(bias_shape)
        return (dx.reshape(x.shape).to(dy.dtype), dscale.to(scale.dtype), dbias.to(scale.dtype),
                None, None, None, None, None)


def split_layer_norm(x, scale, bias, axis, eps, count, group, comm):
    """layer_norm over dims axis.. of x, one of them split over `group`;
    scale and bias are this rank's shards of the normalised shape; `count`
    is the global number of normalised elements per row."""
    return _SplitLayerNorm.apply(x, scale, bias, axis % x.dim(), float(eps), float(count),
                                 group, comm)


# --- batch_norm (training) with synchronised statistics -----------------------------

class _SyncBatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, bias, eps, count, group, comm):
        xs = x.detach().to(STATS)
        dims = [0] + list(range(2, x.dim()))
        view = [1, -1] + [1] * (x.dim() - 2)
        mean = _all_reduce(xs.sum(dims), group, comm) / count
        var = _all_reduce(((xs - mean.view(view)) ** 2).sum(dims), group, comm)
        rstd = 1.0 / torch.sqrt(var / count + eps)
        xhat = (xs - mean.view(view)) * rstd.view(view)
        y = xhat * scale.detach().to(STATS).view(view) + bias.detach().to(STATS).view(view)
        ctx.save_for_backward(x, scale, mean, rstd)
        ctx.args = (count, group, comm)
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, dy):
        x, scale, mean, rstd = ctx.saved_tensors
        count, group, comm = ctx.args
        dims = [0] + list(range(2, x.dim()))
        view = [1, -1] + [1] * (x.dim() - 2)
        xhat = (x.to(STATS) - mean.view(view)) * rstd.view(view)
        g = dy.to(STATS)
        local = torch.stack([g.sum(dims), (g * xhat).sum(dims)])
        sums = _all_reduce(local.clone(), group, comm)
        dx = (scale.to(STATS).view(view) * rstd.view(view) *
              (g - sums[0].view(view) / count - xhat * sums[1].view(view) / count))
        return (dx.to(dy.dtype), local[1].to(scale.dtype), local[0].to(scale.dtype),
                None, None, None, None)


def sync_batch_norm(x, scale, bias, eps, count, group, comm):
    """Training batch_norm of x (N×C×…) split along a non-channel dim over
    `group`; `count` is the global number of elements per channel. The
    scale's and bias's gradients stay local (partial sums over the group)."""
    return _SyncBatchNorm.apply(x, scale, bias, float(eps), float(count), group, comm)


# --- cross_entropy / nll_loss split over the batch and/or the classes --------------

class _Loss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, labels, from_logits, class_group, offset, first, batch_group, count,
                mean, ignore_index, comm):
        n, c = x.shape[0], x.shape[1]
        xs = x.detach().to(STATS)
        lab = labels.to(torch.int64)
        valid = torch.ones_like(lab, dtype=torch.bool) if ignore_index is None else lab != ignore_index
        if ignore_index is not None:
            cnt = valid.sum().to(STATS).reshape(1)
            count = float(_all_reduce(cnt, batch_group, comm, "sum").item())
        lse = _softmax_stats(x, 1, class_group, comm).squeeze(1) if from_logits else None
        local = lab - offset
        owned = valid & (local >= 0) & (local < c)
        total = xs.new_zeros(())
        if from_logits and first:
            total = total + torch.where(valid, lse, torch.zeros_like(lse)).sum()
        if c:
            picked = xs.gather(1, local.clamp(0, c - 1).unsqueeze(1)).squeeze(1)
            total = total - torch.where(owned, picked, torch.zeros_like(picked)).sum()
        if mean:
            total = total / count
        ctx.save_for_backward(x, lse if lse is not None else x.new_empty(0), local, valid, owned)
        ctx.args = (from_logits, count, mean, n, c)
        return total.to(x.dtype)

    @staticmethod
    def backward(ctx, dres):
        x, lse, local, valid, owned = ctx.saved_tensors
        from_logits, count, mean, n, c = ctx.args
        scale = dres.to(STATS)
        if mean:
            scale = scale / count
        dx = torch.zeros_like(x, dtype=STATS)
        if from_logits:
            sm = torch.exp(x.to(STATS) - lse.unsqueeze(1))
            dx = torch.where(valid.unsqueeze(1), scale * sm, dx)
        if c:
            hit = torch.zeros_like(dx).scatter_(1, local.clamp(0, c - 1).unsqueeze(1),
                                                owned.unsqueeze(1).to(STATS))
            dx = dx - scale * hit
        return (dx.to(x.dtype),) + (None,) * 10


def cross_entropy(x, labels, *, count, reduction="mean", ignore_index=None, from_logits=True,
                  class_group=None, offset=0, first=True, batch_group=None, comm=None):
    """cross_entropy (from_logits) or nll_loss of x (N×C×d…) and labels
    (N×d…): this rank's partial loss.

    Split classes: `class_group` is the group along the class-split axes,
    `offset` this rank's first class, `first` whether it adds the
    log-sum-exp terms (coordinate 0 on those axes). Split batch:
    `batch_group` is the group along the batch-split axes, over which the
    count of non-ignored labels is all-reduced. `count` is the global number
    of labels (the mean's divisor without ignore_index)."""
    if reduction not in ("mean", "sum"):
        raise ValueError("reduction '%s' (mean or sum)" % reduction)
    return _Loss.apply(x, labels, from_logits, class_group, int(offset), bool(first),
                       batch_group, float(count), reduction == "mean", ignore_index, comm)


# --- the vocabulary-split embedding ------------------------------------------------------

def vocab_embedding(table, indices, axis, offset, global_vocab):
    """gather(table, indices) along `axis`, the table split along it: the
    lookup of index − offset, zero outside this rank's rows (a partial sum
    over the split axes). Negative indices count from global_vocab."""
    axis = axis % table.dim()
    v = table.shape[axis]
    idx = indices.to(torch.int64)
    idx = torch.where(idx < 0, idx + global_vocab, idx) - offset
    mask = (idx >= 0) & (idx < v)
    out_shape = tuple(table.shape[:axis]) + tuple(indices.shape) + tuple(table.shape[axis + 1:])
    if v == 0:
        return table.new_zeros(out_shape) + table.sum() * 0
    picked = table.index_select(axis, torch.where(mask, idx, torch.zeros_like(idx)).reshape(-1))
    keep = mask.reshape(-1).to(table.dtype)
    view = [1] * table.dim()
    view[axis] = -1
    return (picked * keep.view(view)).reshape(out_shape)


# --- dropout keyed by global index -------------------------------------------------------

class _Dropout(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, ratio, seed, op_id, global_shape, offsets):
        ctx.key = (tuple(x.shape), ratio, seed, op_id, global_shape, offsets, x.dtype, x.device)
        return x * dropout_mask(*ctx.key[:6], dtype=x.dtype, device=x.device)

    @staticmethod
    def backward(ctx, dy):
        shape, ratio, seed, op_id, global_shape, offsets, dtype, device = ctx.key
        # The mask is drawn again from its key, not saved.
        return dy * dropout_mask(shape, ratio, seed, op_id, global_shape, offsets,
                                 dtype=dtype, device=device), None, None, None, None, None


def dropout(x, ratio, seed, op_id, global_shape=None, offsets=None):
    """x ⊙ mask, the mask of element e keyed by (seed, op_id, global index
    of e): `offsets` is the shard's box offset in the `global_shape` along
    the axes whose variant is dropout.split (Runtime.offset)."""
    return _Dropout.apply(x, float(ratio), int(seed), int(op_id),
                          tuple(global_shape) if global_shape else None,
                          tuple(offsets) if offsets else None)


# --- small recipes ---------------------------------------------------------------------------

def split_mean(x, dims, count, keepdim=False):
    """reduce_mean.split-reduced: the local sum over `dims` times 1/count,
    `count` the product of the reduced dims' global extents (a partial sum)."""
    return x.sum(dim=tuple(dims), keepdim=keepdim) * (1.0 / float(count))


class _Zeros(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.zeros_like(x)

    @staticmethod
    def backward(ctx, dy):
        return torch.zeros_like(dy)


def once(x, first):
    """An operand added once: x on the rank at coordinate 0 of the axis,
    zeros with a zero gradient on the others. The zeros stay in the autograd
    graph, so every rank runs the backward of what made x (a ZeRO-3 gather's
    reduce-scatter) as the rank that uses x does."""
    if first:
        return x
    return _Zeros.apply(x) if x.requires_grad else torch.zeros_like(x)


def split_slice(x, dim, start, step, offset, size):
    """slice.split-sliced: element k of this rank's shard along `dim` is
    x[start + (offset + k)·step] (x whole along dim)."""
    idx = start + (offset + torch.arange(size, device=x.device)) * step
    return x.index_select(dim, idx)
