#!/usr/bin/env python3
"""Writes the tests of test/lit/Import/ScatterResample.

Each test imports one ConvTranspose, Resize, Upsample, ScatterElements or
ScatterND node and checks

1. the graph op it becomes: FileCheck on weft-translate's output;
2. the value: the model's loss is sum(w * (y - want)), where y is the
   node's result, want is y computed here (NumPy in float64: the
   transposed convolution and the scatters by their definitions, the
   resampling by onnx's reference implementation, which is NumPy) and w
   holds weights of magnitude 0.5 to 1.5 with random signs, so weft-run must
   print a loss below 1e-4 in magnitude;
3. the gradient: weft-run --check-gradients compares the backward pass with
   central differences of that loss (w and want are --frozen; the node's
   float inputs are the parameters checked).

Every reference is also compared with onnxruntime's value of y. Run it
after changing one of these ops:

    build/venv/bin/python test/lit/Import/ScatterResample/Inputs/generate.py
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)


def rng(seed):
    return np.random.default_rng(seed)


def normal(seed, shape):
    return rng(seed).standard_normal(shape)


def literal(values, dtype):
    flat = np.asarray(values).reshape(-1)
    if dtype == np.int64:
        return ", ".join(str(int(v)) for v in flat)
    return ", ".join("%.9g" % float(np.float32(v)) for v in flat)


TYPE = {np.float32: "float", np.int64: "int64"}


class Case:
    def __init__(self, name, doc, node, inits, want, checks, opset=17,
                 grad=True, cast=False, constants=(), pre=()):
        self.name, self.doc, self.node = name, doc, node
        self.inits = {}
        for key, (value, dtype) in inits.items():
            value = np.asarray(value)
            value = (value.astype(np.float32).astype(np.float64)
                     if dtype == np.float32 else value.astype(np.int64))
            self.inits[key] = (value, dtype)
        # None: onnx's reference implementation computes it (main).
        self.want = None if want is None else np.asarray(
            want({k: v for k, (v, _) in self.inits.items()}), np.float64)
        self.checks, self.opset, self.grad = checks, opset, grad
        # An integer result is cast to float before the loss.
        self.cast = cast
        # Float initializers the importer keeps as constants (scales).
        self.constants = list(constants)
        # Nodes before the tested one (Constants).
        self.pre = list(pre)

    def weights(self):
        r = rng(sum(map(ord, self.name)) * 31 + len(self.name))
        shape = self.want.shape
        return r.uniform(0.5, 1.5, shape) * r.choice([-1.0, 1.0], shape)

    def initializers(self, with_loss):
        out = []
        for key, (value, dtype) in self.inits.items():
            dims = ", ".join(str(d) for d in value.shape)
            out.append("%s[%s] %s = {%s}" % (TYPE[dtype], dims, key,
                                             literal(value, dtype)))
        if with_loss:
            dims = ", ".join(str(d) for d in self.want.shape)
            out.append("float[%s] want = {%s}" %
                       (dims, literal(self.want, np.float32)))
            out.append("float[%s] w = {%s}" %
                       (dims, literal(self.weights(), np.float32)))
        return out

    def model(self, with_loss=True):
        nodes = self.pre + [self.node]
        if with_loss:
            if self.cast:
                nodes.append("yf = Cast <to = 1> (y)")
            nodes += ["d = Sub(%s, want)" % ("yf" if self.cast else "y"),
                      "p = Mul(d, w)", "loss = ReduceSum <keepdims = 0> (p)"]
        ir = 8
        lines = ['<ir_version: %d, opset_import: ["" : %d]>' % (ir, self.opset),
                 "%s () => (float loss)" % self.name.replace("-", "_"),
                 "<%s>" % ", ".join(self.initializers(with_loss)), "{"]
        lines += ["  " + n for n in nodes]
        return "\n".join(lines + ["}"]) + "\n"

    def params(self):
        return [k for k, (_, t) in self.inits.items()
                if t == np.float32 and self.inits[k][0].size > 1
                and k not in self.constants]

    def text(self):
        out = ["# " + l if l else "#" for l in self.doc.split("\n")]
        out += ["# Written by Inputs/generate.py (want: NumPy); edit the "
                "script, not this file.",
                "# RUN: weft-translate --import-onnx %s | FileCheck %s"]
        run = "# RUN: weft-run %s --with-weights --frozen w,want"
        params = self.params()
        if self.grad and params:
            most = min(64, max(self.inits[k][0].size for k in params))
            run += " --check-gradients --grad-samples %d" % most
        out.append(run + " | FileCheck %s --check-prefix=EXEC")
        out.append("")
        out += ["# " + c for c in self.checks]
        out.append("")
        out.append("# EXEC: loss: {{-?(0|[0-9.]+e-(0[5-9]|[1-9][0-9]))$}}")
        if self.grad and params:
            out.append("# EXEC: gradients: {{[0-9]+}} elements of %d "
                       "parameters agree" % len(params))
        return "\n".join(out) + "\n\n" + self.model()


def onnx_model(case):
    import onnx
    import onnx.helper
    import onnx.parser
    model = onnx.parser.parse_model(case.model(with_loss=False))
    del model.graph.output[:]
    model.graph.output.append(
        onnx.helper.make_tensor_value_info(
            "y", onnx.TensorProto.INT64 if case.cast else onnx.TensorProto.FLOAT,
            None))
    return model


def ort_value(case):
    """y computed by onnxruntime."""
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(
        onnx_model(case).SerializeToString(), options,
        providers=["CPUExecutionProvider"])
    return session.run(["y"], {})[0].astype(np.float64)


def reference_value(case):
    """y computed by onnx's reference implementation (NumPy)."""
    from onnx.reference import ReferenceEvaluator
    return np.asarray(ReferenceEvaluator(onnx_model(case)).run(None, {})[0],
                      np.float64)


