"""Shard cases of test/emit/ops.py: the keywords an emitted program adds
for a device's shard, checked against the whole op.

A shard's result must be its box of the whole op's result (from weft-run,
as lib/Exec's SPMD interpreter computes a clone on the shard), and its
operands' gradients those of the whole op (ops.py, checked against
weft-run by the whole-op cases) under weights that are zero outside the
shard's box. Also: reduction `none` of the losses against torch, dropout
as recipes.dropout, float32 runs, casts to ops.FLOAT, empty shards, and
that every op of the dialect has its function.
"""

import os
import re

import torch
import torch.nn.functional as Fn

from weft_oracle import F64, F64s, Failure, I64s, close, exact, python_value, rand, randint, steps
from weft_runtime import ops, recipes

HERE = os.path.dirname(os.path.abspath(__file__))


def box_of(t, offsets, extents):
    for d, (o, e) in enumerate(zip(offsets, extents)):
        t = t.narrow(d, o, e)
    return t


def masked(shape, offsets, extents, seed):
    """Random weights of `shape`, zero outside the box."""
    w = rand(shape, seed, -1.0, 1.0)
    m = torch.zeros(shape, dtype=torch.bool)
    box_of(m, offsets, extents).fill_(True)
    return torch.where(m, w, torch.zeros_like(w))


def shard_case(s, op, whole, attrs, local, kwargs, box, diff, pieces, result=0):
    """ops.<op> on the shard operands `local` (with `kwargs`) against the
    box (offsets, extents) of result `result` of graph.<op> on `whole`;
    pieces[j](gradient of whole operand j) is the shard's part of it."""
    attrs_py = {k: python_value(v) for k, v in attrs.items()}
    whole_out = getattr(ops, op)(*whole, **attrs_py, **kwargs.get("whole", {}))
    whole_out = list(whole_out) if isinstance(whole_out, (tuple, list)) else [whole_out]
    ref = s.oracle.forward("graph." + op, whole, attrs, whole_out)[result]
    leaves = [t.clone().requires_grad_(j in diff) for j, t in enumerate(local)]
    got = getattr(ops, op)(*leaves, **attrs_py, **kwargs.get("local", {}))
    got = got[result] if isinstance(got, (tuple, list)) else got
    close(got, box_of(torch.from_numpy(ref).to(F64), *box), op + " shard result", 1e-4, 1e-5)
    if not diff:
        return
    w = masked(tuple(whole_out[result].shape), *box, 11)
    wl = [t.clone().requires_grad_(j in diff) for j, t in enumerate(whole)]
    out = getattr(ops, op)(*wl, **attrs_py, **kwargs.get("whole", {}))
    out = out[result] if isinstance(out, (tuple, list)) else out
    gw = torch.autograd.grad((out * w).sum(), [wl[j] for j in diff])
    gl = torch.autograd.grad((got * box_of(w, *box)).sum(), [leaves[j] for j in diff])
    for j, a, b in zip(diff, gl, gw):
        close(a, pieces[j](b), "%s shard gradient of operand %d" % (op, j), 1e-9, 1e-12)


def slice_cases(s):
    x = rand((7, 8), 400)
    attrs = {"starts": I64s((1, 0)), "limits": I64s((7, 8)), "steps": I64s((2, 1))}
    for rows, cols in (((0, 2), (0, 4)), ((1, 2), (4, 4)), ((2, 1), (0, 8))):
        box = ((rows[0], cols[0]), (rows[1], cols[1]))
        local = [x[:, cols[0]:cols[0] + cols[1]]]
        kw = {"local": {"global_in": (7, 8), "global_out": (3, 8), "box": box}}
        s.case("slice split-sliced rows %s, split cols %s" % (rows, cols),
               lambda local=local, kw=kw, box=box, cols=cols: shard_case(
                   s, "slice", [x], attrs, local, kw, box, [0],
                   {0: lambda g, c=cols: g[:, c[0]:c[0] + c[1]]}))


