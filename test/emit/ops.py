"""weft_runtime.ops against lib/Exec: every graph op, forward and gradients.

Each case runs one op through ops.py in float64 and through `weft-run`
(the reference interpreter, float32) on the same float32 values: a graph
program holding just that op (test/emit/weft_oracle.py writes it) gives
the results (`--forward --write-outputs`) and, for each element of every
float operand, its gradient of Σ_k Σ result_k ⊙ W_k (`--print-gradients`
on one-element parameters). The shard cases (test/emit/ops_local.py)
check the shard-dependent keywords against the whole op and torch.

    python test/emit/ops.py [--weft-run PATH]   # prints "N passed, M failed"

weft-run is found by --weft-run, else $WEFT_BIN_DIR/weft-run, else on PATH.
"""

import argparse
import math
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import torch  # noqa: E402

from weft_oracle import (F64, F64s, I64s, UNIT, Failure, Oracle, WeftError,  # noqa: E402
                         close, exact, f32, python_value, rand, randint, steps)
from weft_runtime import ops  # noqa: E402


class Suite:
    def __init__(self, oracle):
        self.oracle = oracle
        self.passed = self.failed = 0

    def case(self, name, fn):
        try:
            fn()
        except (Failure, WeftError) as e:
            self.failed += 1
            print("FAIL %s: %s" % (name, e))
        except Exception as e:  # noqa: BLE001 - a crash is a failure of its case
            self.failed += 1
            first = str(e).splitlines()[0] if str(e) else ""
            print("FAIL %s: %s: %s" % (name, type(e).__name__, first))
        else:
            self.passed += 1
            print("PASS %s" % name)
        sys.stdout.flush()

    def op(self, name, op, operands, attrs=None, extra=None, diff=None, rtol=1e-4, atol=1e-5,
           grad_rtol=2e-4, grad_atol=1e-5):
        """A case comparing ops.<op> with graph.<op> on `operands`."""
        self.case(name, lambda: self._compare(op, operands, attrs or {}, extra or {}, diff,
                                              rtol, atol, grad_rtol, grad_atol))

    def _compare(self, op, operands, attrs, extra, diff, rtol, atol, grad_rtol, grad_atol):
        if diff is None:
            diff = [j for j, t in enumerate(operands) if t.is_floating_point()]
        leaves = [t.clone().requires_grad_(j in diff) for j, t in enumerate(operands)]
        kwargs = {k: python_value(v) for k, v in attrs.items()}
        kwargs.update(extra)
        results = getattr(ops, op)(*leaves, **kwargs)
        results = list(results) if isinstance(results, (tuple, list)) else [results]
        want = self.oracle.forward("graph." + op, operands, attrs, results)
        for k, (got, ref) in enumerate(zip(results, want)):
            ref = torch.from_numpy(ref)
            what = "%s result %d" % (op, k)
            if got.is_floating_point():
                close(got, ref, what, rtol, atol)
            else:
                exact(ref, got, what + " (weft-run)")
        floats = [k for k, r in enumerate(results) if r.is_floating_point() and r.requires_grad]
        if not diff or not floats:
            return
        g = torch.Generator().manual_seed(7)
        weights = [f32(torch.rand(r.shape, generator=g, dtype=F64) * 2 - 1)
                   if k in floats else None for k, r in enumerate(results)]
        loss = sum((results[k] * weights[k]).sum() for k in floats)
        grads = torch.autograd.grad(loss, [leaves[j] for j in diff], allow_unused=True)
        grads = {j: (gj if gj is not None else torch.zeros_like(leaves[j]))
                 for j, gj in zip(diff, grads)}
        # C > 2·max|g|, a power of two (see weft_oracle.Oracle.gradients).
        largest = {j: float(gj.abs().max()) if gj.numel() else 0.0 for j, gj in grads.items()}
        offsets = {j: 2.0 ** math.ceil(math.log2(1 + 2 * m)) for j, m in largest.items()}
        got = self.oracle.gradients("graph." + op, operands, diff, attrs, results, weights,
                                    offsets)
        for j in diff:
            close(got[j], grads[j], "%s gradient of operand %d (weft-run vs ops)" % (op, j),
                  grad_rtol, grad_atol + 4e-6 * offsets[j])


