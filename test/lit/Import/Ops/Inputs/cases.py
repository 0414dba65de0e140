"""The cases of generate.py: each op's model, NumPy reference and checks."""
import itertools

import numpy as np

from generate import Case, rng

F = np.float32
I = np.int64


def away(x, points, margin=0.1):
    """Moves elements of x at least `margin` off each of `points`."""
    x = np.array(x, dtype=np.float64)
    for p in points:
        close = np.abs(x - p) < margin
        x[close] = p + np.where(x[close] >= p, margin, -margin)
    return x


def distinct(seed, shape, scale=1.0):
    """Values 0.05·scale apart in a random order: no ties in a window."""
    n = int(np.prod(shape))
    return (rng(seed).permutation(n) - n / 2).reshape(shape) * 0.05 * scale


def pool(x, kind, kernel, strides=None, pads=None, dilations=None,
         ceil=False, count_pad=False, p=2):
    """ONNX's pools (onnx.reference's arithmetic): windows over the padded
    input, ceil_mode dropping a last window that starts in the end padding;
    an average over the in-bounds elements, or over the padded input's with
    count_include_pad; LpPool the kernel size times that average of |x|^p."""
    spatial = x.ndim - 2
    strides = strides or [1] * spatial
    dilations = dilations or [1] * spatial
    pads = pads or [0] * (2 * spatial)
    ins = x.shape[2:]
    outs = []
    for d in range(spatial):
        span = dilations[d] * (kernel[d] - 1) + 1
        room = ins[d] + pads[d] + pads[spatial + d] - span
        o = (-(-room // strides[d]) if ceil else room // strides[d]) + 1
        if ceil and (o - 1) * strides[d] >= ins[d] + pads[d]:
            o -= 1
        outs.append(o)
    y = np.zeros(x.shape[:2] + tuple(outs))
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*[range(v) for v in outs]):
            vals, counted = [], 0
            for k in itertools.product(*[range(v) for v in kernel]):
                pos = [o[d] * strides[d] - pads[d] + k[d] * dilations[d]
                       for d in range(spatial)]
                inside = all(0 <= pos[d] < ins[d] for d in range(spatial))
                padded = all(-pads[d] <= pos[d] < ins[d] + pads[spatial + d]
                             for d in range(spatial))
                counted += padded
                if inside:
                    vals.append(x[(n, c) + tuple(pos)])
            vals = np.array(vals)
            if kind == "max":
                y[(n, c) + o] = vals.max()
            elif kind == "avg":
                y[(n, c) + o] = vals.sum() / (counted if count_pad
                                              else len(vals))
            else:
                y[(n, c) + o] = (np.prod(kernel) * (np.abs(vals) ** p).sum()
                                 / counted) ** (1.0 / p)
    return y


def take(data, indices, axis):
    idx = np.where(indices < 0, indices + data.shape[axis], indices)
    return np.take_along_axis(data, idx, axis)


def hardmax(x, axis):
    first = np.argmax(x, axis=axis)
    return (np.arange(x.shape[axis]).reshape(
        [-1 if d == axis % x.ndim else 1 for d in range(x.ndim)]) ==
        np.expand_dims(first, axis)).astype(np.float64)


def shrink(x, lambd, bias):
    return np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0.0))


def lp_normalize(x, axis, p):
    norm = (np.abs(x) ** p).sum(axis=axis, keepdims=True) ** (1.0 / p)
    return np.where(norm == 0, 0.0, x / np.where(norm == 0, 1.0, norm))


