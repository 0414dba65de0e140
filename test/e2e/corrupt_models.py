#!/usr/bin/env python3
"""Feeds a tool deterministic corruptions of a model (random byte changes,
truncations) and fails if any run ends other than with exit code 0 or 1:
bad input must give one message and exit 1, never a crash (docs/Design.md §10).

    corrupt_models.py MODEL COUNT SEED -- TOOL [ARGS...]   (MODEL's copy is
    passed as the first argument after TOOL)
"""
import random
import subprocess
import sys
import tempfile


def main():
    split = sys.argv.index("--")
    model, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    tool = sys.argv[split + 1:]
    original = open(model, "rb").read()
    rng = random.Random(seed)
    failures = 0
    with tempfile.NamedTemporaryFile(suffix=".onnx") as tmp:
        for i in range(count):
            data = bytearray(original)
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            if rng.random() < 0.3:
                data = data[:rng.randrange(len(data))]
            tmp.seek(0)
            tmp.truncate()
            tmp.write(data)
            tmp.flush()
            run = subprocess.run(tool[:1] + [tmp.name] + tool[1:],
                                 capture_output=True, timeout=60)
            if run.returncode not in (0, 1):
                failures += 1
                print("case %d: exit %d: %s" % (i, run.returncode,
                      run.stderr.decode(errors="replace")[-400:]))
    print("%d corruptions, %d crashes" % (count, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