def elementwise_cases(s):
    a, b = rand((2, 3, 4), 1), rand((3, 1), 2)
    for op in ("add", "sub", "mul", "div", "min", "max"):
        s.op(op + " broadcast", op, [a, b])
    tie = steps((3, 4), 3)
    other = torch.where(randint((3, 4), 0, 2, 4).bool(), tie, steps((3, 4), 5))
    s.op("max ties go to the lhs", "max", [tie, other])
    s.op("min ties go to the lhs", "min", [tie, other])
    s.op("pow positive base", "pow", [rand((3, 4), 6, 0.2, 2.0), rand((3, 4), 7)])
    base = torch.tensor([[-2.0, -1.5, 0.0, 0.0], [1.5, -0.5, 2.0, 0.0]], dtype=F64)
    expo = torch.tensor([[2.0, 3.0, 2.0, 0.0], [2.0, 0.0, 1.0, 3.0]], dtype=F64)
    s.op("pow base <= 0: no exponent gradient", "pow", [base, expo])
    ia, ib = randint((3, 4), -7, 8, 8), randint((4,), -3, 4, 9)
    for op in ("add", "sub", "mul", "div", "min", "max"):
        s.op(op + " integers", op, [ia, ib])
    s.op("pow integers", "pow", [randint((2, 3), -3, 4, 10), randint((2, 3), -1, 3, 11)])

    domains = {"sqrt": (0.1, 3), "rsqrt": (0.1, 3), "log": (0.1, 3), "acos": (-0.9, 0.9),
               "asin": (-0.9, 0.9), "atanh": (-0.9, 0.9), "acosh": (1.1, 3), "tan": (-1.2, 1.2)}
    for i, op in enumerate(("sqrt", "rsqrt", "neg", "relu", "gelu", "tanh", "sigmoid", "erf",
                            "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                            "cosh", "asinh", "acosh", "atanh", "floor", "ceil", "round")):
        lo, hi = domains.get(op, (-2.5, 2.5))
        s.op(op, op, [rand((3, 5), 20 + i, lo, hi)])
    s.op("relu at 0 passes no gradient", "relu", [steps((4, 4), 50)])
    halves = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -3.7], dtype=F64)
    s.op("round halves to even", "round", [halves])
    s.op("neg integers", "neg", [randint((5,), -4, 4, 51)])
    s.op("sqrt of integers passes them", "sqrt", [randint((5,), 0, 9, 52)])
    x = steps((4, 5), 53)
    s.op("clip min and max (bounds inclusive)", "clip", [x], {"min": -1.0, "max": 1.5})
    s.op("clip min only", "clip", [x], {"min": 0.5})
    s.op("clip max only", "clip", [x], {"max": -0.5})
    s.op("clip integers", "clip", [randint((6,), -5, 5, 54)], {"min": -1.5, "max": 2.5})
    for p in ("eq", "ne", "lt", "le", "gt", "ge"):
        s.op("compare " + p, "compare", [tie, other], {"predicate": p})
    s.op("compare integers broadcast", "compare", [ia, ib], {"predicate": "lt"})
    cond = randint((3, 1), 0, 2, 55).bool()
    s.op("select broadcast", "select", [cond, rand((3, 4), 56), rand((4,), 57)])
    s.op("cast f32 to i64 truncates", "cast", [rand((2, 5), 58, -3, 3)], {},
         {"to": "i64"}, diff=[])
    s.op("cast f32 to i1", "cast", [steps((2, 5), 59)], {}, {"to": "i1"}, diff=[])
    s.op("cast i64 to f32", "cast", [ia], {}, {"to": "f32"})
    s.op("cast f32 to f32 passes the gradient", "cast", [rand((2, 3), 60)], {}, {"to": "f32"})
    s.op("cast i64 to i1", "cast", [ia], {}, {"to": "i1"})
    s.op("expand", "expand", [rand((3, 1), 61)], {}, {"shape": (2, 3, 4)})


