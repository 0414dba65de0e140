#!/usr/bin/env python3
"""The cost model against real runs of emitted programs on this machine.

    build/venv/bin/python bench/real_run.py [--quick | --smoke] [--models mlp,cnn]
                                            [--work DIR] [--docs]

1. Profiles this machine for plans of 2 ranks (tools/weft-profile --ranks 2
   --cluster-out): the standard kernels, the runtime's gloo collectives, the
   op overhead, and the cluster spec of the two ranks.
2. For each model (bench/real_run_models.py): compiles with the profile
   (weftc --profile --baselines: the synthesised plan and DP-EV, DP-CP,
   TP-DP) and a few random valid plans (weftc --random-plan SEED), measures
   every op the plans' programs call and the collectives as they call them
   (weft-profile --programs --in-situ, merged into the DB), and compiles
   again, so the estimates use the op samples
   (repeated while a new synthesised plan brings ops the DB lacks).
3. Runs each distinct plan's program (2 ranks, rank r pinned to core r,
   one thread, float32, Adam) for warm-up + timed steps, alternating the
   plans over rounds, and reads the step times of the program's --log.
4. Reports per plan the median measured step time beside the estimate and
   the error, and per model the pairwise order agreement of the estimates
   with the measurements; writes DIR/results.json, DIR/results.md and
   DIR/estimate-vs-measured.svg, and with --docs the section of
   docs/benchmarks.md between its real_run markers and
   docs/real-run.svg.

Unless --no-cgroups, everything runs in a cgroup of the largest CPU weight
(bench/cgroups.py; root, cgroup v1 or v2), so other work on the machine
takes little of the two cores from the profile and the runs; without
writable cgroups it says so and runs at normal weight.

Goals (issue 27): median |error| <= 10 %, worst <= 25 %, ranking agreement
>= 90 % of pairs. Not a test: the figures depend on the machine and its
load (the report says the load average before and after).
"""
import argparse
import hashlib
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
sys.path.insert(0, HERE)
import real_run_report  # noqa: E402
from cgroups import Cgroups, Skip  # noqa: E402

MODELS = ("mlp", "encoder", "cnn", "vit")


def log(message):
    print("real_run: " + message, file=sys.stderr, flush=True)


def run(argv, **kw):
    log("$ " + " ".join(argv))
    return subprocess.run(argv, check=True, **kw)


