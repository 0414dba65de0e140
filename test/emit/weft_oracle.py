"""lib/Exec as the oracle of one graph op: writes a tiny graph program
around the op, runs `weft-run` on it and reads the op's results and the
gradients of its float operands back.

Forward: every operand is a `graph.constant`; `weft-run --forward
--write-outputs DIR` writes each result as DIR/<i>.npy.

Gradients: `weft-run --print-gradients` prints only the L2 norm of each
parameter's gradient, so each element of a differentiated operand is its
own one-element parameter (concatenated and reshaped into the operand).
The loss is Σ_k Σ result_k ⊙ W_k (W_k fixed weights) plus C · Σ of the
operand's elements, so parameter i's gradient is g_i + C and its norm
|g_i + C|; with C larger than twice the largest |g_i| expected, the
printed norm minus C is g_i, sign included (7 significant digits of
g_i + C).

Attributes are Python values: int → i64, float → f64, bool, str, UNIT (a
unit attribute), I64s/F64s (dense arrays). The test's values (float32
numbers held as float64) and comparisons live here too.
"""

import os
import re
import subprocess

import numpy as np
import torch


F64 = torch.float64


class _Unit:
    def __repr__(self):
        return "UNIT"


UNIT = _Unit()


class I64s(tuple):
    """A DenseI64ArrayAttr."""


class F64s(tuple):
    """A DenseF64ArrayAttr."""


def python_value(v):
    """The attribute as ops.py receives it."""
    if v is UNIT:
        return True
    if isinstance(v, (I64s, F64s)):
        return tuple(v)
    return v


def _float_text(v):
    v = float(v)
    if np.isnan(v):
        return "0x7FC00000"
    if np.isinf(v):
        return "0x7F800000" if v > 0 else "0xFF800000"
    return "%.9e" % v


def _attr_text(v):
    if v is UNIT:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, I64s):
        return "array<i64%s>" % "".join(", %d" % x if i else ": %d" % x for i, x in enumerate(v))
    if isinstance(v, F64s):
        return "array<f64%s>" % "".join(", %s" % _float_text(x) if i else ": %s" % _float_text(x)
                                        for i, x in enumerate(v))
    if isinstance(v, int):
        return "%d : i64" % v
    if isinstance(v, float):
        return "%s : f64" % _float_text(v)
    if isinstance(v, str):
        return '"%s"' % v
    raise TypeError("attribute value %r" % (v,))


def attrs_text(attrs):
    parts = []
    for name, v in attrs.items():
        text = _attr_text(v)
        parts.append(name if text is None else "%s = %s" % (name, text))
    return "{%s}" % ", ".join(parts) if parts else ""


def elem_type(t):
    if t.dtype == torch.bool:
        return "i1"
    return "f32" if t.is_floating_point() else "i64"


def tensor_type(t):
    return "tensor<%sx%s>" % ("x".join(str(d) for d in t.shape), elem_type(t)) if t.dim() \
        else "tensor<%s>" % elem_type(t)


def _element_text(t, v):
    if t.dtype == torch.bool:
        return "true" if v else "false"
    return _float_text(v) if t.is_floating_point() else "%d" % v


def dense_text(t):
    """`dense<…>` of a tensor (nested lists in its shape)."""
    def nest(a):
        if a.dim() == 0:
            return _element_text(t, a.item())
        return "[%s]" % ", ".join(nest(a[i]) for i in range(a.shape[0]))
    return "dense<%s>" % nest(t.detach().cpu())


def f32(t):
    """A float64 tensor of float32 values (what weft-run computes on)."""
    return t.to(torch.float32).to(torch.float64)


class Program:
    """Lines of a `func.func @main` in generic op syntax."""

    def __init__(self):
        self.lines = []
        self.count = 0
        self.types = {}

    def value(self, op, operands, attrs, result_types, operand_types):
        names = ["%%v%d" % (self.count + i) for i in range(len(result_types))]
        self.count += len(result_types)
        self.types.update(zip(names, result_types))
        lhs = ", ".join(names)
        res = result_types[0] if len(result_types) == 1 else "(%s)" % ", ".join(result_types)
        self.lines.append('  %s = "%s"(%s) %s : (%s) -> %s' % (
            lhs, op, ", ".join(operands), attrs, ", ".join(operand_types), res))
        return names

    def constant(self, t):
        attrs = "{value = %s : %s}" % (dense_text(t), tensor_type(t))
        return self.value("graph.constant", [], attrs, [tensor_type(t)], [])[0]

    def text(self, returns):
        values = ", ".join(v for v, _ in returns)
        types = ", ".join(t for _, t in returns)
        head = "func.func @main() -> (%s) {" % types
        return "\n".join([head] + self.lines + ["  return %s : %s" % (values, types), "}", ""])


class WeftError(Exception):
    """weft-run failed; the message is its first stderr line."""