# --- NumPy references ------------------------------------------------------

def conv_transpose(x, w, b, strides, pads, dilations, out_pad, group=1):
    """ConvTranspose by its definition: input element (n, c, i, j) adds
    x · W[c, o, ki, kj] at (i·s − pad + ki·d, j·s − pad + kj·d)."""
    n, c, h, wd = x.shape
    og = w.shape[1]
    o = og * group
    kh, kw = w.shape[2:]
    oh = (h - 1) * strides[0] + dilations[0] * (kh - 1) + 1 - pads[0] - \
        pads[2] + out_pad[0]
    ow = (wd - 1) * strides[1] + dilations[1] * (kw - 1) + 1 - pads[1] - \
        pads[3] + out_pad[1]
    y = np.zeros((n, o, oh, ow))
    cg = c // group
    for ni in range(n):
        for ci in range(c):
            g = ci // cg
            for i in range(h):
                for j in range(wd):
                    for oi in range(og):
                        for ki in range(kh):
                            for kj in range(kw):
                                r = i * strides[0] - pads[0] + ki * dilations[0]
                                s = j * strides[1] - pads[1] + kj * dilations[1]
                                if 0 <= r < oh and 0 <= s < ow:
                                    y[ni, g * og + oi, r, s] += \
                                        x[ni, ci, i, j] * w[ci, oi, ki, kj]
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def scatter_elements(data, idx, upd, axis, reduction="none"):
    y = np.array(data, np.float64)
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[axis] = idx[pos] % data.shape[axis]
        target = tuple(target)
        if reduction == "none":
            y[target] = upd[pos]
        elif reduction == "add":
            y[target] += upd[pos]
        elif reduction == "mul":
            y[target] *= upd[pos]
        elif reduction == "max":
            y[target] = max(y[target], upd[pos])
    return y


def scatter_nd(data, idx, upd, reduction="none"):
    y = np.array(data, np.float64)
    k = idx.shape[-1]
    for pos in np.ndindex(*idx.shape[:-1]):
        target = tuple(int(v) % data.shape[j] for j, v in enumerate(idx[pos]))
        if reduction == "none":
            y[target] = upd[pos]
        elif reduction == "add":
            y[target] += upd[pos]
        elif reduction == "mul":
            y[target] *= upd[pos]
    return y


def var(v):
    return "%%[[%s:[0-9]+]]" % v


def param(name, v):
    return 'CHECK-DAG: %s = graph.parameter "%s"' % (var(v), name)


CT = "graph.conv_transpose2d"

