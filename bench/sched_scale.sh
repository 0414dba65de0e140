#!/usr/bin/env bash
# Simulator scale (issue 29): Gavel's generator on alibaba-2023.yaml (6,212
# GPUs) at 10,000 / 30,000 / 100,000 jobs (arrival rate = jobs / 10 per
# hour), fifo, hadar and gavel-maxmin each in its own process. CPU time is
# user + sys from /usr/bin/time (the machine is shared: wall time depends on
# the load, printed beside each run). Goal: the three policies together
# <= 60 CPU s at 100,000 jobs, growth near-linear in jobs (fitted exponent).
# Usage: bench/sched_scale.sh [BUILD_DIR] [OUT_DIR]   (env JOBS="10000 30000 100000")
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-$BUILD/bench-sched-scale}
SCHED=$BUILD/bin/weft-sched
TABLE=data/gavel/simulation_throughputs.json
JOBS=${JOBS:-"10000 30000 100000"}
POLICIES=${POLICIES:-"fifo hadar gavel-maxmin"}
mkdir -p "$OUT"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)"
echo "command: $SCHED --cluster examples/clusters/alibaba-2023.yaml --workload gavel:rate=N/10,jobs=N,seed=0 --oracle table:$TABLE --policy P --report DIR"
: > "$OUT/times.tsv"
for n in $JOBS; do
  rate=$((n / 10))
  for p in $POLICIES; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "%U %S %e %M" -o "$OUT/time-$p-$n.txt" "$SCHED" \
      --cluster examples/clusters/alibaba-2023.yaml \
      --workload "gavel:rate=$rate,jobs=$n,seed=0" \
      --oracle "table:$TABLE" --policy "$p" \
      --report "$OUT/report-$p-$n" > "$OUT/out-$p-$n.txt" 2>/dev/null
    read -r user sys wall rss < "$OUT/time-$p-$n.txt"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "$n" "$user" "$sys" "$wall" \
      "$rss" "$load" >> "$OUT/times.tsv"
    echo "$p $n jobs: user $user s, sys $sys s, wall $wall s, peak RSS $rss KB (load $load before)"
  done
done
/usr/bin/python3 - "$OUT/times.tsv" <<'EOF'
import collections, json, math, os, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
cpu = collections.defaultdict(dict)
for p, n, user, sys_, wall, rss, load in rows:
    cpu[p][int(n)] = float(user) + float(sys_)
sizes = sorted({int(r[1]) for r in rows})
policies = list(cpu)
total = "all (" + " + ".join(policies) + ")"
cpu[total] = {n: sum(cpu[p][n] for p in policies) for n in sizes}
def exponent(series):
    if len(sizes) < 2:
        return "n/a (one size)"
    xs = [math.log(n) for n in sizes]
    ys = [math.log(max(series[n], 1e-3)) for n in sizes]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return "%.2f" % (sum((x - mx) * (y - my) for x, y in zip(xs, ys)) /
                     sum((x - mx) ** 2 for x in xs))
out = os.path.dirname(sys.argv[1])
print("\n| policy | " + " | ".join(f"{n:,} jobs" for n in sizes) +
      " | fitted exponent |")
print("| --- |" + " --- |" * (len(sizes) + 1))
for p, series in cpu.items():
    cells = []
    for n in sizes:
        cell = f"{series[n]:.2f} s"
        report = f"{out}/report-{p}-{n}/report.json"
        if os.path.exists(report):
            lp = json.load(open(report))["details"][p]["lp_time_s"]
            if lp > 0:
                cell += f" (GLPK {lp:.1f} s)"
        cells.append(cell)
    print(f"| {p} | " + " | ".join(cells) + f" | {exponent(series)} |")
largest = sizes[-1]
seconds = cpu[total][largest]
goal = largest == 100000 and sorted(policies) == ["fifo", "gavel-maxmin", "hadar"]
verdict = ("met" if seconds <= 60 else "missed") if goal else "not measured by this run"
print(f"\nGoal (100,000 jobs, fifo + hadar + gavel-maxmin <= 60 CPU s): {verdict} "
      f"({seconds:.1f} s for {' + '.join(policies)} at {largest:,} jobs)")
EOF
