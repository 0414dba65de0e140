#!/usr/bin/env python3
"""A heterogeneous cluster on one machine: CPU quotas (cgroups) make ranks of
different speed; Weft's plan, DP-EV and DP-CP run for real on them.

    build/venv/bin/python bench/hetero_run.py [--four] [--no-cgroups]
                                              [--work DIR] [--batch N]

Run it through bench/hetero_run.sh, which removes the cgroups on exit.

1. Makes one cgroup per rank (cgroup v1 `cpu` controller or cgroup v2
   `cpu.max`) with its CPU quota: 100 % and 40 % of a core for 2 ranks;
   with --four, 60 % + 40 % of core 0 and 50 % + 20 % of core 1. Each rank
   has its own device class (one per quota); each rank is pinned to its
   core (taskset -c) and joins its cgroup before it execs (a `sh -c` that
   writes its PID to cgroup.procs).
2. Measures each class's speed with a calibrated kernel: a matmul loop
   for a few seconds inside its group (all groups at once), over the same
   loop alone on the core. weft-profile cannot take this itself: its
   samples are medians of short repetitions, which run at full speed
   between CFS throttles, so a profile inside a group looks unthrottled.
   So weft-profile runs once at full speed (kernels, later the programs'
   ops) and each class's DB is that one with every time divided by the
   class's factor; the link between ranks comes from weft-profile --ranks.
   Writes the cluster spec: one device type per class (peak, bandwidth and
   class efficiencies from its kernels, as weft-profile --cluster-out
   derives them) and one node of one device per rank, the nodes linked by
   the measured send_recv latency and bandwidth.
3. Compiles the MLP of bench/real_run_models.py at a larger batch with the
   classes' DB (weftc --profile --baselines), measures the ops the programs
   call and, with every rank in its group, the collectives as the programs
   call them (tools/weft-profile/profile_insitu.py: a throttled rank's
   stalls are in these samples, keyed by the group's classes joined with
   '+'), compiles again.
4. Runs Weft's plan, DP-EV and DP-CP (OMP_NUM_THREADS=1, float32, Adam),
   alternating over rounds, and prints the median step times, the measured
   speed-ups of Weft's plan and the predicted ones; the last line is
   `measured speed-up over DP-EV: <x>x (predicted <y>x)`.

--no-cgroups runs the same pipeline without quotas (every class a full
core) in the least time: the test of the harness, not a measurement.
Exits 0 with one line `skipped: ...` when the cgroups cannot be written.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROFILE_DIR = os.path.join(ROOT, "tools", "weft-profile")
sys.path.insert(0, HERE)
sys.path.insert(0, PROFILE_DIR)
import profile_cluster  # noqa: E402
import profile_insitu  # noqa: E402
from cgroups import Cgroups, Skip  # noqa: E402

PLANS = ("synthesised", "DP-EV", "DP-CP")
CALIBRATE_S = 3.0
# The calibrated kernel: back-to-back [512,1024]x[1024,1024] matmuls for
# argv[1] seconds of wall time; prints FLOP/s.
CALIBRATE = """
import sys, time, torch
torch.set_num_threads(1)
a, b = torch.randn(512, 1024), torch.randn(1024, 1024)
a @ b
n, t0, limit = 0, time.perf_counter(), float(sys.argv[1])
while time.perf_counter() - t0 < limit:
    a @ b
    n += 1
