"""Every collective of weft_runtime.collectives, forward and backward, against
its dense single-process equivalent in float64, on 2 and 3 gloo ranks with
uneven shards (one of them empty), through the native calls and through the
emulations of gloo_compat.

The backward check is the partial-sum convention's: each rank d adds the
partial loss L_d = <W_d, y_d> of its result y_d (W_d random, the same on
every rank's dense copy); the dense program computes Σ_d L_d from the
dense inputs, and each rank's input gradient must equal the dense gradient
of what it holds: its slice of a split value, its own part of a partial
value, and, for a whole value, the sum over the ranks (each holds a partial
gradient). Also: the gloo capability table agrees with a measurement, the
runtime's plan-level calls (global shape and distribution) give the same
results, and each path makes the torch.distributed calls it should.

    python test/emit/collectives.py        # prints "N passed, M failed"
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import F64, check, close  # noqa: E402

import torch  # noqa: E402

from weft_runtime import collectives as C  # noqa: E402
from weft_runtime.gloo_compat import Comm, native_table  # noqa: E402
from weft_runtime.mesh import Mesh  # noqa: E402
from weft_runtime.probe import measure  # noqa: E402
from weft_runtime.runtime import Runtime  # noqa: E402

SIZES = {2: [[0, 3], [2, 1]], 3: [[3, 0, 2], [1, 2, 2]]}


def rand(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=F64)


def piece(t, dim, sizes, i):
    return t.narrow(dim, sum(sizes[:i]), sizes[i])


def weights(n, shapes, seed):
    """W_d for every rank d (shapes[d] is rank d's result shape)."""
    return [rand(shapes[d], seed + 100 + d) for d in range(n)]


def partial_loss(y, w):
    return (y * w).sum()


def summed_grad(rt, g):
    """Σ over the ranks of a whole value's partial gradient."""
    total = g.clone()
    rt.comm.all_reduce(total, rt.group(0), "sum")
    return total


def case_shard(sizes, dim):
    def fn(rt):
        n, me = rt.mesh.num_devices, rt.rank
        shape = [2, 3, 2]
        shape[dim] = sum(sizes)
        X = rand(shape, 1)
        outs = [list(piece(X, dim, sizes, d).shape) for d in range(n)]
        W = weights(n, outs, 7)
        x = X.clone().requires_grad_()
        y = C.shard(x, dim, sizes, me)
        close(y, piece(X, dim, sizes, me), "forward")
        partial_loss(y, W[me]).backward()
        Xd = X.clone().requires_grad_()
        sum(partial_loss(piece(Xd, dim, sizes, d), W[d]) for d in range(n)).backward()
        close(summed_grad(rt, x.grad), Xd.grad, "gradient summed over ranks")
        own = torch.zeros_like(X)
        piece(own, dim, sizes, me).copy_(W[me])
        close(x.grad, own, "own gradient is the zero-padded slice")
    return fn


def case_all_gather(sizes, dim, comm_kind, mode):
    def fn(rt):
        comm = rt.comm if comm_kind == "native" else rt.emulated
        n, me = rt.mesh.num_devices, rt.rank
        shape = [3, 2, 2]
        shape[dim] = sum(sizes)
        X = rand(shape, 2)
        W = weights(n, [shape] * n, 11)
        x = piece(X, dim, sizes, me).clone().requires_grad_()
        y = C.all_gather(x, dim, sizes, rt.group(0), comm, mode)
        close(y, X, "forward")
        partial_loss(y, W[me]).backward()
        Xd = X.clone().requires_grad_()
        sum(partial_loss(Xd, W[d]) for d in range(n)).backward()
        close(x.grad, piece(Xd.grad, dim, sizes, me), "gradient of the shard")
    return fn


def case_reduce_scatter(sizes, dim, comm_kind):
    def fn(rt):
        comm = rt.comm if comm_kind == "native" else rt.emulated
        n, me = rt.mesh.num_devices, rt.rank
        shape = [2, 2, 3]
        shape[dim] = sum(sizes)
        P = [rand(shape, 30 + d) for d in range(n)]
        outs = [list(piece(P[0], dim, sizes, d).shape) for d in range(n)]
        W = weights(n, outs, 13)
        p = P[me].clone().requires_grad_()
        y = C.reduce_scatter(p, dim, sizes, rt.group(0), comm)
        close(y, piece(sum(P), dim, sizes, me), "forward")
        partial_loss(y, W[me]).backward()
        Pd = [q.clone().requires_grad_() for q in P]
        total = sum(Pd)
        sum(partial_loss(piece(total, dim, sizes, d), W[d]) for d in range(n)).backward()
        close(p.grad, Pd[me].grad, "gradient of the partial value")
    return fn


def case_all_reduce(op, comm_kind):
    def fn(rt):
        comm = rt.comm if comm_kind == "native" else rt.emulated
        n, me = rt.mesh.num_devices, rt.rank
        shape = [3, 4]
        P = [rand(shape, 50 + d) for d in range(n)]
        W = weights(n, [shape] * n, 17)
        p = P[me].clone().requires_grad_()
        y = C.all_reduce(p, rt.group(0), comm, op)
        if op == "max":
            close(y, torch.stack(P).amax(0), "forward")
            check(not y.requires_grad, "a max all-reduce is a stop-gradient")
            return
        close(y, sum(P), "forward")
        partial_loss(y, W[me]).backward()
        Pd = [q.clone().requires_grad_() for q in P]
        total = sum(Pd)
        sum(partial_loss(total, W[d]) for d in range(n)).backward()
        close(p.grad, Pd[me].grad, "gradient of the partial value")
    return fn


def case_all_to_all(src_sizes, dst_sizes, src_dim, dst_dim, comm_kind):
    def fn(rt):
        comm = rt.comm if comm_kind == "native" else rt.emulated
        n, me = rt.mesh.num_devices, rt.rank
        shape = [2, 2, 2]
        shape[src_dim] = sum(src_sizes)
        shape[dst_dim] = sum(dst_sizes)
        X = rand(shape, 3)
        outs = [list(piece(X, dst_dim, dst_sizes, d).shape) for d in range(n)]
        W = weights(n, outs, 19)
        x = piece(X, src_dim, src_sizes, me).clone().requires_grad_()
        y = C.all_to_all(x, src_dim, src_sizes, dst_dim, dst_sizes, rt.group(0), comm)
        close(y, piece(X, dst_dim, dst_sizes, me), "forward")
        partial_loss(y, W[me]).backward()
        Xd = X.clone().requires_grad_()
        sum(partial_loss(piece(Xd, dst_dim, dst_sizes, d), W[d]) for d in range(n)).backward()
        close(x.grad, piece(Xd.grad, src_dim, src_sizes, me), "gradient of the shard")
    return fn


def case_probe(rt):
    got = measure()
    want = native_table("gloo")
    check(got == want, "measured %s, gloo_compat says %s" % (got, want))


def case_paths(rt):
    """Each path calls what it should (native: the gloo calls the table
    allows; emulated: only the fallbacks)."""
    n, me = rt.mesh.num_devices, rt.rank
    sizes = SIZES[n][0]
    x = torch.ones(sizes[me], 2, dtype=F64)
    whole = torch.ones(sum(sizes), 2, dtype=F64)
    # gloo has no all_gather of unequal tensors: "grouped" broadcasts each
    # non-empty shard on both paths.
    shards = sum(1 for s in sizes if s)
    for comm, want in [(Comm("gloo"), {"all_gather_into_tensor": 1, "reduce_scatter": 1,
                                        "all_to_all_single": 1, "broadcast": shards,
                                        "all_reduce": 1}),
                       (Comm("gloo", emulate=True), {"all_gather": 1, "all_reduce": 2,
                                                     "batch_isend_irecv": 1,
                                                     "broadcast": shards})]:
        comm.all_gather_dim0(x, sizes, rt.group(0), "padded")
        comm.all_gather_dim0(x, sizes, rt.group(0), "grouped")
        comm.reduce_scatter_dim0(whole, sizes, rt.group(0))
        comm.all_to_all_dim0(list(torch.ones(n, 1, dtype=F64).split(1)), [(1,)] * n, rt.group(0))
        comm.all_reduce(torch.ones(2, dtype=F64), rt.group(0), "avg")
        check(comm.calls == want, "calls %s, expected %s" % (comm.calls, want))


def case_plan_level(rt):
    """Runtime's calls by global shape and distribution on a 1-d mesh."""
    n, me = rt.mesh.num_devices, rt.rank
    sizes = SIZES[n][0]
    other = SIZES[n][1]
    prt = Runtime.attach(Mesh(n), {0: sizes, 1: other})
    shape = (sum(sizes), 3, sum(other))
    X = rand(shape, 5)
    x = prt.shard(X, shape, "[gather(0, 0)]", 0)
    close(x, piece(X, 0, sizes, me), "shard")
    y = prt.all_to_all(x, shape, "[gather(0, 0)]", "#spmd.dist<[gather(2, 1)]>", 0)
    close(y, piece(X, 2, other, me), "all_to_all")
    z = prt.all_gather(y, shape, "[gather(2, 1)]", 0, mode="grouped")
    close(z, X, "all_gather")
    p = prt.reduce_scatter(X, shape, "[gather(0, 0)]", 0)
    close(p, n * piece(X, 0, sizes, me), "reduce_scatter")
    q = prt.all_reduce(X, "[sum]", 0)
    close(q, n * X, "all_reduce")
    box = prt.box(shape, "[gather(2, 1)]")
    check(box == ([0, 0, sum(other[:me])], [shape[0], 3, other[me]]), "box %s" % (box,))


def cases(rt):
    rt.emulated = Comm("gloo", emulate=True)
    n = rt.mesh.num_devices
    out = [("gloo capabilities measured = gloo_compat table", case_probe),
           ("torch.distributed calls per path", case_paths)]
    for sizes in SIZES[n]:
        tag = "sizes %s" % sizes
        out.append(("shard dim 1 %s" % tag, case_shard(sizes, 1)))
        for kind in ("native", "emulated"):
            for mode in ("padded", "grouped"):
                out.append(("all_gather %s %s dim 1 %s" % (kind, mode, tag),
                            case_all_gather(sizes, 1, kind, mode)))
            out.append(("reduce_scatter %s dim 2 %s" % (kind, tag),
                        case_reduce_scatter(sizes, 2, kind)))
    other = SIZES[n][1]
    for kind in ("native", "emulated"):
        out.append(("all_reduce sum %s" % kind, case_all_reduce("sum", kind)))
        out.append(("all_reduce max %s" % kind, case_all_reduce("max", kind)))
        out.append(("all_to_all %s dim 0 %s -> dim 2 %s" % (kind, SIZES[n][0], other),
                    case_all_to_all(SIZES[n][0], other, 0, 2, kind)))
        out.append(("all_to_all %s dim 2 %s -> dim 1 %s" % (kind, other, SIZES[n][0]),
                    case_all_to_all(other, SIZES[n][0], 2, 1, kind)))
    out.append(("runtime calls by shape and distribution", case_plan_level))
    return out


if __name__ == "__main__":
    sys.exit(harness.run(__file__, [2, 3]))
