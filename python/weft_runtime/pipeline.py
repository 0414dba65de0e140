"""The main of an emitted pipelined program (docs/Pipeline.md, "Emitting").

A pipelined plan's program (weft-translate --spmd-to-torch) declares one
`Stage` per stage module — its sub-mesh and its nodes of the plan's mesh, segments,
inputs, parameters, sends and recvs, and the forward function of one
micro-batch on the stage's shards — and calls `main(Pipeline(...))`. Every
rank runs the same program:

1. flags and launch as driver.py (`Runtime.launch` on the plan's mesh,
   without its axis groups);
2. every rank creates every stage's process groups, in stage order (each
   stage's single axes, the axis sets its recipes and parameters name, and
   the group of all its devices), on the world ranks of the stage's nodes:
   a stage device i at node position p is world rank nodes[p]·L + i mod L;
3. the rank's stage (the one whose nodes hold it) gets a Runtime on the
   stage's mesh (stage-local rank) and its parameters (driver.make_params);
4. per step, the stage's schedule over the M micro-batches (`schedule_of`):
   a forward receives the stage's recvs (transfer.Link), runs the stage's
   forward and sends its sends; a backward receives the sends' gradients
   (or, on the last stage, seeds the loss with loss_seed / M), runs
   autograd and sends the recvs' gradients back; then the stage's
   gradient sync, one optimizer step and the step's sends waited for;
5. the last stage's first rank prints `loss <step> <value>` (the mean of
   the micro-batch losses) and writes `--log`; `--save` gathers every
   stage's parameters on rank 0.

A rank whose node is in no stage creates the groups, then only joins
`--save`.
"""

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist

from . import npy, ops, optim
from .driver import ParamView, batch, make_params, parse_args, weight_file
from .errors import WeftRuntimeError, describe_distributed_failure
from .errors import main as run_main
from .groups import Groups
from .runtime import Runtime
from .step import loss_seed, loss_value
from .transfer import Link, Transfer  # noqa: F401 - programs import Transfer here

SCHEDULES = ("1f1b", "gpipe")


class Stage:
    """One stage module: `index`, its `nodes` (of the plan's mesh), its mesh and segments,
    inputs and parameters (driver's specs), `forward(rt, p, recv, *inputs)`
    returning (this rank's shards of its sends, its loss or None), `sends`
    and `recvs` (transfer.Transfer), the loss's distribution (last stage),
    the axis sets of its groups and its gradient bucket size."""

    def __init__(self, index, nodes, mesh, segments, inputs, parameters, forward,
                 loss_dist=None, sends=(), recvs=(), axis_sets=(), bucket_bytes=None):
        from .params import DEFAULT_BUCKET_BYTES
        self.index, self.nodes, self.mesh, self.segments = index, tuple(nodes), mesh, segments
        self.inputs, self.parameters, self.forward = inputs, parameters, forward
        self.loss_dist, self.sends, self.recvs = loss_dist, list(sends), list(recvs)
        self.axis_sets = list(axis_sets)
        self.bucket_bytes = DEFAULT_BUCKET_BYTES if bucket_bytes is None else bucket_bytes
        self.micro_batches = 1  # the pipeline's M (driver.batch reads it)
        self.ranks = []  # world ranks of the stage's devices (set by setup)


class Pipeline:
    """What a pipelined program declares: the plan's mesh (the whole cluster), the stages in
    order, the micro-batch count M and the schedule (1f1b or gpipe)."""

    def __init__(self, mesh, stages, micro_batches, schedule, fingerprint=""):
        if schedule not in SCHEDULES:
            raise WeftRuntimeError("unknown pipeline schedule '%s' (1f1b or gpipe)" % schedule)
        if not stages or micro_batches < 1:
            raise WeftRuntimeError("a pipeline needs a stage and a micro-batch")
        self.mesh, self.stages, self.micro_batches = mesh, list(stages), micro_batches
        self.schedule, self.fingerprint = schedule, fingerprint
        self.reporter = "the last stage's first rank"  # of the loss (driver's --help)
        per = mesh.devices_per_node
        seen = set()
        for st in self.stages:
            st.micro_batches = micro_batches
            if st.mesh.devices_per_node != per or st.mesh.num_nodes != len(st.nodes):
                raise WeftRuntimeError("stage %d: its mesh is not %d node(s) of the plan's mesh"
                                       % (st.index, len(st.nodes)))
            for n in st.nodes:
                if not 0 <= n < mesh.num_nodes or n in seen:
                    raise WeftRuntimeError("stage %d: node %d is outside the mesh or in "
                                           "another stage" % (st.index, n))
                seen.add(n)
            st.ranks = [n * per + i for n in st.nodes for i in range(per)]