CASES = [
    Case("conv-transpose", "ConvTranspose, stride 2, pads 1, output padding 1 "
         "(a decoder's 2x upsampling):\n[2, 3, 4, 4] with weights [3, 2, 3, "
         "3] and a bias gives (4 - 1)*2 + 3 - 2 + 1 = 8.",
         "y = ConvTranspose <strides = [2, 2], pads = [1, 1, 1, 1], "
         "output_padding = [1, 1]> (x, wt, b)",
         {"x": (normal(1, (2, 3, 4, 4)), np.float32),
          "wt": (normal(2, (3, 2, 3, 3)) * 0.5, np.float32),
          "b": (normal(3, (2,)), np.float32)},
         lambda v: conv_transpose(v["x"], v["wt"], v["b"], (2, 2),
                                  (1, 1, 1, 1), (1, 1), (1, 1)),
         [param("x", "X"), param("wt", "W"), param("b", "B"),
          "CHECK: %s %%[[X]], %%[[W]], %%[[B]] {dilations = array<i64: 1, 1>, "
          "group = 1 : i64, output_padding = array<i64: 1, 1>, pads = "
          "array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : "
          "(tensor<2x3x4x4xf32>, tensor<3x2x3x3xf32>, tensor<2xf32>) -> "
          "tensor<2x2x8x8xf32>" % CT]),
    Case("conv-transpose-grouped", "Two groups, dilations [2, 1], strides "
         "[1, 2]: [1, 4, 3, 3] with weights\n[4, 1, 2, 2] gives 2 channels "
         "of (3 - 1) + 2 + 1 = 5 rows and (3 - 1)*2 + 2 = 6 columns.",
         "y = ConvTranspose <group = 2, dilations = [2, 1], strides = [1, 2]> "
         "(x, wt)",
         {"x": (normal(4, (1, 4, 3, 3)), np.float32),
          "wt": (normal(5, (4, 1, 2, 2)), np.float32)},
         lambda v: conv_transpose(v["x"], v["wt"], None, (1, 2), (0,) * 4,
                                  (2, 1), (0, 0), group=2),
         ["CHECK: %s %%{{.*}}, %%{{.*}} {dilations = array<i64: 2, 1>, group "
          "= 2 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, "
          "0, 0, 0>, strides = array<i64: 1, 2>} : (tensor<1x4x3x3xf32>, "
          "tensor<4x1x2x2xf32>) -> tensor<1x2x5x6xf32>" % CT]),
    Case("conv-transpose-1d-same", "A 1-d ConvTranspose with auto_pad "
         "SAME_UPPER and stride 2: the result has 2 * 5 = 10\npositions; "
         "the window gives (5 - 1)*2 + 3 = 11, and SAME_UPPER puts the\n"
         "padding of 1 at the end. It runs as a 2-d one of unit height.",
         'y = ConvTranspose <auto_pad = "SAME_UPPER", strides = [2]> (x, wt)',
         {"x": (normal(6, (2, 2, 5)), np.float32),
          "wt": (normal(7, (2, 3, 3)), np.float32)},
         lambda v: conv_transpose(v["x"][:, :, None], v["wt"][:, :, None],
                                  None, (1, 2), (0, 0, 0, 1), (1, 1),
                                  (0, 0))[:, :, 0],
         ["CHECK: graph.reshape %{{.*}} : tensor<2x2x5xf32> -> "
          "tensor<2x2x1x5xf32>",
          "CHECK: graph.reshape %{{.*}} : tensor<2x3x3xf32> -> "
          "tensor<2x3x1x3xf32>",
          "CHECK: %%[[Y:.*]] = %s %%{{.*}}, %%{{.*}} {{.*}}output_padding = "
          "array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 1>, strides = "
          "array<i64: 1, 2>} : (tensor<2x2x1x5xf32>, tensor<2x3x1x3xf32>) -> "
          "tensor<2x3x1x10xf32>" % CT,
          "CHECK: graph.reshape %[[Y]] : tensor<2x3x1x10xf32> -> "
          "tensor<2x3x10xf32>"]),
    Case("conv-transpose-output-shape", "output_shape [10, 8] with strides "
         "[3, 2]: the window gives 9 x 7, so ONNX's rule\nputs a padding of "
         "-1 at the end of each dim: an output padding of 1 (rows and\n"
         "columns only the bias reaches).",
         "y = ConvTranspose <output_shape = [10, 8], strides = [3, 2]> "
         "(x, wt, b)",
         {"x": (normal(8, (1, 1, 3, 3)), np.float32),
          "wt": (normal(9, (1, 2, 3, 3)), np.float32),
          "b": (normal(10, (2,)), np.float32)},
         lambda v: conv_transpose(v["x"], v["wt"], v["b"], (3, 2), (0,) * 4,
                                  (1, 1), (1, 1)),
         ["CHECK: %s {{.*}}output_padding = array<i64: 1, 1>, pads = "
          "array<i64: 0, 0, 0, 0>, strides = array<i64: 3, 2>} {{.*}} -> "
          "tensor<1x2x10x8xf32>" % CT]),
    Case("resize-nearest", "Resize, nearest, asymmetric, floor, scales "
         "[1, 1, 2, 3] from a Constant\n(PyTorch's nearest upsampling): "
         "each element repeats 2 x 3 times.",
         'y = Resize <mode = "nearest", coordinate_transformation_mode = '
         '"asymmetric", nearest_mode = "floor"> (x, roi, s)',
         {"x": (normal(11, (1, 2, 3, 4)), np.float32)}, None,
         ["CHECK: graph.resize %{{.*}} {coordinate_transformation_mode = "
          '"asymmetric", mode = "nearest", nearest_mode = "floor", scales = '
          "array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, "
          "3.000000e+00>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x12xf32>"],
         pre=["roi = Constant <value = float[0] {}> ()",
              "s = Constant <value = float[4] {1, 1, 2, 3}> ()"]),
    Case("resize-bilinear", "Resize, linear, half_pixel (PyTorch's bilinear "
         "upsampling, align_corners=False),\nscales [1, 1, 2, 2] as an "
         "initializer: a constant, not a parameter.",
         'y = Resize <mode = "linear"> (x, roi, s)',
         {"x": (normal(12, (1, 2, 3, 4)), np.float32),
          "s": (np.array([1.0, 1.0, 2.0, 2.0]), np.float32)}, None,
         [param("x", "X"),
          'CHECK-NOT: graph.parameter "s"',
          'CHECK: graph.resize %[[X]] {coordinate_transformation_mode = '
          '"half_pixel", mode = "linear", scales = array<f64: 1.000000e+00, '
          '1.000000e+00, 2.000000e+00, 2.000000e+00>} : '
          '(tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32>'],
         pre=["roi = Constant <value = float[0] {}> ()"], constants=["s"]),
    Case("resize-align-corners", "Resize, linear, align_corners, to sizes "
         "[1, 2, 5, 7]: the corners stay, the scales\nare sizes / extents.",
         'y = Resize <mode = "linear", coordinate_transformation_mode = '
         '"align_corners"> (x, roi, , sizes)',
         {"x": (normal(13, (1, 2, 3, 4)), np.float32)}, None,
         ['CHECK: graph.resize %{{.*}} {coordinate_transformation_mode = '
          '"align_corners", mode = "linear", scales = array<f64: '
          '1.000000e+00, 1.000000e+00, 1.6666666666666667, 1.750000e+00>}'],
         pre=["roi = Constant <value = float[0] {}> ()",
              "sizes = Constant <value = int64[4] {1, 2, 5, 7}> ()"]),
    Case("resize-cubic-antialias", "Resize at opset 18, cubic with "
         "antialias, downsampling [6, 8] by [0.5, 0.75]:\nthe kernel widens "
         "by 1 / scale. The opset bridge keeps antialias as `__antialias`.",
         'y = Resize <mode = "cubic", antialias = 1> (x, roi, s)',
         {"x": (normal(14, (1, 1, 6, 8)), np.float32)}, None,
         ['CHECK: graph.resize %{{.*}} {antialias = true, '
          'coordinate_transformation_mode = "half_pixel", mode = "cubic", '
          'scales = array<f64: 1.000000e+00, 1.000000e+00, 5.000000e-01, '
          '7.500000e-01>} : (tensor<1x1x6x8xf32>) -> tensor<1x1x3x6xf32>'],
         opset=18,
         pre=["roi = Constant <value = float[0] {}> ()",
              "s = Constant <value = float[4] {1, 1, 0.5, 0.75}> ()"]),
    Case("upsample", "Upsample (opset 9), nearest, scales [1, 1, 2, 3]: "
         "asymmetric with floor rounding,\neach element repeated.",
         'y = Upsample <mode = "nearest"> (x, s)',
         {"x": (normal(15, (1, 1, 2, 3)), np.float32)}, None,
         ['CHECK: graph.resize %{{.*}} {coordinate_transformation_mode = '
          '"asymmetric", mode = "nearest", nearest_mode = "floor", scales = '
          'array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, '
          '3.000000e+00>}'],
         opset=9, pre=["s = Constant <value = float[4] {1, 1, 2, 3}> ()"]),
    Case("scatter-elements-add", "ScatterElements along axis 1 with "
         "reduction add; two updates of a row land on\none position and "
         "add up.",
         'y = ScatterElements <axis = 1, reduction = "add"> (data, idx, upd)',
         {"data": (normal(16, (3, 5)), np.float32),
          "idx": (np.array([[1, 1], [0, 4], [3, -1]]), np.int64),
          "upd": (normal(17, (3, 2)), np.float32)},
         lambda v: scatter_elements(v["data"], v["idx"], v["upd"], 1, "add"),
         [param("data", "D"), param("upd", "U"),
          "CHECK: graph.scatter_elements %[[D]], %{{.*}}, %[[U]] {axis = 1 : "
          'i64, reduction = "add"} : (tensor<3x5xf32>, tensor<3x2xi64>, '
          "tensor<3x2xf32>) -> tensor<3x5xf32>"]),
    Case("scatter-elements", "ScatterElements along axis 0, reduction none, "
         "a negative index: the\ngradient flows to the written updates and "
         "to the data elsewhere.",
         "y = ScatterElements (data, idx, upd)",
         {"data": (normal(18, (4, 3)), np.float32),
          "idx": (np.array([[1, 0, -1], [2, 3, 0]]), np.int64),
          "upd": (normal(19, (2, 3)), np.float32)},
         lambda v: scatter_elements(v["data"], v["idx"], v["upd"], 0),
         ["CHECK: graph.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = "
          "0 : i64} : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> "
          "tensor<4x3xf32>"]),
    Case("scatter-elements-max", "ScatterElements with reduction max "
         "(opset 18), which the opset bridge lets\npass.",
         'y = ScatterElements <axis = 1, reduction = "max"> (data, idx, upd)',
         {"data": (normal(20, (2, 4)), np.float32),
          "idx": (np.array([[0, 3, 3], [1, 2, 1]]), np.int64),
          "upd": (normal(21, (2, 3)) * 2, np.float32)},
         lambda v: scatter_elements(v["data"], v["idx"], v["upd"], 1, "max"),
         ['CHECK: graph.scatter_elements {{.*}} {axis = 1 : i64, reduction = '
          '"max"}'], opset=18),
    Case("scatternd", "ScatterND writing two [3, 2] slices of a [4, 3, 2] "
         "tensor (tuples of one index).",
         "y = ScatterND (data, idx, upd)",
         {"data": (normal(22, (4, 3, 2)), np.float32),
          "idx": (np.array([[2], [0]]), np.int64),
          "upd": (normal(23, (2, 3, 2)), np.float32)},
         lambda v: scatter_nd(v["data"], v["idx"], v["upd"]),
         ["CHECK: graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} : "
          "(tensor<4x3x2xf32>, tensor<2x1xi64>, tensor<2x3x2xf32>) -> "
          "tensor<4x3x2xf32>"]),
    Case("scatternd-mul", "ScatterND with reduction mul and tuples of two "
         "indices, two of them equal:\nthat element is multiplied by both "
         "updates.",
         'y = ScatterND <reduction = "mul"> (data, idx, upd)',
         {"data": (normal(24, (2, 5)), np.float32),
          "idx": (np.array([[0, 1], [1, 4], [0, 1]]), np.int64),
          "upd": (normal(25, (3,)) + 2, np.float32)},
         lambda v: scatter_nd(v["data"], v["idx"], v["upd"], "mul"),
         ['CHECK: graph.scatter_nd {{.*}} {reduction = "mul"} : '
          "(tensor<2x5xf32>, tensor<3x2xi64>, tensor<3xf32>) -> "
          "tensor<2x5xf32>"]),
    Case("scatternd-labels", "ScatterND on integer labels, as a "
         "sequence-to-sequence model shifts its\nlabels right: column 0 of "
         "each row becomes the start token 0. No gradient.",
         "y = ScatterND (labels, idx, start)",
         {"labels": (np.array([[5, 7, 2], [9, 1, 4]]), np.int64),
          "idx": (np.array([[[0, 0]], [[1, 0]]]), np.int64),
          "start": (np.array([[0], [0]]), np.int64)},
         lambda v: scatter_nd(v["labels"], v["idx"], v["start"]),
         ["CHECK: graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} : "
          "(tensor<2x3xi64>, tensor<2x1x2xi64>, tensor<2x1xi64>) -> "
          "tensor<2x3xi64>"], grad=False, cast=True),
]


