#!/usr/bin/env python3
"""The emitted program's step time against DistributedDataParallel.

For an MLP and a 2-layer BERT-like encoder (sizes below), exported by
PyTorch and compiled for two devices (test/lit/Emit/Inputs/mixed-2.yaml),
runs the DP-EV baseline plan's emitted program and the same module under
torch.nn.parallel.DistributedDataParallel, each on 2 local gloo processes
with the same global batch, float32, Adam, alternating the two runs
`--rounds` times. Reports the median step time of each (steps after the
first `--warmup` of every run) and their ratio; the goal is at most 1.1x
DDP's. Not a test: the numbers depend on the machine and its load.

    build/venv/bin/python bench/ddp_overhead.py [--build build] [--steps 30]
"""
import argparse
import csv
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from real_run_models import Encoder, Mlp  # noqa: E402  (bench/real_run_models.py)


def example(name):
    g = torch.Generator().manual_seed(0)
    if name == "mlp":
        return Mlp(), {"x": torch.randn(64, 256, generator=g),
                       "y": torch.randint(0, 10, (64,), generator=g)}
    return Encoder(d=128), {"ids": torch.randint(0, 1000, (16, 32), generator=g),
                           "y": torch.randint(0, 1000, (16, 32), generator=g)}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(argv, n=2):
    port = free_port()
    procs = [subprocess.Popen(argv, env=dict(os.environ, WORLD_SIZE=str(n), RANK=str(r),
                                             MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                                             OMP_NUM_THREADS="1"))
             for r in range(n)]
    for p in procs:
        if p.wait() != 0:
            raise SystemExit("a rank failed: %s" % " ".join(argv))


def step_times(log, warmup):
    with open(log) as f:
        rows = list(csv.DictReader(f))
    return [float(r["seconds"]) for r in rows[warmup:]]


def ddp_worker(name, steps, log):
    """One DDP rank: the module, its half of the global batch, Adam."""
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model, inputs = example(name)
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    shard = [v.chunk(world)[rank] for v in inputs.values()]
    rows = []
    for s in range(steps):
        start = time.perf_counter()
        opt.zero_grad()
        loss = ddp(*shard)
        loss.backward()
        opt.step()
        rows.append((s, loss.item(), time.perf_counter() - start))
    if rank == 0:
        with open(log, "w") as f:
            f.write("step,loss,seconds\n")
            f.writelines("%d,%.9g,%.6f\n" % r for r in rows)
    dist.destroy_process_group()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--ddp-worker":
        return ddp_worker(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="weft-ddp-")
    cluster = os.path.join(ROOT, "test", "lit", "Emit", "Inputs", "mixed-2.yaml")
    print("machine: %d cores; torch %s; gloo, 2 processes, 1 thread each, float32, Adam"
          % (os.cpu_count(), torch.__version__))
    for name in ("mlp", "encoder"):
        model, inputs = example(name)
        onnx = os.path.join(work, name + ".onnx")
        model.train(True)
        torch.onnx.export(model, tuple(inputs.values()), onnx, input_names=list(inputs),
                          output_names=["loss"], opset_version=17, dynamo=False,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
        out = os.path.join(work, name)
        subprocess.run([os.path.join(args.build, "bin", "weftc"), onnx, "--with-weights",
                        "--no-cache", "--cluster", cluster, "--baselines", "--no-synthesis",
                        "-o", out], check=True, stdout=subprocess.DEVNULL)
        program = os.path.join(out, "baselines", "DP-EV", "torch", "program.py")
        weft, ddp = [], []
        for r in range(args.rounds):
            log = os.path.join(work, "%s-weft-%d.csv" % (name, r))
            launch([sys.executable, program, "--steps", str(args.steps), "--log", log])
            weft += step_times(log, args.warmup)
            log = os.path.join(work, "%s-ddp-%d.csv" % (name, r))
            launch([sys.executable, __file__, "--ddp-worker", name, str(args.steps), log])
            ddp += step_times(log, args.warmup)
        a, b = statistics.median(weft), statistics.median(ddp)
        print("%-8s global batch %d: emitted DP-EV %.2f ms/step, DDP %.2f ms/step: %.2fx DDP's"
              % (name, next(iter(inputs.values())).shape[0], 1e3 * a, 1e3 * b, a / b))


if __name__ == "__main__":
    main()
