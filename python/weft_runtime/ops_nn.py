"""Compute graph ops as local torch functions (re-exported by `ops`):
matmul, convolutions, pools, normalisations, softmax, reductions, losses,
top-2 gating and dropout.

Padding is explicit (pads = [before each spatial dim, after each]), so
asymmetric pads and a pool's ceil padding work as lib/Exec's; a
convolution's group count is the shard's (SpmdLocal.cpp's
`localAttributes`). Reductions of empty shards follow lib/Exec (a maximum
over nothing is −∞; an integer one the lowest negatable int64).
"""

import builtins

import torch
import torch.nn.functional as F

from . import recipes

_INT64_LOWEST = -(2 ** 63 - 1)


def _ints(values):
    return tuple(builtins.int(v) for v in values)


def matmul(lhs, rhs):
    """Batched matrix product with broadcast batch dims (ONNX MatMul)."""
    return torch.matmul(lhs, rhs)


# --- convolutions -----------------------------------------------------------------------------

def _conv2d_group(input, weight, group):  # noqa: A002
    """conv2d.split-groups: the shard's group count is its input channels
    over the weight's channels per group (when they divide)."""
    c, per_group = builtins.int(input.shape[1]), builtins.int(weight.shape[1])
    if per_group > 0 and c > 0 and c % per_group == 0:
        return c // per_group
    return builtins.int(group)


def conv2d(input, weight, bias=None, *, strides, pads, dilations, group):  # noqa: A002
    """ONNX Conv on N×C×H×W with O×(C/group)×KH×KW weights; pads [top,
    left, bottom, right]; `group` is the global count, the shard's is
    derived from the operand shapes."""
    top, left, bottom, right = _ints(pads)
    x = F.pad(input, (left, right, top, bottom)) if any((top, left, bottom, right)) else input
    if 0 in (builtins.int(input.shape[1]), builtins.int(weight.shape[0]),
             builtins.int(weight.shape[1])):
        # An empty shard of the channels: torch refuses no output channels
        # and gives an empty result for no input channels, where the
        # shard's value is the bias alone (a partial sum of nothing).
        (sh, sw), (dh, dw) = _ints(strides), _ints(dilations)
        kh, kw = builtins.int(weight.shape[2]), builtins.int(weight.shape[3])
        oh = (builtins.int(x.shape[2]) - dh * (kh - 1) - 1) // sh + 1
        ow = (builtins.int(x.shape[3]) - dw * (kw - 1) - 1) // sw + 1
        return _empty_result(x, weight, bias, (x.shape[0], weight.shape[0], oh, ow))
    return F.conv2d(x, weight, bias, _ints(strides), 0, _ints(dilations),
                    _conv2d_group(input, weight, group))


def _empty_result(x, weight, bias, shape):
    """Zeros of `shape` plus the bias, still a function of x and weight (their
    gradients are zeros) so every rank runs the same backward."""
    y = (x.sum() + weight.sum()) * 0 + x.new_zeros(tuple(builtins.int(d) for d in shape))
    if bias is not None:
        y = y + bias.reshape(1, -1, 1, 1)
    return y


def _conv_transpose2d_group(input, weight, bias, group, shape):  # noqa: A002
    """conv_transpose2d.split-groups: the shard's group count is its result
    channels over the weight's output channels per group (weight dim 1);
    the result channels come from `shape` or the bias."""
    per_group = builtins.int(weight.shape[1])
    out = None
    if shape is not None:
        out = builtins.int(shape[1])
    elif bias is not None:
        out = builtins.int(bias.shape[0])
    if out is not None and per_group > 0 and out > 0 and out % per_group == 0:
        return out // per_group
    return builtins.int(group)


