"""Collective call times, as a program calls them (weft-profile --in-situ).

With WEFT_COLLECTIVE_TIMES=PREFIX in the environment, every `Comm` call
(gloo_compat.py) that moves data is timed, and at exit the rank writes
PREFIX.RANK.json (write()): a list of [collective, group ranks, bytes,
seconds], one entry per call in call order. Bytes are per device as the cost model
prices them (weft/Eval/CollectivePricer.h): the buffer of an all_reduce
and a broadcast, the largest member's shard of an all_gather and a
reduce_scatter, what this member sends in an all_to_all. The time includes
whatever the runtime adds around the torch.distributed call (emulation,
padding, concatenation, Python) and the wait for the other members.
"""

import atexit
import json
import os
import time

import torch.distributed as dist

_calls = []


def enabled():
    return bool(os.environ.get("WEFT_COLLECTIVE_TIMES"))


def write():
    """Writes the calls (errors.main calls it before the process ends
    through os._exit, which runs no atexit handler)."""
    prefix = os.environ.get("WEFT_COLLECTIVE_TIMES")
    if not prefix or not _calls:
        return
    rank = dist.get_rank() if dist.is_initialized() else int(os.environ.get("RANK", "0"))
    with open("%s.%d.json" % (prefix, rank), "w") as f:
        json.dump(_calls, f)


atexit.register(write)


def _row_bytes(t):
    n = t.element_size()
    for d in t.shape[1:]:
        n *= d
    return n


def _bytes(kind, args):
    if kind in ("all_reduce", "broadcast"):
        t = args[0]
        return t.numel() * t.element_size()
    if kind in ("all_gather", "reduce_scatter"):
        return max(args[1]) * _row_bytes(args[0]) if args[1] else 0
    if kind == "all_to_all":
        return sum(c.numel() * c.element_size() for c in args[0])
    raise ValueError(kind)


def timed(kind, fn):
    """fn, timed into the call list when its group has more than one member."""
    group_arg = {"all_reduce": 1, "broadcast": 1, "all_gather": 2,
                 "reduce_scatter": 2, "all_to_all": 2}[kind]

    def call(*args, **kw):
        group = args[group_arg] if len(args) > group_arg else kw.get("group")
        if group is None or group.size == 1:
            return fn(*args, **kw)
        t0 = time.perf_counter()
        out = fn(*args, **kw)
        _calls.append([kind, list(group.ranks), _bytes(kind, args),
                       time.perf_counter() - t0])
        return out
    return call
