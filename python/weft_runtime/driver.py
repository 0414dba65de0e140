"""The main of an emitted program: flags, launch, values, steps, outputs.

An emitted program (weft-translate --spmd-to-torch) declares its plan —
mesh, segments, inputs, parameters, the forward function of one
micro-batch — as a `Plan` and calls `main(PLAN)`. This module does the
rest, the same for every plan:

1. flags (`--help`): steps, data, seed, dtype, optimizer, outputs;
2. `Runtime.launch` (launch checks, process groups, timeouts);
3. parameters: `weights/<name>.npy` beside the program (a model imported
   --with-weights) or `--weights DIR`, else lib/Exec's seeded values
   (docs/Exec.md, "Values of leaves": N(0, 0.02²) for weights, ones for
   normalisation scales, zeros otherwise), each rank keeping its shard;
4. per step: the global batch (`--data DIR` .npy files, else seeded),
   sliced into micro-batches and sharded per input, `train_step`, and on
   rank 0 the line `loss <step> <value>` (`--log FILE`: also as CSV
   `step,loss,seconds`, the wall time of the step's training on rank 0);
5. `--save DIR`: the whole parameters after the last step, on rank 0;
   `--profile FILE`: a torch.profiler trace of the steps (Chrome format).
"""

import argparse
import base64
import math
import os
import sys
import time

import torch
import torch.distributed as dist

from . import npy, ops, optim
from .errors import WeftRuntimeError
from .errors import main as run_main
from .keyed_random import stream_of, uniform01
from .mesh import id_axes, parse_dist
from .params import DEFAULT_BUCKET_BYTES, Param, ParamSet
from .runtime import Runtime
from .step import loss_seed, loss_value, train_step

FLOATS = ("f32", "f16", "bf16", "f64")
WEIGHT_STD = 0.02  # lib/Exec/Inputs.cpp's kWeightStd


class Constant:
    """A constant of the forward pass: `fill` (a splat) or `data` (base64 of
    little-endian float32 or int64 words); floats take the run's dtype."""

    def __init__(self, type_, shape, data=None, fill=None):
        self.type, self.shape, self.data, self.fill = type_, tuple(shape), data, fill
        self._cache = {}

    def value(self, device=None):
        """The whole tensor, on `device` (the rank's: a constant meets tensors
        there)."""
        dtype = ops.FLOAT if self.type in FLOATS else (
            torch.bool if self.type == "i1" else torch.int64)
        key = (dtype, str(device))
        if key not in self._cache:
            if self.data is None:
                t = torch.full(self.shape, self.fill, dtype=dtype)
            else:
                word = torch.float32 if self.type in FLOATS else torch.int64
                raw = bytearray(base64.b64decode(self.data))
                t = (torch.frombuffer(raw, dtype=word) if raw else torch.empty(0, dtype=word))
                t = t.reshape(self.shape).to(dtype)
            self._cache[key] = t if device is None else t.to(device)
        return self._cache[key]


class InputSpec:
    """A data input: global shape of one micro-batch, element type, dist."""

    def __init__(self, name, shape, type_, dist_, bound=2):
        self.name, self.shape, self.type, self.dist, self.bound = (
            name, tuple(shape), type_, dist_, bound)


class ParamSpec:
    """A parameter: global shape, type, dist, strategy, seeded init role."""

    def __init__(self, name, shape, type_, dist_, strategy, init="normal"):
        self.name, self.shape, self.type, self.dist, self.strategy, self.init = (
            name, tuple(shape), type_, dist_, strategy, init)


class Plan:
    """What program.py declares. `bucket_bytes` is the gradient sync's
    bucket size (the plan's spmd.gradient_bucket_bytes; params.ParamSet;
    None: DEFAULT_BUCKET_BYTES)."""

    def __init__(self, mesh, segments, inputs, parameters, forward, loss_dist,
                 micro_batches=1, fingerprint="", axis_sets=(),
                 bucket_bytes=DEFAULT_BUCKET_BYTES):
        self.mesh, self.segments, self.inputs, self.parameters = (
            mesh, segments, inputs, parameters)
        self.forward, self.loss_dist, self.micro_batches = forward, loss_dist, micro_batches
        self.fingerprint, self.axis_sets = fingerprint, list(axis_sets)
        self.bucket_bytes = DEFAULT_BUCKET_BYTES if bucket_bytes is None else bucket_bytes


# --- values ---------------------------------------------------------------------------

