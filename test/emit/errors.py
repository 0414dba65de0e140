"""Launches of test/emit/sample_program.py (a 1x2 plan) that must end with
exit 1 and one line `weft-runtime: error: ...` on stderr, and never hang:
a wrong WORLD_SIZE, a RANK outside the plan, LOCAL_RANK / LOCAL_WORLD_SIZE /
GROUP_RANK that disagree with the mesh, a program emitted for another
rank, no WORLD_SIZE, a missing peer (the rendezvous times out), a peer
that leaves after the launch (the next collective fails), a peer that
stalls (the next collective times out), and ranks running different plans. And the launch that must work: both ranks
train and agree with the dense single-process losses.

Every launch runs at once as its own processes on 127.0.0.1 (a port of
its own, ports.py), with the runtime's timeout at 5 s and a 300 s limit
per process after which it counts as hung: SIGABRT makes it print its
Python stacks (PYTHONFAULTHANDLER), and the failure names where it waited.

    python test/emit/errors.py        # prints "N passed, M failed"
"""

import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ports import free_ports  # noqa: E402
PROGRAM = os.path.join(HERE, "sample_program.py")
# A process still running after LIMIT_S counts as hung. Not a speed bound:
# under a load average of 13 on 2 cores, importing torch took over 12 s,
# and the longest cases (the stall, the training) once ran past 120 s.
LIMIT_S = 300


