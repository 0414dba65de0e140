"""A program of the shape weft-translate --spmd-to-torch is to emit, written
by hand: one node of 2 devices, data parallel (micro-batch shards 3 and 1,
2 micro-batches), a linear layer with ZeRO-1 and a bias with ZeRO-2, Adam,
two steps. Each rank prints its loss after each step; rank 0 also prints
the dense single-process loss of the same steps for comparison.

    torchrun --nproc-per-node 2 test/emit/sample_program.py

Test hooks (test/emit/errors.py): WEFT_SAMPLE_PLAN=<text> changes the
plan's identity, WEFT_SAMPLE_EMITTED_FOR=<rank> makes the program one
emitted for that rank, WEFT_SAMPLE_LEAVE=<rank> makes that rank leave right
after the launch, WEFT_SAMPLE_STALL=<rank> makes it wait three timeouts
there.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))

import torch  # noqa: E402

import weft_runtime  # noqa: E402
from weft_runtime import optim  # noqa: E402
from weft_runtime.mesh import DeviceClass, Mesh  # noqa: E402
from weft_runtime.params import Param, ParamSet  # noqa: E402
from weft_runtime.runtime import Runtime  # noqa: E402
from weft_runtime.step import loss_seed, loss_value, train_step  # noqa: E402

MESH = Mesh(1, [2], [DeviceClass("CPU", (0,))])
SEGMENTS = {0: [3, 1]}
PLAN = "sample: linear, zero1/zero2, 1x2"
MICRO = 2


def data(step):
    g = torch.Generator().manual_seed(step)
    return (torch.randn(MICRO * 4, 3, generator=g, dtype=torch.float64),
            torch.randn(MICRO * 4, 2, generator=g, dtype=torch.float64))


def init():
    g = torch.Generator().manual_seed(99)
    return {"w": torch.randn(3, 2, generator=g, dtype=torch.float64),
            "b": torch.zeros(2, dtype=torch.float64)}


def dense_losses(steps):
    p = {k: v.clone().requires_grad_() for k, v in init().items()}
    opt = torch.optim.Adam(p.values(), lr=0.1)
    out = []
    for s in range(steps):
        X, T = data(s)
        opt.zero_grad()
        loss = ((X @ p["w"] + p["b"] - T) ** 2).sum() / X.shape[0]
        loss.backward()
        opt.step()
        out.append(float(loss.detach()))
    return out


def run():
    expected = os.environ.get("WEFT_SAMPLE_EMITTED_FOR")
    rt = Runtime.launch(MESH, SEGMENTS, plan_id=os.environ.get("WEFT_SAMPLE_PLAN", PLAN),
                        expected_rank=int(expected) if expected else None)
    if os.environ.get("WEFT_SAMPLE_LEAVE") == str(rt.rank):
        os._exit(0)
    if os.environ.get("WEFT_SAMPLE_STALL") == str(rt.rank):
        time.sleep(3 * rt.timeout_s)
    params = ParamSet()
    whole = init()
    params.add(Param("w", rt.shard_of(whole["w"], "[id, id]"), "zero1", rt.group(1), rt.comm))
    params.add(Param("b", rt.shard_of(whole["b"], "[id, id]"), "zero2", rt.group(1), rt.comm))
    opt = optim.Adam(lr=0.1)
    for step in range(2):
        X, T = data(step)

        def forward(m):
            x = rt.shard_of(X[4 * m:4 * m + 4], "[id, gather(0, 0)]")
            t = rt.shard_of(T[4 * m:4 * m + 4], "[id, gather(0, 0)]")
            y = x @ params["w"].tensor + params["b"].tensor
            return ((y - t) ** 2).sum() / 4

        losses = train_step(forward, params, opt, MICRO, loss_seed(MESH, "[id, sum]"))
        mean = sum(loss_value(rt, v, "[id, sum]") for v in losses) / MICRO
        print("rank %d step %d loss %.12f" % (rt.rank, step, float(mean)), flush=True)
    if rt.rank == 0:
        print("dense losses %s" % " ".join("%.12f" % v for v in dense_losses(2)), flush=True)
    rt.close()


if __name__ == "__main__":
    weft_runtime.main(run)
