"""The decomposition tests that generate.py writes: one Case per file.

Each case gives the file's header (what the op becomes), the ONNX nodes that
compute y from the initializers, the initializers, y's NumPy reference and
the FileCheck lines on the imported program.
"""
import numpy as np

from generate import (F, I, SELU_ALPHA, SELU_GAMMA, Case, cumsum, elu,
                      gelu_erf, gelu_tanh, hard_sigmoid, instance_norm,
                      normal, one_hot, sigmoid, softplus)

from checks import CHECKS


def unary_cases():
    x = normal(1, (2, 4), 2.0, kinks=[0.0])
    return [
        Case("abs", "Abs(x) = relu(x) + relu(-x): gradient 0 at 0, as PyTorch.",
             ["y = Abs(x)"], {"x": (x, F)}, lambda v: np.abs(v["x"]),
             []),
        Case("abs-int",
             "Abs of an integer tensor (computed at run time: a constant one "
             "is folded):\nselect(k < 0, -k, k), as integers have no relu "
             "kernel.",
             ["k = Cast <to = 7> (x)", "a = Abs(k)", "y = Cast <to = 1> (a)"],
             {"x": ([[3.5, -4.5, 0.25], [-7.5, 2.5, -1.5]], F)},
             lambda v: np.abs(np.trunc(v["x"])), [], grad=False),
        Case("reciprocal", "Reciprocal(x) = 1 / x.",
             ["y = Reciprocal(x)"],
             {"x": (normal(2, (3, 3), 2.0, kinks=[0.0]) + 0.0, F)},
             lambda v: 1.0 / v["x"], []),
        Case("leaky-relu", "LeakyRelu(x) = select(x > 0, x, alpha * x).",
             ["y = LeakyRelu <alpha = 0.1> (x)"], {"x": (x, F)},
             lambda v: np.where(v["x"] > 0, v["x"], 0.1 * v["x"]), []),
        Case("thresholded-relu",
             "ThresholdedRelu(x) = select(x > alpha, x, 0).",
             ["y = ThresholdedRelu <alpha = 0.5> (x)"],
             {"x": (away(x, [0.5]), F)},
             lambda v: np.where(v["x"] > 0.5, v["x"], 0.0), []),
        Case("softplus",
             "Softplus(x) = max(x, 0) - log(sigmoid(|x|)): no overflow at "
             "|x| = 40,\nand the gradient at 0 is sigmoid(0).",
             ["y = Softplus(x)"],
             {"x": (np.concatenate([x.reshape(-1), [40.0, -40.0, 0.0,
                                                    7.5]]), F)},
             lambda v: softplus(v["x"]), []),
        Case("softsign", "Softsign(x) = x / (1 + |x|).",
             ["y = Softsign(x)"], {"x": (x, F)},
             lambda v: v["x"] / (1 + np.abs(v["x"])), []),
        Case("hard-sigmoid",
             "HardSigmoid(x) = clip(alpha * x + beta, 0, 1).",
             ["y = HardSigmoid <alpha = 0.3, beta = 0.4> (x)"],
             {"x": (away(x * 2, [-4 / 3, 2.0]), F)},
             lambda v: hard_sigmoid(v["x"], 0.3, 0.4), []),
        Case("hard-swish", "HardSwish(x) = x * clip(x / 6 + 0.5, 0, 1).",
             ["y = HardSwish(x)"], {"x": (away(x * 2.5, [-3.0, 3.0]), F)},
             lambda v: v["x"] * hard_sigmoid(v["x"], 1 / 6, 0.5), []),
        Case("elu",
             "Elu(x) = relu(x) + alpha * (exp(min(x, 0)) - 1): exp never sees "
             "a\npositive input (no inf * 0 in the backward of x = 100).",
             ["y = Elu <alpha = 0.7> (x)"],
             {"x": (np.append(x.reshape(-1), 100.0), F)},
             lambda v: elu(v["x"], 0.7), []),
        Case("celu",
             "Celu(x) = relu(x) + alpha * (exp(min(x, 0) / alpha) - 1).",
             ["y = Celu <alpha = 1.5> (x)"], {"x": (x, F)},
             lambda v: np.maximum(v["x"], 0) +
             np.minimum(0, 1.5 * np.expm1(v["x"] / 1.5)), []),
        Case("selu", "Selu(x) = gamma * elu_alpha(x).",
             ["y = Selu(x)"], {"x": (x, F)},
             lambda v: SELU_GAMMA * elu(v["x"], SELU_ALPHA), []),
        Case("sign",
             "Sign(x) = select(x > 0, 1, select(x < 0, -1, 0)); no gradient.",
             ["y = Sign(x)"], {"x": (x, F)}, lambda v: np.sign(v["x"]), []),
        Case("sign-int",
             "Sign of an integer tensor computed at run time, 0 included.",
             ["k = Cast <to = 7> (x)", "s = Sign(k)", "y = Cast <to = 1> (s)"],
             {"x": ([[3.5, -4.5, 0.25], [-7.5, -0.5, 1.5]], F)},
             lambda v: np.sign(np.trunc(v["x"])), [], grad=False),
        Case("mish", "Mish (opset 18) = x * tanh(softplus(x)).",
             ["y = Mish(x)"], {"x": (x, F)},
             lambda v: v["x"] * np.tanh(softplus(v["x"])), [], opset=18,
             declare=["float[2, 4] y"]),
        Case("swish", "Swish (opset 24) = x * sigmoid(alpha * x).",
             ["y = Swish <alpha = 1.5> (x)"], {"x": (x, F)},
             lambda v: v["x"] * sigmoid(1.5 * v["x"]), [], opset=24,
             declare=["float[2, 4] y"]),
        Case("gelu-tanh",
             "Gelu (opset 20) with approximate = \"tanh\": 0.5 x (1 + tanh(z))"
             " written as\nx * sigmoid(2z), 2z = x * (a + b x^2).",
             ["y = Gelu <approximate = \"tanh\"> (x)"], {"x": (x, F)},
             lambda v: gelu_tanh(v["x"]), [], opset=20,
             declare=["float[2, 4] y"]),
        Case("gelu-erf", "Gelu (opset 20), approximate = \"none\": graph.gelu.",
             ["y = Gelu(x)"], {"x": (x, F)},
             lambda v: gelu_erf(v["x"]), [], opset=20,
             declare=["float[2, 4] y"]),
    ]


