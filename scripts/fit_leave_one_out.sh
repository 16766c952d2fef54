#!/usr/bin/env bash
# Regenerates the leave-one-out: docs/validation_leave_one_out.txt (the
# held-out table the README quotes, and each fit's parameters) and
# scenarios/fitted_params_folds.textproto (those fits, which `servesim run
# --spread` predicts with). The only way either file is written. About an
# hour on two cores; the fits are the same as scripts/fit_default_params.sh's
# (its file is the fit on every run here, byte for byte in its values).
# Usage: scripts/fit_leave_one_out.sh [THREADS]  (SERVESIM_BIN: another build of servesim)
set -euo pipefail
cd "$(dirname "$0")/.."
threads="${1:-2}"
runs="${SERVESIM_RUNS:-../shared/validation/sharegpt_runs.csv}"
table=docs/validation_leave_one_out.txt
folds=scenarios/fitted_params_folds.textproto
table_tmp="$(mktemp)"
trap 'rm -f "$table_tmp"' EXIT
# The table file starts with the fit's "fitting ENGINE on N runs" lines (stdout).
"${SERVESIM_BIN:-build/servesim}" fit --runs "$runs" --params none --max-evaluations 2400 --leave-one-out \
  --threads "$threads" --folds-out "$folds" >"$table_tmp"
cat "$table_tmp" >"$table"
echo "wrote $table and $folds"
