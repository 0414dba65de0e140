"""Weft's PyTorch runtime: what a program emitted from an spmd plan calls.

One program runs per rank (torchrun). Its modules, each with one purpose
(docs/Emit.md is the reference):

- errors: the one-line error and exit-code contract (`main`)
- mesh: the plan's mesh, distributions and shard geometry (no processes)
- groups: torch.distributed groups per set of mesh axes
- gloo_compat: uneven collectives, native per backend or emulated
- collectives: the dialect's relayouts as autograd functions (backward = dual)
- runtime: launch checks, timeouts, the collectives by global shape and dist
- optim: SGD and Adam stepping a flat shard
- params: parameter strategies (replicated, zero1, zero2, zero3, buffer)
- recipes: the local recipes that talk across an axis (lib/Exec's)
- ops: every graph op as a local torch function (ops_elementwise,
  ops_movement, ops_nn, ops_resize hold them)
- keyed_random: the counter-based random numbers of dropout masks
- recompute: activation recomputation (torch.utils.checkpoint)
- step: one training step: micro-batches, loss seed, sync, optimizer
- pipeline: the main of a pipelined plan's program: stages, their groups,
  the 1F1B / GPipe schedule (docs/Pipeline.md)
- transfer: values and gradients between stages (point to point)
- probe: `python -m weft_runtime.probe` measures a backend's native calls
"""

from .errors import WeftRuntimeError, main  # noqa: F401
from .mesh import Mesh, DeviceClass, Gather, Geometry, ID, SUM, MAX, parse_dist  # noqa: F401

__all__ = ["WeftRuntimeError", "main", "Mesh", "DeviceClass", "Gather", "Geometry",
           "ID", "SUM", "MAX", "parse_dist"]
