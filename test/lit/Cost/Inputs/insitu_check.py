"""Checks tools/weft-profile/profile_insitu.py's matching, fit and merge.

    python insitu_check.py WEFT_SRC

Prints one line per check; a failed check raises (exit 1).
"""
import sys

sys.path.insert(0, sys.argv[1] + "/tools/weft-profile")
import profile_insitu as P  # noqa: E402

# Two ranks, 3 steps of two calls each; the first step is warm-up. The k-th
# call of a key on each rank is matched and the times averaged.
g = [0, 1]
rank0 = [["all_reduce", g, 100, 9.0], ["all_gather", g, 8, 9.0],
         ["all_reduce", g, 100, 1.0], ["all_gather", g, 8, 5.0],
         ["all_reduce", g, 100, 3.0], ["all_gather", g, 8, 2.0]]
rank1 = [["all_reduce", g, 100, 9.0], ["all_gather", g, 8, 9.0],
         ["all_reduce", g, 100, 2.0], ["all_gather", g, 8, 4.0],
         ["all_reduce", g, 100, 1.5], ["all_gather", g, 8, 6.0]]
m = P.samples_of_run([rank0, rank1], steps=3, warmup=1)
assert m == {("all_reduce", (0, 1), 100): [1.5, 2.25],
             ("all_gather", (0, 1), 8): [4.5, 4.0]}, m
print("matched: mean over ranks per call, warm-up dropped")
m = P.samples_of_run([rank0, rank1], steps=3, warmup=1, types={0: "V100", 1: "P100"})
assert m == {("all_reduce", (0, 1), 100): [1.0, 1.5],
             ("all_gather", (0, 1), 8): [4.0, 2.0]}, m
print("matched: ranks of several types keep the last arrival's time")

assert P.group_name({0: "V100", 1: "P100"}, (1, 0)) == "P100+V100"
assert P.group_name({0: "V100", 1: "V100"}, (0, 1)) == "V100"
print("group name: the type, or distinct types sorted and joined by +")

a, b = P.fit([(0, 1.0), (10, 2.0), (20, 3.0)])
assert abs(a - 1.0) < 1e-12 and abs(b - 0.1) < 1e-12, (a, b)
a, b = P.fit([(0, 3.0), (10, 1.0)])  # a falling line: flat at the mean
assert b == 0.0 and abs(a - 2.0) < 1e-12, (a, b)
print("fit: least squares, slope at least 0")

assert P.grid(20.0, 5000.0) == [20.0, 64.0, 256.0, 1024.0, 4096.0, 5000.0], P.grid(20.0, 5000.0)
print("grid: ends and powers of 4 times 16 between")

iso = [{"device": "d", "collective": "all_reduce", "devices": 2, "bytes": b, "seconds": 1.0}
       for b in (16.0, 256.0, 4096.0, 65536.0)]
old_situ = {"device": "d", "collective": "all_reduce", "devices": 2, "bytes": 64.0,
            "seconds": 7.0, "source": "program"}
new = [{"device": "d", "collective": "all_reduce", "devices": 2, "bytes": b,
        "seconds": 2.0, "source": "program"} for b in (64.0, 1024.0, 4096.0)]
out = P.combine(iso + [old_situ], new)
got = sorted((s["bytes"], s["seconds"]) for s in out)
# In range: the in-situ samples; outside: back-to-back ones times the
# median in-situ/back-to-back ratio (2 here).
assert got == [(16.0, 2.0), (64.0, 2.0), (1024.0, 2.0), (4096.0, 2.0), (65536.0, 2.0)], got
print("combine: in-situ samples replace back-to-back ones in their range")
# A collective the programs did not call takes its group's median ratio.
gather = [dict(s, collective="all_gather") for s in iso]
out = P.combine(iso + gather, new)
got = sorted((s["bytes"], s["seconds"]) for s in out if s["collective"] == "all_gather")
assert got == [(16.0, 2.0), (256.0, 2.0), (4096.0, 2.0), (65536.0, 2.0)], got
# Combining again scales the measured times, not the scaled ones.
again = P.combine(out, new)
got = sorted((s["bytes"], s["seconds"]) for s in again if s["collective"] == "all_gather")
assert got == [(16.0, 2.0), (256.0, 2.0), (4096.0, 2.0), (65536.0, 2.0)], got
print("combine: outside the range, back-to-back samples scaled by the in-situ ratio")