def seeded_normal(shape, seed, name, std, dtype):
    """lib/Exec's fillNormal: Box-Muller pairs of counter-based uniforms
    keyed by (seed, stream of `name`), scaled by std, rounded to float32."""
    n = math.prod(shape)
    stream = stream_of(name)
    k = torch.arange((n + 1) // 2, dtype=torch.int64)
    u1 = 1.0 - uniform01(seed, stream, 2 * k)
    u2 = uniform01(seed, stream, 2 * k + 1)
    r, theta = torch.sqrt(-2.0 * torch.log(u1)), 2.0 * math.pi * u2
    pairs = torch.stack([r * torch.cos(theta), r * torch.sin(theta)], 1).reshape(-1)[:n]
    return (std * pairs).to(torch.float32).to(dtype).reshape(shape)


def seeded_integers(shape, seed, name, bound):
    n = math.prod(shape)
    u = uniform01(seed, stream_of(name), torch.arange(n, dtype=torch.int64))
    return (u * float(bound)).to(torch.int64).reshape(shape)


def weight_file(folder, name):
    """weights/<name>.npy with % and / escaped (lib/Emit's weightFileName)."""
    return os.path.join(folder, name.replace("%", "%25").replace("/", "%2F") + ".npy")


def initial_value(spec, args, dtype):
    """The whole initial tensor of a parameter."""
    if args.weights:
        path = weight_file(args.weights, spec.name)
        if os.path.exists(path):
            t = npy.read(path)
            if tuple(t.shape) != spec.shape:
                raise WeftRuntimeError("'%s' has shape %s, the plan's parameter '%s' %s"
                                       % (path, tuple(t.shape), spec.name, spec.shape))
            return t.to(dtype if spec.type in FLOATS else torch.int64)
    if spec.type not in FLOATS:
        return torch.zeros(spec.shape, dtype=torch.int64)
    if spec.init == "normal":
        return seeded_normal(spec.shape, args.seed, "parameter:" + spec.name, WEIGHT_STD, dtype)
    return torch.full(spec.shape, 1.0 if spec.init == "ones" else 0.0, dtype=dtype)


def global_shape(spec, micro):
    return (spec.shape[0] * micro,) + spec.shape[1:] if spec.shape else spec.shape


def batch(plan, args, step, dtype):
    """The step's global batch: one whole tensor per input."""
    out = []
    for spec in plan.inputs:
        shape = global_shape(spec, plan.micro_batches)
        t = None
        if args.data:
            for path in (os.path.join(args.data, str(step), spec.name + ".npy"),
                         os.path.join(args.data, spec.name + ".npy")):
                if os.path.exists(path):
                    t = npy.read(path)
                    break
            if t is None:
                raise WeftRuntimeError("--data %s has neither %s/%s.npy nor %s.npy"
                                       % (args.data, step, spec.name, spec.name))
            if tuple(t.shape) != shape:
                raise WeftRuntimeError("input '%s' of step %d has shape %s, the plan's "
                                       "global batch is %s" % (spec.name, step,
                                                               tuple(t.shape), shape))
        elif spec.type in FLOATS:
            t = seeded_normal(shape, args.seed + step, "input:" + spec.name, 1.0, dtype)
        else:
            t = seeded_integers(shape, args.seed + step, "input:" + spec.name,
                                2 if spec.type == "i1" else spec.bound)
        if spec.type in FLOATS:
            t = t.to(dtype)
        elif spec.type == "i1":
            t = t.to(torch.bool)
        else:
            t = t.to(torch.int64)
        out.append(t)
    return out


class ParamView:
    """What the forward function calls `p`: stored shards by name, and the
    ZeRO-3 gather of one."""

    def __init__(self, params, rt):
        self.params, self.rt = params, rt

    def __getitem__(self, name):
        return self.params[name].tensor

    def gathered(self, name, shape, dist_, axes, mode=None):
        return self.params[name].gathered(self.rt, shape, dist_, axes, mode=mode)


# --- the run ---------------------------------------------------------------------------

def parse_args(argv, plan, extra=None):
    """The program's flags; `extra(parser)` may add more (pipeline.py)."""
    here = os.path.dirname(os.path.abspath(sys.modules["__main__"].__file__))
    # Who reports the loss: rank 0, or a pipeline's last stage's first rank.
    who = getattr(plan, "reporter", "rank 0")
    ap = argparse.ArgumentParser(
        description="Trains with a Weft plan on %d devices: run every rank under torchrun "
                    "(../launch/). %s prints 'loss <step> <value>' after every step."
                    % (plan.mesh.num_devices, who[0].upper() + who[1:]))
    ap.add_argument("--steps", type=int, default=1, help="training steps (default 1)")
    ap.add_argument("--data", metavar="DIR",
                    help="batches: DIR/<step>/<input>.npy, else DIR/<input>.npy every step; "
                         "each the global batch (default: seeded random data)")
    ap.add_argument("--seed", type=int, default=0,
                    help="seed of random parameters and data (step s draws data with seed+s) "
                         "and of dropout masks")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                    help="float type of parameters and compute (default float32)")
    ap.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    ap.add_argument("--lr", type=float, default=1e-3, help="learning rate (default 1e-3)")
    ap.add_argument("--momentum", type=float, default=0.0, help="SGD momentum")
    ap.add_argument("--weight-decay", type=float, default=0.0)
    default_weights = os.path.join(here, "weights")
    ap.add_argument("--weights", metavar="DIR",
                    default=default_weights if os.path.isdir(default_weights) else None,
                    help="initial parameters as DIR/<name>.npy (default: weights/ beside the "
                         "program when it exists; others seeded)")
    ap.add_argument("--log", metavar="FILE",
                    help="also write step,loss,seconds as CSV (" + who + "; seconds: the step's "
                         "wall time without loading data)")
    ap.add_argument("--save", metavar="DIR",
                    help="write the whole parameters after the last step as DIR/<name>.npy")
    ap.add_argument("--profile", metavar="FILE",
                    help="a torch.profiler trace of the steps in Chrome format (%s)" % who)
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds any wait may take (default $WEFT_RUNTIME_TIMEOUT_S or 300)")
    if extra:
        extra(ap)
    args = ap.parse_args(argv)
    if args.steps < 0:
        raise WeftRuntimeError("--steps %d: give a count >= 0" % args.steps)
    for flag, value in (("--lr", args.lr), ("--momentum", args.momentum),
                        ("--weight-decay", args.weight_decay)):
        if not value >= 0:  # also refuses nan
            raise WeftRuntimeError("%s %g: give a value >= 0" % (flag, value))
    if args.timeout is not None and not args.timeout > 0:
        raise WeftRuntimeError("--timeout %g: give seconds > 0" % args.timeout)
    return args


