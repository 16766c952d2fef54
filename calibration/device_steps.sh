# Sourced by the calibration scripts that run on the GPU machine; they set
# $LOG first.

# run_step NAME TIMEOUT_S CMD...: runs CMD under `timeout`, its output shown
# and appended to $LOG between "== NAME" and "== NAME exit RC" lines;
# returns CMD's exit status.
run_step() {
  local name=$1 limit=$2
  shift 2
  echo "== $name" | tee -a "$LOG"
  timeout "$limit" "$@" 2>&1 | tee -a "$LOG"
  local rc=${PIPESTATUS[0]}
  echo "== $name exit $rc" | tee -a "$LOG"
  return "$rc"
}

# The bench's sources by their hash, the same on every machine (the device's
# copy of the tree may carry a stale .git). Here, in the repository root:
#   find calibration/cuda -type f -print0 | LC_ALL=C sort -z | xargs -0 cat | sha256sum
cuda_sources_hash() {
  find calibration/cuda -type f -print0 | LC_ALL=C sort -z | xargs -0 cat | sha256sum | cut -c1-16
}

# build_cuda_targets BUILD_DIR TARGET...: configures calibration/cuda in
# BUILD_DIR (with NCCL from $NCCL_ROOT where set) and builds the targets;
# fails unless each target is then an executable.
build_cuda_targets() {
  local build=$1
  shift
  cmake -S calibration/cuda -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" \
    ${NCCL_ROOT:+"-DNCCL_ROOT=$NCCL_ROOT"} 2>&1 | tail -3 | tee -a "$LOG"
  cmake --build "$build" --target "$@" -j"$(nproc)" 2>&1 | grep -vE "warning #|Remark|^\s*$" | tail -20 |
    tee -a "$LOG"
  local t
  for t in "$@"; do
    [ -x "$build/$t" ] || { echo "build failed: $build/$t" | tee -a "$LOG"; return 1; }
  done
}

# log_machine: starts $LOG with the time, the bench sources' hash, the GPU
# (name, driver, clocks, memory, power) and nvcc's version.
log_machine() {
  {
    echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ), calibration/cuda sources sha256 $(cuda_sources_hash)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.used,memory.total,power.draw \
      --format=csv
    nvcc --version | tail -1
  } 2>&1 | tee "$LOG"
}