def conv_transpose2d(input, weight, bias=None, *, strides, pads, dilations,  # noqa: A002
                     output_padding, group, shape=None):
    """ONNX ConvTranspose on N×C×H×W with C×(O/group)×KH×KW weights: the
    full transposed convolution, cropped by pads [top, left, bottom,
    right] and extended by `output_padding` rows and columns that only the
    bias reaches. `shape` (optional) is the local result shape: with a
    split of the groups and no bias it gives the shard's group count."""
    sh, sw = _ints(strides)
    top, left, bottom, right = _ints(pads)
    dh, dw = _ints(dilations)
    oph, opw = _ints(output_padding)
    groups = _conv_transpose2d_group(input, weight, bias, group, shape)
    if 0 in (builtins.int(input.shape[1]), builtins.int(weight.shape[1])):
        # An empty shard of the channels (see conv2d).
        kh, kw = builtins.int(weight.shape[2]), builtins.int(weight.shape[3])
        out = (builtins.int(shape[1]) if shape is not None
               else builtins.int(weight.shape[1]) * groups)
        full = _empty_result(input, weight, None, (
            input.shape[0], out, (builtins.int(input.shape[2]) - 1) * sh + dh * (kh - 1) + 1,
            (builtins.int(input.shape[3]) - 1) * sw + dw * (kw - 1) + 1))
    else:
        full = F.conv_transpose2d(input, weight, None, (sh, sw), 0, 0, groups, (dh, dw))
    fh, fw = builtins.int(full.shape[2]), builtins.int(full.shape[3])
    oh, ow = fh - top - bottom + oph, fw - left - right + opw
    # Rows and columns past the full output (output padding) are zeros.
    extra_h = builtins.max(0, top + oh - fh)
    extra_w = builtins.max(0, left + ow - fw)
    if extra_h or extra_w:
        full = F.pad(full, (0, extra_w, 0, extra_h))
    y = full[:, :, top:top + oh, left:left + ow]
    if bias is not None:
        y = y + bias.reshape(1, -1, 1, 1)
    return y


# --- pools ------------------------------------------------------------------------------------

def _window(input, kernel, strides, pads, dilations):  # noqa: A002
    spatial = input.dim() - 2
    if spatial not in (1, 2, 3):
        raise ValueError("pool: %d spatial dims (1 to 3)" % spatial)
    kernel, strides = _ints(kernel), _ints(strides)
    dilations = _ints(dilations) if dilations is not None else (1,) * spatial
    pads = _ints(pads)
    # F.pad lists the last dim first: (before, after) per dim.
    padding = []
    for d in reversed(range(spatial)):
        padding += [pads[d], pads[spatial + d]]
    return spatial, kernel, strides, dilations, tuple(padding)


def max_pool(input, kernel, strides, pads, dilations=None):  # noqa: A002
    """Maximum of each window of the −∞-padded input; the gradient goes to
    each window's first maximum (torch's CPU kernels, as lib/Exec)."""
    spatial, kernel, strides, dilations, padding = _window(input, kernel, strides, pads,
                                                           dilations)
    x = F.pad(input, padding, value=float("-inf")) if any(padding) else input
    fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[spatial - 1]
    if builtins.int(x.shape[1]) == 0:
        # An empty channel shard: torch pools an empty batch, not empty
        # channels, so the channels go to the batch dim and back.
        n = builtins.int(x.shape[0])
        out = fn(x.reshape((0, 1) + tuple(x.shape[2:])), kernel, strides, 0, dilations)
        return out.reshape((n, 0) + tuple(out.shape[2:]))
    return fn(x, kernel, strides, 0, dilations)


def avg_pool(input, kernel, strides, pads, dilations=None, exclude_pad=False):  # noqa: A002
    """Average of each window of the zero-padded input, divided by the
    kernel's size, or with `exclude_pad` by the window's input positions
    (0 for a window of padding only). The windows are summed by a
    convolution with ones, which also dilates."""
    spatial, kernel, strides, dilations, padding = _window(input, kernel, strides, pads,
                                                           dilations)
    n, c = builtins.int(input.shape[0]), builtins.int(input.shape[1])
    planes = input.reshape((n * c, 1) + tuple(input.shape[2:]))
    conv = (F.conv1d, F.conv2d, F.conv3d)[spatial - 1]
    ones = torch.ones((1, 1) + kernel, dtype=input.dtype, device=input.device)
    sums = conv(F.pad(planes, padding) if any(padding) else planes, ones, None, strides, 0,
                dilations)
    if exclude_pad:
        inside = torch.ones((1, 1) + tuple(input.shape[2:]), dtype=input.dtype,
                            device=input.device)
        count = conv(F.pad(inside, padding) if any(padding) else inside, ones, None, strides,
                     0, dilations)
        safe = torch.where(count > 0, count, torch.ones_like(count))
        out = torch.where(count > 0, sums / safe, torch.zeros_like(sums))
    else:
        size = 1
        for k in kernel:
            size *= k
        out = sums / size
    return out.reshape((n, c) + tuple(out.shape[2:]))


