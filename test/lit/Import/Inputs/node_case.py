"""One ONNX node as a lit test of its decomposition (shared by the
generators in test/lit/Import/<Op>/Inputs/generate.py).

A test imports a model of one node whose inputs are float initializers and
checks

1. the graph ops the node becomes: FileCheck on weft-translate's output;
2. the values: the model's loss is the sum over the checked outputs o of
   sum(w_o * (o - want_o)), where want_o is the output computed by
   onnxruntime (by onnx's reference evaluator where onnxruntime cannot load
   the opset; both must agree where both run) and w_o holds weights of
   magnitude 0.5 to 1.5 with random signs, so weft-run must print a loss
   below 1e-4 in magnitude;
3. the gradient: weft-run --check-gradients compares the backward pass with
   central differences of that loss for every float initializer but the
   wanted values, the weights and those named `frozen`.
"""
import os

import numpy as np


def normal(seed, shape, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def literal(values):
    flat = np.asarray(values).reshape(-1)
    return ", ".join("%.9g" % float(np.float32(v)) for v in flat)


def attr_text(value):
    if isinstance(value, str):
        return '"%s"' % value
    return repr(value)


class Case:
    """One node: `op` with `attrs` over `inputs` (names, "" for an absent
    optional one) that are float initializers `inits` (name -> array),
    giving `outputs` ("" for unwanted ones), all of them checked.
    `reference_differs` says why onnx's reference evaluator is not compared
    with onnxruntime (empty: it is)."""

    def __init__(self, name, doc, op, opset, attrs, inputs, inits, outputs,
                 checks, frozen=(), reference_differs=""):
        self.name, self.doc, self.op, self.opset = name, doc, op, opset
        self.attrs, self.inputs, self.outputs = attrs, inputs, outputs
        self.inits = {k: np.asarray(v, np.float32) for k, v in inits.items()}
        self.checks, self.frozen = checks, list(frozen)
        self.reference_differs = reference_differs
        self.checked = [o for o in outputs if o]

    def node(self):
        attrs = ""
        if self.attrs:
            attrs = " <%s>" % ", ".join(
                "%s = %s" % (k, attr_text(v)) for k, v in self.attrs.items())
        return "%s = %s%s (%s)" % (", ".join(self.outputs), self.op, attrs,
                                   ", ".join(self.inputs))

    def model(self, wants=None):
        import onnx.helper
        ir = max(v[1] for v in onnx.helper.VERSION_TABLE
                 if v[2] == self.opset)
        inits = ["float[%s] %s = {%s}" % (", ".join(map(str, v.shape)), k,
                                          literal(v))
                 for k, v in self.inits.items()]
        nodes = [self.node()]
        if wants is None:
            outs = ", ".join("float %s" % o for o in self.checked)
        else:
            outs = "float loss"
            terms = []
            for o in self.checked:
                want = wants[o]
                dims = ", ".join(map(str, want.shape))
                inits.append("float[%s] want_%s = {%s}" % (dims, o,
                                                           literal(want)))
                inits.append("float[%s] w_%s = {%s}" % (
                    dims, o, literal(self.weights(o, want.shape))))
                nodes += ["d_%s = Sub(%s, want_%s)" % (o, o, o),
                          "p_%s = Mul(d_%s, w_%s)" % (o, o, o),
                          "l_%s = ReduceSum <keepdims = 0> (p_%s)" % (o, o)]
                terms.append("l_" + o)
            nodes.append("loss = Sum(%s)" % ", ".join(terms))
        lines = ['<ir_version: %d, opset_import: ["" : %d]>' % (ir,
                                                                self.opset),
                 "%s () => (%s)" % (self.name.replace("-", "_"), outs),
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

    def parameter_count(self):
        return sum(1 for k in self.inits if k not in self.frozen)

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


def references(case):
    """The checked outputs by onnxruntime and by onnx's reference evaluator
    (onnxruntime's None when it cannot run the model)."""
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
    except Exception:  # an opset or op it does not know
        ort = None
    return ort, ref


def write(cases, folder):
    """Writes each case as folder/<name>.onnxtext."""
    for case in cases:
        ort, ref = references(case)
        if ort is not None and not case.reference_differs:
            for o in case.checked:
                np.testing.assert_allclose(ort[o], ref[o], rtol=1e-5,
                                           atol=1e-6, err_msg=case.name)
        wants = ort if ort is not None else ref
        source = "onnxruntime" if ort is not None else "onnx.reference"
        path = os.path.join(folder, case.name + ".onnxtext")
        with open(path, "w") as f:
            f.write(case.text(wants, source))
        print("wrote", os.path.relpath(path), "(want: %s)" % source)
