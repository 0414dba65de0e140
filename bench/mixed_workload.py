#!/usr/bin/env python3
"""Writes data/workloads/mixed-zoo.csv: the mixed zoo workload of issue 29.

Jobs of BERT, GPT, ViT, VGG and MoE models of several sizes, named as the
compiler oracle's job types (docs/Cells.md), with Poisson arrivals, a GPU
count of 1/2/4/8 and a run time on V100s at that count (duration_s, which
weft-sched converts to steps with the oracle). Seeded: the file is the same
on every run.

Usage: bench/mixed_workload.py [--jobs 48] [--rate 4] [--seed 0] [-o FILE]
"""
import argparse
import math
import random

TYPES = [
    "bert:layers=12;batch=128",
    "bert:layers=24;hidden=1024;heads=16;ffn=4096;batch=64",
    "gpt:layers=12;hidden=768;heads=12;ffn=3072;seq=256;batch=32",
    "gpt:layers=24;seq=256;batch=32",
    "vit;batch=256",
    "vgg19;batch=256",
    "bert-moe:layers=4;experts=8;batch=64",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=48)
    ap.add_argument("--rate", type=float, default=4.0, help="jobs per hour")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", default="data/workloads/mixed-zoo.csv")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    t = 0.0
    lines = [
        "# The mixed zoo workload (bench/mixed_workload.py --jobs %d --rate %g "
        "--seed %d): compiler-oracle job types, Poisson arrivals, run time on "
        "V100s at the requested count." % (args.jobs, args.rate, args.seed),
        "job_type,gpus,arrival_s,duration_s",
    ]
    for _ in range(args.jobs):
        kind = rng.choice(TYPES)
        gpus = rng.choices([1, 2, 4, 8], weights=[0.3, 0.3, 0.25, 0.15])[0]
        # 20 min to 6 h, log-uniform.
        duration = 60 * 10 ** rng.uniform(math.log10(20), math.log10(360))
        lines.append("%s,%d,%d,%d" % (kind, gpus, round(t), round(duration)))
        t += rng.expovariate(args.rate / 3600)
    with open(args.o, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