def trig():
    a = np.clip(rng(1).standard_normal(6), -2, 2)
    b = rng(2).uniform(-0.85, 0.85, 6)
    c = rng(3).uniform(1.2, 3.0, 6)
    ops = [("Sin", "a", np.sin), ("Cos", "a", np.cos), ("Tan", "b", np.tan),
           ("Asin", "b", np.arcsin), ("Acos", "b", np.arccos),
           ("Atan", "a", np.arctan), ("Sinh", "a", np.sinh),
           ("Cosh", "a", np.cosh), ("Asinh", "a", np.arcsinh),
           ("Acosh", "c", np.arccosh), ("Atanh", "b", np.arctanh)]
    nodes = ["y%d = %s(%s)" % (i, op, x) for i, (op, x, _) in enumerate(ops)]
    nodes.append("y = Concat <axis = 0> (%s)" %
                 ", ".join("y%d" % i for i in range(len(ops))))
    checks = ['CHECK-DAG: %[[A:[0-9]+]] = graph.parameter "a"',
              'CHECK-DAG: %[[B:[0-9]+]] = graph.parameter "b"',
              'CHECK-DAG: %[[C:[0-9]+]] = graph.parameter "c"']
    for op, x, _ in ops:
        checks.append("CHECK: graph.%s %%[[%s]] : tensor<6xf32>" %
                      (op.lower(), x.upper()))
    return Case(
        "trig",
        "Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh:\n"
        "one graph op each; the inverses on their domains (|b| < 1, c > 1).",
        nodes, {"a": (a, F), "b": (b, F), "c": (c, F)},
        lambda v: np.concatenate([f(v[x]) for _, x, f in ops]), checks)


def rounding():
    x = away(rng(4).uniform(-3, 3, 8), np.arange(-3.5, 4, 0.5))
    h = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])
    return Case(
        "rounding",
        "Floor, Ceil, Round (halves to even): piecewise constant, so the\n"
        "gradient is zero; x keeps 0.1 off every integer and half, where the\n"
        "central differences are zero too (the halves h are frozen).",
        ["f = Floor(x)", "c = Ceil(x)", "r = Round(x)", "rh = Round(h)",
         "y = Concat <axis = 0> (f, c, r, rh)"],
        {"x": (x, F), "h": (h, F)},
        lambda v: np.concatenate([np.floor(v["x"]), np.ceil(v["x"]),
                                  np.rint(v["x"]), np.rint(v["h"])]),
        ['CHECK-DAG: %[[X:[0-9]+]] = graph.parameter "x"',
         "CHECK: graph.floor %[[X]] : tensor<8xf32>",
         "CHECK: graph.ceil %[[X]] : tensor<8xf32>",
         "CHECK: graph.round %[[X]] : tensor<8xf32>",
         "CHECK: graph.round %{{[0-9]+}} : tensor<6xf32>"], frozen=["h"])


def gather_elements():
    d = rng(5).standard_normal((3, 4))
    i0 = np.array([[2, -1, 0, 1], [0, 0, -3, 2]])
    e = rng(6).standard_normal((2, 5, 3))
    i1 = np.array([[[4, 0, 1], [-1, 4, 4]], [[2, 2, 0], [0, -5, 3]]])
    return Case(
        "gather-elements",
        "GatherElements along the first axis (negative indices count from\n"
        "the end) and along a middle axis with fewer indices than data; an\n"
        "element read twice gets both gradients (scatter-add).",
        ["y = GatherElements <axis = 0> (d, i0)",
         "z = GatherElements <axis = 1> (e, i1)"],
        {"d": (d, F), "i0": (i0, I), "e": (e, F), "i1": (i1, I)},
        lambda v: [take(v["d"], v["i0"], 0), take(v["e"], v["i1"], 1)],
        ['CHECK-DAG: %[[D:[0-9]+]] = graph.parameter "d"',
         'CHECK-DAG: %[[E:[0-9]+]] = graph.parameter "e"',
         "CHECK: graph.gather_elements %[[D]], %{{[0-9]+}} {axis = 0 : i64} "
         ": (tensor<3x4xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>",
         "CHECK: graph.gather_elements %[[E]], %{{[0-9]+}} {axis = 1 : i64} "
         ": (tensor<2x5x3xf32>, tensor<2x2x3xi64>) -> tensor<2x2x3xf32>"],
        ys=("y", "z"))


