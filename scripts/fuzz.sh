#!/usr/bin/env bash
# Fuzzes Weft's readers with libFuzzer (clang 16, AddressSanitizer and
# UndefinedBehaviorSanitizer) in build-sanitize/, the build that scripts/check.sh
# --sanitize uses (docs/Fuzzing.md).
#   scripts/fuzz.sh --list              names the targets
#   scripts/fuzz.sh [TARGET|all] [SECONDS]
# Each target starts from its seed corpus fuzz/corpus/TARGET (read only; new
# inputs go to build-sanitize/corpus/TARGET) and writes any crasher to
# fuzz/crashers/TARGET/, which ctest replays in the normal build. Default:
# every target, 60 seconds each.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(cluster-spec csv-trace gavel-trace oracle-table profile-db
         onnx-binary onnx-text spmd-plan)
if [[ ${1:-} == --list ]]; then
  printf '%s\n' "${targets[@]}"
  exit 0
fi
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
which=${1:-all}
seconds=${2:-60}
if [[ $which != all ]] && ! printf '%s\n' "${targets[@]}" | grep -qx "$which"; then
  echo "fuzz.sh: unknown target '$which' (scripts/fuzz.sh --list names them)" >&2
  exit 1
fi
[[ $seconds =~ ^[0-9]+$ && $seconds -gt 0 ]] || {
  echo "fuzz.sh: SECONDS must be a positive integer, got '$seconds'" >&2
  exit 1
}
scripts/install-deps.sh
[ -f build-sanitize/build.ninja ] ||
  cmake -G Ninja -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Release -DWEFT_FUZZ=ON \
    -DWEFT_SANITIZE=address,undefined >/dev/null
run=("${targets[@]}")
[[ $which == all ]] || run=("$which")
ninja -C build-sanitize "${run[@]/#/weft-fuzz-}"
status=0
for t in "${run[@]}"; do
  mkdir -p "build-sanitize/corpus/$t" "fuzz/crashers/$t"
  log="build-sanitize/fuzz-$t.log"
  echo "== $t: $seconds s"
  started=$SECONDS
  if ! build-sanitize/bin/weft-fuzz-"$t" -max_total_time="$seconds" \
      -print_final_stats=1 -rss_limit_mb=4096 -timeout=30 \
      -artifact_prefix="fuzz/crashers/$t/" \
      "build-sanitize/corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1; then
    status=1
    echo "$t: FOUND A CRASH (see $log and fuzz/crashers/$t/)"
  fi
  # One line per target: executions, coverage, corpus.
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  corpus=$(ls "build-sanitize/corpus/$t" | wc -l)
  echo "$t: $execs executions in $((SECONDS - started)) s, coverage $cov edges, $corpus inputs kept"
done
exit $status
