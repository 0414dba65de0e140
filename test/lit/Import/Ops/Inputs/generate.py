#!/usr/bin/env python3
"""Writes the tests of test/lit/Import/Ops: the ONNX ops that became graph
ops or new import forms to close gaps the ONNX node suite showed
(scripts/onnx-suite.py): trigonometric, hyperbolic and rounding functions,
GatherElements, pools with ceil_mode, of three spatial dims, LpPool and
GlobalMaxPool, Hardmax, LpNormalization, Shrink, LRN,
MeanVarianceNormalization and SwiGLU.

Each test checks

1. the graph ops the node becomes: FileCheck on weft-translate's output;
2. the value: the loss is sum_i sum(w_i * (y_i - want_i)), want_i computed
   here with NumPy in float64 and w_i weights of magnitude 0.5 to 1.5 with
   random signs, so weft-run must print a loss below 1e-4 in magnitude;
3. the gradient: weft-run --check-gradients against central differences
   of that loss (w and want are --frozen; the inputs are parameters).

Every NumPy reference is also compared with onnxruntime's value of the
same node when onnxruntime is importable (build/venv; onnx's reference
evaluator for an opset onnxruntime cannot load). Run after changing
a case:

    build/venv/bin/python test/lit/Import/Ops/Inputs/generate.py
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
IR_OF_OPSET = {11: 6, 13: 7, 17: 8, 19: 9, 28: 14}
ONNX_TYPE = {np.float32: "float", np.int64: "int64"}


def rng(seed):
    return np.random.default_rng(seed)


def literal(values, dtype):
    flat = np.asarray(values).reshape(-1)
    if dtype == np.int64:
        return ", ".join(str(int(v)) for v in flat)
    return ", ".join("%.9g" % float(np.float32(v)) for v in flat)


class Case:
    """A model whose outputs `ys` have NumPy references `want(inits)`."""

    def __init__(self, name, doc, nodes, inits, want, checks, ys=("y",),
                 opset=17, grad=True, frozen=()):
        self.name, self.doc, self.nodes = name, doc, nodes
        # Initializers that are not parameters (no gradient is checked).
        self.frozen_inits = list(frozen)
        self.inits = {}
        for key, (value, dtype) in inits.items():
            value = np.asarray(value)
            value = (value.astype(np.float32).astype(np.float64)
                     if dtype == np.float32 else value.astype(np.int64))
            self.inits[key] = (value, dtype)
        values = {k: v for k, (v, _) in self.inits.items()}
        wants = want(values)
        if len(ys) == 1:
            wants = [wants]
        self.wants = [np.asarray(w, dtype=np.float64) for w in wants]
        self.ys, self.checks, self.opset, self.grad = ys, checks, opset, grad

    def weights(self, i):
        r = rng(len(self.name) * 7919 + sum(map(ord, self.name)) + i)
        shape = self.wants[i].shape
        return r.uniform(0.5, 1.5, shape) * r.choice([-1.0, 1.0], shape)

    def model(self, with_loss=True):
        inits = []
        for key, (value, dtype) in self.inits.items():
            dims = ", ".join(str(d) for d in value.shape)
            inits.append("%s[%s] %s = {%s}" % (ONNX_TYPE[dtype], dims, key,
                                               literal(value, dtype)))
        nodes = list(self.nodes)
        outputs = "float loss"
        if with_loss:
            terms = []
            for i, (y, want) in enumerate(zip(self.ys, self.wants)):
                dims = ", ".join(str(d) for d in want.shape)
                inits.append("float[%s] want%d = {%s}" %
                             (dims, i, literal(want, np.float32)))
                inits.append("float[%s] w%d = {%s}" %
                             (dims, i, literal(self.weights(i), np.float32)))
                nodes += ["d%d = Sub(%s, want%d)" % (i, y, i),
                          "p%d = Mul(d%d, w%d)" % (i, i, i),
                          "s%d = ReduceSum <keepdims = 0> (p%d)" % (i, i)]
                terms.append("s%d" % i)
            while len(terms) > 1:
                nodes.append("t%d = Add(%s, %s)" % (len(terms), terms[0],
                                                    terms[1]))
                terms = ["t%d" % len(terms)] + terms[2:]
            nodes.append("loss = Identity(%s)" % terms[0])
        else:
            outputs = ", ".join("float %s" % y for y in self.ys)
        lines = ['<ir_version: %d, opset_import: ["" : %d]>' %
                 (IR_OF_OPSET[self.opset], self.opset),
                 "%s () => (%s)" % (self.name.replace("-", "_"), outputs),
                 "<%s>" % ", ".join(inits), "{"]
        lines += ["  " + n for n in nodes]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def frozen(self):
        return ",".join(["want%d,w%d" % (i, i) for i in range(len(self.ys))] +
                        self.frozen_inits)

    def text(self):
        out = ["# " + line if line else "#" for line in self.doc.split("\n")]
        out += ["# Written by Inputs/generate.py (want: NumPy); edit the "
                "script, not this file.",
                "# RUN: weft-translate --import-onnx %s | FileCheck %s"]
        run = "# RUN: weft-run %s --with-weights --frozen " + self.frozen()
        params = [k for k, (_, t) in self.inits.items()
                  if t == np.float32 and k not in self.frozen_inits]
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
        out.append("")
        return "\n".join(out) + "\n" + self.model()


def ort_values(case):
    """The outputs computed by onnxruntime (by onnx's reference evaluator
    for an opset onnxruntime cannot load), or None without them."""
    try:
        import onnx
        import onnx.parser
        import onnxruntime
    except ImportError:
        return None
    model = onnx.parser.parse_model(case.model(with_loss=False))
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    try:
        session = onnxruntime.InferenceSession(
            model.SerializeToString(), options,
            providers=["CPUExecutionProvider"])
    except Exception:  # an opset onnxruntime does not know: ONNX's reference
        from onnx.reference import ReferenceEvaluator
        values = ReferenceEvaluator(model).run(list(case.ys), {})
        return [np.asarray(v, np.float64) for v in values]
    return [v.astype(np.float64) for v in session.run(list(case.ys), {})]


def main():
    sys.path.insert(0, HERE)
    import cases
    checked = True
    for case in cases.all_cases():
        got = ort_values(case)
        if got is None:
            checked = False
        else:
            for y, g, w in zip(case.ys, got, case.wants):
                if g.shape != w.shape or not np.allclose(g, w, rtol=1e-5,
                                                         atol=1e-5):
                    sys.exit("%s: NumPy and onnxruntime differ on %s" %
                             (case.name, y))
        with open(os.path.join(OUT, case.name + ".onnxtext"), "w") as f:
            f.write(case.text())
    print("wrote %d tests (%s)" % (len(cases.all_cases()),
                                   "checked against onnxruntime" if checked
                                   else "NumPy only"))


if __name__ == "__main__":
    main()
