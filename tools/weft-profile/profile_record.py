"""Runs one rank of an emitted program and records its local op calls.

    python profile_record.py OUT.pkl PROGRAM.py [program flags...]

weft-profile starts every rank of a plan's program through this script
(RANK, WORLD_SIZE, MASTER_ADDR/PORT set as local.sh sets them). Before the
program runs, each function `weft_runtime.ops.<name>` is wrapped so that a
call records the op's name, its operands (shape, dtype, requires_grad, and
the value range of integer operands), its attributes and its results'
shapes; the program then runs unchanged. When it ends successfully the distinct
calls, keyed as the cost model keys them (weft::opKey, e.g.
"matmul [64,256][256,1024]->[64,1024]"), each with the forward time of
every call as the program made it ("seconds"), are pickled to
OUT.pkl.<rank>,
with one step's optimizer update: the element count of every piece the
rank steps ("optimizer adam [N]", N their sum).
"""

import os
import pickle
import runpy
import sys
import time


def shape_text(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def op_key(name, args, result):
    """weft::opKey of one call: the tensors among the operands, the results."""
    import torch
    ins = "".join(shape_text(a.shape) for a in args if isinstance(a, torch.Tensor))
    outs = result if isinstance(result, (tuple, list)) else [result]
    return name + " " + ins + "->" + "".join(
        shape_text(o.shape) for o in outs if isinstance(o, torch.Tensor))


def describe(arg):
    """What the replay needs to rebuild an operand."""
    import torch
    if not isinstance(arg, torch.Tensor):
        return ("value", arg)
    lo = hi = None
    if not arg.dtype.is_floating_point and arg.dtype != torch.bool and arg.numel():
        lo, hi = int(arg.min()), int(arg.max())
    return ("tensor", tuple(arg.shape), str(arg.dtype).replace("torch.", ""),
            bool(arg.requires_grad), lo, hi)


def install(ops, calls):
    def wrap(name, fn):
        def recorded(*args, **kwargs):
            t0 = time.perf_counter()
            result = fn(*args, **kwargs)
            seconds = time.perf_counter() - t0
            key = op_key(name, args, result)
            if key not in calls:
                calls[key] = {"op": name, "args": [describe(a) for a in args],
                              "kwargs": kwargs, "seconds": []}
            calls[key]["seconds"].append(seconds)
            return result
        return recorded
    for name in ops.OP_NAMES:
        if hasattr(ops, name):
            setattr(ops, name, wrap(name, getattr(ops, name)))


def install_optimizers(optim, pieces):
    """Records the element count of every piece each optimizer steps."""
    for cls in (optim.SGD, optim.Adam):
        def wrap(update, name):
            def recorded(self, piece, grad, state):
                pieces.append((name(self), int(piece.numel())))
                return update(self, piece, grad, state)
            return recorded
        kind = ((lambda o: "momentum" if o.momentum else "sgd")
                if cls is optim.SGD else (lambda o: "adam"))
        cls.update = wrap(cls.update, kind)


def optimizer_call(pieces, steps):
    """One step's update as a call: key "optimizer adam [N]" (N the
    elements this rank steps, as weft::optimizerUpdateWork keys it)."""
    per_step = pieces[:len(pieces) // steps]
    if not per_step:
        return None
    kind = per_step[0][0]
    sizes = [n for _, n in per_step]
    return "optimizer %s [%d]" % (kind, sum(sizes)), {
        "op": "optimizer", "kind": kind, "pieces": sizes}


def main():
    out, program = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    from weft_runtime import ops, optim
    calls, pieces = {}, []
    install(ops, calls)
    install_optimizers(optim, pieces)

    def dump():
        steps = int(sys.argv[sys.argv.index("--steps") + 1])
        opt = optimizer_call(pieces, steps)
        if opt:
            calls[opt[0]] = opt[1]
        with open("%s.%s" % (out, os.environ.get("RANK", "0")), "wb") as f:
            pickle.dump(calls, f)

    # The runtime ends the program with os._exit (weft_runtime/errors.py):
    # the record is written on the way out of a successful run.
    real_exit = os._exit

    def exit_after_dump(code):
        if code == 0:
            dump()
        real_exit(code)
    os._exit = exit_after_dump
    sys.argv = [program] + sys.argv[3:]
    try:
        runpy.run_path(program, run_name="__main__")
    except SystemExit as e:
        if e.code not in (0, None):
            raise
    dump()


if __name__ == "__main__":
    main()
