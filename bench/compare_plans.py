#!/usr/bin/env python3
"""Checks that two sets of weftc outputs hold the same plans.

Usage: bench/compare_plans.py OLD_DIR NEW_DIR [--rtol 1e-9]

Each folder below OLD_DIR that holds a plan.json (as bench/synth_bench.sh
writes them) is compared with the folder of the same name below NEW_DIR:
the step time (`step_time_s`) must agree to the relative tolerance, and
plan.mlir must be the same text once the format version and the spelling of
enumerated attributes (a string, or a typed `#spmd<...>` attribute) are put
aside. Prints one line per plan and a closing count; exits 1 on any
difference or missing plan.
"""
import argparse
import json
import os
import re
import sys

# `"zero1"`, `#spmd<strategy zero1>` and `#spmd.strategy<zero1>` all read as
# the bare word.
TYPED = re.compile(r'#spmd(?:<\w+\s+|\.\w+<)(\w+)>')
QUOTED_WORD = re.compile(r'"(\w+)"')
VERSION = re.compile(r'spmd\.version\s*=\s*\d+(\s*:\s*i64)?')


def normalise(text):
    text = VERSION.sub("spmd.version = ?", text)
    text = TYPED.sub(r"\1", text)
    return QUOTED_WORD.sub(r"\1", text)


def plans(root):
    for folder, _, files in sorted(os.walk(root)):
        if "plan.json" in files:
            yield os.path.relpath(folder, root)


def compare(old_dir, new_dir, name, rtol):
    old = os.path.join(old_dir, name)
    new = os.path.join(new_dir, name)
    if not os.path.exists(os.path.join(new, "plan.json")):
        return "missing in " + new_dir
    with open(os.path.join(old, "plan.json")) as f:
        old_step = json.load(f)["step_time_s"]
    with open(os.path.join(new, "plan.json")) as f:
        new_step = json.load(f)["step_time_s"]
    if abs(new_step - old_step) > rtol * max(abs(old_step), 1e-300):
        return f"step time {old_step!r} s -> {new_step!r} s"
    with open(os.path.join(old, "plan.mlir")) as f:
        old_text = normalise(f.read())
    with open(os.path.join(new, "plan.mlir")) as f:
        new_text = normalise(f.read())
    if old_text != new_text:
        for number, (a, b) in enumerate(
                zip(old_text.splitlines(), new_text.splitlines()), 1):
            if a != b:
                return f"plan.mlir differs first at line {number}"
        return "plan.mlir differs in length"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old_dir")
    parser.add_argument("new_dir")
    parser.add_argument("--rtol", type=float, default=1e-9)
    args = parser.parse_args()
    for d in (args.old_dir, args.new_dir):
        if not os.path.isdir(d):
            print(f"compare_plans: {d}: not a directory", file=sys.stderr)
            return 1
    same = differ = 0
    for name in plans(args.old_dir):
        problem = compare(args.old_dir, args.new_dir, name, args.rtol)
        if problem:
            differ += 1
            print(f"{name}: DIFFERS: {problem}")
        else:
            same += 1
            print(f"{name}: same")
    print(f"{same} same, {differ} differ")
    return 1 if differ or not same else 0


if __name__ == "__main__":
    sys.exit(main())