def launch(ranks, world, port, extra=None, per_rank=None):
    """Starts the sample program for each rank in `ranks` of a `world`."""
    procs = []
    for r in ranks:
        # PYTHONFAULTHANDLER: a hung process's SIGABRT prints its stacks.
        env = dict(os.environ, WORLD_SIZE=str(world), RANK=str(r), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), WEFT_RUNTIME_TIMEOUT_S="5", PYTHONUNBUFFERED="1",
                   PYTHONFAULTHANDLER="1")
        env.update(extra or {})
        env.update((per_rank or {}).get(r, {}))
        for k, v in list(env.items()):
            if v is None:
                del env[k]
        procs.append(subprocess.Popen([sys.executable, PROGRAM], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    return procs


# (name, launch arguments, per rank: expected exit code and a regex of the
# one stderr line; None = exit 0 and no error line)
ERR = r"^weft-runtime: error: "
LONG = {"WEFT_RUNTIME_TIMEOUT_S": "120"}  # where no timeout is meant to fire
CASES = [
    ("WORLD_SIZE other than the plan's", ([0], 3),
     {0: (1, ERR + r"the plan runs on 2 devices \(mesh 1x2: 1 node\(s\) of 2\), but WORLD_SIZE is 3$")}),
    ("a program emitted for another rank", ([1], 2, {"WEFT_SAMPLE_EMITTED_FOR": "0"}),
     {0: (1, ERR + r"this program was emitted for rank 0 but was launched as rank 1$")}),
    ("a missing peer", ([0], 2),
     {0: (1, ERR + r"rank 0: the 2 ranks did not all join within 5 s at 127\.0\.0\.1:\d+")}),
    ("a peer that leaves after the launch", ([0, 1], 2, LONG, {1: {"WEFT_SAMPLE_LEAVE": "1"}}),
     {0: (1, ERR + r"rank 0: (a peer did not answer within|a peer closed its connection)"),
      1: None}),
    ("a peer that stalls after the launch", ([0, 1], 2, {"WEFT_RUNTIME_TIMEOUT_S": "8"},
                                             {1: {"WEFT_SAMPLE_STALL": "1"}}),
     {0: (1, ERR + r"rank 0: a peer did not answer within the timeout of 8\.0 s \(a missing or "
                   r"stopped rank\): .*[Tt]imed out"),
      1: (1, ERR + r"rank 1: (a peer closed its connection|a peer did not answer)")}),
    ("ranks running different plans", ([0, 1], 2, LONG, {1: {"WEFT_SAMPLE_PLAN": "another"}}),
     {0: (1, ERR + r"rank 0: rank 1 runs another plan than rank 0"),
      1: (1, ERR + r"rank 1: rank 1 runs another plan than rank 0")}),
    ("a launch that matches the plan", ([0, 1], 2, dict(LONG, LOCAL_WORLD_SIZE="2", GROUP_RANK="0"),
                                         {0: {"LOCAL_RANK": "0"}, 1: {"LOCAL_RANK": "1"}}),
     {0: None, 1: None}),
]

# Refusals of the launcher's environment, checked in this process
# (runtime.check_launch; the two launches above show the exit and the line).
ENV_CASES = [
    ("RANK outside the plan", {"WORLD_SIZE": "2", "RANK": "5"},
     r"^RANK is 5, outside the plan's 2 devices$"),
    ("no WORLD_SIZE", {"RANK": "0"}, r"^WORLD_SIZE is not set"),
    ("RANK not an integer", {"WORLD_SIZE": "2", "RANK": "one"}, r"^RANK is 'one', not an integer$"),
    ("LOCAL_RANK against the mesh", {"WORLD_SIZE": "2", "RANK": "1", "LOCAL_RANK": "0"},
     r"^rank 1 is local device 1 of node 0 in the plan, but LOCAL_RANK is 0$"),
    ("LOCAL_WORLD_SIZE against the mesh", {"WORLD_SIZE": "2", "RANK": "0", "LOCAL_WORLD_SIZE": "1"},
     r"^LOCAL_WORLD_SIZE is 1, the plan has 2 devices per node$"),
    ("GROUP_RANK against the mesh", {"WORLD_SIZE": "2", "RANK": "1", "GROUP_RANK": "1"},
     r"^rank 1 is on node 0 in the plan, but GROUP_RANK \(the node's rank\) is 1$"),
]


def env_problems():
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    from weft_runtime.errors import WeftRuntimeError
    from weft_runtime.mesh import Mesh
    from weft_runtime.runtime import check_launch
    out = []
    for name, env, pattern in ENV_CASES:
        try:
            check_launch(Mesh(1, [2]), env)
            out.append((name, "accepted"))
        except WeftRuntimeError as e:
            ok = e.code == 1 and re.search(pattern, str(e))
            out.append((name, None if ok else "exit %d, %r" % (e.code, str(e))))
    try:
        check_launch(Mesh(1, [2]), {"WORLD_SIZE": "2", "RANK": "1", "LOCAL_RANK": "1",
                                    "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "0"})
        out.append(("a matching environment", None))
    except WeftRuntimeError as e:
        out.append(("a matching environment", "refused: %s" % e))
    return out


def judge(name, expect, results):
    """Problems of one case (empty: it passed)."""
    problems = []
    for i, (code, out, err) in enumerate(results):
        want = expect[i]
        lines = [l for l in err.splitlines() if l.strip()]
        if code is None:
            where = [l.strip() for l in lines if l.strip().startswith("File ")][:4]
            problems.append("process %d hung (killed after %d s; where it waited: %s)"
                            % (i, LIMIT_S, " < ".join(where) or "no stacks"))
            continue
        if want is None:
            if code != 0 or any(l.startswith("weft-runtime: error") for l in lines):
                problems.append("process %d: exit %s, stderr %r" % (i, code, lines[-3:]))
            continue
        wcode, pattern = want
        errors = [l for l in lines if l.startswith("weft-runtime:")]
        if code != wcode:
            problems.append("process %d: exit %s, expected %d (stderr %r)" % (i, code, wcode, lines[-3:]))
        elif len(errors) != 1 or not re.search(pattern, errors[0]):
            problems.append("process %d: stderr %r does not match %r" % (i, lines[-3:], pattern))
        elif len(lines) != 1:
            problems.append("process %d: %d lines on stderr, expected one: %r" % (i, len(lines), lines))
    return problems


def check_training(results):
    """Both ranks print the same losses as the dense program."""
    outs = [r[1] for r in results]
    losses = [re.findall(r"rank \d step (\d) loss (\S+)", o) for o in outs]
    dense = re.findall(r"dense losses (\S+) (\S+)", outs[0])
    if len(losses[0]) != 2 or losses[0] != losses[1] or not dense:
        return ["the ranks printed %r and %r" % (outs[0], outs[1])]
    got = [float(v) for _, v in losses[0]]
    want = [float(v) for v in dense[0]]
    if any(abs(a - b) > 1e-9 * max(1.0, abs(b)) for a, b in zip(got, want)):
        return ["losses %s, dense %s" % (got, want)]
    return []


def main():
    start = time.time()
    running = []
    ports = free_ports(len(CASES))  # distinct: every launch runs at once
    for (name, args, expect), port in zip(CASES, ports):
        running.append((name, expect, launch(args[0], args[1], port, *args[2:])))
    passed = failed = 0
    for name, problem in env_problems():
        if problem:
            failed += 1
            print("FAIL %s: %s" % (name, problem))
        else:
            passed += 1
            print("PASS %s" % name)
    for name, expect, procs in running:
        results = []
        for p in procs:
            try:
                out, err = p.communicate(timeout=max(1, LIMIT_S - (time.time() - start)))
                results.append((p.returncode, out, err))
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGABRT)  # faulthandler prints the stacks
                try:
                    out, err = p.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    out, err = p.communicate()
                results.append((None, out, err))
        problems = judge(name, expect, results)
        if not problems and all(v is None for v in expect.values()):
            problems = check_training(results)
        if problems:
            failed += 1
            print("FAIL %s: %s" % (name, "; ".join(problems)))
        else:
            passed += 1
            print("PASS %s" % name)
    print("   (%.1f s)" % (time.time() - start))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