def pool_ceil():
    x = distinct(7, (1, 2, 6, 6))
    x1 = distinct(8, (1, 2, 7))
    return Case(
        "pool-ceil",
        "ceil_mode=1: the last window may pass the (padded) input, which\n"
        "graph pools see as padding at the end: skipped by the maximum, not\n"
        "counted by the average. With count_include_pad=1 the explicit\n"
        "padding counts but the ceil_mode padding does not: the explicit\n"
        "padding becomes zeros of the input (concat), the rest is excluded.",
        ["m = MaxPool <kernel_shape = [3, 3], strides = [2, 2], "
         "ceil_mode = 1> (x)",
         "a = AveragePool <kernel_shape = [3, 3], strides = [2, 2], "
         "pads = [1, 1, 1, 1], ceil_mode = 1> (x)",
         "ai = AveragePool <kernel_shape = [3, 3], strides = [2, 2], "
         "pads = [1, 1, 1, 1], ceil_mode = 1, count_include_pad = 1> (x)",
         "m1 = MaxPool <kernel_shape = [2], strides = [2], ceil_mode = 1> "
         "(x1)"],
        {"x": (x, F), "x1": (x1, F)},
        lambda v: [pool(v["x"], "max", [3, 3], [2, 2], ceil=True),
                   pool(v["x"], "avg", [3, 3], [2, 2], [1, 1, 1, 1],
                        ceil=True),
                   pool(v["x"], "avg", [3, 3], [2, 2], [1, 1, 1, 1],
                        ceil=True, count_pad=True),
                   pool(v["x1"], "max", [2], [2], ceil=True)],
        ['CHECK-DAG: %[[X:[0-9]+]] = graph.parameter "x"',
         "CHECK: graph.max_pool %[[X]] {kernel = array<i64: 3, 3>, pads = "
         "array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : "
         "tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>",
         "CHECK: graph.avg_pool %[[X]] {exclude_pad, kernel = array<i64: 3, "
         "3>, pads = array<i64: 1, 1, 2, 2>, strides = array<i64: 2, 2>} : "
         "tensor<1x2x6x6xf32> -> tensor<1x2x4x4xf32>",
         "CHECK: %[[ROWS:[0-9]+]] = graph.concat %{{[0-9]+}}, %[[X]], "
         "%{{[0-9]+}} {axis = 2 : i64} : (tensor<1x2x1x6xf32>, "
         "tensor<1x2x6x6xf32>, tensor<1x2x1x6xf32>) -> tensor<1x2x8x6xf32>",
         "CHECK: %[[PADDED:[0-9]+]] = graph.concat %{{[0-9]+}}, %[[ROWS]], "
         "%{{[0-9]+}} {axis = 3 : i64}",
         "CHECK: graph.avg_pool %[[PADDED]] {exclude_pad, kernel = "
         "array<i64: 3, 3>, pads = array<i64: 0, 0, 1, 1>, strides = "
         "array<i64: 2, 2>} : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>",
         "CHECK: graph.max_pool %{{[0-9]+}} {kernel = array<i64: 1, 2>, pads "
         "= array<i64: 0, 0, 0, 1>, strides = array<i64: 1, 2>} : "
         "tensor<1x2x1x7xf32> -> tensor<1x2x1x4xf32>"],
        ys=("m", "a", "ai", "m1"))


