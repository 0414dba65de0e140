"""Data-movement graph ops as local torch functions (re-exported by `ops`).

Shapes the emitter passes are the LOCAL ones of the shard (`shape=` of
reshape and flatten, `shapes=` of split). `slice` and the scatters also
take where the shard sits in the global tensor, as lib/Exec's SPMD
interpreter gives its clones (SpmdLocal.cpp `localAttributes`,
SpmdLocalRun.cpp's view): without them they compute the op whole.
"""

import builtins

import torch


def _ints(values):
    return tuple(builtins.int(v) for v in values)


def reshape(input, shape):  # noqa: A002 - the operand's name
    """The same elements in row-major order, in the local result `shape`."""
    return input.reshape(_ints(shape))


def flatten(input, axis, shape=None):  # noqa: A002
    """Dims before `axis` → dim 0, the rest → dim 1 (`shape`: local result)."""
    if shape is None:
        axis = axis % input.dim() if input.dim() else 0
        lead = 1
        for d in input.shape[:axis]:
            lead *= builtins.int(d)
        shape = (lead, input.numel() // lead if lead else 0)
    return input.reshape(_ints(shape))


def transpose(input, perm):  # noqa: A002
    """Result dim i is input dim perm[i]."""
    return input.permute(_ints(perm))


def concat(*inputs, axis):
    return torch.cat(inputs, axis)


def split(input, axis, shapes):  # noqa: A002
    """Consecutive pieces along `axis`, one per result; `shapes` are the
    results' local shapes. Returns a tuple."""
    axis = axis % input.dim()
    return tuple(torch.split(input, [builtins.int(s[axis]) for s in shapes], axis))


def local_slice_window(starts, limits, steps, local_in, global_in=None, global_out=None,
                       box=None):
    """The starts, limits and steps of a shard's slice (SpmdLocal.cpp's
    `localAttributes`): a dim the input holds whole but the result holds
    in part is `slice.split-sliced` (the device's part of the window,
    starting at starts[d] + offset·steps[d]); a dim the input holds in part
    (`slice.split`) keeps the shard whole."""
    starts, limits, steps = list(_ints(starts)), list(_ints(limits)), list(_ints(steps))
    if global_in is None or global_out is None or box is None:
        return starts, limits, steps
    offsets, extents = box
    for d in range(builtins.min(len(starts), len(global_in))):
        in_local, out_local = builtins.int(local_in[d]), builtins.int(extents[d])
        if in_local == global_in[d] and out_local != global_out[d]:
            starts[d] = starts[d] + builtins.int(offsets[d]) * steps[d]
            limits[d] = starts[d] + out_local * steps[d]
        elif in_local != global_in[d]:
            starts[d], limits[d], steps[d] = 0, in_local, 1
    return starts, limits, steps


def slice(input, starts, limits, steps, global_in=None, global_out=None,  # noqa: A001
          box=None):
    """Elements starts[d], starts[d] + steps[d], … below limits[d] of every
    dim; with `global_in`, `global_out` (global shapes) and `box` (offsets,
    extents of the result shard) the shard's own window."""
    starts, limits, steps = local_slice_window(starts, limits, steps, input.shape,
                                               global_in, global_out, box)
    index = tuple(builtins.slice(s, builtins.max(s, l), t)
                  for s, l, t in zip(starts, limits, steps))
    return input[index]


def _normalised(indices, extent):
    """int64 indices with negative ones counted from the end of `extent`."""
    idx = indices.to(torch.int64)
    return torch.where(idx < 0, idx + extent, idx)


def gather(data, indices, axis):
    """data[..., indices[j...], ...] along `axis` (negative indices count
    from the end); the backward scatter-adds into the data."""
    axis = axis % data.dim()
    idx = _normalised(indices, data.shape[axis])
    picked = data.index_select(axis, idx.reshape(-1))
    shape = tuple(data.shape[:axis]) + tuple(indices.shape) + tuple(data.shape[axis + 1:])
    return picked.reshape(shape)


def gather_elements(data, indices, axis):
    """The element of data at each index position with its `axis`
    coordinate replaced by the index (torch.gather; negatives from the end)."""
    axis = axis % data.dim()
    return torch.gather(data, axis, _normalised(indices, data.shape[axis]))


# --- scatters ---------------------------------------------------------------------------------

def _local_position(v, extent, global_extent, offset):
    """lib/Exec/Scatter.cpp's localIndex: global index v (negative from the
    global end) minus the shard's offset; −1 outside the shard."""
    v = torch.where(v < 0, v + global_extent, v) - offset
    return torch.where((v >= 0) & (v < extent), v, torch.full_like(v, -1))


def _view(data, dim, global_shape, box):
    """(global extent, offset) of `dim`: the shard's, or the whole tensor's."""
    extent = builtins.int(data.shape[dim])
    if global_shape is None:
        return extent, 0
    offset = builtins.int(box[0][dim]) if box is not None else 0
    return builtins.int(global_shape[dim]), offset


def scatter_elements_targets(data, indices, axis, global_shape=None, box=None):
    """The flat position in `data` of each update (row-major over the
    indices), −1 for an update outside the shard."""
    axis = axis % data.dim()
    idx = indices.to(torch.int64)
    g_extent, offset = _view(data, axis, global_shape, box)
    pos = _local_position(idx, data.shape[axis], g_extent, offset)
    strides = _strides(data.shape)
    target = torch.zeros_like(idx)
    for d in range(idx.dim()):
        if d == axis:
            coord = pos
        else:
            view = [1] * idx.dim()
            view[d] = idx.shape[d]
            coord = torch.arange(idx.shape[d], device=idx.device).view(view)
        target = target + coord * strides[d]
    return torch.where(pos >= 0, target, torch.full_like(target, -1)).reshape(-1)


def _strides(shape):
    strides, n = [], 1
    for d in reversed(shape):
        strides.append(n)
        n *= builtins.int(d)
    return list(reversed(strides))


def scatter_nd_targets(data, indices, global_shape=None, box=None):
    """Flat positions of the updates of a ScatterND: tuple u addresses the
    slice data[i0, …, ik−1, …]; −1 outside the shard."""
    idx = indices.to(torch.int64)
    k = builtins.int(idx.shape[-1])
    tuples = idx.reshape(-1, k) if k else idx.reshape(-1, 0)
    strides = _strides(data.shape)
    base = torch.zeros(tuples.shape[0], dtype=torch.int64, device=idx.device)
    inside = torch.ones(tuples.shape[0], dtype=torch.bool, device=idx.device)
    for j in range(k):
        g_extent, offset = _view(data, j, global_shape, box)
        pos = _local_position(tuples[:, j], data.shape[j], g_extent, offset)
        inside = inside & (pos >= 0)
        base = base + pos * strides[j]
    size = 1
    for d in data.shape[k:]:
        size *= builtins.int(d)
    targets = base.unsqueeze(1) + torch.arange(size, device=idx.device).unsqueeze(0)
    targets = torch.where(inside.unsqueeze(1), targets, torch.full_like(targets, -1))
    return targets.reshape(-1)


def _ranks_within_target(targets):
    """For each update, how many earlier updates share its target."""
    n = targets.numel()
    if n == 0:
        return targets.clone()
    order = torch.sort(targets, stable=True).indices
    sorted_t = targets[order]
    position = torch.arange(n, device=targets.device)
    start = torch.ones(n, dtype=torch.bool, device=targets.device)
    start[1:] = sorted_t[1:] != sorted_t[:-1]
    first = torch.cummax(torch.where(start, position, torch.zeros_like(position)), 0).values
    ranks = torch.empty_like(targets)
    ranks[order] = position - first
    return ranks


def scatter_combine(data, updates, targets, reduction):
    """A copy of data with each update combined into its target (targets
    from scatter_*_targets; −1 skipped), lib/Exec/Scatter.cpp's rules:
    `none` keeps the last write, `max`/`min` keep the data on ties, then
    the earliest update; gradients as docs/Dialects/Graph.md states."""
    flat = data.reshape(-1)
    upd = updates.reshape(-1)
    valid = targets >= 0
    t = targets[valid]
    u = upd[valid]
    number = torch.arange(upd.numel(), device=upd.device)[valid]
    n = flat.numel()
    if reduction == "add":
        return flat.index_add(0, t, u).reshape(data.shape)
    if reduction == "none":
        # The last update written to a position is the one that shows.
        last = torch.full((n,), -1, dtype=torch.int64, device=flat.device)
        last = last.scatter_reduce(0, t, number, "amax")
        written = last >= 0
        shown = upd.index_select(0, torch.where(written, last, torch.zeros_like(last)))
        return torch.where(written, shown, flat).reshape(data.shape)
    if reduction == "mul":
        # data · Π u as one factor per update rank: each factor holds at
        # most one update per position, so the product's gradient is
        # dy·data·Π_{j≠i} u_j without a division (lib/Exec's).
        ranks = _ranks_within_target(t)
        out = flat
        for r in range(builtins.int(ranks.max()) + 1 if ranks.numel() else 0):
            level = ranks == r
            factor = torch.ones_like(flat).index_put((t[level],), u[level])
            out = out * factor
        return out.reshape(data.shape)
    if reduction in ("max", "min"):
        is_max = reduction == "max"
        best = flat.detach().clone().scatter_reduce(0, t, u.detach(), "amax" if is_max else "amin",
                                                    include_self=False)
        beats = (u > flat[t]) if is_max else (u < flat[t])
        hit = beats & (u == best[t])
        none = torch.full((n,), upd.numel(), dtype=torch.int64, device=flat.device)
        winner = none.scatter_reduce(0, t[hit], number[hit], "amin")
        won = winner < upd.numel()
        kept = upd.index_select(0, torch.where(won, winner, torch.zeros_like(winner)))
        return torch.where(won, kept, flat).reshape(data.shape)
    raise ValueError("scatter: unknown reduction '%s' (none, add, mul, max or min)" % reduction)


def scatter_elements(data, indices, updates, axis, reduction="none", global_shape=None,
                     box=None):
    """ONNX ScatterElements. `global_shape` (the data's global shape) and
    `box` ((offsets, extents) of the result shard) place a shard: indices
    name global positions along `axis`, updates outside the shard are
    dropped."""
    targets = scatter_elements_targets(data, indices, axis, global_shape, box)
    return scatter_combine(data, updates, targets, reduction)


def scatter_nd(data, indices, updates, reduction="none", global_shape=None, box=None):
    """ONNX ScatterND; `global_shape` and `box` as scatter_elements (the
    offsets apply to the k indexed dims)."""
    targets = scatter_nd_targets(data, indices, global_shape, box)
    return scatter_combine(data, updates, targets, reduction)
