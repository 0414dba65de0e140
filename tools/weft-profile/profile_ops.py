"""weft-profile --programs: the ops of emitted programs, measured one by one.

Every rank of each program runs once through profile_record.py (two steps,
float32), which records the distinct local op calls (`weft_runtime.ops.<name>`
with this rank's shard shapes) under the cost model's key (weft::opKey).
Each distinct call is then replayed here in one process with the program's
own runtime: operands rebuilt from the record (floats uniform in [0.5, 1.5),
integers in the recorded range), the op timed forward, and its backward
timed on its own (`torch.autograd.backward` of the outputs).

One backward call has a fixed cost that the program pays once per
micro-batch, not per op: the engine's start. It is measured (`engine`) and
taken out of each op's backward, and the cost of one small node put back:

    backward(op) = backward call(op) - backward call(tiny op) + node(tiny op)

with node(tiny op) the slope of backward-call time over chains of 1 and 16
tiny ops. The same fixed costs give the op overhead the DB records for ops
without a sample: forward call(tiny op) + node(tiny op).

The optimizer's step is replayed the same way: the runtime's optimizer
(weft_runtime/optim.py) over pieces of the recorded sizes, one after the
other, as `ParamSet.step` runs them.

With --in-situ the programs run four steps (rank r pinned to core r mod
cores) and each op's forward is also timed as the program calls it; the
sample's forward is the median of those times after the first step (the
backward stays the replayed one: it cannot be timed per op inside a
program). The replay runs an op on fresh contiguous operands in a warm
cache: on the 2-core VM, the forward ops of the ViT's DP-EV program
summed 4.7 ms a step replayed and 7.6 ms in the program (a reshape of a
transposed tensor copies in the program and is a view in the replay; adds
and gelu took 6-16 times their replayed time, matmuls 1.1-4.5 times).
"""