def pool_bridge():
    x = distinct(9, (1, 2, 6, 6))
    s = distinct(10, (1, 2, 2, 2))
    return Case(
        "pool-ceil-bridge",
        "Opset 19: AveragePool's and LpPool's dilations and ceil_mode pools\n"
        "wait in the bridge domain, typed by ONNX's arithmetic: a ceil_mode\n"
        "window that would start in the end padding is dropped (the linked\n"
        "inference keeps it: 2x2 where ONNX and onnxruntime say 1x1, so s's\n"
        "pools have one window each).",
        ["a = AveragePool <kernel_shape = [2, 2], dilations = [2, 2], "
         "strides = [2, 2], ceil_mode = 1> (x)",
         "l = LpPool <kernel_shape = [2, 2], dilations = [2, 2], p = 2> (x)",
         "b = AveragePool <kernel_shape = [3, 3], strides = [3, 3], "
         "pads = [1, 1, 1, 1], ceil_mode = 1, count_include_pad = 1> (s)",
         "m = MaxPool <kernel_shape = [1, 1], strides = [2, 2], "
         "ceil_mode = 1> (s)"],
        {"x": (x, F), "s": (s, F)},
        lambda v: [pool(v["x"], "avg", [2, 2], [2, 2], dilations=[2, 2],
                        ceil=True),
                   pool(v["x"], "lp", [2, 2], dilations=[2, 2], p=2),
                   pool(v["s"], "avg", [3, 3], [3, 3], [1, 1, 1, 1],
                        ceil=True, count_pad=True),
                   pool(v["s"], "max", [1, 1], [2, 2], ceil=True)],
        ["CHECK: graph.avg_pool %{{[0-9]+}} {dilations = array<i64: 2, 2>, "
         "exclude_pad, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, "
         "1>, strides = array<i64: 2, 2>} : tensor<1x2x6x6xf32> -> "
         "tensor<1x2x3x3xf32>",
         "CHECK: graph.avg_pool %{{[0-9]+}} {dilations = array<i64: 2, 2>, "
         "kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides "
         "= array<i64: 1, 1>} : tensor<1x2x6x6xf32> -> tensor<1x2x4x4xf32>",
         "CHECK: graph.avg_pool %{{[0-9]+}} {kernel = array<i64: 3, 3>, pads "
         "= array<i64: 1, 1, 1, 1>, strides = array<i64: 3, 3>} : "
         "tensor<1x2x2x2xf32> -> tensor<1x2x1x1xf32>",
         "CHECK: graph.max_pool %{{[0-9]+}} {kernel = array<i64: 1, 1>, pads "
         "= array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : "
         "tensor<1x2x2x2xf32> -> tensor<1x2x1x1xf32>"],
        ys=("a", "l", "b", "m"), opset=19)


def pool_3d():
    x = distinct(11, (1, 2, 4, 5, 6))
    return Case(
        "pool-3d",
        "Pools over three spatial dims (N×C×D×H×W): dilated, padded, with\n"
        "ceil_mode, and an average counting its padding.",
        ["m = MaxPool <kernel_shape = [2, 2, 2], strides = [2, 1, 2], "
         "pads = [0, 1, 0, 0, 1, 1], dilations = [1, 2, 1]> (x)",
         "a = AveragePool <kernel_shape = [2, 2, 2], strides = [1, 2, 2], "
         "ceil_mode = 1> (x)",
         "ai = AveragePool <kernel_shape = [3, 3, 3], strides = [2, 2, 2], "
         "pads = [1, 1, 1, 1, 1, 1], count_include_pad = 1> (x)"],
        {"x": (x, F)},
        lambda v: [pool(v["x"], "max", [2, 2, 2], [2, 1, 2],
                        [0, 1, 0, 0, 1, 1], [1, 2, 1]),
                   pool(v["x"], "avg", [2, 2, 2], [1, 2, 2], ceil=True),
                   pool(v["x"], "avg", [3, 3, 3], [2, 2, 2], [1] * 6,
                        count_pad=True)],
        ['CHECK-DAG: %[[X:[0-9]+]] = graph.parameter "x"',
         "CHECK: graph.max_pool %[[X]] {dilations = array<i64: 1, 2, 1>, "
         "kernel = array<i64: 2, 2, 2>, pads = array<i64: 0, 1, 0, 0, 1, 1>, "
         "strides = array<i64: 2, 1, 2>} : tensor<1x2x4x5x6xf32> -> "
         "tensor<1x2x2x5x3xf32>",
         "CHECK: graph.avg_pool %[[X]] {exclude_pad, kernel = array<i64: 2, "
         "2, 2>, pads = array<i64: 0, 0, 0, 0, 1, 0>, strides = array<i64: 1, "
         "2, 2>} : tensor<1x2x4x5x6xf32> -> tensor<1x2x3x3x3xf32>",
         "CHECK: graph.avg_pool %[[X]] {kernel = array<i64: 3, 3, 3>, pads = "
         "array<i64: 1, 1, 1, 1, 1, 1>, strides = array<i64: 2, 2, 2>} : "
         "tensor<1x2x4x5x6xf32> -> tensor<1x2x2x3x3xf32>"],
        ys=("m", "a", "ai"))


