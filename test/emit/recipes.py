"""The recipes of weft_runtime.recipes against their dense forms (float64),
forward and backward, on 2 and 3 gloo ranks with uneven shards (one empty):
split softmax and log_softmax, layer_norm over split normalised dims,
batch_norm with synchronised statistics, cross_entropy and nll_loss over
split classes and over a split batch (mean, sum, ignore_index), the
vocabulary-split embedding (along axis 0 and 1), reduce_mean over a split
dim, a bias added once, slice.split-sliced, and dropout keyed by global
index: the whole mask against an independent pure-Python rendering of
lib/Exec/Random.cpp's formula (and splitmix64's published first output),
every shard's mask the slice of the whole mask, and a run recomputed with
torch.utils.checkpoint giving the same values and gradients while making
its all-reduces again in the backward.

For a split result y_d, rank d's partial loss is <W_d, y_d> with W_d its
slice of one dense W; the dense program's loss is <W, y>. For a partial
result (a loss, a partial sum), the ranks' values add up to the dense one,
and each rank seeds its backward as the dual of an all_reduce would (the
loss: 1 on every rank).

    python test/emit/recipes.py        # prints "N passed, M failed"
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import F64, check, close  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as Fn  # noqa: E402

from weft_runtime import collectives as C  # noqa: E402
from weft_runtime import recipes as R  # noqa: E402
from weft_runtime.keyed_random import dropout_mask, mix64  # noqa: E402
from weft_runtime.recompute import recompute  # noqa: E402

SIZES = {2: [0, 3], 3: [3, 0, 2]}
OTHER = {2: [2, 1], 3: [1, 2, 2]}


def rand(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=F64)


def piece(t, dim, sizes, i):
    return t.narrow(dim, sum(sizes[:i]), sizes[i])


def total(rt, t):
    """Σ over the ranks (a partial value's whole)."""
    s = t.detach().clone()
    rt.comm.all_reduce(s, rt.group(0), "sum")
    return s


def case_softmax(log, sizes_of):
    def fn(rt):
        sizes, me = sizes_of[rt.mesh.num_devices], rt.rank
        X = rand((2, sum(sizes), 3), 1) * 3
        W = rand(X.shape, 2)
        x = piece(X, 1, sizes, me).clone().requires_grad_()
        y = R.split_softmax(x, 1, rt.group(0), rt.comm, log=log)
        (y * piece(W, 1, sizes, me)).sum().backward()
        Xd = X.clone().requires_grad_()
        Y = (Fn.log_softmax if log else Fn.softmax)(Xd, 1)
        (Y * W).sum().backward()
        close(y, piece(Y, 1, sizes, me), "forward")
        close(x.grad, piece(Xd.grad, 1, sizes, me), "gradient")
    return fn


def case_layer_norm(rt):
    sizes, me = SIZES[rt.mesh.num_devices], rt.rank
    S = sum(sizes)
    X = rand((3, 2, S), 3) * 2 + 0.5
    G, B, W = rand((2, S), 4), rand((2, S), 5), rand(X.shape, 6)
    x = piece(X, 2, sizes, me).clone().requires_grad_()
    g = piece(G, 1, sizes, me).clone().requires_grad_()
    b = piece(B, 1, sizes, me).clone().requires_grad_()
    y = R.split_layer_norm(x, g, b, 1, 1e-5, 2 * S, rt.group(0), rt.comm)
    (y * piece(W, 2, sizes, me)).sum().backward()
    Xd, Gd, Bd = (t.clone().requires_grad_() for t in (X, G, B))
    Y = Fn.layer_norm(Xd, (2, S), Gd, Bd, 1e-5)
    (Y * W).sum().backward()
    close(y, piece(Y, 2, sizes, me), "forward")
    close(x.grad, piece(Xd.grad, 2, sizes, me), "input gradient")
    close(g.grad, piece(Gd.grad, 1, sizes, me), "scale gradient")
    close(b.grad, piece(Bd.grad, 1, sizes, me), "bias gradient")


def case_batch_norm(rt):
    sizes, me = SIZES[rt.mesh.num_devices], rt.rank
    N = sum(sizes)
    X = rand((N, 3, 2), 7) + 1.0
    G, B, W = rand((3,), 8), rand((3,), 9), rand(X.shape, 10)
    x = piece(X, 0, sizes, me).clone().requires_grad_()
    g, b = G.clone().requires_grad_(), B.clone().requires_grad_()
    y = R.sync_batch_norm(x, g, b, 1e-5, N * 2, rt.group(0), rt.comm)
    (y * piece(W, 0, sizes, me)).sum().backward()
    Xd, Gd, Bd = (t.clone().requires_grad_() for t in (X, G, B))
    Y = Fn.batch_norm(Xd, None, None, Gd, Bd, training=True, eps=1e-5)
    (Y * W).sum().backward()
    close(y, piece(Y, 0, sizes, me), "forward")
    close(x.grad, piece(Xd.grad, 0, sizes, me), "input gradient")
    close(total(rt, g.grad), Gd.grad, "scale gradient summed over ranks")
    close(total(rt, b.grad), Bd.grad, "bias gradient summed over ranks")


def labels_for(n, classes, p, seed, ignore=None):
    g = torch.Generator().manual_seed(seed)
    lab = torch.randint(0, classes, (n, p), generator=g)
    if ignore is not None:
        lab.view(-1)[0] = ignore
        lab.view(-1)[-1] = ignore
    return lab


def case_loss_classes(from_logits, reduction, ignore):
    def fn(rt):
        sizes, me = OTHER[rt.mesh.num_devices] if from_logits else SIZES[rt.mesh.num_devices], rt.rank
        Cn = sum(sizes)
        X = rand((4, Cn, 2), 11) * 2
        if not from_logits:
            X = torch.log_softmax(X, 1)
        L = labels_for(4, Cn, 2, 12, ignore)
        x = piece(X, 1, sizes, me).clone().requires_grad_()
        loss = R.cross_entropy(x, L, count=L.numel(), reduction=reduction, ignore_index=ignore,
                               from_logits=from_logits, class_group=rt.group(0),
                               offset=sum(sizes[:me]), first=rt.rank == 0, comm=rt.comm)
        loss.backward(torch.ones_like(loss))
        Xd = X.clone().requires_grad_()
        kw = {"ignore_index": ignore} if ignore is not None else {}
        ref = (Fn.cross_entropy if from_logits else Fn.nll_loss)(Xd, L, reduction=reduction, **kw)
        ref.backward()
        close(total(rt, loss), ref, "loss summed over ranks")
        close(x.grad, piece(Xd.grad, 1, sizes, me), "gradient")
    return fn


def case_loss_batch(ignore):
    def fn(rt):
        sizes, me = SIZES[rt.mesh.num_devices], rt.rank
        N = sum(sizes)
        X = rand((N, 5), 13) * 2
        L = labels_for(N, 5, 1, 14, ignore).reshape(N)
        x = piece(X, 0, sizes, me).clone().requires_grad_()
        loss = R.cross_entropy(x, piece(L, 0, sizes, me), count=N, ignore_index=ignore,
                               batch_group=rt.group(0), comm=rt.comm)
        loss.backward(torch.ones_like(loss))
        Xd = X.clone().requires_grad_()
        kw = {"ignore_index": ignore} if ignore is not None else {}
        ref = Fn.cross_entropy(Xd, L, **kw)
        ref.backward()
        close(total(rt, loss), ref, "loss summed over ranks")
        close(x.grad, piece(Xd.grad, 0, sizes, me), "gradient")
    return fn


def case_embedding(axis):
    def fn(rt):
        n, me = rt.mesh.num_devices, rt.rank
        sizes = SIZES[n]
        V = sum(sizes)
        shape = (V, 3) if axis == 0 else (2, V, 3)
        T = rand(shape, 15)
        idx = torch.tensor([[0, V - 1, 2], [-1, 1, 0]])
        Ws = [rand(shape[:axis] + (2, 3) + shape[axis + 1:], 16 + d) for d in range(n)]
        t = piece(T, axis, sizes, me).clone().requires_grad_()
        y = C.all_reduce(R.vocab_embedding(t, idx, axis, sum(sizes[:me]), V), rt.group(0), rt.comm)
        (y * Ws[me]).sum().backward()
        Td = T.clone().requires_grad_()
        Y = Td[idx] if axis == 0 else Td[:, idx]
        (Y * sum(Ws)).sum().backward()
        close(y, Y, "forward (all-reduced)")
        close(t.grad, piece(Td.grad, axis, sizes, me), "table gradient")
    return fn


def case_mean_once_slice(rt):
    n, me = rt.mesh.num_devices, rt.rank
    sizes = SIZES[n]
    X = rand((2, sum(sizes), 3), 20)
    x = piece(X, 1, sizes, me).clone().requires_grad_()
    bias = rand((2, 3), 21).requires_grad_()
    y = R.split_mean(x, (1,), sum(sizes)) + R.once(bias, rt.rank == 0)
    Wm = rand((2, 3), 22)
    y.backward(Wm)  # the all_reduce's dual gives every rank the whole gradient
    Xd, Bd = X.clone().requires_grad_(), bias.detach().clone().requires_grad_()
    Y = Xd.mean(1) + Bd
    Y.backward(Wm)
    close(total(rt, y), Y, "mean + once, summed over ranks")
    close(x.grad, piece(Xd.grad, 1, sizes, me), "gradient of the split input")
    close(total(rt, bias.grad if bias.grad is not None else torch.zeros_like(bias)), Bd.grad,
          "bias gradient summed over ranks")
    # slice.split-sliced: the window 1::2 of dim 0, split over the ranks.
    Z = rand((2 * sum(sizes) + 1, 2), 23)
    z = Z.clone().requires_grad_()
    s = R.split_slice(z, 0, 1, 2, sum(sizes[:me]), sizes[me])
    close(s, piece(Z[1::2], 0, sizes, me), "slice window")


def reference_mask(shape, ratio, seed, op_id):
    """Random.cpp and Dropout.cpp's formula with Python integers."""
    stream = mix64(op_id)
    keep = 1.0 / (1.0 - ratio)
    out = []
    n = 1
    for s in shape:
        n *= s
    for e in range(n):
        bits = mix64((mix64(mix64(seed) ^ stream) + e) % (1 << 64))
        u = (bits >> 11) * 2.0 ** -53
        out.append(keep if u >= ratio else 0.0)
    return torch.tensor(out, dtype=F64).reshape(shape)


def case_dropout(rt):
    check(mix64(0) == 0xE220A8397B1DCDAF, "splitmix64's first output from state 0")
    n, me = rt.mesh.num_devices, rt.rank
    sizes, other = SIZES[n], OTHER[n]
    shape = (sum(sizes), 3, sum(other))
    whole = dropout_mask(shape, 0.3, 9, 4, dtype=F64)
    close(whole, reference_mask(shape, 0.3, 9, 4), "whole mask = the C++ formula")
    kept = float((whole != 0).double().mean())
    check(0.5 < kept < 0.9, "kept fraction %.2f for ratio 0.3" % kept)
    X = rand(shape, 24)
    x = piece(piece(X, 0, sizes, me), 2, other, (me + 1) % n).clone().requires_grad_()
    offs = [sum(sizes[:me]), 0, sum(other[:(me + 1) % n])]
    y = R.dropout(x, 0.3, 9, 4, shape, offs)
    mask = piece(piece(whole, 0, sizes, me), 2, other, (me + 1) % n)
    close(y, x.detach() * mask, "shard's mask is the slice of the whole mask")
    y.backward(torch.ones_like(y))
    close(x.grad, mask, "gradient is the mask")
    check(not torch.equal(dropout_mask(shape, 0.3, 9, 5, dtype=F64), whole),
          "another op id draws another mask")


def case_recompute(rt):
    """A run (layer_norm -> dropout -> split softmax) recomputed: same values
    and gradients, its all-reduces made again in the backward."""
    n, me = rt.mesh.num_devices, rt.rank
    sizes = SIZES[n]
    S = sum(sizes)
    X = rand((4, S), 25)
    G, B, W = rand((S,), 26), rand((S,), 27), rand((4, S), 28)

    def run(x, g, b):
        h = R.split_layer_norm(x, g, b, 1, 1e-5, S, rt.group(0), rt.comm)
        h = R.dropout(h, 0.25, 3, 0, (4, S), (0, sum(sizes[:me])))
        return R.split_softmax(h, 1, rt.group(0), rt.comm)

    results = []
    for again in (False, True):
        x, g, b = (piece(t, t.dim() - 1, sizes, me).clone().requires_grad_() for t in (X, G, B))
        before = rt.comm.calls.get("all_reduce", 0)
        y = recompute(run, x, g, b) if again else run(x, g, b)
        forward_calls = rt.comm.calls.get("all_reduce", 0) - before
        (y * piece(W, 1, sizes, me)).sum().backward()
        backward_calls = rt.comm.calls.get("all_reduce", 0) - before - forward_calls
        results.append((y.detach(), x.grad, g.grad, b.grad, forward_calls, backward_calls))
    plain, again = results
    for i, what in enumerate(("forward", "input gradient", "scale gradient", "bias gradient")):
        close(again[i], plain[i], "recomputed " + what)
    check(again[5] == plain[5] + plain[4],
          "the backward repeats the forward's %d all-reduces (%d vs %d)" % (plain[4], again[5], plain[5]))


def cases(rt):
    return [("softmax split-reduced", case_softmax(False, SIZES)),
            ("log_softmax split-reduced", case_softmax(True, OTHER)),
            ("layer_norm split-normalized", case_layer_norm),
            ("batch_norm split-batch-sync-stats", case_batch_norm),
            ("cross_entropy split-classes mean", case_loss_classes(True, "mean", None)),
            ("cross_entropy split-classes sum, ignore_index", case_loss_classes(True, "sum", 3)),
            ("cross_entropy split-classes mean, ignore_index", case_loss_classes(True, "mean", 1)),
            ("nll_loss split-classes mean", case_loss_classes(False, "mean", None)),
            ("cross_entropy split-batch mean", case_loss_batch(None)),
            ("cross_entropy split-batch mean, ignore_index", case_loss_batch(2)),
            ("gather split-vocab axis 0", case_embedding(0)),
            ("gather split-vocab axis 1", case_embedding(1)),
            ("reduce_mean split-reduced, once, split-sliced", case_mean_once_slice),
            ("dropout keyed by global index", case_dropout),
            ("recomputed run", case_recompute)]


if __name__ == "__main__":
    sys.exit(harness.run(__file__, [2, 3]))