def make_params(plan, rt, args, dtype):
    params = ParamSet(plan.bucket_bytes)
    for spec in plan.parameters:
        axes = id_axes(parse_dist(spec.dist))
        group = rt.group(axes) if axes else None
        shard = rt.shard_of(initial_value(spec, args, dtype), spec.dist).to(rt.device)
        params.add(Param(spec.name, shard, spec.strategy, group, rt.comm))
    return params


def save_params(plan, rt, params, folder):
    """Gathers every parameter's shards on rank 0 and writes the whole."""
    mine = [(spec.name, rt.box(spec.shape, spec.dist),
             params[spec.name].tensor.detach().cpu()) for spec in plan.parameters]
    everyone = [None] * plan.mesh.num_devices if rt.rank == 0 else None
    dist.gather_object(mine, everyone, dst=0)
    if rt.rank != 0:
        return
    os.makedirs(folder, exist_ok=True)
    for i, spec in enumerate(plan.parameters):
        whole = torch.zeros(spec.shape, dtype=mine[i][2].dtype)
        for pieces in everyone:
            _, (offsets, extents), shard = pieces[i]
            view = whole
            for d, (o, e) in enumerate(zip(offsets, extents)):
                view = view.narrow(d, o, e)
            view.copy_(shard)
        npy.write(weight_file(folder, spec.name), whole)


def train(plan, argv):
    args = parse_args(argv, plan)
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    ops.set_float_dtype(dtype)
    rt = Runtime.launch(plan.mesh, plan.segments, plan_id=plan.fingerprint,
                        timeout_s=args.timeout, axis_sets=plan.axis_sets)
    params = make_params(plan, rt, args, dtype)
    view = ParamView(params, rt)
    opt = (optim.Adam(lr=args.lr, weight_decay=args.weight_decay) if args.optimizer == "adam"
           else optim.SGD(lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay))
    seed = loss_seed(plan.mesh, plan.loss_dist)
    log = open(args.log, "w") if args.log and rt.rank == 0 else None
    if log:
        log.write("step,loss,seconds\n")
    profiler = None
    if args.profile:
        profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
        profiler.__enter__()
    m = plan.micro_batches
    for step in range(args.steps):
        whole = [t.to(rt.device) for t in batch(plan, args, step, dtype)]
        rt.dropout_seed = args.seed + step

        def forward(k):
            shards = []
            for spec, t in zip(plan.inputs, whole):
                if m > 1:
                    t = t.narrow(0, k * spec.shape[0], spec.shape[0])
                shards.append(rt.shard_of(t, spec.dist))
            return plan.forward(rt, view, *shards)

        start = time.perf_counter()
        losses = train_step(forward, params, opt, m, seed)
        value = float(sum(loss_value(rt, v, plan.loss_dist) for v in losses) / m)
        seconds = time.perf_counter() - start
        if rt.rank == 0:
            print("loss %d %.9g" % (step, value), flush=True)
            if log:
                log.write("%d,%.9g,%.6f\n" % (step, value, seconds))
                log.flush()
    if profiler:
        profiler.__exit__(None, None, None)
        if rt.rank == 0:
            profiler.export_chrome_trace(args.profile)
    if log:
        log.close()
    if args.save:
        save_params(plan, rt, params, args.save)
    rt.close()


def main(plan, argv=None):
    """Runs the program; every failure is one line and an exit code."""
    run_main(lambda: train(plan, sys.argv[1:] if argv is None else argv))