def scatter_cases(s):
    data = rand((3, 8), 410)
    idx = torch.tensor([[1, 5, -1, 6], [7, 0, 4, 4], [-8, 3, 2, 7]])
    upd = rand((3, 4), 411)
    for r in ("none", "add", "max"):
        for off in (0, 4):
            box = ((0, off), (3, 4))
            kw = {"local": {"global_shape": (3, 8), "box": box}}
            s.case("scatter_elements %s, data split along the axis at %d" % (r, off),
                   lambda r=r, off=off, box=box, kw=kw: shard_case(
                       s, "scatter_elements", [data, idx, upd], {"axis": 1, "reduction": r},
                       [data[:, off:off + 4], idx, upd], kw, box, [0, 2],
                       {0: lambda g, o=off: g[:, o:o + 4], 2: lambda g: g}))
    d2, i2, u2 = rand((4, 5), 412), randint((4, 2), -5, 5, 413), rand((4, 2), 414)
    box = ((2, 0), (2, 5))
    s.case("scatter_elements add, rows split (not indexed)",
           lambda: shard_case(s, "scatter_elements", [d2, i2, u2], {"axis": 1, "reduction": "add"},
                              [d2[2:], i2[2:], u2[2:]],
                              {"local": {"global_shape": (4, 5), "box": box}}, box, [0, 2],
                              {0: lambda g: g[2:], 2: lambda g: g[2:]}))
    nd, ni, nu = rand((6, 3), 415), torch.tensor([[1], [4], [-1], [4]]), rand((4, 3), 416)
    for r in ("none", "mul"):
        box = ((3, 0), (3, 3))
        s.case("scatter_nd %s, indexed dim split" % r,
               lambda r=r, box=box: shard_case(
                   s, "scatter_nd", [nd, ni, nu], {"reduction": r}, [nd[3:], ni, nu],
                   {"local": {"global_shape": (6, 3), "box": box}}, box, [0, 2],
                   {0: lambda g: g[3:], 2: lambda g: g}))
    box = ((0, 1), (6, 2))
    s.case("scatter_nd add, slice dim split",
           lambda: shard_case(s, "scatter_nd", [nd, ni, nu], {"reduction": "add"},
                              [nd[:, 1:], ni, nu[:, 1:]],
                              {"local": {"global_shape": (6, 3), "box": box}}, box, [0, 2],
                              {0: lambda g: g[:, 1:], 2: lambda g: g[:, 1:]}))


def group_cases(s):
    x, w, b = rand((1, 8, 5, 5), 420), rand((8, 2, 3, 3), 421), rand((8,), 422)
    conv = {"strides": I64s((1, 1)), "pads": I64s((1, 0, 0, 1)), "dilations": I64s((1, 1)),
            "group": 4}
    s.case("conv2d split-groups: the shard's group count",
           lambda: shard_case(s, "conv2d", [x, w, b], conv, [x[:, 4:], w[4:], b[4:]], {},
                              ((0, 4, 0, 0), (1, 4, 4, 4)), [0, 1, 2],
                              {0: lambda g: g[:, 4:], 1: lambda g: g[4:], 2: lambda g: g[4:]}))
    xt, wt, bt = rand((1, 4, 3, 3), 423), rand((4, 3, 2, 2), 424), rand((6,), 425)
    ct = {"strides": I64s((2, 1)), "pads": I64s((0, 1, 1, 0)), "dilations": I64s((1, 1)),
          "output_padding": I64s((1, 0)), "group": 2}
    box = ((0, 3, 0, 0), (1, 3, 6, 3))
    s.case("conv_transpose2d split-groups, groups from the bias",
           lambda: shard_case(s, "conv_transpose2d", [xt, wt, bt], ct,
                              [xt[:, 2:], wt[2:], bt[3:]], {}, box, [0, 1, 2],
                              {0: lambda g: g[:, 2:], 1: lambda g: g[2:], 2: lambda g: g[3:]}))
    s.case("conv_transpose2d split-groups, groups from shape=",
           lambda: shard_case(s, "conv_transpose2d", [xt, wt], ct, [xt[:, 2:], wt[2:]],
                              {"local": {"shape": (1, 3, 6, 3)}}, box, [0, 1],
                              {0: lambda g: g[:, 2:], 1: lambda g: g[2:]}))