def away(x, points):
    from generate import away as move
    return move(x, points)


def variadic_cases():
    a = normal(3, (2, 3))
    b = normal(4, (3,))
    c = normal(5, (2, 1))
    inits = {"a": (a, F), "b": (b, F), "c": (c, F)}
    x = normal(6, (2, 3), 3.0)
    return [
        Case("sum", "Sum(a, b, c) = (a + b) + c with numpy broadcasting.",
             ["y = Sum(a, b, c)"], inits,
             lambda v: v["a"] + v["b"] + v["c"], []),
        Case("mean", "Mean(a, b, c) = ((a + b) + c) / 3.",
             ["y = Mean(a, b, c)"], inits,
             lambda v: (v["a"] + v["b"] + v["c"]) / 3, []),
        Case("prelu",
             "PRelu(x, slope) = select(x > 0, x, x * slope), slope per "
             "channel\n(a parameter of shape [C, 1, 1]).",
             ["y = PRelu(x, slope)"],
             {"x": (normal(7, (2, 3, 2, 2), 1.0, kinks=[0.0]), F),
              "slope": ([[[0.1]], [[0.25]], [[-0.3]]], F)},
             lambda v: np.where(v["x"] > 0, v["x"], v["x"] * v["slope"]), []),
        Case("cast-like",
             "CastLike(x, like) is a cast to like's element type: here to f16"
             " (like a\ncast of x) and back to f32 by a second CastLike. "
             "The rounding is a\nstaircase, so its gradient is checked in "
             "cast-like-f64.",
             ["half = Cast <to = 10> (x)", "h = CastLike(x, half)",
              "y = CastLike(h, x)"],
             {"x": (x, F)},
             lambda v: v["x"].astype(np.float16).astype(np.float64), [],
             grad=False),
        Case("cast-like-f64",
             "CastLike to f64 and back: float casts pass the gradient.",
             ["wide = Cast <to = 11> (x)", "h = CastLike(x, wide)",
              "y = CastLike(h, x)"],
             {"x": (x, F)}, lambda v: v["x"], []),
        Case("cast-like-int",
             "CastLike(x, like) to int64 truncates toward zero; no gradient.",
             ["k = Constant <value = int64 {0}> ()", "t = CastLike(x, k)",
              "y = Cast <to = 1> (t)"],
             {"x": (away(x, [float(i) for i in range(-9, 10)]), F)},
             lambda v: np.trunc(v["x"]), [], grad=False),
    ]


