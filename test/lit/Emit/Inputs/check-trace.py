#!/usr/bin/env python3
"""Checks trace.json against the Chrome trace-event format as weft writes it
(docs/Emit.md, "Pictures"): the JSON object form with traceEvents,
displayTimeUnit "ms" and otherData; complete events ("X") with name, cat
(an event kind), ts and dur in microseconds (>= 0), integer pid and tid,
args marking an estimate; metadata events ("M") naming every process and
thread that has events; no two events of one thread overlapping; no event
past the estimated step (times are written to the nanosecond).

Usage: check-trace.py TRACE.json [KIND,KIND,...]
KINDs that must occur among the complete events. Prints a summary line and
exits 1 on the first failure.
"""
import json
import sys

KINDS = {"forward", "backward", "collective", "sync", "update"}
METADATA = {"process_name", "thread_name", "process_sort_index",
            "thread_sort_index"}


def fail(message):
    print("check-trace: " + message)
    sys.exit(1)


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def main():
    with open(sys.argv[1]) as f:
        trace = json.load(f)
    if not isinstance(trace, dict):
        fail("not a JSON object")
    if set(trace) != {"traceEvents", "displayTimeUnit", "otherData"}:
        fail("top-level keys %s" % sorted(trace))
    if trace["displayTimeUnit"] != "ms":
        fail("displayTimeUnit %r" % trace["displayTimeUnit"])
    other = trace["otherData"]
    if not isinstance(other, dict) or other.get("estimate") is not True:
        fail("otherData does not mark an estimate")
    step_us = other.get("step_time_s", 0) * 1e6
    if not is_number(other.get("step_time_s")) or step_us <= 0:
        fail("otherData.step_time_s missing or not positive")
    events = trace["traceEvents"]
    if not isinstance(events, list) or not events:
        fail("traceEvents is not a non-empty list")
    complete, named_processes, named_threads = [], set(), set()
    for i, e in enumerate(events):
        where = "event %d" % i
        if not isinstance(e, dict):
            fail(where + " is not an object")
        for key in ("name", "ph", "pid", "tid", "args"):
            if key not in e:
                fail("%s has no %r" % (where, key))
        if not isinstance(e["name"], str) or not e["name"]:
            fail(where + ": name is not a non-empty string")
        if not is_int(e["pid"]) or not is_int(e["tid"]) or e["pid"] < 0 \
                or e["tid"] < 0:
            fail(where + ": pid and tid must be integers >= 0")
        if not isinstance(e["args"], dict):
            fail(where + ": args is not an object")
        if e["ph"] == "M":
            if e["name"] not in METADATA:
                fail("%s: unknown metadata %r" % (where, e["name"]))
            if e["name"].endswith("_name"):
                if not isinstance(e["args"].get("name"), str):
                    fail(where + ": args.name is not a string")
                if e["name"] == "process_name":
                    named_processes.add(e["pid"])
                else:
                    named_threads.add((e["pid"], e["tid"]))
            elif not is_int(e["args"].get("sort_index")):
                fail(where + ": args.sort_index is not an integer")
        elif e["ph"] == "X":
            if e.get("cat") not in KINDS:
                fail("%s: cat %r is no event kind" % (where, e.get("cat")))
            for key in ("ts", "dur"):
                if not is_number(e.get(key)) or e[key] < 0:
                    fail("%s: %s must be a number >= 0" % (where, key))
            if e["args"].get("estimate") is not True:
                fail(where + ": args.estimate is not true")
            if e["ts"] + e["dur"] > step_us * (1 + 1e-9) + 1e-3:
                fail("%s ends at %g us, after the step (%g us)"
                     % (where, e["ts"] + e["dur"], step_us))
            complete.append(e)
        else:
            fail("%s: phase %r" % (where, e["ph"]))
    threads = {}
    for e in complete:
        if e["pid"] not in named_processes:
            fail("process %d has events but no process_name" % e["pid"])
        if (e["pid"], e["tid"]) not in named_threads:
            fail("thread %d/%d has events but no thread_name"
                 % (e["pid"], e["tid"]))
        threads.setdefault((e["pid"], e["tid"]), []).append(e)
    for key, mine in threads.items():
        mine.sort(key=lambda e: e["ts"])
        for a, b in zip(mine, mine[1:]):
            if b["ts"] < a["ts"] + a["dur"] - 1e-6 * max(1.0, a["dur"]):
                fail("thread %d/%d: %r overlaps %r" % (key + (a["name"],
                                                               b["name"])))
    kinds = {e["cat"] for e in complete}
    wanted = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else set()
    if wanted - kinds:
        fail("no event of kind %s" % ", ".join(sorted(wanted - kinds)))
    print("trace: %d complete events on %d threads, kinds %s, step %.3f ms"
          % (len(complete), len(threads), ",".join(sorted(kinds)),
             step_us / 1e3))


if __name__ == "__main__":
    main()
