"""Checks a plan directory's plan.json against docs/PlanFormat.md and its
plan.mlir (used by plan-json.test)."""
import json
import re
import sys

plan_dir, doc = sys.argv[1], sys.argv[2]
plan = json.load(open(plan_dir + "/plan.json"))
program = open(plan_dir + "/plan.mlir").read()
print("format", plan["format"], "version", plan["version"])

# Top-level keys documented in the table of "## Top level".
section = open(doc).read().split("## Top level")[1].split("\n## ")[0]
documented = re.findall(r"^\| `([a-z_]+)` \|", section, re.M)
optional = {"search", "synthesis"}
missing = [k for k in documented if k not in plan and k not in optional]
undocumented = [k for k in plan if k not in documented]
if missing or undocumented:
    sys.exit(f"missing {missing}, undocumented {undocumented}")
print("documented keys present")

for seg in plan["segments"]:
    if sum(seg["sizes"]) != seg["extent"]:
        sys.exit(f"segment {seg['id']} sizes {seg['sizes']} != {seg['extent']}")
    if any(s % seg["align"] for s in seg["sizes"]):
        sys.exit(f"segment {seg['id']} breaks align {seg['align']}")
print("segments sum to extents")

if len(plan["ops"]) != program.count("spmd.local"):
    sys.exit("op count differs from the program")
if plan["step_time_s"] <= 0 or plan["lower_bound_s"] <= 0:
    sys.exit("non-positive times")
print("ops match spmd.local count")
