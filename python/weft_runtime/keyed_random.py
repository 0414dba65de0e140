"""Counter-based random numbers, bit for bit those of lib/Exec/Random.cpp.

A value is a pure function of (seed, stream, element index) through
splitmix64's mixer (`mix64`), so every rank draws the single-device value of
the elements it holds, whatever its shard, and a recomputed forward draws
the same. Dropout keeps element e with scale 1/(1 − ratio) when
uniform01(seed, mix64(op id), global index of e) >= ratio, the op id being
the ordinal of the dropout op among the program's dropout ops
(docs/Exec.md, "Dropout").

Tensors hold the 64-bit words as int64 (two's complement): additions and
multiplications wrap as unsigned ones do, and right shifts are made logical
with a mask.
"""

import torch

MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
M1 = 0xBF58476D1CE4E5B9
M2 = 0x94D049BB133111EB


def mix64(x):
    """splitmix64's mixer on a Python int (mod 2^64)."""
    x = (x + GAMMA) & MASK64
    x = ((x ^ (x >> 30)) * M1) & MASK64
    x = ((x ^ (x >> 27)) * M2) & MASK64
    return x ^ (x >> 31)


def stream_of(name):
    """FNV-1a of the name's bytes, mixed (Random.cpp's streamOf)."""
    h = 0xCBF29CE484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001B3) & MASK64
    return mix64(h)


def _signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def _shr(x, k):
    """Logical right shift of int64 words."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def mix64_tensor(x):
    """mix64 of every int64 word of x."""
    x = x + _signed(GAMMA)
    x = (x ^ _shr(x, 30)) * _signed(M1)
    x = (x ^ _shr(x, 27)) * _signed(M2)
    return x ^ _shr(x, 31)


def uniform01(seed, stream, index):
    """uniform01(seed, stream, index) for an int64 tensor of indices: float64
    in [0, 1), the top 53 bits of randomBits."""
    base = _signed(mix64(mix64(seed) ^ stream))
    bits = mix64_tensor(index.to(torch.int64) + base)
    return _shr(bits, 11).to(torch.float64) * (2.0 ** -53)


def global_indices(shape, global_shape=None, offsets=None, device=None):
    """The row-major global index of every element of a shard of `shape` at
    `offsets` in a tensor of `global_shape` (default: the shard is whole)."""
    global_shape = list(global_shape) if global_shape else list(shape)
    offsets = list(offsets) if offsets else [0] * len(shape)
    strides = [1] * len(global_shape)
    for d in range(len(global_shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * global_shape[d + 1]
    index = torch.full(tuple(shape), sum(o * s for o, s in zip(offsets, strides)),
                       dtype=torch.int64, device=device)
    for d, (n, s) in enumerate(zip(shape, strides)):
        view = [1] * len(shape)
        view[d] = n
        index = index + (torch.arange(n, dtype=torch.int64, device=device) * s).view(view)
    return index


def dropout_mask(shape, ratio, seed, op_id, global_shape=None, offsets=None,
                 dtype=torch.float32, device=None):
    """Dropout.cpp's dropoutMask: 1/(1 − ratio) where kept, 0 elsewhere.

    The scale is rounded to `dtype` as the C++ rounds it to float."""
    u = uniform01(seed, mix64(op_id), global_indices(shape, global_shape, offsets, device))
    keep = 1.0 / (1.0 - ratio) if ratio < 1.0 else 0.0
    return torch.where(u >= ratio, torch.tensor(keep, dtype=dtype, device=device),
                       torch.tensor(0.0, dtype=dtype, device=device))