def movement_cases(s):
    x = rand((2, 3, 4), 100)
    s.op("reshape", "reshape", [x], {}, {"shape": (4, 6)})
    s.op("flatten axis 2", "flatten", [x], {"axis": 2}, {"shape": (6, 4)})
    s.op("transpose", "transpose", [x], {"perm": I64s((2, 0, 1))})
    s.op("concat axis 1", "concat", [x, rand((2, 1, 4), 101), rand((2, 2, 4), 102)], {"axis": 1})
    s.op("split axis 2", "split", [x], {"axis": 2}, {"shapes": [(2, 3, 1), (2, 3, 3)]})
    s.op("slice with steps", "slice", [rand((5, 7), 103)],
         {"starts": I64s((1, 0)), "limits": I64s((5, 7)), "steps": I64s((2, 3))})
    table = rand((5, 3), 104)
    s.op("gather axis 0, negative and repeated indices", "gather",
         [table, torch.tensor([[0, -1, 2], [2, 2, -5]])], {"axis": 0})
    s.op("gather axis 1", "gather", [table, torch.tensor([2, 0, -1, 2])], {"axis": 1})
    data = rand((3, 4), 105)
    s.op("gather_elements axis 1", "gather_elements",
         [data, torch.tensor([[0, 3, -1], [1, 1, 1], [-4, 2, 0]])], {"axis": 1})
    s.op("gather_elements axis 0", "gather_elements",
         [data, torch.tensor([[2, 0, 1, -1], [0, 0, 2, 1]])], {"axis": 0})
    idx = torch.tensor([[1, 3, 1], [0, -1, 0], [2, 2, 2]])
    upd = steps((3, 3), 106)
    tied = data.clone()
    tied[0, 1] = upd[0, 0]  # a max/min tie between data and an update
    for r in ("none", "add", "mul", "max", "min"):
        s.op("scatter_elements axis 1 " + r, "scatter_elements", [tied, idx, upd],
             {"axis": 1, "reduction": r})
    s.op("scatter_elements axis 0 add", "scatter_elements",
         [data, torch.tensor([[2, 0, 2, -1]]), rand((1, 4), 107)], {"axis": 0, "reduction": "add"})
    nd = rand((4, 3), 108)
    idx1 = torch.tensor([[1], [3], [1], [-4]])
    for r in ("none", "add", "mul", "max", "min"):
        s.op("scatter_nd rows " + r, "scatter_nd", [nd, idx1, steps((4, 3), 109)],
             {"reduction": r})
    s.op("scatter_nd elements (k = 2)", "scatter_nd",
         [nd, torch.tensor([[0, 1], [3, 2], [0, 1]]), rand((3,), 110)], {"reduction": "add"})
    s.op("scatter_elements integers", "scatter_elements",
         [randint((2, 4), 0, 9, 111), torch.tensor([[3, 0], [1, 1]]),
          randint((2, 2), 0, 9, 112)], {"axis": 1, "reduction": "none"})


def resize_cases(s):
    x = rand((1, 2, 3, 4), 200)
    base = {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}
    variants = [
        ("linear half_pixel up", dict(base), (1.0, 1.0, 2.0, 1.5)),
        ("linear align_corners", dict(base, coordinate_transformation_mode="align_corners"),
         (1.0, 1.0, 2.0, 2.0)),
        ("linear asymmetric", dict(base, coordinate_transformation_mode="asymmetric"),
         (1.0, 1.0, 1.5, 2.0)),
        ("linear pytorch_half_pixel",
         dict(base, coordinate_transformation_mode="pytorch_half_pixel"), (1.0, 1.0, 2.0, 0.5)),
        ("linear half_pixel_symmetric",
         dict(base, coordinate_transformation_mode="half_pixel_symmetric"), (1.0, 1.0, 1.7, 1.3)),
        ("nearest round_prefer_floor", dict(base, mode="nearest"), (1.0, 1.0, 2.0, 1.5)),
        ("nearest floor asymmetric", dict(base, mode="nearest", nearest_mode="floor",
                                          coordinate_transformation_mode="asymmetric"),
         (1.0, 1.0, 1.5, 2.0)),
        ("nearest ceil", dict(base, mode="nearest", nearest_mode="ceil"), (1.0, 1.0, 2.0, 0.5)),
        ("nearest round_prefer_ceil", dict(base, mode="nearest", nearest_mode="round_prefer_ceil"),
         (1.0, 1.0, 2.0, 2.0)),
        ("cubic", dict(base, mode="cubic"), (1.0, 1.0, 2.0, 1.5)),
        ("cubic exclude_outside a=-0.5", dict(base, mode="cubic", exclude_outside=True,
                                              cubic_coeff_a=-0.5), (1.0, 1.0, 2.0, 2.0)),
        ("linear antialias down", dict(base, antialias=True), (1.0, 1.0, 1.0, 0.5)),
        ("cubic antialias down", dict(base, mode="cubic", antialias=True), (1.0, 1.0, 0.67, 0.5)),
    ]
    for name, attrs, scales in variants:
        shape = tuple(int(math.floor(d * sc)) for d, sc in zip(x.shape, scales))
        attrs = dict(attrs, scales=F64s(scales))
        s.op("resize " + name, "resize", [x], attrs, {"shape": shape})
    rs = torch.tensor([1.0, 1.0, 2.0, 1.5], dtype=F64)
    s.op("resize with run-time scales", "resize", [x, rs],
         dict(base, scales=F64s((1.0, 1.0, 2.0, 1.5))), {"shape": (1, 2, 6, 6)}, diff=[0])


