#!/usr/bin/env bash
# Compares measured whole-iteration times (servesim_iteration's CSV, from
# calibration/run_iteration_check.sh) with servesim's prediction of the same
# batch, and writes calibration/profiles/h200_iteration_check.csv
# (layout,batch,measured_ms,predicted_ms,error_pct); prints the median
# absolute error.
#   calibration/compare_iterations.sh MEASURED_CSV [SERVESIM_BINARY] [OUT_CSV] [PROFILE]
# PROFILE: kernel tables measured on the card the iterations ran on
# (calibration/run_same_card_check.sh), of any GPU; default the committed
# H200 profile. An op the profile lacks is priced by the H200 roofline: the
# batches where that happened are named on stderr.
# Like for like: the prediction uses servesim's own kernel tables without
# production-kernel or fitted backend factors (--no-production-factors, as the
# measurement composes those same kernels) and costs each collective as a
# local copy of its bytes (--collectives-as-copies, the measurement's
# stand-in for NCCL on one GPU).
set -euo pipefail
MEASURED="${1:?usage: compare_iterations.sh MEASURED_CSV [SERVESIM] [OUT_CSV] [PROFILE]}"
SERVESIM="${2:-build/servesim}"
OUT_CSV="${3:-calibration/profiles/h200_iteration_check.csv}"
PROFILE_ARGS=()
if [ -n "${4:-}" ]; then PROFILE_ARGS=(--profile "$4" --any-gpu-profile); fi
[ -r "$MEASURED" ] || { echo "compare_iterations: cannot read $MEASURED" >&2; exit 1; }
[ -x "$SERVESIM" ] || { echo "compare_iterations: servesim binary $SERVESIM not found (build target servesim)" >&2; exit 1; }
# --max-model-len: vLLM refuses the default 163840 under DP8 (KV budget); it
# does not change the GPU time of a batch.
serve_for() {
  case "$1" in
    tp8) echo "vllm serve deepseek-ai/DeepSeek-V3.2 --tensor-parallel-size 8 --max-model-len 65536" ;;
    dp8ep8) echo "vllm serve deepseek-ai/DeepSeek-V3.2 --data-parallel-size 8 --enable-expert-parallel --max-model-len 65536" ;;
    *) echo "compare_iterations: unknown layout '$1'" >&2; exit 1 ;;
  esac
}
echo "layout,batch,measured_ms,predicted_ms,error_pct" > "$OUT_CSV"
tail -n +2 "$MEASURED" | while IFS=, read -r layout batch measured; do
  serve=$(serve_for "$layout")
  n=1; c=1; p=1; field=decode_us
  if [[ "$batch" =~ ^decode_b([0-9]+)_c([0-9]+)$ ]]; then
    n=${BASH_REMATCH[1]}; c=${BASH_REMATCH[2]}
  elif [[ "$batch" =~ ^prefill_([0-9]+)$ ]]; then
    p=${BASH_REMATCH[1]}; field=prefill_us
  elif [[ "$batch" =~ ^decode_b([0-9]+)_c([0-9]+)\+prefill_([0-9]+)$ ]]; then
    n=${BASH_REMATCH[1]}; c=${BASH_REMATCH[2]}; p=${BASH_REMATCH[3]}; field=mixed_us
  else
    echo "compare_iterations: unknown batch '$batch'" >&2; exit 1
  fi
  json=$("$SERVESIM" explain --serve "$serve" --decode-seqs "$n" --context "$c" --prefill-tokens "$p" \
         --gpu-only-json --no-production-factors --collectives-as-copies ${PROFILE_ARGS[@]+"${PROFILE_ARGS[@]}"})
  python3 - "$layout" "$batch" "$measured" "$field" "$json" >> "$OUT_CSV" <<'PY'
import json, sys
layout, batch, measured, field, js = sys.argv[1:]
j = json.loads(js)
if j["roofline_fallbacks"]:
    print(f"compare_iterations: {layout} {batch}: priced by the roofline: "
          + " ".join(j["roofline_fallbacks"]), file=sys.stderr)
pred_ms = j[field] / 1000.0
m = float(measured)
print(f"{layout},{batch},{m:.3f},{pred_ms:.3f},{100.0 * (pred_ms - m) / m:+.1f}")
PY
done
python3 - "$OUT_CSV" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
errs = [abs(float(r["error_pct"])) for r in rows]
print(f"{len(rows)} batches; median absolute error {statistics.median(errs):.1f}%")
for lay in sorted({r["layout"] for r in rows}):
    e = [abs(float(r["error_pct"])) for r in rows if r["layout"] == lay]
    print(f"  {lay}: {len(e)} batches, median |error| {statistics.median(e):.1f}%, max {max(e):.1f}%")
PY
