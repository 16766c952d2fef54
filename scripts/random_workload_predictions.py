#!/usr/bin/env python3
"""Predictions for the random-dataset workloads of the live runs.

shared/validation/README.md lists the random workloads the live runs cover
(input/output tokens x prompts); their measurements are not in shared/. This
prints, as a Markdown table, what servesim predicts for each of them on the
live baseline configurations (serve commands taken from sharegpt_runs.csv by
case name), so that a confirmation run can be compared line by line.

usage: python3 scripts/random_workload_predictions.py [--runs CSV] [--servesim BIN] > docs/random_workloads.md
"""
import argparse
import csv
import re
import subprocess
import sys

INTRO = """# Predictions for the random-dataset workloads of the live runs

The live runs also cover random-dataset workloads (shared/validation/README.md) whose
measurements are not in shared/. These are servesim's predictions for them on the live
baseline configurations, made by `python3 scripts/random_workload_predictions.py` with the
committed profile and fitted parameters; regenerate after any model change. None of these
numbers was compared with a live run: they are what a confirmation run checks.
Every request generates its full output length, as with `--ignore-eos`; a live
run without that flag may stop some requests earlier at EOS. TensorRT-LLM
refuses the 32000-token prompts (chunked context is off by default and a prompt
must fit `max_num_tokens` = 8192), so all 100 fail.
"""

WORKLOADS = [(128, 4, 1000), (2000, 100, 500), (4000, 200, 500), (32000, 100, 100), (1000, 2000, 100)]
CASES = ["vllm-tp8-base", "vllm-dp8-ep", "sglang-tp8-base", "sglang-tp8-dp8-dpattn",
         "trtllm-tp8-base", "trtllm-tp8-ep8"]
METRICS = [("Successful requests", "ok"), ("Failed requests", "failed"),
           ("Benchmark duration (s)", "duration s"), ("Total token throughput (tok/s)", "total tok/s"),
           ("Mean TTFT (ms)", "mean TTFT ms"), ("P99 TTFT (ms)", "p99 TTFT ms"),
           ("Mean TPOT (ms)", "mean TPOT ms"), ("Median ITL (ms)", "median ITL ms")]


def bench(i, o, n):
    return ("vllm bench serve --model deepseek-ai/DeepSeek-V3.2 --backend openai-chat "
            "--endpoint /v1/chat/completions --dataset-name random "
            f"--random-input-len {i} --random-output-len {o} --num-prompts {n} --seed 42")


def predict(binary, serve, env, i, o, n):
    cmd = [binary, "run", "--serve", serve, "--bench", bench(i, o, n)]
    if env:
        cmd += ["--env", env]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["failed"])[-1]
    values = {}
    for line in p.stdout.splitlines():
        m = re.match(r"(.*?):\s+([-0-9.]+)\s*$", line)
        if m:
            values[m.group(1).strip()] = m.group(2)
    return values, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", default="../shared/validation/sharegpt_runs.csv")
    ap.add_argument("--servesim", default="build/servesim")
    args = ap.parse_args()
    rows = {r["case"]: r for r in csv.DictReader(open(args.runs))}
    print(INTRO)
    print("| configuration | workload (in/out x prompts) | " + " | ".join(m[1] for m in METRICS) + " |")
    print("|---|---|" + "---|" * len(METRICS))
    for case in CASES:
        if case not in rows:
            sys.exit(f"random_workload_predictions: case {case} not in {args.runs}")
        r = rows[case]
        for i, o, n in WORKLOADS:
            values, error = predict(args.servesim, r["serve_command"], r["env"], i, o, n)
            if values is None:
                print(f"| {case} | {i}/{o} x{n} | refused: {error} |" + " |" * (len(METRICS) - 1))
                continue
            cells = [values.get(k, "") for k, _ in METRICS]
            print(f"| {case} | {i}/{o} x{n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
