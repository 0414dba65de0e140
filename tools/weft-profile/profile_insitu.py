"""weft-profile --in-situ: collectives timed inside the programs that call them.

A collective called from a training step does not cost what the same call
costs back to back (profile_comm.py), where the ranks stay in step: on the
2-core VM, a 143 KB gloo all_reduce between short matmuls took 0.2 ms or
1.5-4 ms, bimodal, mean 1.2-1.9 ms, against 0.7 ms back to back (the
cause is not known; it is measured, not modelled). So each plan folder's
program runs on its ranks (rank r pinned to core r mod cores, one torch thread) with
WEFT_COLLECTIVE_TIMES set (weft_runtime/timing.py): every Comm call is
timed. The calls of the first `warmup` steps are dropped; the k-th call of
a (collective, group, bytes) on each rank is matched with the k-th on the
others. Ranks of one type: their times are averaged (a member that
arrives first waits for the last, and between ranks of one speed that wait
is the jitter between them, which a step pays at every collective and the
evaluator's per-device times do not hold; on the 2-core VM, averaging
instead of keeping the last member's time took real_run's median |error|
from 23 % to 14 %). Ranks of several types: the smallest time, the last
member's (their waits are mostly the plan's imbalance between the classes,
which the evaluator prices from per-device times; averaging counted half
of it twice and priced DP-CP 30 % high in bench/hetero_run.sh).
Per group device name (the members' type, or for a group of several types
their names sorted and joined with '+', as weft::groupTypeName keys them),
collective and group size, a line t = a + b * bytes is fitted to all
matched calls (least squares; each call counts, so a rare slow call counts
as often as it happens) and written as samples across the byte range the
calls cover.

The samples (marked "source": "program" in the DB) replace the
back-to-back samples of the same collective and group size within the byte
range they cover; outside it, the back-to-back samples are scaled by the
median ratio of in-situ to back-to-back time over the sizes measured both
ways (combine(); the measured time stays in "back_to_back_seconds").
"""

import glob
import json
import math
import os
import statistics
import subprocess
import tempfile

from profile_ops import ranks_of, run_ranks


def rank_types(plan_dir):
    """The device type of each rank of a plan folder's program (rank r is
    cluster device r, plan.json's mesh)."""
    with open(os.path.join(plan_dir, "plan.json")) as f:
        devices = json.load(f)["mesh"]["devices"]
    return {d["cluster_device"]: d["type"] for d in devices}


def run_program(plan_dir, python, steps, work, timeout=600, wrap=None):
    """Per rank, the timed calls of one run: [[kind, ranks, bytes, s], ...].
    `wrap(rank, argv)` may prefix a rank's command (e.g. to enter a cgroup);
    by default rank r is pinned to core r mod cores."""
    program = os.path.join(plan_dir, "torch", "program.py")
    n = ranks_of(plan_dir)
    prefix = os.path.join(work, "times-%d" % abs(hash(plan_dir)))
    failed = run_ranks(n, lambda r: [python, program, "--steps", str(steps),
                                     "--dtype", "float32"],
                       {"WEFT_COLLECTIVE_TIMES": prefix}, timeout, wrap)
    if any(failed):
        raise RuntimeError("running %s failed (exit %s)" % (program, failed))
    out = []
    for r in range(n):
        path = "%s.%d.json" % (prefix, r)
        calls = []
        if os.path.exists(path):
            with open(path) as f:
                calls = json.load(f)
            os.remove(path)
        out.append(calls)
    return out


def samples_of_run(per_rank, steps, warmup, types=None):
    """{(kind, group ranks, bytes): [seconds of each matched call]} of one
    run: the k-th calls of a key averaged over the ranks when the group's
    ranks are of one type (or `types` is None), the smallest of them when
    they are of several."""
    matched = {}
    for calls in per_rank:
        per_step = len(calls) // steps if steps else 0
        by_key = {}
        for kind, ranks, nbytes, seconds in calls[per_step * warmup:]:
            by_key.setdefault((kind, tuple(ranks), nbytes), []).append(seconds)
        for key, times in by_key.items():
            matched.setdefault(key, []).append(times)
    out = {}
    for key, runs in matched.items():
        n = min(len(r) for r in runs)
        mixed = types is not None and len({types[r] for r in key[1]}) > 1
        pick = min if mixed else (lambda xs: sum(xs) / len(xs))
        out[key] = [pick([r[i] for r in runs]) for i in range(n)]
    return out


def fit(points):
    """(latency s, seconds per byte) of t = a + b * bytes over `points`
    [(bytes, seconds)], least squares, both at least 0."""
    n = len(points)
    mx = sum(b for b, _ in points) / n
    my = sum(t for _, t in points) / n
    var = sum((b - mx) ** 2 for b, _ in points)
    slope = sum((b - mx) * (t - my) for b, t in points) / var if var > 0 else 0.0
    slope = max(slope, 0.0)
    return max(my - slope * mx, 0.0), slope


def grid(lo, hi):
    """The sizes a fit is written at: lo, powers of 4 times 16 between, hi."""
    out, b = [lo], 16.0
    while b < hi:
        if b > lo:
            out.append(b)
        b *= 4
    return sorted(set(out + [hi]))