def norm_cases():
    x4 = normal(8, (2, 4, 2, 3), 2.0) + 0.5
    return [
        Case("instance-norm",
             "InstanceNormalization = layer_norm over the spatial dims (axis "
             "2, unit\nscale, zero bias), then * scale[C,1,1] + bias[C,1,1].",
             ["y = InstanceNormalization <epsilon = 0.01> (x, s, b)"],
             {"x": (x4, F), "s": (normal(9, (4,)), F),
              "b": (normal(10, (4,)), F)},
             lambda v: instance_norm(v["x"], (2, 3), 0.01) *
             v["s"].reshape(4, 1, 1) + v["b"].reshape(4, 1, 1), []),
        Case("group-norm-18",
             "GroupNormalization (opset 18: scale and bias per group): x "
             "viewed as\nN x G x (C/G * H * W), layer_norm from axis 2, * "
             "scale[G,1] + bias[G,1],\nviewed back.",
             ["y = GroupNormalization <num_groups = 2, epsilon = 0.01> "
              "(x, s, b)"],
             {"x": (x4, F), "s": (normal(11, (2,)), F),
              "b": (normal(12, (2,)), F)},
             lambda v: (instance_norm(v["x"].reshape(2, 2, 12), (2,), 0.01) *
                        v["s"].reshape(2, 1) + v["b"].reshape(2, 1))
             .reshape(2, 4, 2, 3), [], opset=18,
             declare=["float[2, 4, 2, 3] y"]),
        Case("group-norm-21",
             "GroupNormalization (opset 21: scale and bias per channel): "
             "layer_norm\nof the grouped view, viewed back, * scale[C,1,1] + "
             "bias[C,1,1].",
             ["y = GroupNormalization <num_groups = 2, epsilon = 0.01> "
              "(x, s, b)"],
             {"x": (x4, F), "s": (normal(13, (4,)), F),
              "b": (normal(14, (4,)), F)},
             lambda v: instance_norm(v["x"].reshape(2, 2, 12), (2,), 0.01)
             .reshape(2, 4, 2, 3) * v["s"].reshape(4, 1, 1) +
             v["b"].reshape(4, 1, 1), [], opset=21,
             declare=["float[2, 4, 2, 3] y"]),
        Case("rms-norm",
             "RMSNormalization (opset 23) over the last two dims: x * "
             "rsqrt(mean(x^2) + eps) * scale.",
             ["y = RMSNormalization <axis = 1, epsilon = 0.01> (x, s)"],
             {"x": (normal(15, (2, 3, 4)), F), "s": (normal(16, (3, 4)), F)},
             lambda v: v["x"] / np.sqrt((v["x"] ** 2).mean(
                 axis=(1, 2), keepdims=True) + 0.01) * v["s"], [], opset=23,
             declare=["float[2, 3, 4] y"]),
    ]


