"""Elementwise graph ops as local torch functions (re-exported by `ops`).

Binary ops broadcast as numpy does; unary ops map every element. Floats
follow the operands' dtype; integer tensors (int64, lib/Exec's i64) keep
lib/Exec's integer arithmetic: division truncates and gives 0 for a zero
divisor, `pow` truncates the float power, and every unary op but `neg`
returns an integer input unchanged (lib/Exec/Unary.cpp maps only floats).

Where torch's backward differs from lib/Exec's (docs/Exec.md, "Backward
conventions") an autograd function gives lib/Exec's: `min`/`max` send a
tie's gradient to the lhs (torch halves it), `pow`'s exponent gradient is
0 where the base is ≤ 0 (torch gives NaN below 0), `clip` passes the
gradient at its bounds (torch's clamp does not). relu (none at 0) and
floor/ceil/round (none) already agree.

This module defines `min`, `max`, `pow` and `round` at module level; the
code below calls the builtins of those names through `builtins`.
"""

import builtins

import torch


def _float(t):
    return t.is_floating_point()


def _sum_to(g, shape):
    """The gradient of a broadcast operand: g summed down to `shape`."""
    return g.sum_to_size(shape) if tuple(g.shape) != tuple(shape) else g


# --- binary ops -------------------------------------------------------------------------------

def add(lhs, rhs):
    return torch.add(lhs, rhs)


def sub(lhs, rhs):
    return torch.sub(lhs, rhs)


def mul(lhs, rhs):
    return torch.mul(lhs, rhs)


def div(lhs, rhs):
    """lhs / rhs; integers truncate toward zero and x / 0 is 0."""
    if _float(lhs):
        return torch.div(lhs, rhs)
    zero = rhs == 0
    safe = torch.where(zero, torch.ones_like(rhs), rhs)
    q = torch.div(lhs, safe, rounding_mode="trunc")
    return torch.where(zero, torch.zeros_like(q), q)


class _Pow(torch.autograd.Function):
    """a ** b with lib/Exec's gradients: d/da = 0 where b = 0, d/db =
    a^b·ln a where a > 0 and 0 elsewhere."""

    @staticmethod
    def forward(ctx, a, b):
        y = torch.pow(a, b)
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        a, b, y = ctx.saved_tensors
        da = db = None
        if ctx.needs_input_grad[0]:
            d = dy * b * torch.pow(a, b - 1)
            da = _sum_to(torch.where(b == 0, torch.zeros_like(d), d), a.shape)
        if ctx.needs_input_grad[1]:
            pos = a > 0
            d = dy * y * torch.log(torch.where(pos, a, torch.ones_like(a)))
            db = _sum_to(torch.where(pos, d, torch.zeros_like(d)), b.shape)
        return da, db


def pow(lhs, rhs):  # noqa: A001 - the op's name
    """lhs ** rhs; integers: the float power truncated (lib/Exec's)."""
    if _float(lhs):
        return _Pow.apply(lhs, rhs)
    p = torch.pow(lhs.to(torch.float64), rhs.to(torch.float64))
    return torch.trunc(p).to(lhs.dtype)


class _MinMax(torch.autograd.Function):
    """min/max whose gradient goes to the lhs where lhs and rhs tie."""

    @staticmethod
    def forward(ctx, a, b, is_max):
        lhs_wins = a >= b if is_max else a <= b
        ctx.save_for_backward(lhs_wins)
        ctx.shapes = (a.shape, b.shape)
        return torch.where(lhs_wins, a, b)

    @staticmethod
    def backward(ctx, dy):
        (lhs_wins,) = ctx.saved_tensors
        zero = torch.zeros_like(dy)
        a_shape, b_shape = ctx.shapes
        return (_sum_to(torch.where(lhs_wins, dy, zero), a_shape),
                _sum_to(torch.where(lhs_wins, zero, dy), b_shape), None)


