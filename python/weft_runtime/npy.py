"""NumPy .npy files with torch alone (version 1.0, little-endian, C order).

An emitted program needs only torch; its weights (`weights/<name>.npy`),
data batches (`--data DIR`) and saved parameters (`--save DIR`) are .npy
files, read and written here: float32, float64, int32, int64 and bool.
"""

import ast
import struct

import torch

from .errors import WeftRuntimeError

MAGIC = b"\x93NUMPY"
DTYPES = {"<f4": torch.float32, "<f8": torch.float64, "<i4": torch.int32,
          "<i8": torch.int64, "|b1": torch.bool, "<f2": torch.float16}
DESCR = {v: k for k, v in DTYPES.items()}


def read(path):
    """The tensor in a .npy file; one-line errors naming the file."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise WeftRuntimeError("cannot read '%s': %s" % (path, e.strerror))
    if raw[:6] != MAGIC or len(raw) < 10:
        raise WeftRuntimeError("'%s' is not a .npy file" % path)
    major = raw[6]
    if major == 1:
        (hlen,), start = struct.unpack("<H", raw[8:10]), 10
    else:
        (hlen,), start = struct.unpack("<I", raw[8:12]), 12
    try:
        header = ast.literal_eval(raw[start:start + hlen].decode("latin1"))
        descr, shape = header["descr"], tuple(header["shape"])
        fortran = header["fortran_order"]
    except (ValueError, SyntaxError, KeyError, TypeError):
        raise WeftRuntimeError("'%s': unreadable .npy header" % path)
    if descr not in DTYPES or fortran:
        raise WeftRuntimeError("'%s': %s%s is not supported (float32/64, int32/64, bool in C "
                               "order)" % (path, descr, ", Fortran order" if fortran else ""))
    data = raw[start + hlen:]
    dtype = DTYPES[descr]
    n = 1
    for d in shape:
        n *= d
    need = n * torch.empty((), dtype=dtype).element_size()
    if len(data) < need:
        raise WeftRuntimeError("'%s' holds %d bytes of data, its shape %s needs %d"
                               % (path, len(data), shape, need))
    if n == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(data[:need]), dtype=dtype).reshape(shape).clone()


def _bytes(t):
    """The raw bytes of a contiguous CPU tensor."""
    flat = t.reshape(-1).view(torch.uint8)
    try:
        return flat.numpy().tobytes()
    except (RuntimeError, ImportError):  # torch without numpy
        return bytes(flat.tolist())


def write(path, t):
    """Writes tensor t (moved to the CPU) as a version 1.0 .npy file."""
    t = t.detach().cpu().contiguous()
    if t.dtype not in DESCR:
        t = t.to(torch.float32)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (
        DESCR[t.dtype], tuple(t.shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    try:
        with open(path, "wb") as f:
            f.write(MAGIC + b"\x01\x00" + struct.pack("<H", len(header)))
            f.write(header.encode("latin1"))
            f.write(_bytes(t))
    except OSError as e:
        raise WeftRuntimeError("cannot write '%s': %s" % (path, e.strerror))
