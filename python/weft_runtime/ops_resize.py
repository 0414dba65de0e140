"""graph.resize as a local torch function (re-exported by `ops`).

lib/Exec/Resize.cpp's separable resampling: per resampled dim a fixed
linear map whose row j holds the weights of the input elements result
index j reads (the taps of ONNX's reference implementation: source
coordinate, ratio to the left neighbour, kernel coefficients, window of
neighbours, edge clamping). Here each map is a dense (out × in) matrix
applied along its dim, so autograd's backward is the transposed map, as
lib/Exec's.
"""

import functools
import math

import torch


def _source_coordinate(mode, y, extent, out_int, scale):
    """The input coordinate of result index y."""
    out = scale * extent
    if mode == "align_corners":
        return 0.0 if out == 1 else y * (extent - 1) / (out - 1)
    if mode == "asymmetric":
        return y / scale
    if mode == "pytorch_half_pixel":
        return -0.5 if out == 1 else (y + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjustment = out_int / out
        center = extent / 2
        return center * (1 - adjustment) + (y + 0.5) / scale - 0.5
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5
    raise ValueError("resize: unknown coordinate_transformation_mode '%s'" % mode)


def _cubic(x, a):
    x = abs(x)
    if x <= 1:
        return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
    if x < 2:
        return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a
    return 0.0


def _coefficients(p, ratio, scale):
    """The kernel's weights for a source coordinate `ratio` in (0, 1] past
    its left neighbour."""
    if p["mode"] == "nearest":
        if ratio == 1.0:
            return [0.0, 1.0]
        m = p["nearest_mode"]
        if m == "ceil":
            right = True
        elif m == "floor":
            right = False
        elif m == "round_prefer_ceil":
            right = ratio >= 0.5
        elif m == "round_prefer_floor":
            right = ratio > 0.5
        else:
            raise ValueError("resize: unknown nearest_mode '%s'" % m)
        return [0.0, 1.0] if right else [1.0, 0.0]
    a = p["cubic_coeff_a"]
    if p["antialias"]:
        s = scale if scale < 1.0 else 1.0
        if p["mode"] == "linear":
            start = int(math.floor(-1 / s) + 1)
            c = [min(max(1 - abs((i - ratio) * s), 0.0), 1.0)
                 for i in range(start, start + 2 - 2 * start)]
        else:
            start = int(math.floor(-2 / s) + 1)
            c = [_cubic(s * (i - ratio), a) for i in range(start, 2 - start)]
        total = sum(c)
        return [v / total for v in c]
    if p["mode"] == "linear":
        return [1 - ratio, ratio]
    if p["mode"] != "cubic":
        raise ValueError("resize: unknown mode '%s'" % p["mode"])
    r1, q = ratio + 1, 1 - ratio
    q1 = q + 1
    return [((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a,
            ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
            ((a + 2) * q - (a + 3)) * q * q + 1,
            ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a]


def resize_matrix(extent, out, scale, params):
    """The (out × extent) float64 map of one resampled dim (cached: every
    step resamples with the same maps; do not modify the result)."""
    return _resize_matrix(extent, out, scale, tuple(sorted(params.items())))


@functools.lru_cache(maxsize=256)
def _resize_matrix(extent, out, scale, items):
    params = dict(items)
    m = torch.zeros(out, extent, dtype=torch.float64)
    for y in range(out):
        x = _source_coordinate(params["coordinate_transformation_mode"], float(y), extent,
                               out, scale)
        x_int = math.floor(x)
        ratio = 1.0 if x == x_int else x - x_int
        c = _coefficients(params, ratio, scale)
        n = len(c)
        # The n neighbours nearest x (ties to the smaller index), in the
        # coordinates of the input padded by ⌈n/2⌉ at both ends.
        pad = (n + 1) // 2
        xp = x + pad
        pp = math.floor(xp)
        frac = xp - pp
        if n % 2 == 0:
            offset = -(n // 2) if frac == 0 else -(n // 2) + 1
        else:
            offset = -((n - 1) // 2) if frac <= 0.5 else -((n - 1) // 2) + 1
        start = int(pp) + offset - pad
        if params["exclude_outside"]:
            c = [0.0 if start + i < 0 or start + i >= extent else c[i] for i in range(n)]
            total = sum(c)
            if total != 0:
                c = [v / total for v in c]
        for i in range(n):
            m[y, min(max(start + i, 0), extent - 1)] += c[i]
    return m


def resize(input, runtime_scales=None, *, mode, coordinate_transformation_mode,  # noqa: A002
           scales, shape, nearest_mode="round_prefer_floor", cubic_coeff_a=-0.75,
           exclude_outside=False, antialias=False):
    """ONNX Resize into the local result `shape`. A dim whose scale is 1 and
    whose extent is unchanged is copied (the only dims a plan splits); with
    `runtime_scales` the other dims take their scale from that tensor, each
    checked to give the result's extent."""
    params = {"mode": mode, "coordinate_transformation_mode": coordinate_transformation_mode,
              "nearest_mode": nearest_mode, "cubic_coeff_a": float(cubic_coeff_a),
              "exclude_outside": bool(exclude_outside), "antialias": bool(antialias)}
    shape = [int(d) for d in shape]
    scales = [float(s) for s in scales]
    if len(scales) != input.dim() or len(shape) != input.dim():
        raise ValueError("resize: %d scales and a result of rank %d for an input of rank %d"
                         % (len(scales), len(shape), input.dim()))
    if runtime_scales is not None:
        given = [float(v) for v in runtime_scales.detach().reshape(-1).tolist()]
        if len(given) != input.dim():
            raise ValueError("resize: %d run-time scales for a tensor of rank %d"
                             % (len(given), input.dim()))
        for d, s in enumerate(given):
            if scales[d] == 1.0 and input.shape[d] == shape[d]:
                if s != 1.0:
                    raise ValueError("resize: run-time scale %g of dim %d, where the shapes "
                                     "say 1" % (s, d))
                continue
            if not s > 0 or math.floor(input.shape[d] * s) != shape[d]:
                raise ValueError("resize: run-time scale %g of dim %d does not give extent %d"
                                 % (s, d, shape[d]))
            scales[d] = s
    y = input
    for d in range(input.dim()):
        extent, out = int(y.shape[d]), shape[d]
        if extent == out and abs(scales[d] - 1.0) <= 1e-9:
            continue
        m = resize_matrix(extent, out, scales[d], params).to(dtype=y.dtype, device=y.device)
        y = torch.movedim(torch.matmul(torch.movedim(y, d, -1), m.t()), -1, d)
    return y