def lp_pool():
    x = away(rng(12).standard_normal((1, 2, 5, 5)), [0.0])
    x1 = away(rng(13).standard_normal((1, 2, 7)), [0.0])
    return Case(
        "lp-pool",
        "LpPool: (sum of |x|^p over each window)^(1/p) as an average pool\n"
        "of |x|^p (x·x for p = 2) counting the zero padding, times the\n"
        "kernel's size, then the root (sqrt for p = 2, none for p = 1).",
        ["l1 = LpPool <kernel_shape = [2, 2], p = 1> (x)",
         "l2 = LpPool <kernel_shape = [3, 3], strides = [2, 2], "
         "pads = [1, 1, 1, 1], p = 2> (x)",
         "l3 = LpPool <kernel_shape = [2, 2], strides = [1, 2], p = 3> (x)",
         'ls = LpPool <kernel_shape = [3], auto_pad = "SAME_UPPER", p = 2> '
         "(x1)"],
        {"x": (x, F), "x1": (x1, F)},
        lambda v: [pool(v["x"], "lp", [2, 2], p=1),
                   pool(v["x"], "lp", [3, 3], [2, 2], [1, 1, 1, 1], p=2),
                   pool(v["x"], "lp", [2, 2], [1, 2], p=3),
                   pool(v["x1"], "lp", [3], pads=[1, 1], p=2)],
        ['CHECK-DAG: %[[X:[0-9]+]] = graph.parameter "x"',
         "CHECK: %[[R1:[0-9]+]] = graph.relu %[[X]]",
         "CHECK: %[[N:[0-9]+]] = graph.neg %[[X]]",
         "CHECK: %[[R2:[0-9]+]] = graph.relu %[[N]]",
         "CHECK: %[[ABS:[0-9]+]] = graph.add %[[R1]], %[[R2]]",
         "CHECK: %[[A1:[0-9]+]] = graph.avg_pool %[[ABS]] {kernel = "
         "array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = "
         "array<i64: 1, 1>}",
         "CHECK: graph.mul %[[A1]], %{{[0-9]+}} : (tensor<1x2x4x4xf32>, "
         "tensor<f32>) -> tensor<1x2x4x4xf32>",
         "CHECK: %[[SQ:[0-9]+]] = graph.mul %[[X]], %[[X]]",
         "CHECK: %[[A2:[0-9]+]] = graph.avg_pool %[[SQ]] {kernel = "
         "array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = "
         "array<i64: 2, 2>}",
         "CHECK: %[[S2:[0-9]+]] = graph.mul %[[A2]]",
         "CHECK: graph.sqrt %[[S2]] : tensor<1x2x3x3xf32>",
         "CHECK: %[[P3:[0-9]+]] = graph.pow %{{[0-9]+}}, %{{[0-9]+}} : "
         "(tensor<1x2x5x5xf32>, tensor<f32>) -> tensor<1x2x5x5xf32>",
         "CHECK: %[[A3:[0-9]+]] = graph.avg_pool %[[P3]]",
         "CHECK: %[[S3:[0-9]+]] = graph.mul %[[A3]]",
         "CHECK: graph.pow %[[S3]], %{{[0-9]+}} : (tensor<1x2x4x2xf32>, "
         "tensor<f32>) -> tensor<1x2x4x2xf32>"],
        ys=("l1", "l2", "l3", "ls"))


