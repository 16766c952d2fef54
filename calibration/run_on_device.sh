#!/usr/bin/env bash
# Builds and runs the H200 calibration on the GPU machine. Run from the repo
# root with $OUT set; writes $OUT/h200.textproto and $OUT/calibrate.log.
#   calibration/run_on_device.sh [--quick]
# Each suite runs in its own process (a crash or timeout in one keeps the
# others' tables); the parts are merged into one profile at the end.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
EXTRA="${1:-}"
LOG="$OUT/calibrate.log"
export NCCL_NVLS_ENABLE=0   # NVLink multicast off (device notes), also for child processes
{
  echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ), kernel $(uname -r), $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p')"
  echo "== nvidia-smi"; nvidia-smi
  echo "== nvcc"; nvcc --version | tail -2
} 2>&1 | tee "$LOG"

NCCL_ROOT=$(python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)
echo "== NCCL_ROOT=${NCCL_ROOT:-none}" | tee -a "$LOG"
if [ -n "$NCCL_ROOT" ]; then export LD_LIBRARY_PATH="$NCCL_ROOT/lib:${LD_LIBRARY_PATH:-}"; fi
BUILD=build-device
cmake -S calibration/cuda -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" \
  ${NCCL_ROOT:+-DNCCL_ROOT=$NCCL_ROOT} 2>&1 | tail -5 | tee -a "$LOG" || exit 1
cmake --build "$BUILD" -j"$(nproc)" 2>&1 | grep -vE "warning #|Remark|^\s*$" | tail -20 | tee -a "$LOG" || exit 1
[ -x "$BUILD/servesim_calibrate" ] || { echo "build failed" | tee -a "$LOG"; exit 1; }

status=0
run_part() {  # name suites timeout_s
  echo "== part $1 ($2)" | tee -a "$LOG"
  timeout "$3" "$BUILD/servesim_calibrate" --out "$OUT/part_$1.textproto" --suites "$2" $EXTRA 2>&1 | tee -a "$LOG"
  local rc=${PIPESTATUS[0]}
  echo "== part $1 exit $rc" | tee -a "$LOG"
  [ "$rc" -eq 0 ] || status=1
}
run_part base copy,ceilings,small 90
run_part sampler sampler 60
run_part attention attention 120
run_part indexer indexer 60
run_part gemm gemm 180
run_part grouped grouped 60
run_part collectives collectives 30
# Host time per kernel launch outside CUDA graphs, through the machine's PyTorch.
echo "== part host (calibration/host/launch_overhead_bench.py)" | tee -a "$LOG"
timeout 300 python3 calibration/host/launch_overhead_bench.py > "$OUT/part_host.textproto" 2>>"$LOG"
rc=$?; echo "== part host exit $rc" | tee -a "$LOG"; [ "$rc" -eq 0 ] || status=1

# Merge: header (device, ceilings) from the base part, tables from every part.
{
  [ -f "$OUT/part_base.textproto" ] && awk '/^tables \{/{exit} {print}' "$OUT/part_base.textproto"
  for p in base sampler attention indexer gemm grouped collectives host; do
    f="$OUT/part_$p.textproto"
    [ -f "$f" ] && awk 'f||/^tables \{/{f=1; print}' "$f"
  done
} > "$OUT/h200.textproto"
rm -f "$OUT"/part_*.textproto
echo "== wrote $OUT/h200.textproto ($(grep -c '^tables {' "$OUT/h200.textproto") tables), overall status $status" | tee -a "$LOG"
exit $status
