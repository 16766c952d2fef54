#!/usr/bin/env bash
# Builds servesim_iteration on the GPU machine and times whole DeepSeek-V3.2
# iterations of a TP8 and a DP8+EP8 rank (docs/calibration.md, "Iteration
# check"). Run from the repo root with $OUT set; writes
# $OUT/iteration_measured.csv and $OUT/iteration.log.
#   calibration/run_iteration_check.sh [BUDGET_S]
# Every FP8 GEMM runs per-tensor (--fp8-per-tensor), as the profile's tables
# were timed.
# A --quick smoke run goes first; the full run starts only if it passed.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
BUDGET="${1:-300}"
LOG="$OUT/iteration.log"
source "$(dirname "${BASH_SOURCE[0]}")/device_steps.sh"
log_machine
BUILD=build-device-iter
# A binary built elsewhere for sm_90a and carried here (PREBUILT=1) saves the
# device minutes of the build.
if [ "${PREBUILT:-0}" = 1 ] && [ -x "$BUILD/servesim_iteration" ]; then
  echo "== prebuilt $BUILD/servesim_iteration" | tee -a "$LOG"
else
  build_cuda_targets "$BUILD" servesim_iteration || exit 1
fi
run_step quick 120 "$BUILD/servesim_iteration" --csv "$OUT/iteration_quick.csv" --quick --fp8-per-tensor || exit
run_step "full (budget ${BUDGET} s)" $((BUDGET + 120)) "$BUILD/servesim_iteration" \
  --csv "$OUT/iteration_measured.csv" --budget-s "$BUDGET" --breakdown --fp8-per-tensor