def global_max_pool():
    x = distinct(14, (2, 3, 4, 5))
    x1 = distinct(15, (2, 3, 5))
    return Case(
        "global-max-pool",
        "GlobalMaxPool: reduce_max over every spatial dim, kept as size 1\n"
        "(1-d and 2-d inputs).",
        ["y = GlobalMaxPool(x)", "z = GlobalMaxPool(x1)"],
        {"x": (x, F), "x1": (x1, F)},
        lambda v: [v["x"].max(axis=(2, 3), keepdims=True),
                   v["x1"].max(axis=2, keepdims=True)],
        ['CHECK-DAG: %[[X:[0-9]+]] = graph.parameter "x"',
         "CHECK: graph.reduce_max %[[X]] {axes = array<i64: 2, 3>, keepdims "
         "= true} : tensor<2x3x4x5xf32> -> tensor<2x3x1x1xf32>",
         "CHECK: graph.reduce_max %{{[0-9]+}} {axes = array<i64: 2>, keepdims "
         "= true} : tensor<2x3x5xf32> -> tensor<2x3x1xf32>"],
        ys=("y", "z"))


def hardmax_cases():
    x = distinct(16, (2, 3, 4))
    t = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    hardmax_checks = [
        'CHECK-DAG: %[[X:[0-9]+]] = graph.parameter "x"',
        "CHECK: %[[M:[0-9]+]] = graph.reduce_max %[[X]] {axes = array<i64: "
        "1>, keepdims = true}",
        "CHECK: %[[EQ:[0-9]+]] = graph.compare %[[X]], %[[M]] {predicate = "
        '"eq"}',
        "CHECK: %[[C:[0-9]+]] = graph.select %[[EQ]], %[[RAMP:[0-9]+]], "
        "%{{[0-9]+}} : (tensor<2x3x4xi1>, tensor<1x3x1xi64>, tensor<i64>) -> "
        "tensor<2x3x4xi64>",
        "CHECK: %[[FIRST:[0-9]+]] = graph.reduce_max %[[C]] {axes = "
        "array<i64: 1>, keepdims = true}",
        "CHECK: %[[HIT:[0-9]+]] = graph.compare %[[RAMP]], %[[FIRST]] "
        '{predicate = "eq"}',
        "CHECK: graph.select %[[HIT]], %{{[0-9]+}}, %{{[0-9]+}} : "
        "(tensor<2x3x4xi1>, tensor<f32>, tensor<f32>) -> tensor<2x3x4xf32>"]
    return [
        Case("hardmax",
             "Hardmax: 1 at the first maximum along the axis (ties: t), as a\n"
             "select of constants: no gradient reaches x, which is right\n"
             "almost everywhere (the function is piecewise constant).",
             ["y = Hardmax <axis = 1> (x)", "z = Hardmax(t)"],
             {"x": (x, F), "t": (t, F)},
             lambda v: [hardmax(v["x"], 1), hardmax(v["t"], -1)],
             hardmax_checks, ys=("y", "z")),
        Case("hardmax-opset11",
             "Hardmax before opset 13 sees its input as 2-d (dims before the\n"
             "axis × the rest; axis 1 by default): one 1 per batch element.",
             ["y = Hardmax(x)"], {"x": (x, F)},
             lambda v: hardmax(v["x"].reshape(2, 12), 1).reshape(2, 3, 4),
             ['CHECK-DAG: %[[X:[0-9]+]] = graph.parameter "x"',
              "CHECK: %[[FLAT:[0-9]+]] = graph.reshape %[[X]] : "
              "tensor<2x3x4xf32> -> tensor<2x12xf32>",
              "CHECK: graph.reduce_max %[[FLAT]] {axes = array<i64: 1>, "
              "keepdims = true}",
              "CHECK: graph.reshape %{{[0-9]+}} : tensor<2x12xf32> -> "
              "tensor<2x3x4xf32>"],
             opset=11)]