def decoder():
    """Inputs/decoder.onnxtext: a small model using each op, for plans.test
    (weights: NumPy, seed 40)."""
    r = rng(40)

    def init(name, shape, scale):
        values = r.standard_normal(shape) * scale
        return "float[%s] %s = {%s}" % (", ".join(map(str, shape)), name,
                                        literal(values, np.float32))
    inits = [init("enc", (4, 3, 3, 3), 0.3), init("enc_b", (4,), 0.1),
             init("dec", (4, 3, 4, 4), 0.3), init("dec_b", (3,), 0.1),
             init("nd_upd", (2, 144), 0.5)]
    lines = [
        "# A small decoder using each op, for plans.test: a strided Conv, "
        "ConvTranspose back",
        "# to the input's size, a bilinear Resize, ScatterElements adding "
        "a slice of\n# each row into it and ScatterND writing two rows of "
        "the batch. Written by\n# generate.py (weights: NumPy, seed 40).",
        '<ir_version: 8, opset_import: ["" : 17]>',
        "decoder (float[N, 3, 6, 6] img, int64[N] labels) => (float loss)",
        "<%s>" % ", ".join(inits), "{",
        "  h = Conv <strides = [2, 2], pads = [1, 1, 1, 1]> (img, enc, enc_b)",
        "  a = Relu(h)",
        "  u = ConvTranspose <strides = [2, 2], pads = [1, 1, 1, 1]> "
        "(a, dec, dec_b)",
        "  roi = Constant <value = float[0] {}> ()",
        "  s = Constant <value = float[4] {1, 1, 2, 2}> ()",
        '  r = Resize <mode = "linear"> (u, roi, s)',
        "  shape = Constant <value = int64[3] {0, 3, 144}> ()",
        "  f = Reshape(r, shape)",
        "  cols = Constant <value = int64[1, 3, 4] {0, 5, 5, 143, 7, 1, 0, "
        "60, 2, 2, 99, 1}> ()",
        "  n = Shape(img)",
        "  n0 = Slice(n, zero, one)",
        "  tail = Constant <value = int64[2] {3, 4}> ()",
        "  ishape = Concat <axis = 0> (n0, tail)",
        "  idx = Expand(cols, ishape)",
        "  zero = Constant <value = int64[1] {0}> ()",
        "  one = Constant <value = int64[1] {1}> ()",
        "  four = Constant <value = int64[1] {4}> ()",
        "  two = Constant <value = int64[1] {2}> ()",
        "  upd = Slice(f, zero, four, two)",
        '  se = ScatterElements <axis = 2, reduction = "add"> (f, idx, upd)',
        "  ndi = Constant <value = int64[2, 2] {0, 1, 3, 2}> ()",
        "  nd = ScatterND(se, ndi, nd_upd)",
        "  p = ReduceMean <axes = [2], keepdims = 0> (nd)",
        "  loss = SoftmaxCrossEntropyLoss(p, labels)",
        "}"]
    # Constants before their uses.
    body = lines[lines.index("{") + 1:-1]
    consts = [l for l in body if "Constant" in l]
    rest = [l for l in body if "Constant" not in l]
    lines = lines[:lines.index("{") + 1] + consts + rest + ["}"]
    with open(os.path.join(HERE, "decoder.onnxtext"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    for case in CASES:
        if case.want is None:
            case.want = reference_value(case)
        ort = ort_value(case)
        assert ort.shape == case.want.shape, (case.name, ort.shape)
        err = np.max(np.abs(ort - case.want)) if ort.size else 0.0
        assert err < 1e-4, "%s: onnxruntime differs by %g" % (case.name, err)
        with open(os.path.join(OUT, case.name + ".onnxtext"), "w") as f:
            f.write(case.text())
        print("%-32s %-12s onnxruntime agrees (max |diff| %.1e)" %
              (case.name, case.want.shape, err))
    decoder()


if __name__ == "__main__":
    main()
