"""Tables, ranking agreement and the SVG plot of bench/real_run.py.

A plan's error is (estimate - measured) / measured. The ranking agreement of
a model is over every pair of its distinct plans: a pair agrees when the
estimates order the two plans as the measured medians do. A pair whose
estimates differ by less than TIE (relative) is a tie of the model; it
agrees when the measurements also differ by less than TIE_MEASURED.
"""
import datetime
import json
import math
import os
import platform
import re
import statistics
import subprocess

TIE = 0.02
TIE_MEASURED = 0.05
GOALS = {"median": 0.10, "worst": 0.25, "ranking": 0.90}
BEGIN, END = "<!-- real_run:begin -->", "<!-- real_run:end -->"


def machine_meta(args, load_before, load_after, seconds):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "unknown"
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
            cpu = m.group(1) if m else cpu
    except OSError:
        pass
    mode = "--smoke" if args.smoke else "--quick" if args.quick else "(full)"
    return {"cpu": cpu, "cores": os.cpu_count(), "date": datetime.date.today().isoformat(),
            "commit": commit, "mode": mode, "steps": args.steps, "warmup": args.warmup,
            "rounds": args.rounds, "load_before": round(load_before, 2),
            "load_after": round(load_after, 2), "wall_s": round(seconds)}


def error_of(p):
    return (p["estimate_s"] - p["measured_s"]) / p["measured_s"]


def ranking(plans):
    agree = total = 0
    for i in range(len(plans)):
        for j in range(i + 1, len(plans)):
            a, b = plans[i], plans[j]
            ea, eb, ma, mb = a["estimate_s"], b["estimate_s"], a["measured_s"], b["measured_s"]
            total += 1
            if abs(ea - eb) < TIE * max(ea, eb):
                agree += abs(ma - mb) < TIE_MEASURED * max(ma, mb)
            else:
                agree += (ea < eb) == (ma < mb)
    return agree, total


def summary(results):
    errors = [abs(error_of(p)) for plans in results.values() for p in plans]
    agree = total = 0
    for plans in results.values():
        a, t = ranking(plans)
        agree, total = agree + a, total + t
    return {"median_abs_error": statistics.median(errors), "worst_abs_error": max(errors),
            "ranking_agreement": agree / total if total else 1.0,
            "pairs": total, "pairs_agreeing": agree, "plans": len(errors)}


def verdict(value, goal, higher_is_better=False):
    ok = value >= goal if higher_is_better else value <= goal
    return "met" if ok else "**missed**"