def lp_normalization():
    p = rng(17).standard_normal((2, 4))
    z = np.zeros((1, 4))
    q = away(rng(18).standard_normal((3, 2)), [0.0])
    return Case(
        "lp-normalization",
        "LpNormalization, p = 2 along the last axis and p = 1 along the\n"
        "first: x / norm, and 0 where the norm is 0 (the frozen zero row z\n"
        "and column), with a finite gradient there.",
        ["x = Concat <axis = 0> (p, z)",
         "y = LpNormalization <axis = -1, p = 2> (x)",
         "zc = Constant <value = float[3, 1] {0, 0, 0}> ()",
         "x2 = Concat <axis = 1> (q, zc)",
         "v = LpNormalization <axis = 0, p = 1> (x2)"],
        {"p": (p, F), "z": (z, F), "q": (q, F)},
        lambda v: [lp_normalize(np.concatenate([v["p"], v["z"]]), -1, 2),
                   lp_normalize(np.concatenate([v["q"], np.zeros((3, 1))],
                                               axis=1), 0, 1)],
        ["CHECK: %[[SQ:[0-9]+]] = graph.mul %[[X:[0-9]+]], %[[X]] : "
         "(tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>",
         "CHECK: %[[S:[0-9]+]] = graph.reduce_sum %[[SQ]] {axes = array<i64: "
         "1>, keepdims = true}",
         "CHECK: %[[Z:[0-9]+]] = graph.compare %[[S]], %{{[0-9]+}} "
         '{predicate = "eq"}',
         "CHECK: %[[SAFE:[0-9]+]] = graph.select %[[Z]], %{{[0-9]+}}, %[[S]]",
         "CHECK: %[[N:[0-9]+]] = graph.sqrt %[[SAFE]]",
         "CHECK: graph.div %[[X]], %[[N]]",
         "CHECK: graph.relu",
         "CHECK: graph.reduce_sum %{{[0-9]+}} {axes = array<i64: 0>, "
         "keepdims = true} : tensor<3x3xf32> -> tensor<1x3xf32>"],
        ys=("y", "v"), frozen=["z"])


def shrink_case():
    x = away(rng(19).uniform(-3, 3, 10), [-1.5, 1.5, -0.5, 0.5])
    return Case(
        "shrink",
        "Shrink: x + bias below -lambd, x - bias above lambd, 0 between\n"
        "(hard shrink with bias 0, soft shrink with bias = lambd).",
        ["y = Shrink <lambd = 1.5> (x)",
         "z = Shrink <lambd = 0.5, bias = 0.5> (x)"],
        {"x": (x, F)},
        lambda v: [shrink(v["x"], 1.5, 0.0), shrink(v["x"], 0.5, 0.5)],
        ['CHECK-DAG: %[[X:[0-9]+]] = graph.parameter "x"',
         "CHECK: %[[GT:[0-9]+]] = graph.compare %[[X]], %{{[0-9]+}} "
         '{predicate = "gt"}',
         "CHECK: %[[HI:[0-9]+]] = graph.select %[[GT]], %{{[0-9]+}}, "
         "%{{[0-9]+}}",
         "CHECK: %[[LT:[0-9]+]] = graph.compare %[[X]], %{{[0-9]+}} "
         '{predicate = "lt"}',
         "CHECK: graph.select %[[LT]], %{{[0-9]+}}, %[[HI]]"],
        ys=("y", "z"))


