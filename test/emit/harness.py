"""A pytest-free runner for the runtime's multi-process tests.

A test script lists its cases per world size: `cases(rt)` returns
[(name, fn)], where fn(rt) runs on every rank of a world launched through
weft_runtime.runtime.Runtime.launch (gloo, 127.0.0.1, a free port from
ports.py) and raises on a mismatch. `run(cases, worlds)` spawns each world with
torch.multiprocessing.spawn, gathers every rank's verdict per case, prints
one line per case and the closing line "N passed, M failed", and returns
the exit code (1 when anything failed). close() and check() record a
mismatch and let the case run on (every rank makes the same calls); a case
that raises on any rank stops its world (the ranks may no longer be in
step) and the cases after it count as failed. A world that does not finish within its deadline is
killed and counted as failed: a test never hangs. Before the kill, every
live rank prints its Python stacks on stderr (faulthandler on SIGUSR1) and
the line names the stage each rank had reached (launch, a case's name or
the end), so a hang shows where it waits.

For looking into a script: WEFT_TEST_WORLDS=2,3 picks the world sizes,
WEFT_TEST_TIMES=1 prints each case's wall time on stderr.
"""

import faulthandler
import os
import signal
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

from ports import free_port  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from weft_runtime.mesh import Mesh  # noqa: E402
from weft_runtime.runtime import Runtime  # noqa: E402

F64 = torch.float64


# Mismatches found by close() and check() in the running case. They are
# recorded, not raised, so the case runs to its end and every rank makes the
# same collective calls; the case fails when any rank recorded one.
_MISMATCHES = []


def _where():
    import inspect
    for f in inspect.stack()[2:]:
        if os.path.basename(f.filename) != "harness.py":
            return "%s:%d" % (os.path.basename(f.filename), f.lineno)
    return "?"


def close(got, want, what, rtol=1e-11, atol=1e-12):
    """Records a mismatch unless got ≈ want (shapes equal, compared in float64)."""
    got = got.detach().to(F64) if isinstance(got, torch.Tensor) else torch.tensor(got, dtype=F64)
    want = want.detach().to(F64) if isinstance(want, torch.Tensor) else torch.tensor(want, dtype=F64)
    if tuple(got.shape) != tuple(want.shape):
        _MISMATCHES.append("%s: shape %s, expected %s (%s)" % (what, tuple(got.shape),
                                                              tuple(want.shape), _where()))
        return False
    if got.numel() == 0:
        return True
    diff = (got - want).abs()
    bound = atol + rtol * want.abs()
    if not bool(torch.all(diff <= bound)):
        i = int(torch.argmax(diff - bound))
        _MISMATCHES.append("%s: differs by %.3g at flat index %d (got %.17g, expected %.17g) (%s)"
                           % (what, float(diff.reshape(-1)[i]), i, float(got.reshape(-1)[i]),
                              float(want.reshape(-1)[i]), _where()))
        return False
    return True


def check(cond, what):
    """Records `what` as a mismatch unless cond holds."""
    if not cond:
        _MISMATCHES.append("%s (%s)" % (what, _where()))
    return bool(cond)