def schedule_of(kind, num_stages, stage, micro_batches):
    """Stage `stage`'s order of ("F"|"B", micro-batch) steps: GPipe runs the
    M forwards, then the M backwards; 1F1B runs min(M, S - s) forwards, then
    alternates a backward and a forward, then the remaining backwards
    (docs/Pipeline.md, "Semantics")."""
    m = micro_batches
    if kind == "gpipe":
        return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
    warm = min(m, num_stages - stage)
    order = [("F", i) for i in range(warm)]
    f, b = warm, 0
    while f < m:
        order += [("B", b), ("F", f)]
        b, f = b + 1, f + 1
    return order + [("B", i) for i in range(b, m)]


def setup(pipe, world):
    """Every stage's groups (collective: every rank, in stage order); this
    rank's stage and its Runtime, or (None, None)."""
    mine = rt = None
    for st in pipe.stages:
        local = st.ranks.index(world.rank) if world.rank in st.ranks else None
        groups = Groups(st.mesh, local, world.timeout_s, global_ranks=st.ranks)
        everything = tuple(range(st.mesh.num_axes))
        try:
            groups.create([(a,) for a in everything] + st.axis_sets + [everything])
        except Exception as e:  # noqa: BLE001
            raise WeftRuntimeError(describe_distributed_failure(e, world.rank, world.timeout_s))
        if local is not None:
            mine = st
            rt = Runtime(st.mesh, st.segments, local, world.comm, groups, world.device,
                         world.timeout_s)
    return mine, rt


def save_params(pipe, world_rank, world_size, pieces, folder):
    """Gathers (name, box, shard) pieces of every rank on rank 0 and writes
    each stage's parameters whole."""
    everyone = [None] * world_size if world_rank == 0 else None
    dist.gather_object(pieces, everyone, dst=0)
    if world_rank != 0:
        return
    os.makedirs(folder, exist_ok=True)
    for st in pipe.stages:
        for spec in st.parameters:
            whole = None
            for rank_pieces in everyone:
                for name, (offsets, extents), shard in rank_pieces:
                    if name != spec.name:
                        continue
                    if whole is None:
                        whole = torch.zeros(spec.shape, dtype=shard.dtype)
                    view = whole
                    for d, (o, e) in enumerate(zip(offsets, extents)):
                        view = view.narrow(d, o, e)
                    view.copy_(shard)
            if whole is not None:
                npy.write(weight_file(folder, spec.name), whole)


def _test_flags(ap):
    ap.add_argument("--test-skip-send", metavar="S:M", help=argparse.SUPPRESS)


