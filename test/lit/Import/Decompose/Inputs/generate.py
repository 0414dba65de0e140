#!/usr/bin/env python3
"""Writes the decomposition tests of test/lit/Import/Decompose.

Each test imports ONNX ops that the importer builds from existing graph ops
(lib/Import/LegalizeDecompose*.cpp, LegalizeEinsum.cpp) and checks

1. the graph ops they become: FileCheck on weft-translate's output;
2. the value: the model's loss is sum(w * (y - want)), where y is the op's
   result, want is y computed here with NumPy in float64 and w holds weights
   of magnitude 0.5 to 1.5 with random signs, so weft-run must print a loss
   below 1e-4 in magnitude (an element off by 2e-4 or more shows);
3. the gradient: weft-run --check-gradients compares the backward pass with
   central differences of that loss. w and want are --frozen, so what is
   checked is the gradient w * dy/dx of every other initializer (the op's
   inputs, slopes, scales and biases).

When onnx is importable (the pinned package of python/requirements.txt in
build/venv), each NumPy reference is also compared with the value of y that
onnx's reference evaluator (onnx.reference) computes, so the references
follow ONNX's definitions. Run it after changing a decomposition:

    build/venv/bin/python test/lit/Import/Decompose/Inputs/generate.py
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)

# IR version of each opset (the bridge lowers IR 9+ models that need no new
# element type to IR 8 for the checker).
IR_OF_OPSET = {17: 8, 18: 8, 20: 9, 21: 10, 23: 11, 24: 11}

ONNX_TYPE = {np.float32: "float", np.int64: "int64"}


def rng(seed):
    return np.random.default_rng(seed)


def away(x, points, margin=0.05):
    """Moves elements of x off the kinks at `points` by at least `margin`."""
    x = np.array(x, dtype=np.float64)
    for p in points:
        close = np.abs(x - p) < margin
        x[close] = p + np.where(x[close] >= p, margin, -margin)
    return x


def normal(seed, shape, scale=1.0, kinks=()):
    return away(rng(seed).standard_normal(shape) * scale, kinks)


def literal(values, dtype):
    flat = np.asarray(values).reshape(-1)
    if dtype == np.int64:
        return ", ".join(str(int(v)) for v in flat)
    return ", ".join("%.9g" % float(np.float32(v)) for v in flat)


class Case:
    def __init__(self, name, doc, nodes, inits, want, checks, opset=17,
                 grad=True, declare=()):
        self.name = name
        self.doc = doc
        self.nodes = nodes
        # name -> (array, numpy type); float inputs are rounded to float32
        # before the reference sees them.
        self.inits = {}
        for key, (value, dtype) in inits.items():
            value = np.asarray(value)
            if dtype == np.float32:
                value = value.astype(np.float32).astype(np.float64)
            else:
                value = value.astype(np.int64)
            self.inits[key] = (value, dtype)
        self.want = np.asarray(want({k: v for k, (v, _) in self.inits.items()}),
                               dtype=np.float64)
        self.checks = checks
        self.opset = opset
        self.grad = grad
        # Value infos ("float[2, 6, 3] h"): intermediate types as exporters
        # record them, where ONNX 1.12's inference leaves a dim unknown.
        self.declare = list(declare)

    def weights(self):
        r = rng(len(self.name) * 7919 + sum(map(ord, self.name)))
        shape = self.want.shape
        return r.uniform(0.5, 1.5, shape) * r.choice([-1.0, 1.0], shape)

    def model(self, with_loss=True):
        inits = []
        for key, (value, dtype) in self.inits.items():
            dims = ", ".join(str(d) for d in value.shape)
            inits.append("%s[%s] %s = {%s}" % (ONNX_TYPE[dtype], dims, key,
                                               literal(value, dtype)))
        nodes = list(self.nodes)
        if with_loss:
            dims = ", ".join(str(d) for d in self.want.shape)
            inits.append("float[%s] want = {%s}" %
                         (dims, literal(self.want, np.float32)))
            inits.append("float[%s] w = {%s}" %
                         (dims, literal(self.weights(), np.float32)))
            nodes += ["d = Sub(y, want)", "p = Mul(d, w)",
                      "loss = ReduceSum <keepdims = 0> (p)"]
        inits += self.declare
        lines = ['<ir_version: %d, opset_import: ["" : %d]>' %
                 (IR_OF_OPSET[self.opset], self.opset),
                 "%s () => (float loss)" % self.name.replace("-", "_"),
                 "<%s>" % ", ".join(inits), "{"]
        lines += ["  " + n for n in nodes]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def text(self):
        out = ["# " + line if line else "#" for line in self.doc.split("\n")]
        out += ["# Written by Inputs/generate.py (want: NumPy); edit the "
                "script, not this file.",
                "# RUN: weft-translate --import-onnx %s | FileCheck %s"]
        run = ("# RUN: weft-run %s --with-weights --frozen w,want")
        params = [k for k, (_, t) in self.inits.items() if t == np.float32]
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


def reference_value(case):
    """y computed by onnx's reference evaluator, or None without onnx."""
    try:
        import onnx.parser
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        return None
    model = onnx.parser.parse_model(case.model(with_loss=False))
    # Its Elu overflows in the branch it does not take (x = 100): no warning.
    with np.errstate(all="ignore"):
        y = ReferenceEvaluator(model).run(["y"], {})[0]
    return np.asarray(y, dtype=np.float64)


# --- NumPy references ------------------------------------------------------

def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    return np.logaddexp(0.0, x)


def elu(x, alpha):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def hard_sigmoid(x, alpha, beta):
    return np.clip(alpha * x + beta, 0.0, 1.0)


def instance_norm(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def cumsum(x, axis, exclusive=False, reverse=False):
    if reverse:
        x = np.flip(x, axis)
    y = np.cumsum(x, axis=axis)
    if exclusive:
        y = y - x
    return np.flip(y, axis) if reverse else y


def one_hot(indices, depth, axis, off, on):
    idx = np.where(indices < 0, indices + depth, indices)
    hit = np.expand_dims(idx, axis) == np.arange(depth).reshape(
        [depth if d == (axis % (idx.ndim + 1)) else 1
         for d in range(idx.ndim + 1)])
    return np.where(hit, on, off)


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                  (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


F = np.float32
I = np.int64
SELU_ALPHA = 1.67326319217681884765625
SELU_GAMMA = 1.05070102214813232421875


def main():
    sys.path.insert(0, HERE)
    import cases
    written = 0
    for case in cases.all_cases():
        got = reference_value(case)
        if got is not None:
            # The evaluator computes in float32: long sums drift by ~1e-6.
            if not np.allclose(got, case.want, rtol=1e-5, atol=1e-5):
                sys.exit("%s: NumPy and onnx's reference evaluator differ by "
                         "up to %g" % (case.name, np.abs(got - case.want).max()))
        else:
            print("%s: onnx not available; NumPy only" % case.name)
        with open(os.path.join(OUT, case.name + ".onnxtext"), "w") as f:
            f.write(case.text())
        written += 1
    print("wrote %d tests (%s)" % (written, "checked against onnx's reference "
                                   "evaluator" if got is not None
                                   else "NumPy only"))


if __name__ == "__main__":
    main()
