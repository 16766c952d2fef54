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
import os
import re
import sys
import tempfile

from servesim_result import run_result

INTRO = """# Predictions for the random-dataset workloads of the live runs

The live runs also cover random-dataset workloads (shared/validation/README.md) whose
measurements are not in shared/. These are servesim's predictions for them on the live
baseline configurations, made by `python3 scripts/random_workload_predictions.py` with the
committed profile and fitted parameters; regenerate after any model change. None of these
numbers was compared with a live run: they are what a confirmation run checks.
Every request generates its full output length, as with `--ignore-eos`; a live
run without that flag may stop some requests earlier at EOS. Through the chat
endpoint the engine prefills each prompt with four tokens more than the
client counts (`--random-input-len` I gives I - 1 counted tokens; the server
adds the BOS and DeepSeek-V3.2's three chat-template markers). TensorRT-LLM
refuses the 32000-token prompts (chunked context is off by default and a prompt
must fit `max_num_tokens` = 8192): every request fails, and servesim refuses
the run with the engine's reason (live, the client stops at its test request
or prints a report of zeros).
"""

WORKLOADS = [(128, 4, 1000), (2000, 100, 500), (4000, 200, 500), (32000, 100, 100), (1000, 2000, 100)]
CASES = ["vllm-tp8-base", "vllm-dp8-ep", "sglang-tp8-base", "sglang-tp8-dp8-dpattn",
         "trtllm-tp8-base", "trtllm-tp8-ep8"]
# (--save-result key, column): what `servesim run --result-json` writes.
METRICS = [("completed", "ok"), ("failed", "failed"), ("duration", "duration s"),
           ("total_token_throughput", "total tok/s"), ("mean_ttft_ms", "mean TTFT ms"),
           ("p99_ttft_ms", "p99 TTFT ms"), ("mean_tpot_ms", "mean TPOT ms"),
           ("median_itl_ms", "median ITL ms")]


def bench(i, o, n, extra=""):
    return ("vllm bench serve --model deepseek-ai/DeepSeek-V3.2 --backend openai-chat "
            "--endpoint /v1/chat/completions --dataset-name random "
            f"--random-input-len {i} --random-output-len {o} --num-prompts {n} --seed 42{extra}")


SENSITIVITY = """
## How much each prediction rests on the fitted prefill factor

The prefill-path factor (`docs/fitting.md`, "Why a prefill-path factor") is fitted
on ShareGPT, whose prompts are all under 1,100 tokens; nothing in the live data says
whether the cost it stands for grows with prompt tokens (as it is applied) or is paid
per request or per step. The random workloads' long prompts sit where that matters
most. This table repeats the throughput and mean TTFT with the prefill path as the
kernels say (the prefill factor and TensorRT-LLM's prefill-only MoE factor at 1,
every other fitted value unchanged). A confirmation run that lands near the second
figure says the factor's cost is not per token; one near the first says it is.
"""


SPREAD = """
## How far the leave-one-out's fits move each prediction

`servesim fit --leave-one-out` refits each engine without each of its live runs in
turn (`docs/validation_leave_one_out.txt`, its fits in
`scenarios/fitted_params_folds.textproto`); `servesim run --spread` predicts with
every one of them. Each cell is the lowest and highest figure over those fits (the fit
on every run, whose figure is the first table's, among them). A wide range marks a
prediction that leans on a value the ShareGPT runs leave loose (SGLang's host work,
split between step and sequence; an engine's API server; docs/fitting.md). It is a
floor on the uncertainty, not its measure: all the fits share the reading of the
prefill factor above, which no ShareGPT run can test.
"""

FRAGILE = """
## Figures that a small change moves far

Two figures of the first table can move far on a change that a live run makes
unasked. The median ITL: where a workload's steps are of two kinds (decode-only
steps of tens of milliseconds, and steps that carry prefill chunks, of up to
seconds) and each kind gives a large share of the ITLs, the median is whichever
kind holds the middle one; the 40th and 60th percentiles show where it could land
(a few requests more or a few tokens fewer per reply move it between them).
Throughput under length jitter: the first table's requests all have one prompt and
one reply length, as `--random-range-ratio 0` (the default) draws them, and every
reply runs to its length; a live run without `--ignore-eos` ends some replies early
at EOS. The last column repeats the throughput with `--random-range-ratio 0.05`
(prompt and reply lengths within 5 % of the set ones). Where the two part, the
prediction rests on every request keeping in step (vLLM's DP8 ranks, in lockstep,
wait at every step for the rank with the longest prefill chunk once their KV pools
are full) or on a threshold the set length sits near (SGLang prefills a batch with
dense MHA only while its longest sequence has at most 2048 tokens: the 2000-token
prompts, 2003 with the chat template's tokens, sit 45 under it, and 5 % longer
ones send their batches down the sparse path): compare a confirmation run through
`servesim validate` with its `--save-detailed` JSON, which replays each request's
own lengths, rather than with this page.
"""