def _worker(rank, world, port, script, cases_name, queue, timeout_s, stages):
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    stages[rank] = "launch"
    os.environ.update({"WORLD_SIZE": str(world), "RANK": str(rank),
                       "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    torch.set_num_threads(1)
    module = _load(script)
    rt = Runtime.launch(Mesh(world), {}, plan_id=script, backend="gloo", timeout_s=timeout_s)
    stopped = None
    for name, fn in getattr(module, cases_name)(rt):
        stages[rank] = name
        if stopped is not None:
            if rank == 0:
                queue.put((name, "not run: %s" % stopped))
            continue
        err = raised = None
        del _MISMATCHES[:]
        t0 = time.time()
        try:
            fn(rt)
        except Exception as e:  # noqa: BLE001 - reported per case
            last = traceback.extract_tb(e.__traceback__)[-1]
            raised = err = "rank %d: %s: %s (%s:%d)" % (
                rank, type(e).__name__, str(e).splitlines()[0] if str(e) else "",
                os.path.basename(last.filename), last.lineno)
        if os.environ.get("WEFT_TEST_TIMES") and rank == 0:
            sys.stderr.write("  %.2f s  %s\n" % (time.time() - t0, name))
        if err is None and _MISMATCHES:
            err = "rank %d: %s" % (rank, _MISMATCHES[0]) + (
                " (and %d more)" % (len(_MISMATCHES) - 1) if len(_MISMATCHES) > 1 else "")
        verdicts = [None] * world
        dist.all_gather_object(verdicts, (err, raised is not None))
        errors = [v[0] for v in verdicts if v[0]]
        if rank == 0:
            queue.put((name, "; ".join(errors) if errors else None))
        if any(v[1] for v in verdicts):
            stopped = "an earlier case raised"
    stages[rank] = "the end"
    dist.barrier()
    rt.close()
    # Skip the interpreter's teardown, as weft_runtime.main does: after the
    # process group is destroyed it can still abort ("terminate called
    # without an active exception"; docs/Emit.md).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


class _Stages:
    """Each rank's stage as text, in shared memory (a fixed 120 bytes a rank)."""

    def __init__(self, array, world):
        self.array, self.width = array, len(array) // world

    def __getitem__(self, rank):
        raw = self.array[rank * self.width:(rank + 1) * self.width]
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")

    def __setitem__(self, rank, text):
        raw = text.encode("utf-8")[:self.width - 1]
        raw += b"\0" * (self.width - len(raw))
        self.array[rank * self.width:(rank + 1) * self.width] = raw


def _load(script):
    import importlib.util
    spec = importlib.util.spec_from_file_location("emit_test_script", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(script, worlds, cases_name="cases", timeout_s=30, deadline_s=240):
    """Runs `cases_name` of `script` on each world size; returns the exit code."""
    passed = failed = 0
    if os.environ.get("WEFT_TEST_WORLDS"):
        worlds = [int(w) for w in os.environ["WEFT_TEST_WORLDS"].split(",")]
    ctx = mp.get_context("spawn")
    for world in worlds:
        queue = ctx.SimpleQueue()
        # Each rank's stage: "" until its process runs, then "launch", the
        # running case's name, "the end".
        stages = ctx.Array("c", 120 * world, lock=False)
        start = time.time()
        pc = mp.spawn(_worker, args=(world, free_port(), os.path.abspath(script), cases_name,
                                     queue, timeout_s, _Stages(stages, world)),
                      nprocs=world, join=False)
        problem = None
        results = []
        try:
            while not pc.join(timeout=1):
                while not queue.empty():
                    results.append(queue.get())
                if time.time() - start > deadline_s:
                    where = _Stages(stages, world)
                    problem = "did not finish within %d s; killed (ranks at: %s)" % (
                        deadline_s, "; ".join("%d %s" % (r, where[r] or "not started")
                                              for r in range(world)))
                    for p in pc.processes:
                        if p.is_alive():
                            os.kill(p.pid, signal.SIGUSR1)  # stacks on stderr
                    time.sleep(2)
                    for p in pc.processes:
                        if p.is_alive():
                            p.kill()
                    break
        except Exception as e:  # noqa: BLE001 - a crashed rank
            problem = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        while not queue.empty():
            results.append(queue.get())
        for name, err in results:
            if err is None:
                passed += 1
                print("PASS %s [%d ranks]" % (name, world))
            else:
                failed += 1
                print("FAIL %s [%d ranks]: %s" % (name, world, err))
        if problem:
            failed += 1
            print("FAIL world of %d ranks: %s" % (world, problem))
        print("   (%d ranks: %.1f s)" % (world, time.time() - start))
        sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0
