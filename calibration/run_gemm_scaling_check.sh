#!/usr/bin/env bash
# Builds servesim_calibrate on the GPU machine (repo root, $OUT set) and
# measures, in one session, what the committed FP8 GEMM tables mix: every
# single FP8 GEMM with per-tensor scaling at every m (--fp8-per-tensor), then
# the same tables as committed (block scaling where cuBLASLt offers it, m >= 4;
# per-tensor below), so the two modes differ by the kernel and not by the
# machine or the day. The copy suite comes first: its log lines set
# cudaMemcpyAsync beside an SM copy kernel at each size (the 1 GB point).
# Writes $OUT/gemm_per_tensor.textproto, $OUT/gemm_block.textproto,
# $OUT/copy.textproto, $OUT/gemm_scaling_check.log and $OUT/build.log.
# calibration/gemm_scaling_compare.py sets the two GEMM files side by side.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
LOG="$OUT/gemm_scaling_check.log"
{
  echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ), kernel $(uname -r), $(nproc) CPUs"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem --format=csv
} 2>&1 | tee "$LOG"
BUILD=build-device
cmake -S calibration/cuda -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" \
  > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
cmake --build "$BUILD" --target servesim_calibrate -j"$(nproc)" >> "$OUT/build.log" 2>&1 ||
  { tail -20 "$OUT/build.log"; exit 1; }
status=0
run() {  # name timeout_s args...
  local name=$1 limit=$2
  shift 2
  echo "== $name: $*" | tee -a "$LOG"
  timeout "$limit" "$BUILD/servesim_calibrate" --out "$OUT/$name.textproto" "$@" 2>&1 | tee -a "$LOG"
  local rc=${PIPESTATUS[0]}
  echo "== $name exit $rc" | tee -a "$LOG"
  [ "$rc" -eq 0 ] || status=1
}
run copy 60 --suites copy
run gemm_per_tensor 200 --suites gemm --fp8-per-tensor
run gemm_block 200 --suites gemm
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee -a "$LOG"
exit $status
