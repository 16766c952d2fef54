#!/usr/bin/env python3
"""How far the repeat profiles move the live runs' predictions.

The committed profile (calibration/profiles/h200.textproto) is what the
parameters were fitted on; the repeats measured the same tables on other
machines. With the fitted parameters held, each repeat's predictions of the
live runs are compared with the committed profile's: the median absolute
change of each compared figure over the runs that ran, and the largest, with
its run. The README's and docs/calibration.md's "Repeatability" figures come
from this table. Tables the committed profile took from a later run
(calibration/swap_tables.py marks their notes; since 2026-12-06 the per-tensor
gemm_fp8 tables) were not repeated: each repeat gets the committed ones for
those kinds, so that a kernel family the repeat did not time is not counted
as run-to-run change.

Usage: python3 scripts/profile_repeat_effect.py [--servesim build/servesim]
"""
import argparse
import glob
import json
import os
import statistics
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "calibration"))
from swap_tables import SWAP_MARK  # noqa: E402

FIGURES = [
    ("total_token_throughput", "total tok/s"),
    ("mean_ttft_ms", "mean TTFT"),
    ("p99_ttft_ms", "p99 TTFT"),
    ("mean_tpot_ms", "mean TPOT"),
    ("mean_itl_ms", "mean ITL"),
    ("median_itl_ms", "median ITL"),
    ("p99_itl_ms", "p99 ITL"),
    ("max_output_tokens_per_s", "peak output"),
]


def predictions(servesim, profile, runs):
    out = subprocess.run([servesim, "validate", "--runs", runs, "--json", "--profile", profile],
                         check=True, capture_output=True, text=True).stdout
    return {c["case"]: c for c in json.loads(out)["cases"] if not c["refused"]}


def swapped_kinds(profile):
    """Kinds of the tables `profile` took from a later run."""
    text = open(profile, encoding="utf-8").read()
    kinds = set()
    for body in re.findall(r"^tables \{\n(.*?)^\}", text, re.S | re.M):
        if SWAP_MARK in body:
            kinds.add(re.search(r'kind: "(\w+)"', body).group(1))
    return sorted(kinds)


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servesim", default=os.path.join(repo, "build", "servesim"))
    parser.add_argument("--runs", default=os.path.join(repo, "..", "shared", "validation"))
    args = parser.parse_args()
    profiles = os.path.join(repo, "calibration", "profiles")
    committed = os.path.join(profiles, "h200.textproto")
    base = predictions(args.servesim, committed, args.runs)
    held = swapped_kinds(committed)
    scratch = tempfile.mkdtemp()
    repeats = sorted(glob.glob(os.path.join(profiles, "h200_repeat_*.textproto")))
    if not repeats:
        sys.exit("no calibration/profiles/h200_repeat_*.textproto")
    for path in repeats:
        repeat = os.path.join(scratch, os.path.basename(path))
        shutil.copyfile(path, repeat)
        for kind in held:
            subprocess.run([sys.executable, os.path.join(repo, "calibration", "swap_tables.py"),
                            repeat, committed, kind], check=True, capture_output=True)
        other = predictions(args.servesim, repeat, args.runs)
        kept = f" ({', '.join(held)} tables as committed)" if held else ""
        print(f"{os.path.basename(path)} against h200.textproto{kept}, {len(base)} runs that ran:")
        for key, label in FIGURES:
            changes = [(100 * (other[c]["predicted_" + key] / base[c]["predicted_" + key] - 1), c)
                       for c in base if base[c]["predicted_" + key]]
            median = statistics.median(abs(x) for x, _ in changes)
            largest, case = max(changes, key=lambda t: abs(t[0]))
            print(f"  {label:12s} median |change| {median:5.2f} %   largest {largest:+6.1f} % "
                  f"({case})")
    shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
