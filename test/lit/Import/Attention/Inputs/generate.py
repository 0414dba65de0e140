#!/usr/bin/env python3
"""Writes the Attention tests of test/lit/Import/Attention.

Each test imports one ONNX Attention node (opset 23 or 25), which the
importer builds from existing graph ops (lib/Import/LegalizeAttention.cpp),
and checks

1. the graph ops it becomes: FileCheck on weft-translate's output;
2. the values: the model's loss is the sum over the checked outputs o of
   sum(w_o * (o - want_o)), where want_o is the output computed here by
   onnxruntime (and by onnx's reference evaluator where onnxruntime cannot
   load the opset; both must agree where both run) and w_o holds weights of
   magnitude 0.5 to 1.5 with random signs, so weft-run must print a loss
   below 1e-4 in magnitude;
3. the gradient: weft-run --check-gradients compares the backward pass with
   central differences of that loss for Q, K, V, past_key and past_value
   (masks, weights and wanted values are --frozen).

A float mask with -inf entries is built in the graph (Where of a bool
initializer, the values and Log(zero), which the importer folds): ONNX's
text format has no infinity.
Run it with the pinned packages after changing the decomposition:

    build/venv/bin/python test/lit/Import/Attention/Inputs/generate.py
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
IR_OF_OPSET = {23: 11, 24: 11, 25: 13}


def normal(seed, shape, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def literal(values, kind):
    flat = np.asarray(values).reshape(-1)
    if kind == "bool":
        return ", ".join("1" if v else "0" for v in flat)
    return ", ".join("%.9g" % float(np.float32(v)) for v in flat)


def attrs_text(attrs):
    if not attrs:
        return ""
    parts = []
    for key, value in attrs.items():
        parts.append("%s = %s" % (key, value))
    return " <%s>" % ", ".join(parts)


class Case:
    """One Attention node. `inputs`: the node's inputs in order, each a name
    ("" for an absent optional one); `inits`: name -> (array, "float" or
    "bool"); `pre`: nodes that build masks; `outputs`: the node's outputs
    ("" for unwanted ones); `checked`: the outputs the loss compares."""

    def __init__(self, name, doc, opset, attrs, inputs, inits, outputs,
                 checks, pre=(), frozen=()):
        self.name, self.doc, self.opset = name, doc, opset
        self.attrs, self.inputs, self.outputs = attrs, inputs, outputs
        self.inits = {k: (np.asarray(v, dtype=np.float32 if t == "float"
                                     else np.bool_), t)
                      for k, (v, t) in inits.items()}
        self.checks = checks
        self.pre = list(pre)
        self.frozen = list(frozen)
        self.checked = [o for o in outputs if o]

    def node(self):
        return "%s = Attention%s (%s)" % (", ".join(self.outputs),
                                          attrs_text(self.attrs),
                                          ", ".join(self.inputs))

    def model(self, wants=None):
        inits = ["%s%s %s = {%s}" % (t, "[%s]" % ", ".join(
            map(str, v.shape)) if v.ndim else "", k, literal(v, t))
                 for k, (v, t) in self.inits.items()]
        nodes = self.pre + [self.node()]
        if wants is None:
            # Shapes are cleared after parsing (references()).
            outs = ", ".join("float %s" % o for o in self.checked)
        else:
            outs = "float loss"
            terms = []
            for o in self.checked:
                want = wants[o]
                dims = ", ".join(map(str, want.shape))
                inits.append("float[%s] want_%s = {%s}" % (
                    dims, o, literal(want, "float")))
                inits.append("float[%s] w_%s = {%s}" % (
                    dims, o, literal(self.weights(o, want.shape), "float")))
                nodes += ["d_%s = Sub(%s, want_%s)" % (o, o, o),
                          "p_%s = Mul(d_%s, w_%s)" % (o, o, o),
                          "l_%s = ReduceSum <keepdims = 0> (p_%s)" % (o, o)]
                terms.append("l_" + o)
            nodes.append("loss = Sum(%s)" % ", ".join(terms))
        lines = ['<ir_version: %d, opset_import: ["" : %d]>' %
                 (IR_OF_OPSET[self.opset], self.opset),
                 "attention_%s () => (%s)" % (self.name.replace("-", "_"),
                                              outs),
                 "<%s>" % ", ".join(inits), "{"]
        lines += ["  " + n for n in nodes]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def weights(self, output, shape):
        r = np.random.default_rng(sum(map(ord, self.name + output)))
        return r.uniform(0.5, 1.5, shape) * r.choice([-1.0, 1.0], shape)

    def frozen_names(self):
        names = ["want_" + o for o in self.checked]
        names += ["w_" + o for o in self.checked]
        return names + self.frozen

    def text(self, wants, source):
        out = ["# " + line if line else "#" for line in self.doc.split("\n")]
        out += ["# Written by Inputs/generate.py (want: %s); edit the "
                "script, not this file." % source,
                "# RUN: weft-translate --import-onnx %s | FileCheck %s",
                "# RUN: weft-run %s --with-weights --frozen " +
                ",".join(self.frozen_names()) +
                " --check-gradients --grad-samples 64"
                " | FileCheck %s --check-prefix=EXEC", ""]
        out += ["# " + c for c in self.checks]
        out += ["", "# EXEC: loss: {{-?(0|[0-9.]+e-(0[5-9]|[1-9][0-9]))$}}",
                "# EXEC: gradients: {{[0-9]+}} elements of %d parameters "
                "agree" % self.parameter_count(), ""]
        return "\n".join(out) + "\n" + self.model(wants)

    def parameter_count(self):
        return sum(1 for k, (_, t) in self.inits.items()
                   if t == "float" and k not in self.frozen + ["zero"])


def references(case):
    """The checked outputs by onnxruntime and by onnx's reference evaluator
    (either None when it cannot run the model)."""
    import onnx.parser
    from onnx.reference import ReferenceEvaluator
    model = onnx.parser.parse_model(case.model())
    for output in model.graph.output:
        output.type.tensor_type.ClearField("shape")
    ref = ReferenceEvaluator(model).run(case.checked, {})
    ref = {o: np.asarray(v, np.float64) for o, v in zip(case.checked, ref)}
    try:
        import onnxruntime
        session = onnxruntime.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"])
        ort = session.run(case.checked, {})
        ort = {o: np.asarray(v, np.float64) for o, v in zip(case.checked, ort)}
    except Exception:  # an opset or attribute it does not know
        ort = None
    return ort, ref


QKV = "Q, K, V"


def cases():
    f = "float"
    q4 = normal(1, (2, 4, 3, 4))
    k4 = normal(2, (2, 2, 5, 4))
    v4 = normal(3, (2, 2, 5, 3))
    causal_gqa = Case(
        "causal-gqa-softcap",
        "4-d grouped-query attention (4 query heads over 2 key/value heads),\n"
        "is_causal and softcap: the kv heads are repeated by reshape, expand\n"
        "and reshape; the causal frontier is a constant bias of 0 and -inf;\n"
        "softcap is c * tanh(s / c).",
        23, {"is_causal": 1, "softcap": 2.0}, ["Q", "K", "V"],
        {"Q": (q4, f), "K": (k4, f), "V": (v4, f)}, ["Y"],
        ["CHECK: %[[BIAS:.*]] = graph.constant dense<{{\\[\\[}}0.000000e+00, "
         "0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000]",
         "CHECK: graph.mul %{{.*}} : (tensor<2x2x5x4xf32>, tensor<f32>) "
         "-> tensor<2x2x5x4xf32>",
         "CHECK: graph.expand %{{.*}} : tensor<2x2x1x5x4xf32> -> "
         "tensor<2x2x2x5x4xf32>",
         "CHECK: graph.matmul %{{.*}} : (tensor<2x4x3x4xf32>, "
         "tensor<2x4x4x5xf32>) -> tensor<2x4x3x5xf32>",
         "CHECK: graph.tanh",
         "CHECK: graph.add %{{.*}}, %[[BIAS]] : (tensor<2x4x3x5xf32>, "
         "tensor<3x5xf32>) -> tensor<2x4x3x5xf32>",
         "CHECK: graph.softmax %{{.*}} {axis = -1 : i64} : "
         "tensor<2x4x3x5xf32>",
         "CHECK-NOT: graph.reduce_max",
         "CHECK: graph.matmul %{{.*}} : (tensor<2x4x3x5xf32>, "
         "tensor<2x4x5x3xf32>) -> tensor<2x4x3x3xf32>"])

    q3 = normal(4, (2, 3, 8))
    k3 = normal(5, (2, 4, 8))
    v3 = normal(6, (2, 4, 6))
    keep = np.ones((3, 3), bool)
    keep[1, :] = False            # a query row that sees no key
    keep[0, 2] = False
    mask_3d = Case(
        "3d-float-mask",
        "3-d Q, K, V with q_num_heads = kv_num_heads = 2, scale, and a float\n"
        "mask of 3 keys for 4 (the missing key padded with -inf) whose second\n"
        "row is -inf throughout: that row's output is 0 (no NaN), found at\n"
        "run time by reduce_max of the bias.",
        23, {"q_num_heads": 2, "kv_num_heads": 2, "scale": 0.3},
        ["Q", "K", "V", "M"],
        {"Q": (q3, f), "K": (k3, f), "V": (v3, f),
         "keep": (keep, "bool"), "mvals": (normal(7, (3, 3), 0.5), f),
         "zero": (np.zeros(()), f)}, ["Y"],
        ["CHECK: graph.reshape %{{.*}} : tensor<2x3x8xf32> -> "
         "tensor<2x3x2x4xf32>",
         "CHECK: graph.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : "
         "tensor<2x3x2x4xf32> -> tensor<2x2x3x4xf32>",
         "CHECK: graph.concat %{{.*}} {axis = 1 : i64} : (tensor<3x3xf32>, "
         "tensor<3x1xf32>) -> tensor<3x4xf32>",
         "CHECK: graph.reduce_max %{{.*}} {axes = array<i64: 1>, "
         "keepdims = true} : tensor<3x4xf32> -> tensor<3x1xf32>",
         "CHECK: graph.softmax",
         "CHECK: graph.select",
         "CHECK: graph.reshape %{{.*}} : tensor<2x3x2x3xf32> -> "
         "tensor<2x3x6xf32>"],
        pre=["ninf = Log(zero)", "M = Where(keep, mvals, ninf)"],
        frozen=["mvals"])

    qp = normal(8, (1, 2, 2, 4))
    kp = normal(9, (1, 2, 2, 4))
    vp = normal(10, (1, 2, 2, 4))
    past = Case(
        "bool-mask-past-modes",
        "A bool mask, past_key and past_value (present_key and present_value\n"
        "are the concatenations) and qk_matmul_output_mode 3 (the\n"
        "probabilities).",
        23, {"qk_matmul_output_mode": 3}, ["Q", "K", "V", "B", "PK", "PV"],
        {"Q": (qp, f), "K": (kp, f), "V": (vp, f),
         "B": (np.array([[1, 1, 0, 1, 1], [0, 1, 1, 1, 1]]), "bool"),
         "PK": (normal(11, (1, 2, 3, 4)), f),
         "PV": (normal(12, (1, 2, 3, 4)), f)},
        ["Y", "PKo", "PVo", "QK"],
        ["CHECK: %[[PK:.*]] = graph.concat %{{.*}} {axis = 2 : i64} : "
         "(tensor<1x2x3x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x5x4xf32>",
         "CHECK: graph.select %{{.*}} : (tensor<2x5xi1>, tensor<f32>, "
         "tensor<f32>) -> tensor<2x5xf32>",
         "CHECK: graph.softmax"])

    qw = normal(13, (1, 1, 3, 2))
    window = Case(
        "window-past",
        "Opset 25's windows with a cache: left_window_size 1 and\n"
        "right_window_size 0 over 2 past keys: query i (at 2 + i) sees keys\n"
        "1 + i and 2 + i; qk_matmul_output is mode 0's (the scaled scores).",
        25, {"left_window_size": 1, "right_window_size": 0},
        ["Q", "K", "V", "", "PK", "PV"],
        {"Q": (qw, f), "K": (normal(14, (1, 1, 3, 2)), f),
         "V": (normal(15, (1, 1, 3, 2)), f),
         "PK": (normal(16, (1, 1, 2, 2)), f),
         "PV": (normal(17, (1, 1, 2, 2)), f)},
        ["Y", "", "", "QK"],
        ["CHECK: graph.constant dense<{{\\[\\[}}0xFF800000, 0.000000e+00, "
         "0.000000e+00, 0xFF800000, 0xFF800000], [0xFF800000, 0xFF800000, "
         "0.000000e+00, 0.000000e+00, 0xFF800000], [0xFF800000, 0xFF800000, "
         "0xFF800000, 0.000000e+00, 0.000000e+00]]> : tensor<3x5xf32>",
         "CHECK-NOT: graph.reduce_max"])
    return [causal_gqa, mask_3d, past, window]


def main():
    for case in cases():
        ort, ref = references(case)
        for o in case.checked:
            if ort is not None:
                np.testing.assert_allclose(ort[o], ref[o], rtol=1e-5,
                                           atol=1e-6, err_msg=case.name)
        wants = ort if ort is not None else ref
        source = "onnxruntime" if ort is not None else "onnx.reference"
        path = os.path.join(OUT, case.name + ".onnxtext")
        with open(path, "w") as f:
            f.write(case.text(wants, source))
        print("wrote", os.path.relpath(path), "(want: %s)" % source)


if __name__ == "__main__":
    main()
