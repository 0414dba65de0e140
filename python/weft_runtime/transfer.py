"""Values crossing between pipeline stages: made whole, sent, cut.

A pipelined plan's `spmd.send` hands the whole value to the next stage,
which keeps its shards in the `spmd.recv`'s layout; in the backward pass the
recv's gradient, partial over the id axes of its layout (the partial-sum
convention), is summed whole and cut into the send's layout, each shard
shared equally by its id group — lib/Exec/PipelineCheck.cpp's semantics
(docs/Pipeline.md).

`Link` does it the simplest correct way, for one stage and its neighbours:

- whole inside the stage: each rank writes its shard into zeros of the
  global shape — for a value only the first rank of each id group, for a
  gradient every rank (the partial contributions add up) — and the stage
  all-reduces the sum over the group of all its devices (a value held whole
  by every rank, distribution all `id`, needs no all-reduce);
- point to point: device j of the receiving stage gets the whole from
  device j mod n of the sending stage (n its devices). Sends are `isend`s
  kept until `wait_sends` at the end of the step (so 1F1B's crossing sends
  never block each other); receives are `irecv`s waited with the run's
  timeout, so a missing send ends the run with one line instead of a hang;
- cut: the rank's box of the whole (`Runtime.shard_of`); a gradient's shard
  is divided by the size of the send layout's id group.

Tags tell a step's transfers apart on gloo (NCCL ignores them: its
point-to-point operations between two ranks match in order, which the
schedule keeps).
"""

import datetime

import torch
import torch.distributed as dist

from . import ops
from .errors import WeftRuntimeError, _plain
from .mesh import ID, id_axes, parse_dist

FLOATS = ("f32", "f16", "bf16", "f64")


class Transfer:
    """One send or recv of a stage: the value's global shape (one
    micro-batch), element type and distribution on the stage's mesh."""

    def __init__(self, shape, type_, dist_):
        self.shape, self.type, self.dist = tuple(shape), type_, dist_

    @property
    def is_float(self):
        return self.type in FLOATS

    def dtype(self):
        """The dtype on the wire: the run's float type, else int64 (an i1
        travels as int64 and is turned back to bool)."""
        return ops.FLOAT if self.is_float else torch.int64


def _box_view(whole, box):
    offsets, extents = box
    view = whole
    for d, (o, e) in enumerate(zip(offsets, extents)):
        view = view.narrow(d, o, e)
    return view