def shape_cases():
    x = normal(17, (2, 3, 4))
    ids = np.array([[0, 3, -1], [5, -4, 2]])
    return [
        Case("trilu-upper",
             "Trilu (upper, k = 1 from a constant input): select with a "
             "constant\n[rows, cols] mask, the batch dim broadcast.",
             ["k = Constant <value = int64 {1}> ()", "y = Trilu(x, k)"],
             {"x": (x, F)}, lambda v: np.triu(v["x"], 1), []),
        Case("trilu-lower", "Trilu (lower, k = -1): select with a constant mask.",
             ["k = Constant <value = int64 {-1}> ()",
              "y = Trilu <upper = 0> (x, k)"],
             {"x": (x, F)}, lambda v: np.tril(v["x"], -1), []),
        Case("tile",
             "Tile(x, repeats = [1, 3, 2]): x [2, 1, 3] viewed as [2, 1, 1, 1,"
             " 3],\nexpanded to [2, 3, 1, 2, 3] and viewed as [2, 3, 6].",
             ["r = Constant <value = int64[3] {1, 3, 2}> ()",
              "y = Tile(x, r)"],
             {"x": (normal(18, (2, 1, 3)), F)},
             lambda v: np.tile(v["x"], (1, 3, 2)), []),
        Case("cumsum-last",
             "CumSum along the last axis: x times a constant upper-triangular"
             " matrix.",
             ["a = Constant <value = int64 {-1}> ()", "y = CumSum(x, a)"],
             {"x": (normal(19, (2, 5)), F)},
             lambda v: cumsum(v["x"], 1), []),
        Case("cumsum-reverse-exclusive",
             "CumSum (exclusive, reverse) along the axis before the last: "
             "the\ntransposed matrix times x.",
             ["a = Constant <value = int64 {1}> ()",
              "y = CumSum <exclusive = 1, reverse = 1> (x, a)"],
             {"x": (x, F)}, lambda v: cumsum(v["x"], 1, True, True), []),
        Case("cumsum-axis0",
             "CumSum along axis 0 of a rank-3 tensor: transposed to the "
             "last\naxis, multiplied, transposed back.",
             ["a = Constant <value = int64 {0}> ()", "y = CumSum(x, a)"],
             {"x": (x, F)}, lambda v: cumsum(v["x"], 0), []),
        Case("cumsum-int",
             "CumSum of an int64 tensor (position ids from a mask): a scan, "
             "y += y shifted\nby 1, 2, 4 (slice, concat with zeros, add), "
             "exact for integers.",
             ["a = Constant <value = int64 {1}> ()", "c = CumSum(m, a)",
              "y = Cast <to = 1> (c)"],
             {"m": ([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1000000]], I)},
             lambda v: np.cumsum(v["m"], 1), []),
        Case("cumsum-scan",
             "CumSum (exclusive, reverse) along a float axis of 260 > 256 "
             "elements: the\nscan (x shifted by one towards the start, "
             "then nine steps), no n x n matrix.",
             ["a = Constant <value = int64 {0}> ()",
              "y = CumSum <exclusive = 1, reverse = 1> (x, a)"],
             {"x": (normal(21, (260, 1), 0.25), F)},
             lambda v: cumsum(v["x"], 0, True, True), []),
        Case("one-hot",
             "OneHot (axis -1, depth 4): indices (negative ones + depth) "
             "compared\nwith a constant range, then a select of the values; "
             "values given as a\nparameter are sliced (and get a gradient). "
             "5 and -5 are out of range.",
             ["depth = Constant <value = int64 {4}> ()",
              "y = OneHot(ids, depth, vals)"],
             {"ids": (np.array([[0, 3, -1], [5, -4, -5]]), I),
              "vals": ([-0.5, 2.0], F)},
             lambda v: one_hot(v["ids"], 4, -1, v["vals"][0], v["vals"][1]),
             []),
        Case("one-hot-axis",
             "OneHot (axis 1, constant int64 values): the range along axis 1.",
             ["depth = Constant <value = int64 {6}> ()",
              "vals = Constant <value = int64[2] {0, 3}> ()",
              "h = OneHot <axis = 1> (ids, depth, vals)",
              "y = Cast <to = 1> (h)"],
             {"ids": (ids, I)},
             lambda v: one_hot(v["ids"], 6, 1, 0, 3), [],
             declare=["int64[2, 6, 3] h"]),
        Case("size",
             "Size of a static shape is a constant the importer folds "
             "further (the\nCast after it), here a factor of x.",
             ["n = Size(x)", "f = Cast <to = 1> (n)", "y = Mul(x, f)"],
             {"x": (normal(20, (2, 3)), F)},
             lambda v: v["x"] * 6, []),
        Case("argmax",
             "ArgMax (axis 1, first of ties): reduce_max, compare, and "
             "reduce_max of a\nconstant ramp n-1-i at the hits; n-1 minus it.",
             ["i = ArgMax <axis = 1, keepdims = 0> (x)",
              "y = Cast <to = 1> (i)"],
             {"x": ([[1.0, 3.0, 3.0, -2.0], [5.0, 0.0, 5.0, 5.0],
                     [-1.0, -1.0, -3.0, -0.5]], F)},
             lambda v: np.argmax(v["x"], 1), [], grad=False),
        Case("argmin-last",
             "ArgMin (axis 0, last of ties, kept dims) = ArgMax of -x with "
             "a ramp i.",
             ["i = ArgMin <axis = 0, select_last_index = 1> (x)",
              "y = Cast <to = 1> (i)"],
             {"x": ([[1.0, 3.0, 3.0, -2.0], [1.0, 0.0, 5.0, -2.0],
                     [4.0, 0.0, -3.0, -0.5]], F)},
             lambda v: (v["x"].shape[0] - 1 -
                        np.argmin(v["x"][::-1], 0)).reshape(1, 4), [],
             grad=False),
    ]


