#!/usr/bin/env bash
# Builds and runs servesim_logits_clean_check on the GPU machine (repo root,
# $OUT set): vLLM's decode-indexer logits clean pass against the copy_d2d
# stand-in that prices it. Writes $OUT/logits_clean_check.log.
set -euo pipefail
: "${OUT:?set OUT to the output folder}"
LOG="$OUT/logits_clean_check.log"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv | tee "$LOG"
BUILD=build-device
cmake -S calibration/cuda -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" \
  > "$OUT/build.log" 2>&1
cmake --build "$BUILD" --target servesim_logits_clean_check -j"$(nproc)" >> "$OUT/build.log" 2>&1
"$BUILD/servesim_logits_clean_check" 2>&1 | tee -a "$LOG"
