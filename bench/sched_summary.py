#!/usr/bin/env python3
"""Turns bench/sched_bench.sh's report.json files into the markdown tables of
docs/benchmarks.md: average JCT per policy and rate, its ratios to
maxmin-agnostic, fifo and gavel-maxmin, and fair vs crux utilisation.
Usage: sched_summary.py OUT_DIR RATE..."""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    out, rates = sys.argv[1], sys.argv[2:]
    policies = None
    rows = {}
    for rate in rates:
        report = load(f"{out}/gavel-rate-{rate}/report.json")["policies"]
        policies = policies or list(report)
        rows[rate] = report
    print("Average JCT (h) of jobs 4000-5000, gavel-108, Gavel's generator:\n")
    print("| policy | " + " | ".join(f"{r} jobs/h" for r in rates) + " |")
    print("| --- |" + " --- |" * len(rates))
    for p in policies:
        cells = [f"{rows[r][p]['avg_jct_h']:.2f}" for r in rates]
        print(f"| {p} | " + " | ".join(cells) + " |")
    for base in ("maxmin-agnostic", "fifo", "gavel-maxmin"):
        print(f"\nRatio avg JCT({base}) / avg JCT(policy) (> 1: policy is faster):\n")
        print("| policy | " + " | ".join(f"{r} jobs/h" for r in rates) + " |")
        print("| --- |" + " --- |" * len(rates))
        for p in policies:
            cells = [f"{rows[r][base]['avg_jct_h'] / rows[r][p]['avg_jct_h']:.2f}x"
                     for r in rates]
            print(f"| {p} | " + " | ".join(cells) + " |")
    print("\nAverage / p50 / p99 JCT (h):\n")
    print("| policy | " + " | ".join(f"{r} jobs/h" for r in rates) + " |")
    print("| --- |" + " --- |" * len(rates))
    for p in policies:
        cells = [f"{rows[r][p]['avg_jct_h']:.2f} / {rows[r][p]['p50_jct_h']:.2f} / "
                 f"{rows[r][p]['p99_jct_h']:.2f}" for r in rates]
        print(f"| {p} | " + " | ".join(cells) + " |")
    details = {r: load(f"{out}/gavel-rate-{r}/report.json")["details"] for r in rates}
    print("\nMean cluster throughput (samples/s, first arrival to last "
          "completion) and stalled restarts:\n")
    print("| policy | " + " | ".join(f"{r} jobs/h" for r in rates) + " |")
    print("| --- |" + " --- |" * len(rates))
    for p in policies:
        cells = [f"{details[r][p]['avg_samples_per_s']:.0f}, "
                 f"{details[r][p]['stalled_restarts']}" for r in rates]
        print(f"| {p} | " + " | ".join(cells) + " |")
    print("\nMakespan (h) and GPU utilisation:\n")
    print("| policy | " + " | ".join(f"{r} jobs/h" for r in rates) + " |")
    print("| --- |" + " --- |" * len(rates))
    for p in policies:
        cells = [f"{rows[r][p]['makespan_h']:.0f} h, {100 * rows[r][p]['gpu_utilization']:.1f} %"
                 for r in rates]
        print(f"| {p} | " + " | ".join(cells) + " |")
    print("\nGoal (issue 29): at every load no elastic policy (crius, rubick, "
          "weft) is worse than gavel-maxmin in average or p99 JCT; the other "
          "heterogeneity-aware policies against the same bar (avg / p99 JCT, "
          "h; gavel-maxmin's in brackets):\n")
    print("| policy | " + " | ".join(f"{r} jobs/h" for r in rates) + " |")
    print("| --- |" + " --- |" * len(rates))
    for p in policies:
        if p in ("gavel-maxmin", "fifo", "maxmin-agnostic"):
            continue
        cells = []
        for r in rates:
            base, mine = rows[r]["gavel-maxmin"], rows[r][p]
            worse = [name for name, key in (("avg", "avg_jct_h"), ("p99", "p99_jct_h"))
                     if mine[key] > base[key]]
            verdict = "met" if not worse else "missed (" + ", ".join(worse) + ")"
            cells.append(f"{verdict}: {mine['avg_jct_h']:.2f} / "
                         f"{mine['p99_jct_h']:.1f} ({base['avg_jct_h']:.2f} / "
                         f"{base['p99_jct_h']:.1f})")
        print(f"| {p} | " + " | ".join(cells) + " |")
    print("\nSpeed (alibaba-2023, 10,000 jobs):\n")
    print("| policy | simulation wall (s) | LP time (s) | LP solves | avg JCT (h) |")
    print("| --- | --- | --- | --- | --- |")
    for name in ("alibaba-fast", "alibaba-lp"):
        rep = load(f"{out}/{name}/report.json")
        for p, d in rep["details"].items():
            print(f"| {p} | {d['wall_time_s']:.2f} | {d['lp_time_s']:.2f} | "
                  f"{d['lp_solves']} | {rep['policies'][p]['avg_jct_h']:.2f} |")
    print("\nNetwork (mixed-256, 1000 jobs at 100 jobs/h): GPU utilisation "
          "and avg JCT, fair vs crux:\n")
    print("| policy | fair util | crux util | fair avg JCT (h) | crux avg JCT (h) |")
    print("| --- | --- | --- | --- | --- |")
    fair = load(f"{out}/network-fair/report.json")["policies"]
    crux = load(f"{out}/network-crux/report.json")["policies"]
    for p in fair:
        print(f"| {p} | {100 * fair[p]['gpu_utilization']:.1f} % | "
              f"{100 * crux[p]['gpu_utilization']:.1f} % | "
              f"{fair[p]['avg_jct_h']:.2f} | {crux[p]['avg_jct_h']:.2f} |")


if __name__ == "__main__":
    main()
