"""Parameter strategies of weft_runtime.params, three optimizer steps each,
against torch.optim on the dense model in one process (float64).

The model: h = relu(x W1 + b1), out = (h W2) ⊙ s (s a buffer), loss = mean
over the batch of Σ (out − t)². Each case is a small hand-written plan:

- a 1-d mesh of 4 ranks, data parallel with micro-batch shards (3, 0, 2, 1):
  every parameter replicated, zero1 or zero2, with 1 and 2 micro-batches;
  ZeRO-3 with every parameter split unevenly (one empty shard) and gathered
  before use, the gathered copy regathered in the backward or kept; SGD with
  momentum on a mix of strategies.
- a 2x2 mesh: data parallel on axis 0 and tensor parallel on axis 1
  (W1 split by columns, W2 by rows, an all_reduce of the partial output;
  the loss is whole on axis 1, seed 1/2), with zero1, zero2, replicated
  (Adam) and ZeRO-3 over axis 0 (SGD: Adam hardly sees a gradient's scale); and data parallel over both axes with ZeRO-1/2 parts
  over a group of 4 (uneven parts).
- gradient buckets: the replicated 1-d plan with buckets of 0 B (one
  all_reduce per tensor), 200 B (W2 and b1 share one, W1 its own) and
  25 MiB (one for all): the sync makes 3, 2 and 1 all_reduce calls per step
  and every run ends with the same parameters.

Both meshes run in one world of 4 ranks (one spawn).

After every step each rank's stored shard must equal its box of the dense
parameter torch.optim computed; the buffer must not change.

    python test/emit/params.py        # prints "N passed, M failed"
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import F64, check, close  # noqa: E402

import torch  # noqa: E402

from weft_runtime import optim  # noqa: E402
from weft_runtime.mesh import Mesh, parse_dist  # noqa: E402
from weft_runtime.params import DEFAULT_BUCKET_BYTES, Param, ParamSet, part_sizes  # noqa: E402
from weft_runtime.runtime import Runtime  # noqa: E402
from weft_runtime.step import loss_seed, loss_value, train_step  # noqa: E402

D_IN, D_H, D_OUT = 4, 6, 3
STEPS = 3


def rand(shape, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return scale * torch.randn(*shape, generator=g, dtype=F64)


def dense_init():
    return {"W1": rand((D_IN, D_H), 1, 0.5), "b1": rand((D_H,), 2, 0.1),
            "W2": rand((D_H, D_OUT), 3, 0.5), "s": 1.0 + rand((D_OUT,), 4, 0.1)}


def batch(step, size):
    return rand((size, D_IN), 100 + step), rand((size, D_OUT), 200 + step)


def dense_forward(p, X, T):
    h = torch.relu(X @ p["W1"] + p["b1"])
    out = (h @ p["W2"]) * p["s"]
    return ((out - T) ** 2).sum() / X.shape[0]


def dense_run(make_opt, batch_size):
    """torch.optim on the whole model: the parameters after each step."""
    p = {k: v.clone() for k, v in dense_init().items()}
    trainable = [p[k].requires_grad_() for k in ("W1", "b1", "W2")]
    opt = make_opt(trainable)
    after, losses = [], []
    for step in range(STEPS):
        X, T = batch(step, batch_size)
        opt.zero_grad()
        loss = dense_forward(p, X, T)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        after.append({k: v.detach().clone() for k, v in p.items()})
    return after, losses


def torch_adam(params):
    return torch.optim.Adam(params, lr=0.05, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.01)


def torch_sgd(params):
    return torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01)


def ours(kind):
    if kind == "adam":
        return optim.Adam(lr=0.05, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.01)
    return optim.SGD(lr=0.1, momentum=0.9, weight_decay=0.01)


class Plan:
    """A hand-written plan of the model: mesh, segments and, per parameter,
    its stored distribution, strategy and the axes it is gathered along
    before use (ZeRO-3)."""

    def __init__(self, mesh, segments, x_dist, loss_dist, params, tp_axis=None,
                 micro_batches=1, keep=False, bucket_bytes=DEFAULT_BUCKET_BYTES):
        self.mesh, self.segments, self.x_dist, self.loss_dist = mesh, segments, x_dist, loss_dist
        self.params, self.tp_axis, self.micro_batches, self.keep = (
            params, tp_axis, micro_batches, keep)
        self.bucket_bytes = bucket_bytes


def run_plan(plan, opt_kind, record=None):
    """The case running `plan`; with `record`, record[plan.bucket_bytes]
    gets the all_reduce calls of the steps and the parameters after them."""
    def fn(rt0):
        rt = Runtime.attach(plan.mesh, plan.segments)
        init = dense_init()
        b = sum(plan.segments[0])  # samples per micro-batch
        ps = ParamSet(plan.bucket_bytes)
        for name, (dist, strategy, gather_axes) in plan.params.items():
            d = parse_dist(dist)
            idax = tuple(a for a, e in enumerate(d) if e == "id")
            group = rt.group(idax) if idax else None
            ps.add(Param(name, rt.shard_of(init[name], d), strategy, group, rt.comm))
        shapes = {k: tuple(v.shape) for k, v in init.items()}

        def use(name):
            dist, strategy, gather_axes = plan.params[name]
            p = ps[name]
            if gather_axes:
                return p.gathered(rt, shapes[name], dist, gather_axes, keep=plan.keep)
            return p.tensor

        total_b = b * plan.micro_batches
        want, _ = dense_run(torch_adam if opt_kind == "adam" else torch_sgd, total_b)
        opt = ours(opt_kind)
        seed = loss_seed(rt.mesh, plan.loss_dist)
        reduces = rt.comm.calls.get("all_reduce", 0)
        for step in range(STEPS):
            X, T = batch(step, total_b)

            def forward(m):
                Xm, Tm = X[m * b:(m + 1) * b], T[m * b:(m + 1) * b]
                x, t = rt.shard_of(Xm, plan.x_dist), rt.shard_of(Tm, plan.x_dist)
                h = torch.relu(x @ use("W1") + use("b1"))
                y = h @ use("W2")
                if plan.tp_axis is not None:
                    y = rt.all_reduce(y, "[gather(0, 0), sum]", plan.tp_axis)
                out = y * use("s")
                return ((out - t) ** 2).sum() / b

            losses = train_step(forward, ps, opt, plan.micro_batches, seed)
            for name in init:
                close(ps[name].tensor, rt.shard_of(want[step][name], plan.params[name][0]),
                      "%s after step %d" % (name, step + 1), rtol=1e-9, atol=1e-12)
                check(ps[name].tensor.grad is None, "%s: gradient cleared after the step" % name)
        if record is not None:
            record[plan.bucket_bytes] = (rt.comm.calls.get("all_reduce", 0) - reduces,
                                         {k: ps[k].tensor.detach().clone() for k in init})
        # The last micro-batch's loss, added up over the loss's sum axes.
        Xl, Tl = X[-b:], T[-b:]
        before = {k: v for k, v in (want[STEPS - 2] if STEPS > 1 else init).items()}
        last = dense_forward(before, Xl, Tl)
        close(loss_value(rt, losses[-1], plan.loss_dist), last,
              "loss value of the last micro-batch", rtol=1e-9)
        gathered = any(g for _, _, g in plan.params.values())
        if gathered and not plan.keep:
            check(ps.regathers > 0, "ZeRO-3 regathered in the backward")
        else:
            check(ps.regathers == 0, "no regather (%d)" % ps.regathers)
        check(all(not ps[k].tensor.requires_grad for k in ("s",)), "a buffer has no gradient")
    return fn


def case_parts(rt):
    check(part_sizes(6, 4) == [1, 2, 1, 2], "parts of 6 over 4: %s" % part_sizes(6, 4))
    check(part_sizes(2, 3) == [0, 1, 1], "parts of 2 over 3: %s" % part_sizes(2, 3))


def bucket_cases(mesh, segs):
    """Replicated parameters of one group synced in buckets of 0 B, 200 B
    and 25 MiB (float64: W2 144 B, b1 48 B, W1 192 B, in backward order)."""
    params = {k: ("[id]", "replicated", ()) for k in ("W1", "b1", "W2")}
    params["s"] = ("[id]", "buffer", ())
    record = {}
    out = []
    for bucket in (0, 200, DEFAULT_BUCKET_BYTES):
        out.append(("replicated, Adam, 1-d, gradient buckets of %d B" % bucket,
                    run_plan(Plan(mesh, segs, "[gather(0, 0)]", "[sum]", params,
                                  bucket_bytes=bucket), "adam", record)))

    def compare(rt):
        calls = {b: record[b][0] for b in record}
        check(calls == {0: 3 * STEPS, 200: 2 * STEPS, DEFAULT_BUCKET_BYTES: STEPS},
              "all_reduce calls by bucket size: %s" % calls)
        for b in (200, DEFAULT_BUCKET_BYTES):
            for name, t in record[b][1].items():
                close(t, record[0][1][name], "%s in buckets of %d B" % (name, b),
                      rtol=1e-14, atol=0)
    out.append(("gradient buckets: fewer all_reduce calls, the same parameters", compare))
    return out


def cases(rt):
    n = rt.mesh.num_devices
    out = [("ZeRO part sizes", case_parts)]
    if n == 4:
        mesh = Mesh(4)
        segs = {0: [3, 0, 2, 1], 1: [2, 1, 1, 0], 2: [3, 2, 0, 1], 3: [1, 0, 1, 1]}
        whole = "[id]"
        for strategy in ("replicated", "zero1", "zero2"):
            for m in (1, 2):
                params = {k: (whole, strategy, ()) for k in ("W1", "b1", "W2")}
                params["s"] = (whole, "buffer", ())
                out.append(("%s, Adam, %d micro-batch(es), 1-d" % (strategy, m),
                            run_plan(Plan(mesh, segs, "[gather(0, 0)]", "[sum]", params,
                                          micro_batches=m), "adam")))
        z3 = {"W1": ("[gather(0, 1)]", "zero3", (0,)), "b1": ("[gather(0, 2)]", "zero3", (0,)),
              "W2": ("[gather(1, 3)]", "zero3", (0,)), "s": (whole, "buffer", ())}
        for keep in (False, True):
            out.append(("zero3 %s, Adam, 2 micro-batches, 1-d" % ("kept" if keep else "regathered"),
                        run_plan(Plan(mesh, segs, "[gather(0, 0)]", "[sum]", z3,
                                      micro_batches=2, keep=keep), "adam")))
        out += bucket_cases(mesh, segs)
        mixed = {"W1": (whole, "zero2", ()), "b1": (whole, "zero1", ()),
                 "W2": ("[gather(1, 3)]", "zero3", (0,)), "s": ("[gather(0, 3)]", "buffer", (0,))}
        out.append(("mixed strategies, SGD with momentum, 2 micro-batches, 1-d",
                    run_plan(Plan(mesh, segs, "[gather(0, 0)]", "[sum]", mixed,
                                  micro_batches=2), "sgd")))
    if n == 4:
        mesh = Mesh(2, [2])
        segs = {0: [2, 1, 1, 0], 1: [1, 3, 1, 1], 2: [1, 1, 2, 0], 3: [1, 0, 2, 0]}
        tp = {"W1": ("[id, gather(1, 1)]", "zero1", ()), "b1": ("[id, gather(0, 1)]", "replicated", ()),
              "W2": ("[id, gather(0, 1)]", "zero2", ()), "s": ("[id, id]", "buffer", ())}
        out.append(("2x2: data x tensor parallel, zero1/replicated/zero2, Adam, 2 micro-batches",
                    run_plan(Plan(mesh, segs, "[gather(0, 0), id]", "[sum, id]", tp, tp_axis=1,
                                  micro_batches=2), "adam")))
        tp3 = {"W1": ("[gather(0, 2), gather(1, 1)]", "zero3", (0,)),
               "b1": ("[id, gather(0, 1)]", "zero3", ()),
               "W2": ("[gather(1, 3), gather(0, 1)]", "zero3", (0,)), "s": ("[id, id]", "buffer", ())}
        out.append(("2x2: data x tensor parallel, zero3 over axis 0, SGD with momentum",
                    run_plan(Plan(mesh, segs, "[gather(0, 0), id]", "[sum, id]", tp3, tp_axis=1),
                             "sgd")))
        dp = {"W1": ("[id, id]", "zero1", ()), "b1": ("[id, id]", "zero2", ()),
              "W2": ("[id, id]", "replicated", ()), "s": ("[id, id]", "buffer", ())}
        out.append(("2x2: data parallel over both axes, ZeRO parts over 4 ranks, Adam",
                    run_plan(Plan(mesh, segs, "[gather(0, 0), gather(0, 0)]", "[sum, sum]", dp,
                                  micro_batches=2), "adam")))
    return out


if __name__ == "__main__":
    sys.exit(harness.run(__file__, [4]))
