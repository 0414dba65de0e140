"""Measures which native calls of gloo_compat.CAPABILITIES a backend has.

    python -m weft_runtime.probe [--world N] [--backend gloo]

spawns N ranks on 127.0.0.1 and tries each call with uneven shards (one of
them empty), checking the values, not just that the call returns. It prints
one row per capability and whether gloo_compat's table for this torch agrees
(exit 1 when it does not: re-measure and update GLOO_MEASURED). `measure()`
is also called inside the tests' worker processes.
"""

import argparse
import datetime
import socket
import sys

import torch
import torch.distributed as dist


def _sizes(world):
    return [2, 0, 3, 1][:world] if world > 2 else [2, 0][:world]


def _try(fn):
    try:
        return bool(fn())
    except Exception:  # noqa: BLE001 - an unsupported call is an answer
        return False


def measure(group=None):
    """{capability: bool} for the current process group (every rank calls it)."""
    world = dist.get_world_size(group)
    me = dist.get_rank(group)
    sizes = _sizes(world)
    f = torch.float64
    res = {}

    def reduce_scatter():
        out = torch.zeros(sizes[me], dtype=f)
        chunks = [torch.full((sizes[r],), float(10 * me + r), dtype=f) for r in range(world)]
        dist.reduce_scatter(out, chunks, group=group)
        return bool(torch.all(out == sum(10 * p + me for p in range(world))))

    def reduce_scatter_tensor():
        out = torch.zeros(2, dtype=f)
        dist.reduce_scatter_tensor(out, torch.arange(2 * world, dtype=f) + me, group=group)
        want = world * torch.arange(2 * me, 2 * me + 2, dtype=f) + sum(range(world))
        return torch.equal(out, want)

    def all_gather_uneven():
        outs = [torch.zeros(sizes[r], dtype=f) for r in range(world)]
        dist.all_gather(outs, torch.full((sizes[me],), float(me), dtype=f), group=group)
        return all(torch.all(outs[r] == r) for r in range(world))

    def all_gather_into_tensor():
        out = torch.zeros(2 * world, dtype=f)
        dist.all_gather_into_tensor(out, torch.full((2,), float(me), dtype=f), group=group)
        return torch.equal(out, torch.arange(world, dtype=f).repeat_interleave(2))

    def all_to_all_uneven():
        outs = [torch.zeros(sizes[me] + p, dtype=f) for p in range(world)]
        ins = [torch.full((sizes[p] + me,), float(10 * me + p), dtype=f) for p in range(world)]
        dist.all_to_all(outs, ins, group=group)
        return all(torch.all(outs[p] == 10 * p + me) for p in range(world))

    def all_to_all_single_uneven():
        ins = [sizes[p] + me for p in range(world)]
        outs = [sizes[me] + p for p in range(world)]
        inp = torch.cat([torch.full((ins[p],), float(10 * me + p), dtype=f) for p in range(world)])
        out = torch.zeros(sum(outs), dtype=f)
        dist.all_to_all_single(out, inp, output_split_sizes=outs, input_split_sizes=ins,
                               group=group)
        want = torch.cat([torch.full((outs[p],), float(10 * p + me), dtype=f) for p in range(world)])
        return torch.equal(out, want)

    def avg():
        t = torch.full((2,), float(me), dtype=f)
        dist.all_reduce(t, op=dist.ReduceOp.AVG, group=group)
        return torch.allclose(t, torch.full((2,), (world - 1) / 2, dtype=f))

    for name, fn in [("reduce_scatter", reduce_scatter),
                     ("reduce_scatter_tensor", reduce_scatter_tensor),
                     ("all_gather_uneven", all_gather_uneven),
                     ("all_gather_into_tensor", all_gather_into_tensor),
                     ("all_to_all_uneven", all_to_all_uneven),
                     ("all_to_all_single_uneven", all_to_all_single_uneven),
                     ("avg", avg)]:
        ok = _try(fn)
        # Every rank must agree, or the call is not usable.
        flag = torch.tensor([1.0 if ok else 0.0], dtype=f)
        dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=group)
        res[name] = bool(flag.item() == 1.0)
    return res


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank, world, port, backend, queue):
    dist.init_process_group(backend, init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=60))
    res = measure()
    if rank == 0:
        queue.put(res)
    dist.barrier()
    dist.destroy_process_group()


def main(argv=None):
    import torch.multiprocessing as mp
    from .gloo_compat import CAPABILITIES, native_table, torch_minor
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--world", type=int, default=3)
    ap.add_argument("--backend", default="gloo")
    args = ap.parse_args(argv)
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.spawn(_worker, args=(args.world, free_port(), args.backend, queue), nprocs=args.world)
    res = queue.get()
    table = native_table(args.backend)
    print("torch %s, backend %s, %d ranks" % (torch.__version__, args.backend, args.world))
    agree = True
    for c in CAPABILITIES:
        same = table.get(c) == res[c]
        agree &= same
        print("%-26s %-13s %s" % (c, "native" if res[c] else "unsupported",
                                  "" if same else "(gloo_compat says %s)" % table.get(c)))
    print("gloo_compat's table for torch %s %s" % (torch_minor(), "agrees" if agree else "DIFFERS"))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
