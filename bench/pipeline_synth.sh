#!/usr/bin/env bash
# Synthesis with pipeline stages, the goals of issue 28 (numbers in
# docs/benchmarks.md, "Compiler: pipeline stages"):
#  1. gpt --layers 96 on mixed-256: the single-stage plan, then --stages N
#     for N in $STAGES (default "4 8"): weftc wall, step estimate, fit;
#  2. synthesis time against layers: gpt with 24/48/96/192 layers on
#     mixed-256 at --stages $SCALE_STAGES (default 4), with the fitted
#     exponent of CPU time ~ layers^k;
#  3. bert (12 layers) on hap-64: --stages auto against the single-stage
#     plan (auto must never be worse).
# Every run bypasses the plan cache. Step times are estimates of the cost
# model (docs/Evaluator.md); wall times are measured on this machine.
# Usage: bench/pipeline_synth.sh [BUILD_DIR] [OUT_DIR]   (env SKIP="gpt scale bert")
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-$BUILD/bench-pipeline}
BIN=$BUILD/bin
SKIP=${SKIP:-}
STAGES=${STAGES:-4 8}
SCALE_STAGES=${SCALE_STAGES:-4}
mkdir -p "$OUT"

# One weftc run: NAME ARGS...; prints name, wall, step estimate, stages,
# micro-batches, fits and bubble from plan.json.
run() {
  local name=$1
  shift
  rm -rf "${OUT:?}/$name"
  local rc=0
  /usr/bin/time -f "%e %U %S %M" -o "$OUT/$name.time" "$BIN/weftc" --no-cache \
    "$@" -o "$OUT/$name" >"$OUT/$name.txt" 2>"$OUT/$name.err" || rc=$?
  if [[ $rc != 0 ]]; then
    echo "$name: exit $rc ($(grep -v '^Command exited' "$OUT/$name.err" | tail -1))"
    return 0
  fi
  python3 - "$OUT/$name" "$OUT/$name.time" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1] + "/plan.json"))
wall, user, system, rss = open(sys.argv[2]).read().split()[-4:]
e = d["estimate"]
stages = e.get("stages", [])
fits = all(m["fits"] for m in d["memory"])
print(f"{sys.argv[1].rsplit('/', 1)[-1]}: wall {float(wall):.2f} s, CPU "
      f"{float(user) + float(system):.2f} s, peak RSS "
      f"{int(rss) / 1024:.0f} MB, step {d['step_time_s']:.3f} s (estimate), "
      f"lower bound {d['lower_bound_s']:.3f} s "
      f"({d['step_time_s'] / d['lower_bound_s']:.2f}x), "
      f"{max(len(stages), 1)} stage(s), {e.get('micro_batches', 1)} "
      f"micro-batch(es), bubble {e.get('bubble_fraction', 0):.1%}, "
      f"fits {fits}")
EOF
}

# CPU seconds (user + system): wall time on a shared machine varies with
# its load.
cpu() { tail -1 "$OUT/$1.time" | awk '{print $2 + $3}'; }

if [[ " $SKIP " != *" gpt "* ]]; then
  echo "== gpt --layers 96 on mixed-256"
  "$BIN/weft-zoo" gpt --layers 96 -o "$OUT/gpt-96.onnx"
  run gpt96-single "$OUT/gpt-96.onnx" --cluster examples/clusters/mixed-256.yaml
  for s in $STAGES; do
    run "gpt96-stages$s" "$OUT/gpt-96.onnx" \
      --cluster examples/clusters/mixed-256.yaml --stages "$s"
  done
fi

if [[ " $SKIP " != *" scale "* ]]; then
  echo "== synthesis time against layers (mixed-256, --stages $SCALE_STAGES)"
  points=()
  for layers in 24 48 96 192; do
    "$BIN/weft-zoo" gpt --layers "$layers" -o "$OUT/gpt-$layers.onnx"
    run "scale-gpt$layers" "$OUT/gpt-$layers.onnx" \
      --cluster examples/clusters/mixed-256.yaml --stages "$SCALE_STAGES"
    [[ -f $OUT/scale-gpt$layers/plan.json ]] && points+=("$layers:$(cpu "scale-gpt$layers")")
  done
  python3 - "${points[@]}" <<'EOF'
import math, sys
pts = [tuple(map(float, p.split(":"))) for p in sys.argv[1:]]
if len(pts) >= 2:
    xs = [math.log(l) for l, _ in pts]
    ys = [math.log(w) for _, w in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / \
        sum((x - mx) ** 2 for x in xs)
    print(f"fitted exponent: CPU time ~ layers^{k:.2f} over "
          f"{', '.join(f'{int(l)}: {w:.2f} s' for l, w in pts)}")
EOF
fi

if [[ " $SKIP " != *" bert "* ]]; then
  echo "== bert on hap-64: --stages auto against one stage"
  "$BIN/weft-zoo" bert -o "$OUT/bert.onnx"
  run bert-single "$OUT/bert.onnx" --cluster examples/clusters/hap-64.yaml
  run bert-auto "$OUT/bert.onnx" --cluster examples/clusters/hap-64.yaml \
    --stages auto
  grep -h "stages .* micro-batches:" "$OUT/bert-auto.txt" || true
fi