def einsum_cases():
    def case(name, doc, eq, shapes, checks, seed):
        names = "abcd"[:len(shapes)]
        inits = {n: (normal(seed + i, s), F)
                 for i, (n, s) in enumerate(zip(names, shapes))}
        return Case(name, doc,
                    ['y = Einsum <equation = "%s"> (%s)' %
                     (eq, ", ".join(names))],
                    inits,
                    lambda v: np.einsum(eq, *[v[n] for n in names]), checks)

    return [
        case("einsum-batched-matmul", 'Einsum "bij,bjk->bik": one matmul.',
             "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], [], 30),
        case("einsum-attention",
             'Einsum "bhqd,bhkd->bhqk": a transpose of the keys and a matmul.',
             "bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)], [], 32),
        case("einsum-implicit",
             'Einsum "ij,jk" (implicit output "ik"): one matmul.',
             "ij,jk", [(3, 4), (4, 2)], [], 34),
        case("einsum-outer", 'Einsum "i,j->ij": [i, 1] * [j].',
             "i,j->ij", [(3,), (4,)], [], 36),
        case("einsum-transpose", 'Einsum "ij->ji": a transpose.',
             "ij->ji", [(3, 4)], [], 38),
        case("einsum-sum", 'Einsum "bij->bj": a reduce_sum.',
             "bij->bj", [(2, 3, 4)], [], 40),
        case("einsum-dot", 'Einsum "bi,bi->b": [b, 1, i] times [b, i, 1].',
             "bi,bi->b", [(3, 4), (3, 4)], [], 42),
        case("einsum-ellipsis",
             'Einsum "...ij,jk->...ik": ellipsis dims are kept as batch dims.',
             "...ij,jk->...ik", [(2, 3, 4), (4, 5)], [], 44),
        case("einsum-chain",
             'Einsum "ij,jk,kl->il": pairwise, left to right (two matmuls); '
             'an\noperand-only label ("m") is summed first.',
             "ijm,jk,kl->il", [(2, 3, 2), (3, 4), (4, 2)], [], 46),
    ]


def all_cases():
    every = (unary_cases() + variadic_cases() + norm_cases() + shape_cases() +
             einsum_cases())
    for case in every:
        case.checks = CHECKS[case.name]
    return every