def group_name(types, ranks):
    """The DB device name of a group (weft::groupTypeName): its type, or its
    distinct types sorted and joined with '+'."""
    return "+".join(sorted({types[r] for r in ranks}))


def profile(plan_dirs, args, log, steps=8, warmup=2, wrap=None):
    """In-situ collective samples (DB entries) of the programs' calls: per
    collective and group size, the fit of every matched call's time against
    its bytes, written at sizes across the range the calls cover."""
    work = tempfile.mkdtemp(prefix="weft-profile-insitu-")
    points = {}
    for d in plan_dirs:
        try:
            per_rank = run_program(d, args.python, steps, work, wrap=wrap)
            types = rank_types(d)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            log("in situ: skipped %s: %s" % (d, e))
            continue
        found = samples_of_run(per_rank, steps, warmup, types)
        log("in situ: %d collective sizes of %s" % (len(found), d))
        for (kind, ranks, nbytes), ts in found.items():
            if nbytes > 0:
                key = (group_name(types, ranks), kind, len(ranks))
                points.setdefault(key, []).extend((nbytes, t) for t in ts)
    for leftover in glob.glob(os.path.join(work, "*")):
        os.remove(leftover)
    os.rmdir(work)
    out = []
    for (device, kind, size), pts in sorted(points.items()):
        latency, per_byte = fit(pts)
        lo, hi = min(b for b, _ in pts), max(b for b, _ in pts)
        log("in situ: %s %-14s x%d %d calls, %d-%d B: %.1f us + %.3f ns/B" %
            (device, kind, size, len(pts), lo, hi, 1e6 * latency, 1e9 * per_byte))
        for b in grid(float(lo), float(hi)):
            out.append({"device": device, "collective": kind, "devices": size,
                        "bytes": b, "seconds": max(latency + per_byte * b, 1e-7),
                        "source": "program"})
    return out


def interpolate(points, size):
    """Log-log interpolation of sorted [(bytes, seconds)] at `size`, as
    weft::ProfileDB interpolates (the ends held below, proportional above)."""
    if size <= points[0][0]:
        return points[0][1]
    if size >= points[-1][0]:
        return points[-1][1] * size / points[-1][0]
    for (b0, t0), (b1, t1) in zip(points, points[1:]):
        if b0 <= size <= b1:
            f = math.log(size / b0) / math.log(b1 / b0) if b1 > b0 else 0.0
            return math.exp(math.log(t0) + f * math.log(t1 / t0))
    return points[-1][1]


def ratios(isolated, in_situ):
    """{(device, collective, devices): in-situ time over back-to-back time},
    the median over the in-situ samples of that series; a series without
    back-to-back samples is left out."""
    series = {}
    for s in isolated:
        series.setdefault((s["device"], s["collective"], s["devices"]), []).append(
            (s["bytes"], s["seconds"]))
    found = {}
    for s in in_situ:
        key = (s["device"], s["collective"], s["devices"])
        if key in series:
            base = interpolate(sorted(series[key]), s["bytes"])
            if base > 0:
                found.setdefault(key, []).append(s["seconds"] / base)
    return {k: statistics.median(v) for k, v in found.items()}


def combine(old, in_situ):
    """`in_situ` over `old`: per (device, collective, group size), the
    back-to-back samples inside the byte range of the in-situ ones (old and
    new) are dropped, and an old in-situ sample of the same size is
    replaced. Outside that range the back-to-back samples are scaled by the
    series' median in-situ/back-to-back ratio (by the median over the
    group's series for a collective not measured in situ), so a size the
    programs did not move is not priced as if calls ran back to back."""
    fresh = {(s["device"], s["collective"], s["devices"], s["bytes"]) for s in in_situ}
    old = [s for s in old if (s["device"], s["collective"], s["devices"], s["bytes"])
           not in fresh]
    in_situ = list(in_situ) + [s for s in old if s.get("source") == "program"]
    # Back to back as measured (an earlier combine kept the measured time).
    isolated = [dict(s, seconds=s.get("back_to_back_seconds", s["seconds"]))
                for s in old if s.get("source") != "program"]
    for s in isolated:
        s.pop("back_to_back_seconds", None)
    ranges = {}
    for s in in_situ:
        key = (s["device"], s["collective"], s["devices"])
        lo, hi = ranges.get(key, (s["bytes"], s["bytes"]))
        ranges[key] = (min(lo, s["bytes"]), max(hi, s["bytes"]))
    scale = ratios(isolated, in_situ)
    by_group = {}
    for (device, _, devices), r in scale.items():
        by_group.setdefault((device, devices), []).append(r)
    kept = []
    for s in isolated:
        key = (s["device"], s["collective"], s["devices"])
        r = ranges.get(key)
        if r and r[0] <= s["bytes"] <= r[1]:
            continue
        group = by_group.get((s["device"], s["devices"]))
        factor = scale.get(key, statistics.median(group) if group else 1.0)
        kept.append(dict(s, seconds=s["seconds"] * factor,
                         back_to_back_seconds=s["seconds"]) if factor != 1.0 else s)
    return kept + list(in_situ)