def global_avg_pool(input):  # noqa: A002
    """N×C×… → N×C×1…: the mean over every spatial dim."""
    return input.mean(dim=tuple(range(2, input.dim())), keepdim=True)


# --- softmax and normalisation ----------------------------------------------------------------

def softmax(input, axis):  # noqa: A002
    return torch.softmax(input, axis)


def log_softmax(input, axis):  # noqa: A002
    return torch.log_softmax(input, axis)


def layer_norm(input, scale, bias, axis, epsilon):  # noqa: A002
    """Normalise over dims axis… (biased variance), then scale and bias of
    the normalised shape."""
    axis = axis % input.dim()
    return F.layer_norm(input, tuple(input.shape[axis:]), scale, bias, float(epsilon))


def batch_norm(input, scale, bias, running_mean, running_var, epsilon,  # noqa: A002
               momentum=0.9, training=False):
    """Per-channel normalisation of N×C×…: with `training` by the batch's
    statistics (biased variance; differentiated through), else by the
    running ones. Running statistics are never updated (lib/Exec)."""
    view = [1, -1] + [1] * (input.dim() - 2)
    if training:
        dims = [0] + list(range(2, input.dim()))
        mean = input.mean(dim=dims, keepdim=True)
        var = ((input - mean) ** 2).mean(dim=dims, keepdim=True)
    else:
        mean = running_mean.detach().reshape(view)
        var = running_var.detach().reshape(view)
    xhat = (input - mean) * torch.rsqrt(var + float(epsilon))
    return xhat * scale.reshape(view) + bias.reshape(view)


# --- reductions -------------------------------------------------------------------------------

def _reduced_shape(x, axes, keepdims):
    return tuple(1 if d in axes else s for d, s in enumerate(x.shape)
                 if keepdims or d not in axes)


def reduce_sum(input, axes, keepdims):  # noqa: A002
    axes = _ints(axes)
    return input.sum(dim=axes, keepdim=keepdims) if axes else input


def reduce_mean(input, axes, keepdims):  # noqa: A002
    """The mean over `axes`; integers truncate toward zero (lib/Exec's)."""
    axes = _ints(axes)
    if not axes:
        return input
    if input.is_floating_point():
        return input.mean(dim=axes, keepdim=keepdims)
    count = 1
    for a in axes:
        count *= builtins.int(input.shape[a])
    s = input.to(torch.float64).sum(dim=axes, keepdim=keepdims)
    return torch.trunc(s / count if count else s).to(input.dtype)


def reduce_max(input, axes, keepdims):  # noqa: A002
    """The maximum over `axes`; ties share the gradient evenly (torch.amax,
    as lib/Exec); over nothing −∞ (integers: −(2⁶³ − 1))."""
    axes = _ints(axes)
    if not axes:
        return input
    if any(input.shape[a] == 0 for a in axes):
        low = float("-inf") if input.is_floating_point() else _INT64_LOWEST
        return torch.full(_reduced_shape(input, axes, keepdims), low, dtype=input.dtype,
                          device=input.device) + input.sum() * 0
    return torch.amax(input, dim=axes, keepdim=keepdims)


# --- losses -----------------------------------------------------------------------------------