def shapes_cases(s):
    x = rand((4, 6), 430)
    s.case("split with local shapes", lambda: shard_case(
        s, "split", [x], {"axis": 1}, [x[:2]],
        {"whole": {"shapes": [(4, 2), (4, 4)]}, "local": {"shapes": [(2, 2), (2, 4)]}},
        ((0, 0), (2, 4)), [0], {0: lambda g: g[:2]}, result=1))
    tok, gate = rand((4, 5, 3), 431), rand((3, 4), 432)
    for result in (0, 1):
        s.case("top2_gating split groups, result %d" % result, lambda result=result: shard_case(
            s, "top2_gating", [tok, gate], {}, [tok[2:], gate],
            {"whole": {"shapes": [(4, 5, 4, 2)] * 2}, "local": {"shapes": [(2, 5, 4, 2)] * 2}},
            ((2, 0, 0, 0), (2, 5, 4, 2)), [0, 1] if result else [],
            {0: lambda g: g[2:], 1: lambda g: g}, result=result))
    img = rand((2, 3, 4, 4), 433)
    attrs = {"mode": "linear", "coordinate_transformation_mode": "half_pixel",
             "scales": F64s((1.0, 1.0, 2.0, 1.5))}
    s.case("resize split along a copied dim", lambda: shard_case(
        s, "resize", [img], attrs, [img[:, 1:]],
        {"whole": {"shape": (2, 3, 8, 6)}, "local": {"shape": (2, 2, 8, 6)}},
        ((0, 1, 0, 0), (2, 2, 8, 6)), [0], {0: lambda g: g[:, 1:]}))


