#!/usr/bin/env python3
"""The pipeline runtime's plain parts, without processes
(python/weft_runtime/pipeline.py, transfer.py; docs/Pipeline.md):

- `schedule_of` gives weft-run's per-stage orders (test/lit/Exec/pipeline.test
  prints them for 2 stages) and, for 1 to 4 stages and 1 to 6 micro-batches,
  runs to the end in a simulation where a forward waits for the previous
  stage's forward of its micro-batch and a backward for the next stage's
  backward (sends never wait): no schedule deadlocks, and 1F1B keeps at most
  S - s micro-batches of stage s in flight;
- `Link`'s point-to-point pairing: for any device counts of two neighbouring
  stages, each receiving device has one source, which sends to it, in both
  directions.

Prints PASS/FAIL per case and "N passed, M failed"; exit 1 on a failure.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))

from weft_runtime.pipeline import schedule_of  # noqa: E402
from weft_runtime.transfer import Link  # noqa: E402

results = []


def case(name, ok, detail=""):
    results.append(ok)
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, "" if ok else ": " + detail))


def text(order):
    return " ".join("%s%d" % step for step in order)


# weft-run's orders (test/lit/Exec/pipeline.test), per stage.
case("1f1b S=2 M=2 stage 0", text(schedule_of("1f1b", 2, 0, 2)) == "F0 F1 B0 B1",
     text(schedule_of("1f1b", 2, 0, 2)))
case("1f1b S=2 M=2 stage 1", text(schedule_of("1f1b", 2, 1, 2)) == "F0 B0 F1 B1",
     text(schedule_of("1f1b", 2, 1, 2)))
case("gpipe S=2 M=4 stage 1",
     text(schedule_of("gpipe", 2, 1, 4)) == "F0 F1 F2 F3 B0 B1 B2 B3",
     text(schedule_of("gpipe", 2, 1, 4)))
case("1f1b S=3 M=4 stage 0",
     text(schedule_of("1f1b", 3, 0, 4)) == "F0 F1 F2 B0 F3 B1 B2 B3",
     text(schedule_of("1f1b", 3, 0, 4)))


def simulate(kind, stages, micro):
    """Runs every stage's order; a step waits for its dependency. Returns
    (finished, the most micro-batches in flight per stage)."""
    orders = [schedule_of(kind, stages, s, micro) for s in range(stages)]
    pos = [0] * stages
    done = set()
    flight, peak = [0] * stages, [0] * stages
    progress = True
    while progress:
        progress = False
        for s in range(stages):
            if pos[s] == len(orders[s]):
                continue
            kind_, m = orders[s][pos[s]]
            if kind_ == "F":
                ready = s == 0 or ("F", s - 1, m) in done
            else:
                ready = ("F", s, m) in done and (s == stages - 1 or ("B", s + 1, m) in done)
            if ready:
                done.add((kind_, s, m))
                flight[s] += 1 if kind_ == "F" else -1
                peak[s] = max(peak[s], flight[s])
                pos[s] += 1
                progress = True
    finished = all(pos[s] == len(orders[s]) for s in range(stages))
    every = all(sorted(orders[s]) == sorted([("B", m) for m in range(micro)] +
                                            [("F", m) for m in range(micro)])
                for s in range(stages))
    return finished and every, peak


for kind in ("1f1b", "gpipe"):
    bad = []
    for stages in range(1, 5):
        for micro in range(1, 7):
            ok, peak = simulate(kind, stages, micro)
            if not ok:
                bad.append("S=%d M=%d deadlocks" % (stages, micro))
            if kind == "1f1b" and any(peak[s] > min(micro, stages - s) for s in range(stages)):
                bad.append("S=%d M=%d keeps %s in flight" % (stages, micro, peak))
    case("%s runs to the end without deadlock (S 1-4, M 1-6)" % kind, not bad, "; ".join(bad))


class _Stage:
    def __init__(self, n, base):
        self.ranks = list(range(base, base + n))


def pairing(n_send, n_recv):
    """Every device of the receiving stage has one source, which lists it."""
    a, b = _Stage(n_send, 0), _Stage(n_recv, 100)
    problems = []
    for side, other, n in ((a, b, n_send), (b, a, n_recv)):
        sources = {}
        for me in range(n):
            link = Link.__new__(Link)
            link.me, link.n = me, n
            for dst in link._targets(other):
                sources.setdefault(dst, []).append(side.ranks[me])
        for j, r in enumerate(other.ranks):
            link = Link.__new__(Link)
            link.me, link.n = j, len(other.ranks)
            if sources.get(r) != [link._source(side)]:
                problems.append("device %d of %d: sources %s, expects %s"
                                % (j, len(other.ranks), sources.get(r), link._source(side)))
    return problems


bad = []
for n_send in range(1, 5):
    for n_recv in range(1, 5):
        bad += ["%dx%d: %s" % (n_send, n_recv, p) for p in pairing(n_send, n_recv)]
case("point-to-point pairs (1-4 devices on each side, both directions)", not bad,
     "; ".join(bad[:3]))

print("%d passed, %d failed" % (results.count(True), results.count(False)))
sys.exit(0 if all(results) else 1)
