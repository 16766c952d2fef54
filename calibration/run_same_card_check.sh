#!/usr/bin/env bash
# The iteration check on whatever Hopper card the device lends (docs/calibration.md,
# "Same-card check"): measures the kernel tables servesim prices a GPU step from
# (every suite but the collectives, which the check prices as copies, and the host
# launch, which GPU-only times leave out) and then whole DeepSeek-V3.2 iterations,
# in one session on one card, so the comparison needs no H200. On the GPU machine,
# from the repo root with $OUT set:
#   calibration/run_same_card_check.sh [ITERATION_BUDGET_S]
# writes $OUT/profile.textproto, $OUT/iteration_measured.csv and $OUT/same_card.log.
# Then, here:
#   calibration/compare_iterations.sh MEASURED_CSV build/servesim OUT_CSV PROFILE
# Binaries built here for sm_90a and carried as build-device-iter/servesim_calibrate
# and build-device-iter/servesim_iteration are used when they load; else both are
# built on the device.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
BUDGET="${1:-300}"
LOG="$OUT/same_card.log"
source "$(dirname "${BASH_SOURCE[0]}")/device_steps.sh"
log_machine
NCCL_ROOT=$(python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)
if [ -n "$NCCL_ROOT" ]; then export LD_LIBRARY_PATH="$NCCL_ROOT/lib:${LD_LIBRARY_PATH:-}"; fi
BUILD=build-device-iter
loads() { [ -x "$1" ] && ! ldd "$1" | grep -q "not found"; }
if loads "$BUILD/servesim_calibrate" && loads "$BUILD/servesim_iteration"; then
  echo "== prebuilt binaries in $BUILD" | tee -a "$LOG"
else
  build_cuda_targets "$BUILD" servesim_calibrate servesim_iteration || exit 1
fi
run_step "kernel tables" 420 "$BUILD/servesim_calibrate" --out "$OUT/profile.textproto" --fp8-per-tensor \
  --suites copy,ceilings,small,sampler,attention,indexer,gemm,grouped || exit
run_step "iterations (budget ${BUDGET} s)" $((BUDGET + 90)) "$BUILD/servesim_iteration" \
  --csv "$OUT/iteration_measured.csv" --budget-s "$BUDGET" --breakdown --fp8-per-tensor