class StageRun:
    """One step of this rank's stage: the schedule's forwards and backwards."""

    def __init__(self, pipe, stage, rt, params, link):
        self.pipe, self.stage, self.rt, self.params, self.link = pipe, stage, rt, params, link
        self.view = ParamView(params, rt)
        self.last = stage.index == len(pipe.stages) - 1
        self.seed = loss_seed(stage.mesh, stage.loss_dist) if self.last else None
        self.order = schedule_of(pipe.schedule, len(pipe.stages), stage.index,
                                 pipe.micro_batches)

    def forward(self, m, whole):
        st = self.stage
        shards = []
        for spec, t in zip(st.inputs, whole):
            if self.pipe.micro_batches > 1:
                t = t.narrow(0, m * spec.shape[0], spec.shape[0])
            shards.append(self.rt.shard_of(t, spec.dist))
        received = [self.link.recv_value(k, m) for k in range(len(st.recvs))]
        with self.params.regather_scope():
            sends, loss = st.forward(self.rt, self.view, received, *shards)
        if len(sends) != len(st.sends):
            raise WeftRuntimeError("stage %d's forward gave %d send(s), the plan has %d"
                                   % (st.index, len(sends), len(st.sends)), code=4)
        for k, v in enumerate(sends):
            self.link.send_value(k, m, v)
        return received, sends, loss

    def backward(self, m, saved):
        received, sends, loss = saved
        if self.last:
            loss.backward(torch.full_like(loss, self.seed / self.pipe.micro_batches))
        else:
            outs, grads = [], []
            for k, v in enumerate(sends):
                g = self.link.recv_grad(k, m)
                if g is not None and v.requires_grad:
                    outs.append(v)
                    grads.append(g)
            if outs:
                torch.autograd.backward(outs, grads)
        for k, r in enumerate(received):
            self.link.send_grad(k, m, r)
        self.params.after_micro_batch()

    def step(self, whole, optimizer):
        """The schedule, then the sync and the update; this rank's loss of
        each micro-batch (last stage) or []."""
        saved, losses = {}, []
        for kind, m in self.order:
            if kind == "F":
                saved[m] = self.forward(m, whole)
                if self.last:
                    losses.append(saved[m][2].detach())
            else:
                self.backward(m, saved.pop(m))
        self.params.sync()
        self.params.step(optimizer)
        self.params.zero_grad()
        self.link.wait_sends()
        return losses


def train(pipe, argv):
    args = parse_args(argv, pipe, extra=_test_flags)
    skip = None
    if args.test_skip_send:
        try:
            s, m = (int(v) for v in args.test_skip_send.split(":"))
        except ValueError:
            raise WeftRuntimeError("--test-skip-send %s: give STAGE:MICRO_BATCH"
                                   % args.test_skip_send)
        skip = (s, m)
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    ops.set_float_dtype(dtype)
    world = Runtime.launch(pipe.mesh, {}, plan_id=pipe.fingerprint, timeout_s=args.timeout,
                           axis_groups=False)
    stage, rt = setup(pipe, world)
    pieces = []
    if stage is not None:
        params = make_params(stage, rt, args, dtype)
        opt = (optim.Adam(lr=args.lr, weight_decay=args.weight_decay)
               if args.optimizer == "adam"
               else optim.SGD(lr=args.lr, momentum=args.momentum,
                              weight_decay=args.weight_decay))
        run = StageRun(pipe, stage, rt, params,
                       Link(pipe.stages, stage.index, rt, world.timeout_s, skip))
        reporter = run.last and rt.rank == 0
        log = open(args.log, "w") if args.log and reporter else None
        if log:
            log.write("step,loss,seconds\n")
        profiler = None
        if args.profile and reporter:
            profiler = torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CPU])
            profiler.__enter__()
        for step in range(args.steps):
            whole = [t.to(rt.device) for t in batch(stage, args, step, dtype)]
            rt.dropout_seed = args.seed + step
            start = time.perf_counter()
            losses = run.step(whole, opt)
            if run.last:
                value = float(sum(loss_value(rt, v, stage.loss_dist) for v in losses)
                              / pipe.micro_batches)
            seconds = time.perf_counter() - start
            if reporter:
                print("loss %d %.9g" % (step, value), flush=True)
                if log:
                    log.write("%d,%.9g,%.6f\n" % (step, value, seconds))
                    log.flush()
        if profiler:
            profiler.__exit__(None, None, None)
            profiler.export_chrome_trace(args.profile)
        if log:
            log.close()
        pieces = [(spec.name, rt.box(spec.shape, spec.dist),
                   params[spec.name].tensor.detach().cpu()) for spec in stage.parameters]
    if args.save:
        save_params(pipe, world.rank, pipe.mesh.num_devices, pieces, args.save)
    world.close()


def main(pipe, argv=None):
    """Runs the program; every failure is one line and an exit code."""
    run_main(lambda: train(pipe, sys.argv[1:] if argv is None else argv))