def torch_cases(s):
    def loss_none():
        x, lab = rand((3, 4, 2), 440), torch.tensor([[1, 3], [0, 2], [2, 2]])
        for op, ref in (("cross_entropy", Fn.cross_entropy),
                        ("nll_loss", lambda a, b, **k: Fn.nll_loss(a, b, **k))):
            a = x.clone().requires_grad_()
            b = x.clone().requires_grad_()
            got = getattr(ops, op)(a, lab, reduction="none", ignore_index=2)
            want = ref(b, lab, reduction="none", ignore_index=2)
            close(got, want, op + " none", 1e-12, 1e-12)
            w = rand(want.shape, 441)
            close(torch.autograd.grad((got * w).sum(), a)[0],
                  torch.autograd.grad((want * w).sum(), b)[0], op + " none gradient", 1e-12,
                  1e-12)
    s.case("losses with reduction none (torch)", loss_none)

    def dropout():
        x = rand((4, 6), 450)
        for key in ((None, None), ((8, 6), (4, 0))):
            a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
            got = ops.dropout(a, ratio=0.3, seed=5, op_id=2, global_shape=key[0], offsets=key[1])
            want = recipes.dropout(b, 0.3, 5, 2, key[0], key[1])
            exact(got != 0, want != 0, "dropout mask")
            close(got, want, "dropout", 0, 0)
            close(torch.autograd.grad(got.sum(), a)[0], torch.autograd.grad(want.sum(), b)[0],
                  "dropout gradient", 0, 0)
    s.case("dropout is recipes.dropout", dropout)

    def float32():
        cases = [("matmul", [rand((2, 3, 4), 460), rand((4, 5), 461)], {}),
                 ("conv2d", [rand((1, 2, 5, 5), 462), rand((3, 2, 3, 3), 463)],
                  {"strides": (1, 1), "pads": (1, 0, 1, 0), "dilations": (1, 1), "group": 1}),
                 ("layer_norm", [rand((3, 5), 464), rand((5,), 465), rand((5,), 466)],
                  {"axis": -1, "epsilon": 1e-5}),
                 ("avg_pool", [rand((1, 2, 5, 5), 467)],
                  {"kernel": (2, 2), "strides": (2, 2), "pads": (0, 0, 1, 1), "exclude_pad": True}),
                 ("pow", [rand((4,), 468, 0.5, 2), rand((4,), 469)], {}),
                 ("max", [steps((5,), 470), steps((5,), 471)], {}),
                 ("clip", [steps((5,), 472)], {"min": -0.5, "max": 1.0}),
                 ("resize", [rand((1, 1, 3, 3), 473)],
                  {"mode": "cubic", "coordinate_transformation_mode": "half_pixel",
                   "scales": (1.0, 1.0, 2.0, 2.0), "shape": (1, 1, 6, 6)}),
                 ("scatter_elements", [rand((2, 4), 474), torch.tensor([[1, 1], [3, 0]]),
                                       rand((2, 2), 475)], {"axis": 1, "reduction": "mul"}),
                 ("top2_gating", [rand((1, 4, 3), 476), rand((3, 3), 477)],
                  {"shapes": [(1, 4, 3, 2)] * 2})]
        for op, args, kw in cases:
            a = [t.to(torch.float32).requires_grad_() if t.is_floating_point() else t for t in args]
            b = [t.clone().requires_grad_() if t.is_floating_point() else t for t in args]
            ga, gb = getattr(ops, op)(*a, **kw), getattr(ops, op)(*b, **kw)
            ga = ga[-1] if isinstance(ga, tuple) else ga
            gb = gb[-1] if isinstance(gb, tuple) else gb
            if ga.dtype != torch.float32:
                raise Failure("%s of float32 operands gives %s" % (op, ga.dtype))
            close(ga, gb, op + " float32", 1e-5, 1e-5)
            fa = [t for t in a if t.is_floating_point()]
            fb = [t for t in b if t.is_floating_point()]
            for x, y in zip(torch.autograd.grad(ga.sum(), fa), torch.autograd.grad(gb.sum(), fb)):
                if x.dtype != torch.float32:
                    raise Failure("%s gradient is %s" % (op, x.dtype))
                close(x, y, op + " float32 gradient", 1e-4, 1e-5)
    s.case("float32 operands stay float32", float32)

    def casts():
        x = torch.tensor([-1.5, 0.0, 2.7], dtype=torch.float32)
        try:
            for dtype in (torch.float64, torch.float32):
                ops.set_float_dtype(dtype)
                for to in ("f32", "f16", "bf16", "f64"):
                    if ops.cast(x, to=to).dtype != dtype:
                        raise Failure("cast to %s is not %s" % (to, dtype))
                if ops.cast(randint((3,), 0, 5, 480), to="f32").dtype != dtype:
                    raise Failure("cast of integers to f32 is not %s" % dtype)
        finally:
            ops.set_float_dtype(torch.float32)
        exact(ops.cast(x, to="i32"), torch.tensor([-1, 0, 2]), "cast to i32")
        if ops.cast(x, to="i32").dtype != torch.int64 or ops.cast(x, to="i1").dtype != torch.bool:
            raise Failure("integer casts are not int64 / bool")
        try:
            ops.set_float_dtype(torch.int64)
        except ValueError:
            return
        raise Failure("set_float_dtype accepted int64")
    s.case("cast to FLOAT (set_float_dtype), integers to int64, i1 to bool", casts)

    def empty():
        e = torch.zeros((0, 4), dtype=F64, requires_grad=True)
        outs = [ops.matmul(e, rand((4, 3), 490)), ops.softmax(e, axis=1),
                ops.layer_norm(e, rand((4,), 491), rand((4,), 492), axis=-1, epsilon=1e-5),
                ops.gather(rand((5, 2), 493), torch.zeros((0,), dtype=torch.int64), axis=0),
                ops.reduce_sum(e, axes=(0,), keepdims=False),
                ops.cross_entropy(e, torch.zeros((0,), dtype=torch.int64), reduction="sum"),
                ops.conv2d(torch.zeros((0, 2, 4, 4), dtype=F64, requires_grad=True),
                           rand((3, 2, 3, 3), 494), strides=(1, 1), pads=(1, 1, 1, 1),
                           dilations=(1, 1), group=1),
                ops.max_pool(torch.zeros((0, 2, 4, 4), dtype=F64), kernel=(2, 2),
                             strides=(2, 2), pads=(0, 0, 0, 0)),
                ops.scatter_elements(rand((2, 3), 495), torch.zeros((2, 0), dtype=torch.int64),
                                     torch.zeros((2, 0), dtype=F64), axis=1, reduction="mul"),
                ops.slice(rand((3, 4), 496), starts=(0, 0), limits=(3, 4), steps=(1, 1),
                          global_in=(3, 4), global_out=(3, 4), box=((3, 0), (0, 4)))]
        m = ops.reduce_max(e, axes=(0,), keepdims=True)
        exact(torch.isinf(m) & (m < 0), torch.ones((1, 4), dtype=torch.bool),
              "reduce_max over nothing is -inf")
        mi = ops.reduce_max(torch.zeros((2, 0), dtype=torch.int64), axes=(1,), keepdims=False)
        exact(mi, torch.full((2,), -(2 ** 63 - 1)), "integer reduce_max over nothing")
        total = sum(o.sum() for o in outs if o.is_floating_point()) + m.sum() * 0
        total.backward()
        if tuple(outs[6].shape) != (0, 3, 4, 4) or tuple(outs[9].shape) != (0, 4):
            raise Failure("empty shapes: %s, %s" % (tuple(outs[6].shape), tuple(outs[9].shape)))
    s.case("empty shards", empty)

    def empty_channels():
        # conv2d.split-in-channels over [3, 0] channels: the empty shard's
        # partial result is zeros of the whole result's shape; a split of the
        # output channels over [2, 0] gives the empty one no channels.
        conv = {"strides": (2, 2), "pads": (1, 1, 1, 1), "dilations": (1, 1), "group": 1}
        x, w = rand((2, 3, 5, 5), 497), rand((2, 3, 3, 3), 498)
        whole = ops.conv2d(x, w, **conv)
        empty_in = ops.conv2d(x[:, 3:], w[:, 3:], **conv)
        close(ops.conv2d(x[:, :3], w[:, :3], **conv) + empty_in, whole, "in-channel shards",
              1e-12, 1e-12)
        no_out = ops.conv2d(x, w[2:], **conv)
        if tuple(no_out.shape) != (2, 0, 3, 3):
            raise Failure("no output channels: %s" % (tuple(no_out.shape),))
        ct = {"strides": (2, 2), "pads": (1, 1, 1, 1), "dilations": (1, 1),
              "output_padding": (0, 0), "group": 1}
        xt, wt = rand((2, 3, 3, 3), 499), rand((3, 2, 4, 4), 500)
        full = ops.conv_transpose2d(xt, wt, **ct)
        part = ops.conv_transpose2d(xt[:, 3:], wt[3:], shape=tuple(full.shape), **ct)
        exact(part, torch.zeros_like(full), "transposed convolution of no input channels")
        pooled = ops.max_pool(x[:, 3:], kernel=(2, 2), strides=(2, 2), pads=(0, 1, 0, 1))
        if tuple(pooled.shape) != (2, 0, 2, 3):
            raise Failure("max_pool of no channels: %s" % (tuple(pooled.shape),))
    s.case("empty channel shards of conv2d, conv_transpose2d and max_pool", empty_channels)

    def names():
        doc = open(os.path.join(HERE, "..", "..", "docs", "Dialects", "Graph.md")).read()
        dialect = set(re.findall(r"^### `graph\.(\w+)`", doc, re.M))
        wanted = dialect - {"constant", "parameter", "buffer"}
        if set(ops.OP_NAMES) != wanted:
            have = set(ops.OP_NAMES)
            raise Failure("OP_NAMES differs from the dialect: missing %s, extra %s"
                          % (sorted(wanted - have), sorted(have - wanted)))
        missing = [n for n in ops.OP_NAMES if not callable(getattr(ops, n, None))]
        if missing:
            raise Failure("no function for %s" % missing)
    s.case("a function for every op of the dialect", names)


def cases(s):
    slice_cases(s)
    scatter_cases(s)
    group_cases(s)
    shapes_cases(s)
    torch_cases(s)