class Oracle:
    def __init__(self, weft_run, workdir):
        self.weft_run = weft_run
        self.workdir = workdir
        self.runs = 0

    def _run(self, text, args):
        self.runs += 1
        path = os.path.join(self.workdir, "p%d.mlir" % self.runs)
        with open(path, "w") as f:
            f.write(text)
        p = subprocess.run([self.weft_run, path] + args, capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            first = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0]
            raise WeftError("weft-run exit %d: %s (%s)" % (p.returncode, first, path))
        return p.stdout

    def forward(self, op, operands, attrs, results):
        """The op's results (numpy arrays) on `operands` (torch tensors);
        `results` are torch tensors of the expected shapes and types."""
        prog = Program()
        names = [prog.constant(f32(t) if t.is_floating_point() else t) for t in operands]
        types = [tensor_type(r) for r in results]
        outs = prog.value(op, names, attrs_text(attrs), types,
                          [tensor_type(t) for t in operands])
        out_dir = os.path.join(self.workdir, "out%d" % (self.runs + 1))
        self._run(prog.text(list(zip(outs, types))), ["--forward", "--write-outputs", out_dir])
        return [np.load(os.path.join(out_dir, "%d.npy" % i)) for i in range(len(results))]

    def gradients(self, op, operands, diff, attrs, results, weights, offsets):
        """g_i + offsets[j] of every element i of each operand j in `diff`
        (a list of operand indices), from the loss Σ_k Σ results_k ⊙
        weights[k] + Σ_j offsets[j]·Σ operand_j; None for other operands."""
        prog = Program()
        names, pnames = [], {}
        for j, t in enumerate(operands):
            if j not in diff:
                names.append(prog.constant(f32(t) if t.is_floating_point() else t))
                continue
            flat = f32(t).reshape(-1)
            pieces = []
            for i in range(flat.numel()):
                pname = "a%d_%d" % (j, i)
                pieces.append(prog.value("graph.parameter", [], '{name = "%s", value = %s : '
                                         'tensor<1xf32>}' % (pname, dense_text(flat[i:i + 1])),
                                         ["tensor<1xf32>"], [])[0])
            vec_type = "tensor<%dxf32>" % flat.numel()
            vec = prog.value("graph.concat", pieces, "{axis = 0 : i64}", [vec_type],
                             ["tensor<1xf32>"] * len(pieces))[0]
            pnames[j] = (vec, vec_type, flat.numel())
            names.append(prog.value("graph.reshape", [vec], "", [tensor_type(t)], [vec_type])[0]
                         if t.dim() != 1 else vec)
        types = [tensor_type(r) for r in results]
        outs = prog.value(op, names, attrs_text(attrs), types, [tensor_type(t) for t in operands])
        terms = []
        for out, r, w in zip(outs, results, weights):
            if w is None:
                continue
            wc = prog.constant(f32(w))
            m = prog.value("graph.mul", [out, wc], "", [tensor_type(r)], [tensor_type(r)] * 2)[0]
            terms.append(self._sum_all(prog, m, r.dim()))
        for j, (vec, vec_type, n) in pnames.items():
            c = prog.constant(torch.full((n,), float(offsets[j]), dtype=torch.float64))
            m = prog.value("graph.mul", [vec, c], "", [vec_type], [vec_type] * 2)[0]
            terms.append(self._sum_all(prog, m, 1))
        loss = terms[0]
        for t in terms[1:]:
            loss = prog.value("graph.add", [loss, t], "", ["tensor<f32>"], ["tensor<f32>"] * 2)[0]
        out = self._run(prog.text([(loss, "tensor<f32>")]), ["--print-gradients"])
        norms = {m.group(1): float(m.group(2))
                 for m in re.finditer(r"^grad norm:\s+(\S+)\s+(\S+)$", out, re.M)}
        grads = []
        for j, t in enumerate(operands):
            if j not in diff:
                grads.append(None)
                continue
            vals = [norms["a%d_%d" % (j, i)] for i in range(t.numel())]
            grads.append(torch.tensor(vals, dtype=torch.float64).reshape(t.shape) - offsets[j])
        return grads

    @staticmethod
    def _sum_all(prog, v, rank):
        """Σ of every element of v (a rank-0 value as it is)."""
        if rank == 0:
            return v
        axes = ", ".join(str(d) for d in range(rank))
        return prog.value("graph.reduce_sum", [v], "{axes = array<i64: %s>, keepdims = false}"
                          % axes, ["tensor<f32>"], [prog.types[v]])[0]


# --- values and comparisons of the tests ------------------------------------------------------

def rand(shape, seed, lo=-2.0, hi=2.0):
    """Uniform float32 values in [lo, hi), held as float64."""
    g = torch.Generator().manual_seed(seed)
    return f32(lo + (hi - lo) * torch.rand(*shape, generator=g, dtype=F64))


def randint(shape, lo, hi, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, tuple(shape), generator=g, dtype=torch.int64)


def steps(shape, seed, step=0.5, span=4):
    """Multiples of `step` in [−span, span): many exact ties and zeros."""
    return randint(shape, int(-span / step), int(span / step), seed).to(F64) * step


class Failure(Exception):
    pass


def close(got, want, what, rtol, atol):
    got = torch.as_tensor(np.asarray(got)).to(F64) if not isinstance(got, torch.Tensor) \
        else got.detach().to(F64)
    want = want.detach().to(F64)
    if tuple(got.shape) != tuple(want.shape):
        raise Failure("%s: shape %s, expected %s" % (what, tuple(got.shape), tuple(want.shape)))
    same = (got == want) | (torch.isnan(got) & torch.isnan(want))
    bad = ~same & ~((got - want).abs() <= atol + rtol * want.abs())
    if bool(bad.any()):
        i = int(torch.nonzero(bad.reshape(-1))[0])
        raise Failure("%s: %d element(s) differ, first at flat index %d: %.9g, expected %.9g"
                      % (what, int(bad.sum()), i, float(got.reshape(-1)[i]),
                         float(want.reshape(-1)[i])))


def exact(got, want, what):
    got = torch.as_tensor(np.asarray(got))
    if tuple(got.shape) != tuple(want.shape) or not bool(torch.equal(
            got.to(torch.int64), want.detach().to(torch.int64))):
        raise Failure("%s: %s, expected %s" % (what, got.tolist(), want.tolist()))