class Link:
    """This rank's transfers to and from the neighbouring stages.

    `stages`: every stage of the pipeline, each with `ranks` (world ranks of
    its devices, in its mesh's order), `sends` and `recvs` (Transfers);
    `index`: this rank's stage; `rt`: its stage Runtime (stage-local rank).
    """

    def __init__(self, stages, index, rt, timeout_s, skip_send=None):
        self.stage = stages[index]
        self.prev = stages[index - 1] if index > 0 else None
        self.next = stages[index + 1] if index + 1 < len(stages) else None
        self.rt = rt
        self.me, self.n = rt.rank, len(self.stage.ranks)
        self.world_rank = self.stage.ranks[self.me]
        self.timeout = datetime.timedelta(seconds=timeout_s)
        self.timeout_s = timeout_s
        self.width = max([len(s.sends) for s in stages] + [1])
        self.everyone = rt.group(tuple(range(rt.mesh.num_axes)))
        self.skip_send = skip_send  # (stage, micro-batch): a test's missing send
        self.pending = []

    def _tag(self, m, k, backward):
        return (m * self.width + k) * 2 + int(backward)

    def _targets(self, other):
        """The other stage's devices this rank serves: j with j mod n = me."""
        return [r for j, r in enumerate(other.ranks) if j % self.n == self.me]

    def _source(self, other):
        return other.ranks[self.me % len(other.ranks)]

    def _isend(self, whole, dst, tag):
        self.pending.append((dist.isend(whole, dst=dst, tag=tag), whole, dst))

    def _recv(self, shape, transfer, src, tag, what):
        buf = torch.empty(shape, dtype=transfer.dtype(), device=self.rt.device)
        try:
            work = dist.irecv(buf, src=src, tag=tag)
            work.wait(timeout=self.timeout)
        except Exception as e:  # noqa: BLE001 - named in one line
            raise WeftRuntimeError(self._failure("%s from rank %d did not arrive" % (what, src),
                                                 "a missing send", e))
        return buf

    def _failure(self, what, cause, e):
        """One line: a wait that timed out, or a peer that went away."""
        low = str(e).lower()
        head = "rank %d (stage %d): %s" % (self.world_rank, self.stage.index, what)
        if "timed out" in low or "timeout" in low:
            return ("%s within %g s (%s, a stopped rank or a wrong schedule): %s"
                    % (head, self.timeout_s, cause, _plain(e)))
        return "%s (the peer stopped): %s" % (head, _plain(e))

    def wait_sends(self):
        """Waits for the step's sends (each with the timeout)."""
        pending, self.pending = self.pending, []
        for work, _, dst in pending:
            try:
                work.wait(timeout=self.timeout)
            except Exception as e:  # noqa: BLE001
                raise WeftRuntimeError(self._failure("rank %d did not take a send" % dst,
                                                     "a missing recv", e))

    # --- forward: values ------------------------------------------------------
    def send_value(self, k, m, shard):
        """Send k of micro-batch m: this rank's shard, made whole, to the next
        stage's devices it serves."""
        if self.skip_send == (self.stage.index, m):
            return
        t = self.stage.sends[k]
        d = parse_dist(t.dist)
        x = shard.detach().to(t.dtype())
        if all(e == ID for e in d):
            whole = x.contiguous().clone()
        else:
            whole = torch.zeros(t.shape, dtype=t.dtype(), device=self.rt.device)
            if self.rt.first_on(id_axes(d)):
                _box_view(whole, self.rt.box(t.shape, d)).copy_(x)
            self.rt.comm.all_reduce(whole, self.everyone, "sum")
        for dst in self._targets(self.next):
            self._isend(whole, dst, self._tag(m, k, False))

    def recv_value(self, k, m):
        """Recv k of micro-batch m: this rank's shard in the recv's layout (a
        leaf that collects its gradient, for floats)."""
        t = self.stage.recvs[k]
        src = self._source(self.prev)
        whole = self._recv(t.shape, t, src, self._tag(m, k, False),
                           "micro-batch %d's value %d" % (m, k))
        shard = self.rt.shard_of(whole, t.dist)
        if t.type == "i1":
            return shard.to(torch.bool)
        return shard.requires_grad_(True) if t.is_float else shard

    # --- backward: gradients --------------------------------------------------
    def send_grad(self, k, m, received):
        """The gradient of recv k of micro-batch m, summed whole over the
        stage, back to the previous stage's devices this rank serves."""
        t = self.stage.recvs[k]
        if not t.is_float:
            return
        whole = torch.zeros(t.shape, dtype=t.dtype(), device=self.rt.device)
        if received.grad is not None:
            _box_view(whole, self.rt.box(t.shape, t.dist)).add_(received.grad)
        self.rt.comm.all_reduce(whole, self.everyone, "sum")
        for dst in self._targets(self.prev):
            self._isend(whole, dst, self._tag(m, k, True))

    def recv_grad(self, k, m):
        """The gradient of send k of micro-batch m: this rank's shard of it in
        the send's layout, shared by the id group; None for an integer
        value."""
        t = self.stage.sends[k]
        if not t.is_float:
            return None
        src = self._source(self.next)
        whole = self._recv(t.shape, t, src, self._tag(m, k, True),
                           "the gradient of micro-batch %d's value %d" % (m, k))
        share = self.rt.mesh.size_of(id_axes(parse_dist(t.dist)))
        return self.rt.shard_of(whole, t.dist) / share
