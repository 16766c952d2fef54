#!/usr/bin/env bash
# Builds everything (CUDA calibration code too when nvcc is present) and runs
# every test. Run scripts/setup_and_run.sh once first on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cuda=OFF
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then cuda=ON; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSERVESIM_BUILD_CUDA=$cuda \
  -DCMAKE_CUDA_COMPILER="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