print(2 * 512 * 1024 * 1024 * n / (time.perf_counter() - t0))
"""


def log(message):
    print("hetero_run: " + message, file=sys.stderr, flush=True)


def link_figures(samples):
    """(bandwidth bytes/s, latency s) between two ranks from the send_recv
    samples: latency the median of the samples up to 4 KiB (one small
    sample is noisy on a loaded machine), bandwidth the largest sample's
    bytes over its time beyond that latency."""
    pts = sorted((s["bytes"], s["seconds"]) for s in samples
                 if s["collective"] == "send_recv")
    if len(pts) < 2:
        return None
    latency = statistics.median([t for b, t in pts if b <= 4096] or [pts[0][1]])
    b, t = pts[-1]
    return b / max(t - latency, t / 2), latency


# --- the run -----------------------------------------------------------------
class Hetero:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.python = sys.executable
        self.weftc = args.weftc or os.path.join(self.build, "bin", "weftc")
        self.profiler = os.path.join(PROFILE_DIR, "weft-profile")
        self.work = os.path.abspath(args.work)
        cores = sorted(os.sched_getaffinity(0))
        if args.four:
            shares = [(0, 60), (0, 40), (1, 50), (1, 20)]
        else:
            shares = [(0, 100), (1, 40)]
        # name, core, percent of the core
        self.classes = [("q%d-c%d-r%d" % (p, c, r), cores[c % len(cores)], p)
                        for r, (c, p) in enumerate(shares)]
        self.cgroups = None
        self.in_situ = []
        self.procs_of = {}
        self.children = []

    # launching inside a class's cgroup, pinned to its core
    def wrap(self, cls, argv):
        name, core, _ = cls
        if core is not None:
            argv = ["taskset", "-c", str(core)] + argv
        procs = self.procs_of.get(name)
        if procs:
            argv = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', procs] + argv
        return argv

    def run(self, argv, **kw):
        log("$ " + " ".join(argv))
        p = subprocess.Popen(argv, **kw)
        self.children.append(p)
        code = p.wait()
        self.children.remove(p)
        if code:
            raise SystemExit("hetero_run: error: exit %d: %s" % (code, " ".join(argv)))

    def quick(self):
        if self.args.no_cgroups:
            return ["--quick", "--min-seconds", "0.002", "--max-reps", "5"]
        return ["--quick", "--min-seconds", "0.03"]

    def db_of(self, name):
        return os.path.join(self.work, "db-%s.json" % name)

    # 1-2. classes, profile, spec
    def setup_cgroups(self):
        if self.args.no_cgroups:
            return
        self.cgroups = Cgroups(self.args.tag or "weft-hetero-%d" % os.getpid(), log)
        for name, _, percent in self.classes:
            self.procs_of[name] = self.cgroups.make(name, percent)
        # The full-speed profile and the calibration's reference: no quota
        # (every core), the same weight.
        self.procs_of["reference"] = self.cgroups.make(
            "reference", 100 * len(os.sched_getaffinity(0)))
        log("cgroup v%d groups: %s" % (self.cgroups.version, ", ".join(self.cgroups.dirs)))

    def calibrate(self):
        """Each class's speed as a fraction of its core's: the calibrated
        matmul's FLOP/s over CALIBRATE_S of wall time, all classes at once
        in their groups, over the same kernel alone on the core in a group
        of a whole core (the same weight). A median-of-repetitions profile cannot see a CFS quota (a
        short kernel runs at full speed between throttles), so the
        profile is taken once at full speed and scaled by these factors."""
        seconds = "0.3" if self.args.no_cgroups else str(CALIBRATE_S)
        argv = [self.python, "-c", CALIBRATE, seconds]
        reference = {}
        for core in sorted({c[1] for c in self.classes}):
            reference[core] = float(subprocess.run(
                self.wrap(("reference", core, 100), argv), check=True,
                capture_output=True, text=True,
                env=dict(os.environ, OMP_NUM_THREADS="1")).stdout)
        procs = [subprocess.Popen(self.wrap(cls, argv), stdout=subprocess.PIPE, text=True,
                                  env=dict(os.environ, OMP_NUM_THREADS="1"))
                 for cls in self.classes]
        self.children += procs
        self.factor, self.rate = {}, {}
        for cls, p in zip(self.classes, procs):
            out, _ = p.communicate()
            self.children.remove(p)
            if p.returncode:
                raise SystemExit("hetero_run: error: the calibration of %s failed" % cls[0])
            self.rate[cls[0]] = float(out)
            self.factor[cls[0]] = min(1.0, float(out) / reference[cls[1]])
            log("%s: %.1f GFLOP/s, %.3f of core %d alone (%.1f GFLOP/s)" % (
                cls[0], float(out) / 1e9, self.factor[cls[0]], cls[1], reference[cls[1]] / 1e9))

    def profile_full(self):
        core = self.classes[0][1]
        self.run(self.wrap(("reference", core, 100), [
            self.python, self.profiler, "-o", self.db_of("full"), "--device", "full",
            "--no-collectives"] + self.quick()))
        self.run(self.wrap(("reference", None, 100), [
            self.python, self.profiler, "-o", self.db_of("link"), "--ranks",
            str(len(self.classes)), "--no-kernels", "--device", "link"] + self.quick()))

    def profile_programs(self, dirs):
        db = self.db_of("full")
        self.run(self.wrap(("reference", self.classes[0][1], 100), [
            self.python, self.profiler, "-o", db, "--merge", db, "--no-kernels",
            "--no-collectives", "--device", "full", "--programs"] + dirs + self.quick()[1:]))
        # The collectives as the programs call them, each rank in its group:
        # a throttled rank's stalls are in the samples (keyed by the group's
        # classes joined with '+').
        ns = argparse.Namespace(python=self.python, verbose=False)
        self.in_situ = profile_insitu.combine(self.in_situ, profile_insitu.profile(
            dirs, ns, log, steps=4 if self.args.no_cgroups else 10,
            wrap=lambda r, argv: self.wrap(self.classes[r], argv)))
        self.merge()

    def merge(self):
        """The DB of the classes: the full-speed samples of each kernel and op
        under each class's name, times over its speed factor; the link's
        collectives as measured, and the in-situ ones of the programs."""
        with open(self.db_of("full")) as f:
            full = json.load(f)
        with open(self.db_of("link")) as f:
            link = json.load(f)
        # The in-situ samples of a group of several classes cover only the
        # sizes its programs moved: outside them, the back-to-back samples of
        # the link (all ranks at full speed) under the group's name, not an
        # extrapolation of a few small calls.
        groups = {(s["device"], s["devices"]) for s in self.in_situ}
        backdrop = [dict(s, device=name) for name, n in sorted(groups)
                    for s in link["collectives"] if s["devices"] == n]
        merged = dict(full, kernels=[], ops=[], op_overhead_seconds={},
                      collectives=link["collectives"] +
                      profile_insitu.combine(backdrop, self.in_situ))
        for name, _, _ in self.classes:
            k = 1 / self.factor[name]
            for key in ("kernels", "ops"):
                merged[key] += [dict(s, device=name, seconds=s["seconds"] * k)
                                if "seconds" in s else
                                dict(s, device=name, forward_seconds=s["forward_seconds"] * k,
                                     backward_seconds=s["backward_seconds"] * k)
                                for s in full.get(key, [])]
            if "full" in full.get("op_overhead_seconds", {}):
                merged["op_overhead_seconds"][name] = full["op_overhead_seconds"]["full"] * k
        merged["gradient_sync_overlap"] = False
        merged["description"] = "hetero_run: %d classes merged" % len(self.classes)
        with open(self.db, "w") as f:
            json.dump(merged, f, indent=1)

    def write_spec(self):
        with open(self.db_of("link")) as f:
            link = link_figures(json.load(f)["collectives"])
        if not link:
            raise SystemExit("hetero_run: error: no send_recv samples in the link DB")
        bandwidth, latency = link
        memory_gb = profile_cluster.ram_bytes() / len(self.classes) / 1e9
        lines = ["# %d ranks on %s under CPU quotas, written by bench/hetero_run.py"
                 % (len(self.classes), socket.gethostname()),
                 "name: hetero-%d" % len(self.classes), "device_types:"]
        self.peaks = {}
        with open(self.db) as f:
            merged = json.load(f)
        for name, core, percent in self.classes:
            db = {"kernels": [s for s in merged["kernels"] if s["device"] == name]}
            peak = profile_cluster.best_rate(db, "linear", "flops")
            mem_bw = profile_cluster.best_rate(db, "gelu", "bytes")
            eff = {"matmul": 1.0}
            for cls, kernel in (("reduction", "layer_norm"), ("gather", "embedding"),
                                ("elementwise", "gelu")):
                rate = profile_cluster.best_rate(db, kernel, "bytes")
                if rate:
                    eff[cls] = max(0.01, min(1.0, rate / mem_bw))
            self.peaks[name] = peak
            lines += ["  - name: %s  # %d %% of core %d" % (name, percent, core),
                      "    fp32_peak: %.6g TFLOPS" % (peak / 1e12),
                      "    memory: %.3g GB" % memory_gb,
                      "    memory_bandwidth: %.6g GB/s" % (mem_bw / 1e9),
                      "    memory_efficiency: 1.0",
                      "    efficiency: {%s}" % ", ".join(
                          "%s: %.4g" % kv for kv in sorted(eff.items()))]
        lines.append("nodes:")
        for r, (name, _, _) in enumerate(self.classes):
            lines += ["  - name: rank%d" % r, "    type: %s" % name, "    devices: 1",
                      "    nic_bandwidth: %.6g GB/s" % (bandwidth / 1e9),
                      "    nic_latency: %.6g us" % (latency * 1e6)]
        with open(self.spec, "w") as f:
            f.write("\n".join(lines) + "\n")
        log("wrote %s" % self.spec)

    # 3. plans
    def compile(self):
        argv = [self.weftc, self.onnx, "--with-weights", "--no-cache", "--cluster",
                self.spec, "--profile", self.db, "--baselines", "-o", self.out]
        self.run(argv, stdout=subprocess.DEVNULL)

    def plan_dirs(self):
        return [self.out] + [os.path.join(self.out, "baselines", b) for b in PLANS[1:]]

    def op_keys(self):
        with open(self.db) as f:
            return len(json.load(f).get("ops", []))

    def plans(self):
        import real_run_models
        import torch
        import warnings
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        model, _ = real_run_models.example("mlp")
        g = torch.Generator().manual_seed(0)
        b = self.args.batch
        inputs = {"x": torch.randn(b, 256, generator=g),
                  "y": torch.randint(0, 10, (b,), generator=g)}
        model.train(True)
        torch.onnx.export(model, tuple(inputs.values()), self.onnx, input_names=list(inputs),
                          output_names=["loss"], opset_version=17, dynamo=False,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)
        self.compile()
        self.profile_programs(self.plan_dirs())
        for _ in range(2):
            before = self.op_keys()
            self.compile()
            self.profile_programs([self.out])
            if self.op_keys() == before:
                break
        self.compile()
        result = []
        for name, d in zip(PLANS, self.plan_dirs()):
            with open(os.path.join(d, "plan.json")) as f:
                est = json.load(f)["estimate"]
            result.append({"name": name, "dir": d, "estimate_s": est["step_time_s"],
                           "times": []})
        return result

    # 4. runs
    def run_plan(self, plan, tag):
        program = os.path.join(plan["dir"], "torch", "program.py")
        csv = os.path.join(self.work, "logs", tag + ".csv")
        os.makedirs(os.path.dirname(csv), exist_ok=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        n = len(self.classes)
        procs = []
        for r, cls in enumerate(self.classes):
            # One node per rank in the spec: node r, its only device.
            env = dict(os.environ, WORLD_SIZE=str(n), RANK=str(r), LOCAL_RANK="0",
                       LOCAL_WORLD_SIZE="1", GROUP_RANK=str(r), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(port), OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
            argv = self.wrap(cls, [self.python, program, "--steps",
                                   str(self.args.warmup + self.args.steps), "--log", csv])
            p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
            self.children.append(p)
            procs.append(p)
        codes = [p.wait() for p in procs]
        for p in procs:
            self.children.remove(p)
        if any(codes):
            raise SystemExit("hetero_run: error: %s exited %s" % (program, codes))
        with open(csv) as f:
            rows = [line.split(",") for line in f.read().splitlines()[1:]]
        plan["times"] += [float(r[2]) for r in rows[self.args.warmup:]]

    def main(self):
        os.makedirs(self.work, exist_ok=True)
        # A copy: a build that relinks weftc meanwhile cannot break the run.
        copy = os.path.join(self.work, "weftc")
        shutil.copy2(shutil.which(self.weftc) or self.weftc, copy)
        self.weftc = copy
        self.db = os.path.join(self.work, "profile.json")
        self.spec = os.path.join(self.work, "cluster.yaml")
        self.onnx = os.path.join(self.work, "mlp.onnx")
        self.out = os.path.join(self.work, "plans")
        started = time.time()
        load_before = os.getloadavg()[0]
        self.setup_cgroups()
        self.calibrate()
        self.profile_full()
        self.merge()
        self.write_spec()
        plans = self.plans()
        for rnd in range(self.args.rounds):
            for plan in plans if rnd % 2 == 0 else list(reversed(plans)):
                self.run_plan(plan, "%s-%d" % (plan["name"], rnd))
        self.report(plans, load_before, time.time() - started)

    def report(self, plans, load_before, seconds):
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        quotas = ", ".join("rank %d: %d %% of core %d" % (r, p, c)
                           for r, (_, c, p) in enumerate(self.classes))
        out = [
            "Heterogeneous run: %d ranks (%s)%s" % (
                len(self.classes), quotas, ", no cgroups" if self.args.no_cgroups else ""),
            "Machine: %s, %d cores; commit %s; %s; load %.2f before, %.2f after; %.0f s"
            % (socket.gethostname(), os.cpu_count(), commit,
               time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load_before,
               os.getloadavg()[0], seconds),
            "Command: `bench/hetero_run.sh%s`; model: MLP 256-1024-1024-10, global batch "
            "%d; %d timed steps (+%d warm-up) x %d rounds per plan"
            % (" --four" if self.args.four else "", self.args.batch, self.args.steps,
               self.args.warmup, self.args.rounds),
            "Classes (calibrated matmul under the quota, fraction of the core alone): "
            + ", ".join("%s %.1f GFLOP/s (%.2f)" % (k, self.rate[k] / 1e9, self.factor[k])
                        for k in self.rate),
            "",
            "| plan | estimate (ms) | measured median (ms) | error |",
            "| --- | ---: | ---: | ---: |"]
        for p in plans:
            p["measured_s"] = statistics.median(p["times"])
            out.append("| %s | %.2f | %.2f | %+.1f %% |" % (
                p["name"], 1e3 * p["estimate_s"], 1e3 * p["measured_s"],
                100 * (p["estimate_s"] / p["measured_s"] - 1)))
        out.append("")
        weft = plans[0]
        lines = []
        for other in plans[1:]:
            measured = other["measured_s"] / weft["measured_s"]
            predicted = other["estimate_s"] / weft["estimate_s"]
            lines.append("measured speed-up over %s: %.2fx (predicted %.2fx)"
                         % (other["name"], measured, predicted))
        # DP-EV last
        out += lines[1:] + lines[:1]
        print("\n".join(out))
        with open(os.path.join(self.work, "results.json"), "w") as f:
            json.dump({"plans": plans, "classes": self.classes}, f, indent=1)
        if self.args.docs:
            self.write_docs(out)

    def write_docs(self, out):
        """The run's report between its markers in docs/benchmarks.md (a
        code block, as printed)."""
        tag = "hetero_run:%s" % ("four" if self.args.four else "two")
        begin, end = "<!-- %s:begin -->" % tag, "<!-- %s:end -->" % tag
        path = os.path.join(ROOT, "docs", "benchmarks.md")
        with open(path) as f:
            doc = f.read()
        if begin not in doc or end not in doc:
            raise SystemExit("hetero_run: error: %s has no %s ... %s markers"
                             % (path, begin, end))
        section = begin + "\n```\n" + "\n".join(out) + "\n```\n" + end
        doc = doc[:doc.index(begin)] + section + doc[doc.index(end) + len(end):]
        with open(path, "w") as f:
            f.write(doc)
        log("wrote the report into %s" % path)

    def kill_children(self):
        for p in list(self.children):
            try:
                p.kill()
            except OSError:
                pass


def parse():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--weftc", help="the weftc to use (default BUILD/bin/weftc)")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "hetero_run"))
    ap.add_argument("--four", action="store_true", help="4 ranks, two per core")
    ap.add_argument("--no-cgroups", action="store_true",
                    help="no quotas, least time: the pipeline end to end (tests)")
    ap.add_argument("--tag", help="cgroup name prefix (default weft-hetero-PID)")
    ap.add_argument("--docs", action="store_true",
                    help="write the report into docs/benchmarks.md (between its markers)")
    ap.add_argument("--batch", type=int, help="global batch (default 512; 32 with --no-cgroups)")
    ap.add_argument("--steps", type=int, help="timed steps per run")
    ap.add_argument("--warmup", type=int, help="untimed steps first")
    ap.add_argument("--rounds", type=int, help="runs of every plan, alternating")
    args = ap.parse_args()
    defaults = (32, 2, 1, 1) if args.no_cgroups else (512, 15, 3, 3)
    for field, value in zip(("batch", "steps", "warmup", "rounds"), defaults):
        if getattr(args, field) is None:
            setattr(args, field, value)
    return args


def main():
    bench = Hetero(parse())

    def stop(signum, _frame):
        raise SystemExit("hetero_run: stopped by signal %d" % signum)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        bench.main()
    except Skip as e:
        print("skipped: %s" % e)
        return 0
    finally:
        bench.kill_children()
        if bench.cgroups:
            bench.cgroups.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