def load_average():
    return os.getloadavg()[0]


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.python = sys.executable
        self.weftc = args.weftc or os.path.join(self.build, "bin", "weftc")
        self.profile = os.path.join(ROOT, "tools", "weft-profile", "weft-profile")
        self.work = os.path.abspath(args.work)
        self.db = os.path.join(self.work, "profile.json")
        self.cluster = os.path.join(self.work, "cluster.yaml")
        self.weighted = False

    # --- 1. the machine ----------------------------------------------------
    def profile_machine(self):
        argv = [self.python, self.profile, "-o", self.db, "--ranks", "2",
                "--device", "host-core", "--cluster-out", self.cluster]
        if self.args.quick or self.args.smoke:
            argv.append("--quick")
        if self.args.smoke:
            argv += ["--min-seconds", "0.002", "--max-reps", "5"]
        run(argv)

    # --- 2. plans ----------------------------------------------------------
    def compile(self, onnx, out, everything=True):
        """The synthesised plan; with `everything` the baselines and the
        random plans too."""
        common = [self.weftc, onnx, "--with-weights", "--no-cache", "--cluster",
                  self.cluster, "--profile", self.db]
        run(common + (["--baselines"] if everything else []) + ["-o", out],
            stdout=subprocess.DEVNULL)
        for seed in self.seeds() if everything else []:
            run(common + ["--random-plan", str(seed), "-o",
                          os.path.join(out, "random", str(seed))],
                stdout=subprocess.DEVNULL)

    def seeds(self):
        return [1, 2] if self.args.smoke else [1, 2, 3] if self.args.quick else [1, 2, 3, 4, 5]

    def plan_dirs(self, out):
        dirs = [out] + [os.path.join(out, "baselines", b) for b in ("DP-EV", "DP-CP", "TP-DP")]
        dirs += [os.path.join(out, "random", str(s)) for s in self.seeds()]
        return [d for d in dirs if os.path.exists(os.path.join(d, "plan.json"))]

    def profile_programs(self, dirs):
        argv = [self.python, self.profile, "-o", self.db, "--merge", self.db,
                "--no-kernels", "--no-collectives", "--device", "host-core",
                "--in-situ", "--programs"] + dirs
        if self.args.smoke:
            argv += ["--min-seconds", "0.002", "--max-reps", "5"]
        run(argv)

    def op_count(self):
        with open(self.db) as f:
            return len(json.load(f).get("ops", []))

    def plans_of(self, name):
        onnx = os.path.join(self.work, name + ".onnx")
        run([self.python, os.path.join(HERE, "real_run_models.py"), name, onnx],
            stdout=subprocess.DEVNULL)
        out = os.path.join(self.work, name)
        shutil.rmtree(out, ignore_errors=True)
        self.compile(onnx, out)
        self.profile_programs(self.plan_dirs(out))
        # A synthesised plan made with the op samples may call ops at shapes
        # the DB lacks: measure those too, at most twice.
        for _ in range(2):
            before = self.op_count()
            self.compile(onnx, out, everything=False)
            self.profile_programs([out])
            if self.op_count() == before:
                break
        self.compile(onnx, out)
        return self.distinct(self.plan_dirs(out))

    def distinct(self, dirs):
        """One entry per distinct plan.mlir: [names], dir, estimate."""
        seen = {}
        for d in dirs:
            with open(os.path.join(d, "plan.mlir"), "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            name = self.name_of(d)
            if digest in seen:
                seen[digest]["names"].append(name)
                continue
            with open(os.path.join(d, "plan.json")) as f:
                plan = json.load(f)
            est = plan["estimate"]
            seen[digest] = {"names": [name], "dir": d,
                            "estimate_s": est["step_time_s"],
                            "measured_ops": est.get("measured_ops", 0),
                            "timed_ops": est.get("timed_ops", 0),
                            "compute_s": est.get("compute_s", 0),
                            "comm_s": est.get("comm_s", 0),
                            "optimizer_s": est.get("optimizer_s", 0),
                            "times": []}
        return list(seen.values())

    @staticmethod
    def name_of(d):
        parent, leaf = os.path.split(d)
        if os.path.basename(parent) == "baselines":
            return leaf
        if os.path.basename(parent) == "random":
            return "random-" + leaf
        return "synthesised"

    # --- 3. runs -----------------------------------------------------------
    def run_plan(self, plan, tag):
        program = os.path.join(plan["dir"], "torch", "program.py")
        csv = os.path.join(self.work, "logs", tag + ".csv")
        os.makedirs(os.path.dirname(csv), exist_ok=True)
        steps = self.args.warmup + self.args.steps
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = []
        cores = os.sched_getaffinity(0)
        for r in range(2):
            env = dict(os.environ, WORLD_SIZE="2", RANK=str(r), LOCAL_RANK=str(r),
                       LOCAL_WORLD_SIZE="2", GROUP_RANK="0", MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(port), OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
            argv = [self.python, program, "--steps", str(steps), "--log", csv]
            if len(cores) >= 2 and shutil.which("taskset"):
                argv = ["taskset", "-c", str(sorted(cores)[r])] + argv
            procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL))
        codes = [p.wait() for p in procs]
        if any(codes):
            # Reported beside the tables, not measured (a runtime gap).
            plan["failed"] = "exit %s" % ",".join(str(c) for c in codes)
            log("%s failed (exit %s)" % (program, codes))
            return
        with open(csv) as f:
            rows = [line.split(",") for line in f.read().splitlines()[1:]]
        plan["times"] += [float(r[2]) for r in rows[self.args.warmup:]]

    def prioritise(self):
        """Joins a group of the largest CPU weight (children inherit it);
        returns the groups to remove, or None."""
        if self.args.no_cgroups:
            return None
        try:
            groups = Cgroups("weft-realrun-%d" % os.getpid(), log)
            groups.enter(groups.make("priority", None, top_weight=True))
        except Skip as e:
            log("running at normal CPU weight: %s" % e)
            groups = None
        self.weighted = groups is not None
        return groups

    def main(self):
        groups = self.prioritise()
        try:
            self.measure()
        finally:
            if groups:
                groups.leave()
                groups.remove()

    def measure(self):
        os.makedirs(self.work, exist_ok=True)
        # A copy: a build that relinks weftc meanwhile cannot break the run.
        copy = os.path.join(self.work, "weftc")
        shutil.copy2(self.weftc, copy)
        self.weftc = copy
        started = time.time()
        load_before = load_average()
        self.profile_machine()
        results = {}
        for name in self.args.models.split(","):
            results[name] = self.plans_of(name)
        for rnd in range(self.args.rounds):
            for name, plans in results.items():
                order = plans if rnd % 2 == 0 else list(reversed(plans))
                for plan in order:
                    if "failed" not in plan:
                        self.run_plan(plan, "%s-%s-%d" % (name, plan["names"][0], rnd))
        failed = {}
        for name in results:
            failed[name] = [p for p in results[name] if "failed" in p]
            results[name] = [p for p in results[name] if "failed" not in p]
            for p in results[name]:
                p["measured_s"] = statistics.median(p["times"])
        meta = real_run_report.machine_meta(
            self.args, load_before, load_average(), time.time() - started)
        meta["weighted"] = self.weighted
        real_run_report.write_all(results, failed, meta, self.work,
                                  os.path.join(ROOT, "docs") if self.args.docs else None)


def parse():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--weftc", help="the weftc to use (default BUILD/bin/weftc)")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "real_run"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--quick", action="store_true",
                    help="fewer profile sizes and random plans, one round")
    ap.add_argument("--smoke", action="store_true",
                    help="the harness end to end in the least time (tests)")
    ap.add_argument("--steps", type=int, help="timed steps per run")
    ap.add_argument("--warmup", type=int, help="untimed steps first")
    ap.add_argument("--rounds", type=int, help="runs of every plan, alternating")
    ap.add_argument("--no-cgroups", action="store_true",
                    help="run at normal CPU weight (no cgroup of the largest weight)")
    ap.add_argument("--docs", action="store_true",
                    help="write the tables into docs/benchmarks.md")
    args = ap.parse_args()
    defaults = ((2, 1, 1) if args.smoke else (20, 3, 1) if args.quick else (30, 5, 3))
    for field, value in zip(("steps", "warmup", "rounds"), defaults):
        if getattr(args, field) is None:
            setattr(args, field, value)
    for m in args.models.split(","):
        if m not in MODELS:
            ap.error("unknown model '%s' (%s)" % (m, ", ".join(MODELS)))
    return args


def main():
    def stop(signum, _frame):
        raise SystemExit("real_run: stopped by signal %d" % signum)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    Bench(parse()).main()


if __name__ == "__main__":
    main()