import os
import pickle
import re
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def ranks_of(plan_dir):
    """The number of ranks of a plan folder's program (launch/local.sh)."""
    with open(os.path.join(plan_dir, "launch", "local.sh")) as f:
        m = re.search(r"(\d+) rank\(s\)", f.read())
    if not m:
        raise RuntimeError("%s/launch/local.sh names no rank count" % plan_dir)
    return int(m.group(1))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(n, argv_of, extra_env, timeout=600, wrap=None):
    """Runs `argv_of(r)` for the n ranks of a local gloo world and returns
    their exit codes. No LOCAL_* or GROUP_RANK: the plan may have several
    nodes (one device each on a heterogeneous cluster); the runtime checks
    them only when they are set. `wrap(r, argv)` may prefix a rank's
    command (e.g. to enter a cgroup); by default rank r is pinned to core
    r mod cores."""
    port = free_port()
    cores = sorted(os.sched_getaffinity(0))
    procs = []
    for r in range(n):
        env = {k: v for k, v in os.environ.items()
               if k not in ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK")}
        env.update(WORLD_SIZE=str(n), RANK=str(r), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                   CUDA_VISIBLE_DEVICES="", **extra_env)
        argv = argv_of(r)
        if wrap:
            argv = wrap(r, argv)
        elif len(cores) > 1:
            argv = ["taskset", "-c", str(cores[r % len(cores)])] + argv
        procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL))
    try:
        return [p.wait(timeout=timeout) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def record_plan(plan_dir, work, python, timeout=600, steps=2):
    """Runs `plan_dir`'s program on its ranks for `steps` steps (rank r
    pinned to core r mod cores); returns {key: call}, a call's "seconds"
    the forward times of its calls after the first step, over all ranks."""
    program = os.path.join(plan_dir, "torch", "program.py")
    n = ranks_of(plan_dir)
    out = os.path.join(work, "calls-%d.pkl" % abs(hash(plan_dir)))
    failed = run_ranks(n, lambda r: [
        python, os.path.join(HERE, "profile_record.py"), out, program,
        "--steps", str(steps), "--dtype", "float32"], {}, timeout)
    if any(failed):
        raise RuntimeError("recording %s failed (exit %s)" % (program, failed))
    calls = {}
    for r in range(n):
        with open("%s.%d" % (out, r), "rb") as f:
            found = pickle.load(f)
        os.remove("%s.%d" % (out, r))
        for key, call in found.items():
            times = call.get("seconds", [])
            times = times[len(times) // steps:]
            if key in calls:
                calls[key].setdefault("seconds", []).extend(times)
            else:
                calls[key] = dict(call, seconds=times) if "seconds" in call else call
    return calls


def runtime_ops(plan_dirs):
    """`weft_runtime.ops` of the first program (all carry the same runtime)."""
    sys.path.insert(0, os.path.join(plan_dirs[0], "torch"))
    from weft_runtime import ops
    return ops


def make_args(torch, call):
    args, leaves = [], []
    for d in call["args"]:
        if d[0] == "value":
            args.append(d[1])
            continue
        _, shape, dtype, requires_grad, lo, hi = d
        dt = getattr(torch, dtype)
        if dt.is_floating_point:
            t = torch.rand(shape, dtype=dt) + 0.5
        elif dt == torch.bool:
            t = torch.rand(shape) < 0.5
        elif lo is not None:
            t = torch.randint(lo, hi + 1, shape, dtype=dt)
        else:
            t = torch.zeros(shape, dtype=dt)
        if requires_grad and dt.is_floating_point:
            t.requires_grad_(True)
            leaves.append(t)
        args.append(t)
    return args, leaves


def median_time(fn, min_seconds, max_reps, prepare=None):
    """Median seconds of fn() (prepare() untimed before each), warm-up 2."""
    samples = []
    start = time.perf_counter()
    reps = 0
    while reps < 5 or (time.perf_counter() - start < min_seconds and reps < max_reps):
        state = prepare() if prepare else None
        t0 = time.perf_counter()
        fn(state)
        t = time.perf_counter() - t0
        reps += 1
        if reps > 2:
            samples.append(t)
    return statistics.median(samples)


def time_call(torch, fn, args, kwargs, leaves, min_seconds, max_reps):
    """(forward seconds, backward-call seconds or 0 without gradients)."""
    def forward(_):
        return fn(*args, **kwargs)
    fwd = median_time(forward, min_seconds, max_reps)
    if not leaves:
        return fwd, 0.0

    def prepare():
        for t in leaves:
            t.grad = None
        out = fn(*args, **kwargs)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
                if isinstance(o, torch.Tensor) and o.grad_fn is not None]
        return outs, [torch.ones_like(o) for o in outs]

    def backward(state):
        outs, grads = state
        if outs:
            torch.autograd.backward(outs, grads)
    return fwd, median_time(backward, min_seconds, max_reps, prepare)


def time_optimizer(torch, plan_dirs, call, min_seconds, max_reps):
    """One step of the runtime's optimizer over the recorded pieces (the
    program's defaults: Adam lr 1e-3, or SGD)."""
    from weft_runtime import optim
    opt = optim.Adam() if call["kind"] == "adam" else optim.SGD(
        1e-3, momentum=0.9 if call["kind"] == "momentum" else 0.0)
    pieces = [torch.rand(n) for n in call["pieces"]]
    grads = [torch.rand(n) for n in call["pieces"]]
    states = [opt.init_state(p) for p in pieces]

    def step(_):
        for p, g, st in zip(pieces, grads, states):
            opt.update(p, g, st)
    return median_time(step, min_seconds, max_reps)


def fixed_costs(torch, ops, min_seconds, max_reps):
    """(forward call, backward call, backward node) of a one-element op."""
    x = torch.ones(1, requires_grad=True)

    def chain(k):
        def fn(y):
            for _ in range(k):
                y = ops.relu(y)
            return y
        return fn
    fwd, call1 = time_call(torch, chain(1), [x], {}, [x], min_seconds * 4, max_reps * 4)
    _, call16 = time_call(torch, chain(16), [x], {}, [x], min_seconds * 4, max_reps * 4)
    node = max(0.0, (call16 - call1) / 15)
    return fwd, call1, node


def profile_programs(torch, plan_dirs, args, log):
    """Op samples (DB entries) of every call the programs make."""
    import tempfile
    work = tempfile.mkdtemp(prefix="weft-profile-")
    calls = {}
    in_situ = getattr(args, "in_situ", False)
    for d in plan_dirs:
        try:
            found = record_plan(d, work, args.python, steps=4 if in_situ else 2)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            log("skipped %s: %s" % (d, e))  # a program that does not run
            continue
        log("recorded %d distinct op calls of %s" % (len(found), d))
        calls.update(found)
    ops = runtime_ops(plan_dirs)
    fwd_fixed, bwd_call, node = fixed_costs(torch, ops, args.min_seconds, args.max_reps)
    log("fixed costs: forward call %.1f us, backward call %.1f us, "
        "backward node %.1f us" % (1e6 * fwd_fixed, 1e6 * bwd_call, 1e6 * node))
    samples = []
    for key in sorted(calls):
        call = calls[key]
        if call["op"] == "optimizer":
            seconds = time_optimizer(torch, plan_dirs, call, args.min_seconds, args.max_reps)
            samples.append({"device": args.device, "dtype": "fp32", "key": key,
                            "forward_seconds": seconds, "backward_seconds": 0.0})
            if args.verbose:
                log("%-60s      %8.1f us" % (key[:60], 1e6 * seconds))
            continue
        fn = getattr(ops, call["op"])
        try:
            a, leaves = make_args(torch, call)
            fwd, bwd = time_call(torch, fn, a, call["kwargs"], leaves,
                                 args.min_seconds, args.max_reps)
        except Exception as e:  # noqa: BLE001 - a replay the record cannot rebuild
            log("skipped %s: %s" % (key, str(e).splitlines()[0] if str(e) else e))
            continue
        backward = max(node, bwd - bwd_call + node) if bwd else 0.0
        if in_situ and call.get("seconds"):
            # The forward as the program runs it (operands as they come,
            # out of cache, fresh allocations).
            fwd = statistics.median(call["seconds"])
        samples.append({"device": args.device, "dtype": "fp32", "key": key,
                        "forward_seconds": fwd, "backward_seconds": backward})
        if args.verbose:
            log("%-60s fwd %8.1f us  bwd %8.1f us" % (key[:60], 1e6 * fwd, 1e6 * backward))
    return samples, fwd_fixed + node
