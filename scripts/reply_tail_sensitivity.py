#!/usr/bin/env python3
"""How much a ShareGPT burst's predictions rest on its longest replies.

Every live run sends its 1000 ShareGPT requests at t = 0, so the run lasts
until its longest reply has been decoded, one engine step per token at the
small batches of the drain. servesim's stand-in for the ShareGPT lengths
(traces/README.md) has replies of at most 968 tokens in this sample, since
its source caps replies at 1,024; vLLM's sampler admits replies up to
2048 - prompt tokens, and the real sample's longest are not known here.

This replays the stand-in sample as a trace (same prompt and reply lengths,
all sent at t = 0) and again with its ten longest replies stretched, the
longest to 1,400 and to 1,900 tokens (spaced evenly from the tenth-longest),
every other reply shortened in proportion so that the total output stays
the live runs' (~197k tokens). Fitted parameters are held. It also prints,
for each live run, the time from its p99 TTFT to its end divided by each
longest reply: the mean step time of the drain that each tail would imply.

usage: python3 scripts/reply_tail_sensitivity.py [--runs CSV] [--servesim BIN]
"""
import argparse
import csv
import os
import sys
import tempfile

from servesim_result import run_result

CASES = ["vllm-tp8-base", "vllm-dp8-ep", "sglang-tp8-base", "sglang-tp8-dp8-dpattn",
         "trtllm-tp8-ep8"]
LONGEST = [1400, 1900]
STRETCHED = 10  # how many of the longest replies are stretched
FIGURES = [("total_token_throughput", "total tok/s"), ("duration", "duration s"),
           ("mean_ttft_ms", "mean TTFT ms"), ("mean_tpot_ms", "mean TPOT ms"),
           ("median_itl_ms", "median ITL ms")]
SHAREGPT_BENCH = ("vllm bench serve --backend openai-chat --endpoint /v1/chat/completions "
                  "--dataset-name sharegpt --dataset-path ShareGPT_V3_unfiltered_cleaned_split.json "
                  "--num-prompts 1000")


def run(servesim, serve, bench, env):
    values, error = run_result(servesim, serve, bench, env)
    if values is None:
        sys.exit(f"reply_tail_sensitivity: servesim failed: {error}")
    return values


def stretched(outputs, longest):
    """The replies with the STRETCHED longest spaced evenly up to `longest`,
    the others scaled down so that the total is kept (to rounding)."""
    order = sorted(range(len(outputs)), key=lambda i: outputs[i])
    top = order[-STRETCHED:]
    low = outputs[top[0]]
    out = list(outputs)
    for rank, i in enumerate(top):
        out[i] = round(low + (longest - low) * (rank + 1) / STRETCHED)
    added = sum(out) - sum(outputs)
    rest = sorted(set(range(len(out))) - set(top))
    rest_total = sum(out[i] for i in rest)
    for i in rest:
        out[i] = max(1, round(out[i] * (1 - added / rest_total)))
    return out


def write_trace(path, inputs, outputs):
    with open(path, "w", encoding="utf-8") as f:
        f.write("arrival_s,input_tokens,output_tokens\n")
        for i, o in zip(inputs, outputs):
            f.write(f"0,{i},{o}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", default="../shared/validation/sharegpt_runs.csv")
    ap.add_argument("--servesim", default="build/servesim")
    args = ap.parse_args()
    with open(args.runs, encoding="utf-8") as f:
        live = {r["case"]: r for r in csv.DictReader(f)}
    with tempfile.TemporaryDirectory() as tmp:
        first = live[CASES[0]]
        sample = run(args.servesim, first["serve_command"], SHAREGPT_BENCH, first["env"])
        inputs, outputs = sample["input_lens"], sample["output_lens"]
        variants = [(f"stand-in (longest {max(outputs)})", outputs)]
        variants += [(f"longest {m}", stretched(outputs, m)) for m in LONGEST]
        traces = []
        for k, (_, outs) in enumerate(variants):
            path = os.path.join(tmp, f"trace{k}.csv")
            write_trace(path, inputs, outs)
            traces.append(path)
        print("| sample | replies | total output | longest | 10th longest |")
        print("|---|---|---|---|---|")
        for name, outs in variants:
            s = sorted(outs)
            print(f"| {name} | {len(s)} | {sum(s)} | {s[-1]} | {s[-STRETCHED]} |")
        print()
        head = ["configuration", "figure", "live"] + [name for name, _ in variants]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for case in CASES:
            r = live[case]
            predicted = []
            for path in traces:
                bench = ("vllm bench serve --backend openai-chat --endpoint /v1/chat/completions "
                         f"--dataset-name trace --dataset-path {path} --num-prompts 1000")
                predicted.append(run(args.servesim, r["serve_command"], bench, r["env"]))
            for key, label in FIGURES:
                measured = r["duration_s" if key == "duration" else key]
                cells = [f"{p[key]:.1f}" for p in predicted]
                print(f"| {case} | {label} | {float(measured):.1f} | " + " | ".join(cells) + " |")
        print()
        print("| live run | duration s | p99 TTFT s | after p99 TTFT s | "
              + " | ".join(f"per step, longest {s}" for s in
                           [max(o) for _, o in variants]) + " |")
        print("|" + "---|" * (4 + len(variants)))
        for case, r in live.items():
            if not r.get("duration_s"):
                continue
            duration, ttft = float(r["duration_s"]), float(r["p99_ttft_ms"]) / 1000
            cells = [f"{(duration - ttft) / max(o) * 1000:.0f} ms" for _, o in variants]
            print(f"| {case} | {duration:.1f} | {ttft:.1f} | {duration - ttft:.1f} | "
                  + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