def markdown(results, failed, meta):
    s = summary(results)
    lines = [
        "Machine: %s, %d cores; %s; commit %s; load average %.2f before, %.2f after "
        "(%d s)%s." % (meta["cpu"], meta["cores"], meta["date"], meta["commit"],
                       meta["load_before"], meta["load_after"], meta["wall_s"],
                       "; in a cgroup of the largest CPU weight" if meta.get("weighted")
                       else ""),
        "Command: `bench/real_run.sh %s` (%d timed steps after %d warm-up, %d round(s); "
        "2 ranks, one core and one torch thread each, gloo, float32, Adam)."
        % ("" if meta["mode"] == "(full)" else meta["mode"], meta["steps"],
           meta["warmup"], meta["rounds"]),
        "",
        "| model | plan | estimate (ms) | measured median (ms) | error | ops measured |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for model, plans in results.items():
        for p in plans:
            lines.append("| %s | %s | %.2f | %.2f | %+.1f %% | %d / %d |" % (
                model, " = ".join(p["names"]), 1e3 * p["estimate_s"], 1e3 * p["measured_s"],
                100 * error_of(p), p["measured_ops"], p["timed_ops"]))
    for model, plans in failed.items():
        for p in plans:
            lines.append("| %s | %s | %.2f | did not run (%s) | | |" % (
                model, " = ".join(p["names"]), 1e3 * p["estimate_s"], p["failed"]))
    lines += ["", "| model | pairs | agreeing |", "| --- | ---: | ---: |"]
    for model, plans in results.items():
        a, t = ranking(plans)
        lines.append("| %s | %d | %d |" % (model, t, a))
    lines += [
        "",
        "| goal | target | measured | |",
        "| --- | --- | ---: | --- |",
        "| median \\|error\\| | ≤ 10 %% | %.1f %% | %s |" % (
            100 * s["median_abs_error"], verdict(s["median_abs_error"], GOALS["median"])),
        "| worst \\|error\\| | ≤ 25 %% | %.1f %% | %s |" % (
            100 * s["worst_abs_error"], verdict(s["worst_abs_error"], GOALS["worst"])),
        "| ranking agreement | ≥ 90 %% of pairs | %.0f %% (%d of %d) | %s |" % (
            100 * s["ranking_agreement"], s["pairs_agreeing"], s["pairs"],
            verdict(s["ranking_agreement"], GOALS["ranking"], True)),
    ]
    return "\n".join(lines) + "\n"


def svg(results):
    """Estimated against measured step time, log-log, one point per plan."""
    pts = [(p["measured_s"] * 1e3, p["estimate_s"] * 1e3, m)
           for m, plans in results.items() for p in plans]
    lo = min(min(a, b) for a, b, _ in pts) / 1.5
    hi = max(max(a, b) for a, b, _ in pts) * 1.5
    size, pad = 420, 60
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
    models = list(results)

    def pos(v):
        return pad + (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo)) * size

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (size + 2 * pad, size + 2 * pad),
           '<rect width="100%" height="100%" fill="white"/>',
           '<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>'
           % (pad, pad, size, size)]
    decade = 10 ** math.floor(math.log10(lo))
    while decade <= hi:
        for k in (1, 2, 5):
            v = decade * k
            if lo <= v <= hi:
                x, y = pos(v), size + 2 * pad - pos(v)
                out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/>'
                           % (x, pad, x, pad + size))
                out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>'
                           % (pad, y, pad + size, y))
                out.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>'
                           % (x, pad + size + 16, v))
                out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>'
                           % (pad - 4, y + 4, v))
        decade *= 10
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444" stroke-dasharray="4 3"/>'
               % (pad, pad + size, pad + size, pad))
    out.append('<text x="%d" y="%d" fill="#444">y = x</text>' % (pad + size - 40, pad + 14))
    for meas, est, m in pts:
        out.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s" fill-opacity="0.8"/>'
                   % (pos(meas), size + 2 * pad - pos(est), colors[models.index(m) % 5]))
    for i, m in enumerate(models):
        out.append('<circle cx="%d" cy="%d" r="4" fill="%s"/><text x="%d" y="%d">%s</text>'
                   % (pad + 10, pad + 16 + 16 * i, colors[i % 5], pad + 18, pad + 20 + 16 * i, m))
    out.append('<text x="%d" y="%d" text-anchor="middle">measured median step time (ms)</text>'
               % (pad + size // 2, size + 2 * pad - 14))
    out.append('<text transform="translate(16,%d) rotate(-90)" text-anchor="middle">'
               'estimated step time (ms)</text>' % (pad + size // 2))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_all(results, failed, meta, work, docs):
    text = markdown(results, failed, meta)
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump({"meta": meta, "summary": summary(results), "models": results,
                   "failed": failed}, f, indent=1)
    with open(os.path.join(work, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(work, "estimate-vs-measured.svg"), "w") as f:
        f.write(svg(results))
    print(text)
    if not docs:
        return
    with open(os.path.join(docs, "real-run.svg"), "w") as f:
        f.write(svg(results))
    path = os.path.join(docs, "benchmarks.md")
    with open(path) as f:
        doc = f.read()
    section = BEGIN + "\n" + text + "\n![estimated against measured step time](real-run.svg)\n" + END
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + section + doc[doc.index(END) + len(END):]
    else:
        doc += "\n## Cost model against real runs (`bench/real_run.sh`)\n\n" + section + "\n"
    with open(path, "w") as f:
        f.write(doc)
