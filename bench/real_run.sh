#!/bin/sh
# The cost model against real runs of emitted programs on this machine
# (bench/real_run.py: profile, compile, run, compare; docs/benchmarks.md).
#
#   bench/real_run.sh [--quick] [--docs] [--models mlp,encoder,cnn,vit] ...
#
# --quick: under 10 minutes on 2 cores; without it, the full run (more
# random plans, 3 alternating rounds). --docs writes the tables into
# docs/benchmarks.md. Needs the build (README: scripts/install-deps.sh
# --python, then the CMake build): build/bin/weftc and build/venv.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD:-$root/build}
python=${PYTHON:-$build/venv/bin/python}
if [ ! -x "$build/bin/weftc" ]; then
  echo "real_run.sh: error: no $build/bin/weftc (build first, README)" >&2
  exit 1
fi
if ! "$python" -c "import torch" 2>/dev/null; then
  echo "real_run.sh: error: $python cannot import torch (scripts/install-deps.sh --python)" >&2
  exit 1
fi
exec "$python" "$root/bench/real_run.py" --build "$build" "$@"