def percentile(values, q):
    """numpy.percentile's default (linear interpolation between closest ranks)."""
    v = sorted(values)
    if not v:
        return float("nan")
    pos = (len(v) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


# (--save-result key, column): the figures of `servesim run --spread`'s servesim_spread.
SPREAD_FIGURES = [("total_token_throughput", "total tok/s"), ("mean_ttft_ms", "mean TTFT ms"),
                  ("mean_tpot_ms", "mean TPOT ms"), ("median_itl_ms", "median ITL ms")]


def spread(binary, serve, env, i, o, n):
    """{key: (low, high)} from `servesim run --spread`'s result JSON (the committed folds);
    exits on an error (only runs that ran are asked for)."""
    values, error = run_result(binary, serve, bench(i, o, n), env, spread=True)
    if values is None:
        sys.exit(f"random_workload_predictions: --spread failed: {error}")
    ranges = values["servesim_spread"]
    return {key: (ranges[key]["low"], ranges[key]["high"]) for key, _ in SPREAD_FIGURES}


def params_with_measured_prefill(params_path, out_path):
    """The fitted parameters with every prefill-only factor set to 1."""
    text = open(params_path, encoding="utf-8").read()
    text = re.sub(r"prefill_time_scale: [0-9.eE+-]+", "prefill_time_scale: 1", text)
    text = re.sub(r'(backend: "moe=tensor_parallel"\s*time_scale: )[0-9.eE+-]+', r"\g<1>1", text)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text)


def predict(binary, serve, env, i, o, n, params=None, extra=""):
    """The run's --save-result figures, or (None, servesim's error line)."""
    return run_result(binary, serve, bench(i, o, n, extra), env, params=params)


def ran(rows, fitted):
    """(case, workload, run row) for each prediction of the first table that completed requests."""
    for case in CASES:
        for workload in WORKLOADS:
            values = fitted[case, workload]
            if values is not None and values["completed"]:
                yield case, workload, rows[case]


def cell(value):
    # As `vllm bench serve` prints them: counts whole, the rest to 2 decimals.
    return str(value) if isinstance(value, int) else f"{value:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", default="../shared/validation/sharegpt_runs.csv")
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--params", default="scenarios/fitted_params.textproto")
    args = ap.parse_args()
    rows = {r["case"]: r for r in csv.DictReader(open(args.runs))}
    print(INTRO)
    print("| configuration | workload (in/out x prompts) | " + " | ".join(m[1] for m in METRICS) + " |")
    print("|---|---|" + "---|" * len(METRICS))
    fitted = {}  # (case, workload) -> the run's figures, for both tables
    for case in CASES:
        if case not in rows:
            sys.exit(f"random_workload_predictions: case {case} not in {args.runs}")
        r = rows[case]
        for i, o, n in WORKLOADS:
            values, error = predict(args.servesim, r["serve_command"], r["env"], i, o, n, args.params)
            fitted[case, (i, o, n)] = values
            if values is None:
                print(f"| {case} | {i}/{o} x{n} | refused: {error} |" + " |" * (len(METRICS) - 1))
                continue
            cells = [cell(values[k]) for k, _ in METRICS]
            print(f"| {case} | {i}/{o} x{n} | " + " | ".join(cells) + " |")

    print(SENSITIVITY)
    print("| configuration | workload (in/out x prompts) | total tok/s, fitted | total tok/s, prefill as measured "
          "| mean TTFT ms, fitted | mean TTFT ms, prefill as measured |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        measured = os.path.join(tmp, "measured_prefill.textproto")
        params_with_measured_prefill(args.params, measured)
        for case, (i, o, n), r in ran(rows, fitted):
            asis, _ = predict(args.servesim, r["serve_command"], r["env"], i, o, n, measured)
            if asis is None:
                continue
            values = fitted[case, (i, o, n)]
            print(f"| {case} | {i}/{o} x{n} | {cell(values['total_token_throughput'])} | "
                  f"{cell(asis['total_token_throughput'])} | {cell(values['mean_ttft_ms'])} | "
                  f"{cell(asis['mean_ttft_ms'])} |")

    print(FRAGILE)
    print("| configuration | workload (in/out x prompts) | median ITL ms | ITL p40 - p60 ms "
          "| total tok/s | total tok/s, range ratio 0.05 |")
    print("|---|---|---|---|---|---|")
    for case, (i, o, n), r in ran(rows, fitted):
        jittered, _ = predict(args.servesim, r["serve_command"], r["env"], i, o, n, args.params,
                              " --random-range-ratio 0.05")
        if jittered is None:
            continue
        values = fitted[case, (i, o, n)]
        # servesim's --result-json lists every request's ITLs (in seconds).
        itls = [1000.0 * x for request in values["itls"] for x in request]
        print(f"| {case} | {i}/{o} x{n} | {cell(values['median_itl_ms'])} | "
              f"{cell(percentile(itls, 40))} - {cell(percentile(itls, 60))} | "
              f"{cell(values['total_token_throughput'])} | "
              f"{cell(jittered['total_token_throughput'])} |")

    print(SPREAD)
    print("| configuration | workload (in/out x prompts) | " +
          " | ".join(f"{label}, low - high" for _, label in SPREAD_FIGURES) + " |")
    print("|---|---|" + "---|" * len(SPREAD_FIGURES))
    for case, (i, o, n), r in ran(rows, fitted):
        ranges = spread(args.servesim, r["serve_command"], r["env"], i, o, n)
        cells = [f"{cell(ranges[k][0])} - {cell(ranges[k][1])}" for k, _ in SPREAD_FIGURES]
        print(f"| {case} | {i}/{o} x{n} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
