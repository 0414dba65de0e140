"""One training step: micro-batches, the loss seed, the sync, the update.

`train_step(forward, params, optimizer, micro_batches, seed)` runs
`forward(m)` for each micro-batch m (the emitted program's forward pass on
slice m of the step's batch, returning this rank's value of the loss), and
its backward from `seed / micro_batches`: the loss seed of the partial-sum
convention is 1/|id group| of the loss's distribution on every rank
(`loss_seed`), and dividing by the micro-batch count makes the step's
gradient that of the mean of the micro-batch losses (the step's loss when
each micro-batch loss is a mean over its samples). Then each parameter's
once-per-step sync, the optimizer on each rank's pieces and the ZeRO-1/2
all-gathers; ZeRO-2 reduce-scatters after every micro-batch. The forward
runs in the parameters' regather scope (ZeRO-3).
"""

import torch

from .mesh import SUM, id_axes, parse_dist, partial_axes


def loss_seed(mesh, loss_dist):
    """1 / (devices along the id axes of the loss's distribution)."""
    return 1.0 / mesh.size_of(id_axes(parse_dist(loss_dist)))


def loss_value(rt, loss, loss_dist):
    """The loss's value: this rank's value added up over its sum axes."""
    with torch.no_grad():
        v = loss.detach().clone()
        for a in partial_axes(parse_dist(loss_dist), SUM):
            rt.comm.all_reduce(v, rt.group(a), "sum")
        return v


def train_step(forward, params, optimizer, micro_batches=1, seed=1.0):
    """Runs one step; returns this rank's loss of each micro-batch (detached)."""
    losses = []
    for m in range(micro_batches):
        with params.regather_scope():
            loss = forward(m)
        loss.backward(torch.full_like(loss, seed / micro_batches))
        params.after_micro_batch()
        losses.append(loss.detach())
    params.sync()
    params.step(optimizer)
    params.zero_grad()
    return losses