def nn_cases(s):
    s.op("matmul", "matmul", [rand((2, 3, 4), 300), rand((4, 5), 301)])
    s.op("matmul broadcast batch", "matmul", [rand((2, 1, 3, 4), 302), rand((3, 4, 2), 303)])
    s.op("matmul lhs 2-d, rhs batched", "matmul", [rand((3, 4), 304), rand((2, 4, 5), 305)])
    conv = {"strides": I64s((2, 1)), "pads": I64s((1, 0, 2, 1)), "dilations": I64s((1, 2)),
            "group": 1}
    s.op("conv2d strides, asymmetric pads, dilations, bias", "conv2d",
         [rand((2, 3, 6, 7), 310), rand((4, 3, 3, 2), 311), rand((4,), 312)], conv)
    s.op("conv2d groups", "conv2d", [rand((1, 4, 5, 5), 313), rand((6, 2, 3, 3), 314)],
         {"strides": I64s((1, 1)), "pads": I64s((1, 1, 1, 1)), "dilations": I64s((1, 1)),
          "group": 2})
    ct = {"strides": I64s((2, 2)), "pads": I64s((1, 0, 0, 1)), "dilations": I64s((1, 2)),
          "output_padding": I64s((1, 0)), "group": 1}
    s.op("conv_transpose2d strides, pads, dilations, output_padding, bias", "conv_transpose2d",
         [rand((2, 3, 3, 4), 320), rand((3, 2, 3, 2), 321), rand((2,), 322)], ct)
    s.op("conv_transpose2d groups", "conv_transpose2d",
         [rand((1, 4, 3, 3), 323), rand((4, 3, 2, 2), 324)],
         {"strides": I64s((1, 2)), "pads": I64s((0, 1, 1, 0)), "dilations": I64s((1, 1)),
          "output_padding": I64s((0, 1)), "group": 2})
    img = steps((2, 2, 5, 6), 330)  # ties inside windows: the first maximum
    pool = {"kernel": I64s((3, 2)), "strides": I64s((2, 2)), "pads": I64s((1, 0, 1, 1))}
    s.op("max_pool 2-d, ties, pads", "max_pool", [img], pool)
    s.op("max_pool 2-d dilated, ceil padding", "max_pool", [img],
         {"kernel": I64s((2, 2)), "strides": I64s((2, 3)), "pads": I64s((0, 0, 1, 2)),
          "dilations": I64s((2, 1))})
    vol = steps((1, 2, 4, 3, 5), 331)
    pool3 = {"kernel": I64s((2, 2, 3)), "strides": I64s((2, 1, 2)),
             "pads": I64s((0, 1, 1, 1, 0, 1))}
    s.op("max_pool 3-d", "max_pool", [vol], pool3)
    s.op("avg_pool 2-d counting pads", "avg_pool", [rand((2, 2, 5, 6), 332)], pool)
    s.op("avg_pool 2-d exclude_pad", "avg_pool", [rand((2, 2, 5, 6), 333)],
         dict(pool, exclude_pad=UNIT))
    s.op("avg_pool 2-d dilated", "avg_pool", [rand((1, 2, 6, 6), 334)],
         {"kernel": I64s((2, 2)), "strides": I64s((1, 2)), "pads": I64s((1, 1, 0, 0)),
          "dilations": I64s((2, 2)), "exclude_pad": UNIT})
    s.op("avg_pool 3-d", "avg_pool", [rand((1, 2, 4, 3, 5), 335)], dict(pool3, exclude_pad=UNIT))
    s.op("global_avg_pool", "global_avg_pool", [rand((2, 3, 4, 5), 336)])
    s.op("softmax axis 1", "softmax", [rand((2, 5, 3), 340)], {"axis": 1})
    s.op("log_softmax axis -1", "log_softmax", [rand((2, 5, 3), 341)], {"axis": -1})
    s.op("layer_norm axis -1", "layer_norm", [rand((3, 6), 342), rand((6,), 343), rand((6,), 344)],
         {"axis": -1, "epsilon": 1e-5})
    s.op("layer_norm over two dims", "layer_norm",
         [rand((2, 3, 4), 345), rand((3, 4), 346), rand((3, 4), 347)], {"axis": 1, "epsilon": 1e-3})
    bn = [rand((3, 2, 2, 3), 348), rand((2,), 349), rand((2,), 350), rand((2,), 351),
          rand((2,), 352, 0.5, 2.0)]
    s.op("batch_norm training", "batch_norm", bn,
         {"epsilon": 1e-5, "momentum": 0.9, "training": True}, diff=[0, 1, 2])
    s.op("batch_norm inference", "batch_norm", bn,
         {"epsilon": 1e-5, "momentum": 0.9, "training": False}, diff=[0, 1, 2])
    s.op("batch_norm training, N×C", "batch_norm",
         [rand((4, 3), 353), rand((3,), 354), rand((3,), 355), rand((3,), 356),
          rand((3,), 357, 0.5, 2)], {"epsilon": 1e-5, "momentum": 0.9, "training": True},
         diff=[0, 1, 2])
    x = steps((2, 3, 4), 360)
    for op in ("reduce_sum", "reduce_mean", "reduce_max"):
        s.op(op + " axes (0, 2) keepdims", op, [x], {"axes": I64s((0, 2)), "keepdims": True})
        s.op(op + " axis 1", op, [x], {"axes": I64s((1,)), "keepdims": False})
        s.op(op + " integers", op, [randint((3, 4), -9, 9, 361)],
             {"axes": I64s((1,)), "keepdims": False})
    ties = steps((2, 3, 4), 362, step=1.0, span=2)  # values in {-2, -1, 0, 1}
    s.op("reduce_max ties share the gradient", "reduce_max", [ties],
         {"axes": I64s((2,)), "keepdims": False})
    logits = rand((4, 5), 370)
    labels = torch.tensor([1, 4, 0, 2])
    for op in ("cross_entropy", "nll_loss"):
        s.op(op + " mean", op, [logits, labels], {"reduction": "mean"})
        s.op(op + " sum, ignore_index", op, [logits, labels], {"reduction": "sum",
                                                               "ignore_index": 4})
        s.op(op + " mean, ignore_index, trailing dims", op,
             [rand((2, 4, 3), 371), torch.tensor([[1, 3, 0], [2, 2, 1]])],
             {"reduction": "mean", "ignore_index": 2})
    s.op("top2_gating (capacity drops tokens)", "top2_gating",
         [rand((2, 6, 4), 380), rand((4, 4), 381)], {}, {"shapes": [(2, 6, 4, 2)] * 2})
    s.op("top2_gating one expert", "top2_gating", [rand((1, 3, 2), 382), rand((2, 1), 383)],
         {}, {"shapes": [(1, 3, 1, 2)] * 2})


def find_weft_run(arg):
    if arg:
        return arg
    env = os.environ.get("WEFT_BIN_DIR")
    if env and os.path.exists(os.path.join(env, "weft-run")):
        return os.path.join(env, "weft-run")
    return shutil.which("weft-run")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft-run", help="the weft-run binary (default: $WEFT_BIN_DIR, PATH)")
    args = parser.parse_args()
    weft_run = find_weft_run(args.weft_run)
    if not weft_run:
        sys.stderr.write("ops.py: error: weft-run not found (pass --weft-run PATH or set "
                         "WEFT_BIN_DIR)\n")
        return 1
    torch.set_num_threads(1)
    import ops_local
    with tempfile.TemporaryDirectory(prefix="weft-ops-") as tmp:
        suite = Suite(Oracle(weft_run, tmp))
        for group in (elementwise_cases, movement_cases, resize_cases, nn_cases,
                      ops_local.cases):
            group(suite)
    print("%d passed, %d failed" % (suite.passed, suite.failed))
    return 1 if suite.failed else 0


if __name__ == "__main__":
    sys.exit(main())
