"""Every `graph` dialect op as a local torch function: what an emitted
program calls for each `spmd.local` (one graph op on a device's shard).

    v7 = ops.matmul(v5, v6)
    v10 = ops.layer_norm(v9, v2, v3, axis=-1, epsilon=1e-05)
    v13 = ops.reshape(v12, shape=(8, 4, 8))          # the LOCAL result shape

Calling convention (docs/Emit.md, "Local ops"):

- `ops.<name>(*operands, **attributes)`, `<name>` the op's name without
  `graph.`; operands in the op's order (an absent optional operand is not
  passed), attributes by their MLIR names: integers, floats, bools and
  strings as Python values, a unit attribute as True, dense arrays as
  tuples; absent optional attributes are not passed (their defaults apply).
- The plan's types are global; the emitter adds the shard's facts:
  `shape=` (local result shape) to reshape, expand, resize and flatten
  (and optionally conv_transpose2d), `shapes=` (one per result) to split
  and top2_gating, `to=` (result element type, "f32", "i64", "i1", …) to
  cast, `global_in=`, `global_out=`, `box=` to slice, `global_shape=` and
  `box=` to scatter_elements and scatter_nd. conv2d and conv_transpose2d
  derive their group count from the shard's operands.
- Floats follow the operands' dtype; `cast` to a float type gives
  `FLOAT` (set by the driver with `set_float_dtype`), to an integer type
  int64 (lib/Exec keeps integers as i64), to i1 bool.
- Not here: constant, parameter and buffer (the emitter's), the
  cross-device recipes (`recipes`). `dropout` calls `recipes.dropout`.

Backward: torch autograd, with lib/Exec's conventions (docs/Exec.md,
"Backward conventions") where torch's default differs: min/max send a tie's
gradient to the lhs, pow's exponent gradient is 0 where the base is ≤ 0
(autograd functions), clip passes the gradient at its bounds (torch's
clamp does not); batch_norm in training differentiates through the batch
statistics and never updates the running ones; scatter and top2_gating
route gradients as lib/Exec does. Already torch's: relu (none at 0),
reduce_max (shared evenly among ties), max_pool (first maximum),
floor/ceil/round (none).

Remaining differences from lib/Exec:

- Arithmetic is in the operands' dtype: lib/Exec accumulates reductions,
  softmax and normalisation statistics in double and rounds elementwise
  results to f32, so float32 runs agree to rounding, not bit for bit.
- A cast to f16 or bf16 gives `FLOAT` without rounding to that format
  (lib/Exec rounds the values and computes in f32).
- Losses also take reduction `none` (one loss per position, 0 where
  ignored), which lib/Exec does not have.
- Labels or indices out of range raise a torch error (lib/Exec: exit 1
  with the element named).
- NaN inputs: max_pool, scatter max/min and reduce_max may pick another
  element than lib/Exec.
"""

import torch

from .ops_elementwise import (  # noqa: F401
    acos, acosh, add, asin, asinh, atan, atanh, ceil, clip, compare, cos, cosh, div, erf, exp,
    expand, floor, gelu, log, max, min, mul, neg, pow, relu, round, rsqrt, select, sigmoid, sin,
    sinh, sqrt, sub, tan, tanh)
from .ops_movement import (  # noqa: F401
    concat, flatten, gather, gather_elements, reshape, scatter_elements, scatter_nd, slice,
    split, transpose)
from .ops_nn import (  # noqa: F401
    avg_pool, batch_norm, conv2d, conv_transpose2d, cross_entropy, dropout, global_avg_pool,
    layer_norm, log_softmax, matmul, max_pool, nll_loss, reduce_max, reduce_mean, reduce_sum,
    softmax, top2_gating)
from .ops_resize import resize  # noqa: F401

# The dtype of the run's floats (`--dtype`): what a cast to a float type gives.
FLOAT = torch.float32

_FLOAT_TYPES = {"f16", "bf16", "f32", "f64"}


def set_float_dtype(dtype):
    """Sets `FLOAT`, the dtype casts to a float type produce."""
    global FLOAT
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError("set_float_dtype: %r is not a floating-point torch dtype" % (dtype,))
    FLOAT = dtype


def cast(input, to):  # noqa: A002 - the operand's name
    """Converts to the element type `to` (MLIR spelling): a float type →
    FLOAT (float → float passes the gradient), i1 → bool (x ≠ 0), any other
    integer type → int64 (floats truncate toward zero); casts from or to
    integers have no gradient."""
    if to in _FLOAT_TYPES:
        return input.to(FLOAT)
    if to == "i1":
        return input.detach() != 0
    if to.lstrip("su").startswith("i") and to.lstrip("sui").isdigit():
        return input.detach().to(torch.int64)
    raise ValueError("cast: unknown element type '%s'" % to)


# One name per graph op (dropout included): the emitter's lookup table and
# the test's check that nothing is missing.
OP_NAMES = (
    "acos", "acosh", "add", "asin", "asinh", "atan", "atanh", "avg_pool", "batch_norm", "cast",
    "ceil", "clip", "compare", "concat", "conv2d", "conv_transpose2d", "cos", "cosh",
    "cross_entropy", "div", "dropout", "erf", "exp", "expand", "flatten", "floor", "gather",
    "gather_elements", "gelu", "global_avg_pool", "layer_norm", "log", "log_softmax", "matmul",
    "max", "max_pool", "min", "mul", "neg", "nll_loss", "pow", "reduce_max", "reduce_mean",
    "reduce_sum", "relu", "reshape", "resize", "round", "rsqrt", "scatter_elements",
    "scatter_nd", "select", "sigmoid", "sin", "sinh", "slice", "softmax", "split", "sqrt", "sub",
    "tan", "tanh", "top2_gating", "transpose")
