"""weft-profile --runtime-collectives: collectives as emitted programs call them.

Each rank (one torch thread, gloo) calls the runtime's `Comm`
(weft_runtime/gloo_compat.py) as the program's collectives do, so a sample
includes whatever the runtime adds on this backend: the emulated calls
(docs/Emit.md, "Communication per backend"), padding, concatenation and
Python. Sizes are bytes per device as the cost model prices them
(weft/Eval/CollectivePricer.h): the buffer of an all_reduce and a
broadcast, one member's shard of an all_gather and a reduce_scatter, all a
member sends in an all_to_all, one message of a send_recv.

A sample is the time of `reps` back-to-back calls divided by `reps` (the
program calls collectives back to back with compute between; a barrier per
call would add its own latency), the median of three such runs, the largest
over the ranks.
"""

import statistics
import time

KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
         "broadcast", "send_recv")


def sizes(quick):
    top = 1 << 22 if quick else 1 << 24
    out, b = [], 16
    while b <= top:
        out.append(b)
        b *= 4
    return out


def worker(rank, world, port, runtime_path, byte_sizes, queue):
    import sys
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    sys.path.insert(0, runtime_path)
    from weft_runtime.gloo_compat import Comm
    from weft_runtime.groups import AxisGroup
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=world)
    comm = Comm("gloo")
    group = AxisGroup(axes=(0,), ranks=list(range(world)), index=rank,
                      pg=dist.group.WORLD)
    results = []
    for nbytes in byte_sizes:
        n = max(1, nbytes // 4)
        x = torch.ones(n)
        whole = torch.ones(n * world)
        rows = max(world, n - n % world)
        chunks = list(torch.ones(rows).split(rows // world))
        recv = [(rows // world,)] * world

        def send_recv():
            if rank == 0:
                dist.send(x, 1)
            elif rank == 1:
                dist.recv(x, 0)
        calls = {
            "all_reduce": lambda: comm.all_reduce(x, group, "sum"),
            "all_gather": lambda: comm.all_gather_dim0(x, [n] * world, group),
            "reduce_scatter": lambda: comm.reduce_scatter_dim0(whole, [n] * world, group),
            "all_to_all": lambda: comm.all_to_all_dim0(chunks, recv, group),
            "broadcast": lambda: comm.broadcast(x, group, 0),
            "send_recv": send_recv,
        }
        reps = max(4, min(200, int(4e7 / max(nbytes, 4096))))
        for name in KINDS:
            fn = calls[name]
            runs = []
            for _ in range(3):
                fn()
                dist.barrier()
                t0 = time.perf_counter()
                for _ in range(reps):
                    fn()
                runs.append((time.perf_counter() - t0) / reps)
                dist.barrier()
            t = torch.tensor([statistics.median(runs)], dtype=torch.float64)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            results.append((name, float(n * 4), t.item()))
    if rank == 0:
        queue.put(results)
    dist.destroy_process_group()


def profile(args, runtime_path, free_port, log):
    """Collective samples over args.ranks gloo processes."""
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.start_processes(worker, args=(args.ranks, free_port(), runtime_path,
                                     sizes(args.quick), queue),
                       nprocs=args.ranks, join=True, start_method="spawn")
    out = []
    for name, nbytes, seconds in queue.get():
        out.append({"device": args.device, "collective": name,
                    "devices": args.ranks, "bytes": nbytes, "seconds": seconds})
        if args.verbose:
            log("%-14s x%d %10d B %9.1f us" % (name, args.ranks, nbytes, 1e6 * seconds))
    return out


def link_figures(samples):
    """(bandwidth bytes/s, latency s) of one link from the send_recv samples:
    latency the smallest message's time, bandwidth the largest message's
    bytes over its time beyond that latency."""
    pts = sorted((s["bytes"], s["seconds"]) for s in samples
                 if s["collective"] == "send_recv")
    if len(pts) < 2:
        return None
    latency = pts[0][1]
    b, t = pts[-1]
    return b / max(t - latency, 1e-9), latency
