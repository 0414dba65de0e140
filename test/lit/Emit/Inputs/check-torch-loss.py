#!/usr/bin/env python3
"""Runs the program `weft-translate --spmd-to-torch` writes for a plan on
every rank of the plan's mesh (gloo processes on this machine) and compares
its first loss with the one weft-run's SPMD interpreter computes for the
same plan, model, seed and data (lib/Exec/Inputs.cpp's seeded values, which
weft_runtime.driver draws alike). Two steps run, so every rank also runs the
backward pass and an optimizer step in step with the others.

Usage:
  check-torch-loss.py --weft-run BIN --weft-translate BIN --runtime DIR
      --work DIR PLAN MODEL [--gradients-may-differ]

--runtime is the folder holding weft_runtime/ (python/). With --gradients-may-differ, weft-run's exit 3 (the
plan's gradients are not the model's: a stop-gradient max all-reduce) is
accepted; the losses must agree either way. Prints one line
`PASS <plan>: ...` or `FAIL <plan>: ...` and exits 1 on failure.
"""
import argparse
import os
import re
import subprocess
import sys

RTOL = 1e-5  # weft-run prints 7 significant digits


# test/emit/ports.py: a port no other launch or connection takes meanwhile.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                             "emit"))
from ports import free_port  # noqa: E402


def fail(plan, what):
    print("FAIL %s: %s" % (plan, what))
    sys.exit(1)


def run_ranks(program, n, runtime, timeout=300):
    """Every rank of the program; (exit codes, rank 0's stdout, stderr lines)."""
    port = free_port()
    procs = []
    for r in range(n):
        env = dict(os.environ, WORLD_SIZE=str(n), RANK=str(r), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), WEFT_RUNTIME_TIMEOUT_S="120",
                   PYTHONPATH=runtime, OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, program, "--steps", "2"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    codes, out0, errors = [], "", []
    for r, p in enumerate(procs):
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            return [124], "", ["timed out after %d s" % timeout]
        codes.append(p.returncode)
        errors += err.strip().splitlines()
        if r == 0:
            out0 = out
    return codes, out0, errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weft-run", required=True)
    ap.add_argument("--weft-translate", required=True)
    ap.add_argument("--runtime", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--gradients-may-differ", action="store_true")
    ap.add_argument("plan")
    ap.add_argument("model")
    args = ap.parse_args()
    name = os.path.basename(args.plan)
    os.makedirs(args.work, exist_ok=True)

    ref = subprocess.run([args.weft_run, args.model, "--plan", args.plan],
                         capture_output=True, text=True)
    allowed = (0, 3) if args.gradients_may_differ else (0,)
    found = re.search(r"^spmd loss:\s+(\S+)", ref.stdout, re.M)
    if ref.returncode not in allowed or not found:
        fail(name, "weft-run exited %d: %s" % (ref.returncode, ref.stderr.strip()))
    expected = float(found.group(1))

    program = os.path.join(args.work, "program.py")
    emit = subprocess.run([args.weft_translate, "--spmd-to-torch",
                           args.plan, "--graph", args.model, "-o", program],
                          capture_output=True, text=True)
    if emit.returncode != 0:
        fail(name, "weft-translate exited %d: %s" % (emit.returncode, emit.stderr.strip()))
    with open(program) as f:
        ranks = re.search(r"\((\d+) devices\)", f.read())
    n = int(ranks.group(1))

    codes, out, errors = run_ranks(program, n, args.runtime)
    if any(codes):
        fail(name, "exit codes %s: %s" % (codes, " | ".join(errors[:4])))
    losses = dict(re.findall(r"^loss (\d+) (\S+)$", out, re.M))
    if set(losses) != {"0", "1"}:
        fail(name, "rank 0 printed %r" % out)
    got = float(losses["0"])
    if abs(got - expected) > RTOL * max(1.0, abs(expected)):
        fail(name, "loss %.9g, weft-run %.7g" % (got, expected))
    print("PASS %s: %d ranks, loss %.9g, weft-run %.7g" % (name, n, got, expected))


if __name__ == "__main__":
    main()
