# Sourced by the calibration scripts that run on the GPU machine.
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
