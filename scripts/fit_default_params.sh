#!/usr/bin/env bash
# Regenerates scenarios/fitted_params.textproto from the live runs: the only
# way that file is written. Usage: scripts/fit_default_params.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-scenarios/fitted_params.textproto}"
runs="${SERVESIM_RUNS:-../shared/validation/sharegpt_runs.csv}"
# The fit reads the committed profile and no previous parameters.
build/servesim fit --runs "$runs" --params none --max-evaluations 2400 --out "$out" >/dev/null
echo "wrote $out"