def _loss(x, labels, reduction, ignore_index, from_logits):
    """cross_entropy / nll_loss of N×C×d… against N×d… labels (class dim 1;
    lib/Exec/Loss.cpp): ignored labels add nothing and do not count in the
    mean (a mean over none is NaN); `none` keeps one loss per position."""
    lab = labels.to(torch.int64)
    keep = torch.ones_like(lab, dtype=torch.bool) if ignore_index is None else lab != ignore_index
    # A label out of [0, C) (not ignored) makes gather raise.
    picked = x.gather(1, torch.where(keep, lab, torch.zeros_like(lab)).unsqueeze(1)).squeeze(1)
    per = torch.logsumexp(x, 1) - picked if from_logits else -picked
    per = torch.where(keep, per, torch.zeros_like(per))
    if reduction == "none":
        return per
    if reduction == "sum":
        return per.sum()
    if reduction == "mean":
        return per.sum() / keep.sum().to(x.dtype)
    raise ValueError("loss: unknown reduction '%s' (mean, sum or none)" % reduction)


def cross_entropy(input, labels, reduction="mean", ignore_index=None):  # noqa: A002
    """Softmax cross-entropy of the logits (class dim 1)."""
    return _loss(input, labels, reduction, ignore_index, True)


def nll_loss(input, labels, reduction="mean", ignore_index=None):  # noqa: A002
    """Negative log-likelihood of log-probabilities (class dim 1)."""
    return _loss(input, labels, reduction, ignore_index, False)


# --- top-2 gating -----------------------------------------------------------------------------

def _slots(choice, free, capacity):
    """Per token, the slot `choice` (G×S one-hot over E) takes: the next of
    its expert's slots in token order after `free` (G×E) used ones, or −1
    when the expert is full."""
    rank = torch.cumsum(choice, 1) - choice  # earlier tokens of the same expert
    slot = ((rank + free.unsqueeze(1)) * choice).sum(-1)
    return torch.where(slot < capacity, slot, torch.full_like(slot, -1))


def top2_gating(tokens, gate, shapes):
    """GShard top-2 gating (lib/Exec/Gating.cpp): p = softmax(tokens·gate)
    over E experts; each token's best expert (lowest index on ties) and
    second best get gates p1/(p1+p2), p2/(p1+p2); per group, tokens take
    the next free slot of their expert in token order, first choices before
    second choices, dropped when it is full. `shapes` are the two local
    result shapes (G×S×E×C). Returns (dispatch, combine); only combine has
    a gradient (through the gates and the softmax, choices held fixed)."""
    capacity = builtins.int(shapes[0][3])
    probs = torch.softmax(torch.matmul(tokens, gate), 2)
    g, s, e = (builtins.int(d) for d in probs.shape)
    p = probs.detach()
    first = torch.argmax(p, 2)
    if e > 1:
        masked = p.scatter(2, first.unsqueeze(2), float("-inf"))
        second = torch.argmax(masked, 2)
        p1 = probs.gather(2, first.unsqueeze(2)).squeeze(2)
        p2 = probs.gather(2, second.unsqueeze(2)).squeeze(2)
        gates = [p1 / (p1 + p2), p2 / (p1 + p2)]
        choices = [first, second]
    else:
        # One expert: its gate is the constant 1.
        gates = [torch.ones((g, s), dtype=probs.dtype, device=probs.device)]
        choices = [first]
    dispatch = torch.zeros((g, s, e, capacity), dtype=probs.dtype, device=probs.device)
    combine = torch.zeros_like(dispatch)
    free = torch.zeros((g, e), dtype=torch.int64, device=probs.device)
    for choice, weight in zip(choices, gates):
        one_hot = F.one_hot(choice, e).to(torch.int64)
        slot = _slots(one_hot, free, capacity)
        kept = slot >= 0
        free = torch.clamp(free + one_hot.sum(1), max=capacity)
        place = (one_hot.unsqueeze(3) *
                 F.one_hot(torch.where(kept, slot, torch.zeros_like(slot)), capacity)
                 .unsqueeze(2) * kept.unsqueeze(2).unsqueeze(3)).to(probs.dtype)
        dispatch = dispatch + place
        combine = combine + place * weight.unsqueeze(2).unsqueeze(3)
    return dispatch, combine


def dropout(input, ratio, seed=0, op_id=0, global_shape=None, offsets=None):  # noqa: A002
    """recipes.dropout: the mask keyed by (seed, op id, global index)."""
    return recipes.dropout(input, ratio, seed, op_id, global_shape, offsets)
