#!/usr/bin/env python3
"""How often a live run's figure lies within servesim's spread for it.

`servesim run --spread` predicts a run with every leave-one-out fit of its
engine and reports the lowest and highest figure. This runs each live run of
a results CSV so, and counts, per fitted figure, the runs whose live value
lies within that range: whether the spread can be read as an interval (it is
not, docs/fitting.md).

usage: python3 scripts/spread_coverage.py [--runs CSV] [--servesim BIN]
"""
import argparse
import csv
import sys

from servesim_result import run_result

FIGURES = ["total_token_throughput", "mean_ttft_ms", "mean_tpot_ms", "median_itl_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", default="../shared/validation/sharegpt_runs.csv")
    ap.add_argument("--servesim", default="build/servesim")
    args = ap.parse_args()
    within = {f: 0 for f in FIGURES}
    runs = 0
    print("case | " + " | ".join(f"{f}: live [low, high]" for f in FIGURES))
    for r in csv.DictReader(open(args.runs, encoding="utf-8")):
        values, error = run_result(args.servesim, r["serve_command"], r["bench_command"], r["env"],
                                   spread=True)
        if values is None:
            sys.exit(f"spread_coverage: {r['case']}: {error}")
        spread = values["servesim_spread"]
        runs += 1
        cells = []
        for f in FIGURES:
            live, low, high = float(r[f]), spread[f]["low"], spread[f]["high"]
            inside = low <= live <= high
            within[f] += inside
            cells.append(f"{live:.1f} [{low:.1f}, {high:.1f}]{' within' if inside else ''}")
        print(f"{r['case']} | " + " | ".join(cells))
    print(f"live figures within their spread, of {runs} runs: " +
          ", ".join(f"{f} {within[f]}" for f in FIGURES))


if __name__ == "__main__":
    main()