def lrn(x, size, alpha, beta, bias):
    """ONNX's LRN: the channel window [c - (size-1)//2, c + ceil((size-1)/2)]."""
    below = (size - 1) // 2
    above = size - 1 - below
    sums = np.zeros_like(x)
    for c in range(x.shape[1]):
        lo, hi = max(0, c - below), min(x.shape[1] - 1, c + above)
        sums[:, c] = (x[:, lo:hi + 1] ** 2).sum(axis=1)
    return x / (bias + alpha / size * sums) ** beta


def lrn_case():
    x = rng(20).standard_normal((2, 5, 3, 2)) * 2
    return Case(
        "lrn",
        "LRN: the sum of squares over a channel window is x^2 with the\n"
        "channels last times a constant band matrix; y = x / (bias +\n"
        "alpha/size * sum)^beta. Sizes 3 and 5 (onnxruntime takes odd sizes\n"
        "only; onnx.reference's LRN sums over the first N channels only).",
        ["y = LRN <size = 3> (x)",
         "z = LRN <size = 5, alpha = 0.5, beta = 0.6, bias = 2.0> (x)"],
        {"x": (x, F)},
        lambda v: [lrn(v["x"], 3, 1e-4, 0.75, 1.0),
                   lrn(v["x"], 5, 0.5, 0.6, 2.0)],
        ["CHECK: %[[T:[0-9]+]] = graph.transpose %{{[0-9]+}} {perm = "
         "array<i64: 0, 2, 3, 1>} : tensor<2x5x3x2xf32> -> "
         "tensor<2x3x2x5xf32>",
         "CHECK: graph.matmul %[[T]], %{{[0-9]+}} : (tensor<2x3x2x5xf32>, "
         "tensor<5x5xf32>) -> tensor<2x3x2x5xf32>",
         "CHECK: graph.pow"],
        ys=("y", "z"), opset=13)


def mvn(x, axes):
    mean = x.mean(axis=axes, keepdims=True)
    var = (x ** 2).mean(axis=axes, keepdims=True) - mean ** 2
    return (x - mean) / (np.sqrt(var) + 1e-9)


def mvn_case():
    x = rng(21).standard_normal((2, 3, 2, 2)) + 0.5
    return Case(
        "mean-variance-normalization",
        "MeanVarianceNormalization over the default axes (0, 2, 3) and over\n"
        "axis 1: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).",
        ["y = MeanVarianceNormalization (x)",
         "z = MeanVarianceNormalization <axes = [1]> (x)"],
        {"x": (x, F)},
        lambda v: [mvn(v["x"], (0, 2, 3)), mvn(v["x"], (1,))],
        ["CHECK: graph.reduce_mean %{{[0-9]+}} {axes = array<i64: 0, 2, 3>, "
         "keepdims = true} : tensor<2x3x2x2xf32> -> tensor<1x3x1x1xf32>",
         "CHECK: graph.sqrt"],
        ys=("y", "z"), opset=13)


def swiglu_case():
    a = rng(22).standard_normal((3, 4)) * 2
    b = rng(23).standard_normal((3, 4))
    return Case(
        "swiglu",
        "SwiGLU (opset 28, bridged as shape-preserving): a * sigmoid(alpha *\n"
        "a) * b.",
        ["y = SwiGLU <alpha = 1.5> (a, b)"],
        {"a": (a, F), "b": (b, F)},
        lambda v: v["a"] / (1 + np.exp(-1.5 * v["a"])) * v["b"],
        ["CHECK: graph.sigmoid",
         "CHECK: graph.mul"],
        opset=28)


def all_cases():
    return ([trig(), rounding(), gather_elements(), pool_ceil(),
             pool_bridge(), pool_3d(), lp_pool(), global_max_pool()] +
            hardmax_cases() + [lp_normalization(), shrink_case(), lrn_case(),
                               mvn_case(), swiglu_case()])
