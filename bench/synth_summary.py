"""One line per weftc -o run of bench/synth_bench.sh: wall time, peak RSS,
search statistics, the plan's step time against the baselines and the
bound, and whether the plan is pure data parallelism."""
import json
import sys

for run in sys.argv[1:]:
    wall, rss = open(run + ".time").read().split()[:2]
    plan = json.load(open(run + "/plan.json"))
    synth = plan.get("synthesis", {})
    search = plan.get("search", {}).get("step_time_s", float("nan"))
    base = plan.get("baselines", {})
    # Pure data parallelism: every parameter whole on every device (ZeRO-3
    # storage aside) and no partial value before the loss.
    sharded = [p["name"] for p in plan["parameters"]
               if "gather" in p["dist"] and p["strategy"] != "zero3"]
    partial = [op["location"] for op in plan["ops"][:-1]
               if any("sum" in d or "max" in d for d in op["result_dists"])]
    dp_only = not sharded and not partial
    parts = [
        f"{run.split('/')[-1]}: wall {float(wall):.2f} s, peak RSS {int(rss) / 1024:.0f} MB",
        f"expansions {synth.get('expansions')}, gap {synth.get('gap')}, capped {synth.get('capped')}",
        f"search {search * 1e3:.2f} ms, plan {plan['step_time_s'] * 1e3:.2f} ms",
        f"bound {plan['lower_bound_s'] * 1e3:.2f} ms",
    ]
    parts += [f"{k} {v * 1e3:.2f} ms ({v / search:.2f}x)" for k, v in base.items()]
    parts.append("pure data parallel" if dp_only else "not pure data parallel")
    print("; ".join(parts) + " (step times: estimates)")