def max(lhs, rhs):  # noqa: A001 - the op's name
    if not _float(lhs):
        return torch.maximum(lhs, rhs)
    return _MinMax.apply(lhs, rhs, True)


def min(lhs, rhs):  # noqa: A001 - the op's name
    if not _float(lhs):
        return torch.minimum(lhs, rhs)
    return _MinMax.apply(lhs, rhs, False)


# --- unary ops --------------------------------------------------------------------------------

def _unary(fn):
    """An elementwise op on floats; an integer input is returned unchanged."""
    def op(input):  # noqa: A002 - the operand's name
        return fn(input) if _float(input) else input
    op.__name__ = fn.__name__.lstrip("_")
    op.__doc__ = "graph.%s: elementwise on floats; integers pass unchanged." % fn.__name__
    return op


def neg(input):  # noqa: A002
    return torch.neg(input)


def _gelu(x):
    return torch.nn.functional.gelu(x)  # the erf form


def _rsqrt(x):
    return torch.rsqrt(x)


sqrt = _unary(torch.sqrt)
rsqrt = _unary(_rsqrt)
relu = _unary(torch.relu)
gelu = _unary(_gelu)
tanh = _unary(torch.tanh)
sigmoid = _unary(torch.sigmoid)
erf = _unary(torch.erf)
exp = _unary(torch.exp)
log = _unary(torch.log)
sin = _unary(torch.sin)
cos = _unary(torch.cos)
tan = _unary(torch.tan)
asin = _unary(torch.asin)
acos = _unary(torch.acos)
atan = _unary(torch.atan)
sinh = _unary(torch.sinh)
cosh = _unary(torch.cosh)
asinh = _unary(torch.asinh)
acosh = _unary(torch.acosh)
atanh = _unary(torch.atanh)
floor = _unary(torch.floor)
ceil = _unary(torch.ceil)
round = _unary(torch.round)  # noqa: A001 - halves to even, as lib/Exec's nearbyint


def clip(input, min=None, max=None):  # noqa: A002 - the op's attribute names
    """Clamp to [min, max] (either may be None). The gradient passes where
    min ≤ x ≤ max. Integers clamp as doubles and truncate (lib/Exec's)."""
    lo, hi = min, max
    if lo is None and hi is None:
        return input
    if _float(input):
        # torch's clamp passes no gradient at a bound; lib/Exec passes it.
        inside = torch.ones_like(input, dtype=torch.bool)
        if lo is not None:
            inside = inside & (input >= lo)
        if hi is not None:
            inside = inside & (input <= hi)
        return torch.where(inside, input, torch.clamp(input.detach(), lo, hi))
    v = input.to(torch.float64)
    if lo is not None:
        v = torch.clamp(v, min=float(lo))
    if hi is not None:
        v = torch.clamp(v, max=float(hi))
    return torch.trunc(v).to(input.dtype)


# --- comparison and selection -----------------------------------------------------------------

_PREDICATES = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
               "gt": torch.gt, "ge": torch.ge}


def compare(lhs, rhs, predicate):
    """A bool tensor (lib/Exec's i1); no gradient."""
    fn = _PREDICATES.get(predicate)
    if fn is None:
        raise ValueError("compare: unknown predicate '%s' (one of %s)"
                         % (predicate, ", ".join(sorted(_PREDICATES))))
    if _float(lhs) != _float(rhs):
        lhs, rhs = lhs.to(torch.float64), rhs.to(torch.float64)
    return fn(lhs.detach(), rhs.detach())


def select(condition, lhs, rhs):
    """condition ? lhs : rhs with broadcasting; the gradient goes to lhs
    where the condition holds, to rhs elsewhere."""
    return torch.where(condition.to(torch.bool), lhs, rhs)


def expand(input, shape):  # noqa: A002
    """Broadcast to `shape`, the local result shape (a view)."""
    return input.expand(tuple(builtins.int(d) for d in shape))
