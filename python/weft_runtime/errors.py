"""Errors of the runtime and the one-line report an emitted program ends with.

Every failure the runtime can name (a launch that does not match the plan, a
peer that never joins, a collective that times out, a plan the runtime cannot
run) is a WeftRuntimeError carrying an exit code from docs/ExitCodes.md.
`main` runs an emitted program's entry point and turns such an error, or any
other exception, into one line on stderr and a non-zero exit: never a
traceback wall, never a hang (every wait has a timeout, docs/Emit.md).
"""

import os
import re
import sys

from . import timing

# The codes of docs/ExitCodes.md.
EXIT_OK = 0
EXIT_BAD_INPUT = 1  # the launch or the plan does not fit: world size, rank, peers
EXIT_VERIFY = 3  # two computations that must agree do not
EXIT_INTERNAL = 4  # a bug in the runtime

PROGRAM = "weft-runtime"


class WeftRuntimeError(Exception):
    """A failure with its exit code; str() is the one-line message."""

    def __init__(self, message, code=EXIT_BAD_INPUT):
        super().__init__(" ".join(str(message).split()))
        self.code = code


def one_line(exc):
    """The first line of an exception's message, with its type when unnamed."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    if isinstance(exc, WeftRuntimeError):
        return first
    return "%s: %s" % (type(exc).__name__, first) if first else type(exc).__name__


def _plain(exc):
    """An exception's first sentence without torch's source-location prefix."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    msg = re.sub(r"^\[[^\]]*\]\s*", "", msg)
    msg = re.sub(r"^\[rank\d+\]:\s*", "", msg)
    cut = re.search(r"\.\s", msg)
    return msg[:cut.start()] if cut else msg.rstrip(".")


def describe_distributed_failure(exc, rank, timeout_s):
    """Names a torch.distributed failure (a timeout, a closed peer) in one line."""
    msg = _plain(exc)
    low = msg.lower()
    if "timeout" in low or "timed out" in low:
        return ("rank %d: a peer did not answer within the timeout of %s s "
                "(a missing or stopped rank): %s" % (rank, timeout_s, msg))
    if "connection" in low or "closed" in low or "reset" in low:
        return "rank %d: a peer closed its connection: %s" % (rank, msg)
    return "rank %d: %s" % (rank, msg)


def report(message, code):
    """Prints `weft-runtime: error: MESSAGE` and ends the process with `code`.

    os._exit skips interpreter teardown: a process group whose peer is gone
    can block in its destructor, and the error is already reported.
    """
    try:
        sys.stdout.flush()
    except Exception:
        pass
    sys.stderr.write("%s: error: %s\n" % (PROGRAM, " ".join(message.split())))
    sys.stderr.flush()
    os._exit(code)


def main(entry, *args, **kwargs):
    """Runs `entry(*args, **kwargs)` and ends the process.

    A WeftRuntimeError exits with its code; a torch.distributed failure (a
    timeout, a closed peer) with EXIT_BAD_INPUT; a KeyboardInterrupt with
    130; any other exception is reported with its type and exits
    EXIT_INTERNAL. Each prints one line on stderr. On success the process
    ends with exit 0 through os._exit once stdout and stderr are flushed:
    on the pinned torch, the interpreter's teardown after a destroyed gloo
    process group aborts now and then ("terminate called without an active
    exception", SIGABRT; docs/Emit.md), which would turn a finished run
    into a failure. (So nothing registered with atexit runs: the collective
    times of timing.py are written here.)
    """
    try:
        entry(*args, **kwargs)
        timing.write()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_OK)
    except WeftRuntimeError as e:
        report(str(e), e.code)
    except KeyboardInterrupt:
        report("interrupted", 130)
    except Exception as e:  # noqa: BLE001 - the one-line contract
        if is_distributed_failure(e):
            rank = int(os.environ.get("RANK", "-1"))
            timeout = float(os.environ.get("WEFT_RUNTIME_TIMEOUT_S", "nan"))
            report(describe_distributed_failure(e, rank, timeout), EXIT_BAD_INPUT)
        report(one_line(e), EXIT_INTERNAL)


def is_distributed_failure(exc):
    """Whether `exc` is torch.distributed's (a store or backend failure, a
    timeout, a closed connection) rather than a bug."""
    try:
        import torch.distributed as dist
        if isinstance(exc, getattr(dist, "DistError", ())):
            return True
    except Exception:
        pass
    low = str(exc).lower()
    return isinstance(exc, RuntimeError) and any(
        k in low for k in ("timed out", "timeout", "connection closed",
                           "connection reset", "gloo", "nccl"))
