#!/bin/sh
# A heterogeneous cluster on one machine: ranks under cgroup CPU quotas run
# Weft's plan, DP-EV and DP-CP for real (bench/hetero_run.py says how;
# docs/benchmarks.md, "Heterogeneous run under CPU quotas").
#
#   bench/hetero_run.sh            # 2 ranks: 100 % and 40 % of a core
#   bench/hetero_run.sh --four     # 4 ranks: 60 %+40 % and 50 %+20 %
#   bench/hetero_run.sh --no-cgroups   # the pipeline without quotas (tests)
#
# Needs root for the cgroups (prints "skipped: ..." and exits 0 otherwise)
# and the build: build/bin/weftc and build/venv. The cgroups are removed on
# exit, also on Ctrl-C: the trap kills what is left in them and rmdirs them.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_BUILD:-$root/build}
python=${PYTHON:-$build/venv/bin/python}
tag=weft-hetero-$$
if [ ! -x "$build/bin/weftc" ]; then
  echo "hetero_run.sh: error: no $build/bin/weftc (build first, README)" >&2
  exit 1
fi
if ! "$python" -c "import torch" 2>/dev/null; then
  echo "hetero_run.sh: error: $python cannot import torch (scripts/install-deps.sh --python)" >&2
  exit 1
fi
cgroups=yes
for a in "$@"; do [ "$a" = --no-cgroups ] && cgroups=no; done
if [ $cgroups = yes ]; then
  if [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then base=/sys/fs/cgroup/cpu
  elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then base=/sys/fs/cgroup
  else echo "skipped: no cgroup cpu controller under /sys/fs/cgroup"; exit 0
  fi
  if ! mkdir "$base/$tag-probe" 2>/dev/null; then
    echo "skipped: cannot create a cgroup under $base (needs root and a writable cgroup fs)"
    exit 0
  fi
  rmdir "$base/$tag-probe"
fi
child=
cleanup() {
  [ -n "$child" ] && kill "$child" 2>/dev/null && wait "$child" 2>/dev/null
  [ $cgroups = yes ] || return 0
  for g in "$base/$tag"-*; do
    [ -d "$g" ] || continue
    for pid in $(cat "$g/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || :; done
    # What cannot be killed moves back to the parent group.
    for pid in $(cat "$g/cgroup.procs" 2>/dev/null); do echo "$pid" > "$base/cgroup.procs" 2>/dev/null || :; done
    rmdir "$g" 2>/dev/null || { sleep 0.5; rmdir "$g" 2>/dev/null; } || echo "hetero_run.sh: could not remove $g" >&2
  done
}
trap 'cleanup' EXIT
trap 'cleanup; trap - EXIT; exit 130' INT
trap 'cleanup; trap - EXIT; exit 143' TERM
"$python" "$root/bench/hetero_run.py" --build "$build" --tag "$tag" "$@" &
child=$!
wait "$child"
status=$?
child=
exit $status
