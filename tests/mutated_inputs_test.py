#!/usr/bin/env python3
"""Bad input never crashes servesim: a property test over mutated input files.

Every kind of file servesim reads (the profile, fitted parameters and their
folds, the model spec, four trace formats, a results CSV, a --save-result
JSON and its .cmd, a TensorRT-LLM options file), and the serve and bench
commands themselves, are damaged at random, with a fixed seed, and fed to the
command that reads it. Each run must end with a status servesim documents
(0 ran, 1 the engine refuses, 2 bad input; never a signal, a sanitizer
abort or a hang) and, when it fails, say why in exactly one line on stderr.
A mutation may leave the file valid: then the run simply succeeds.

usage: python3 tests/mutated_inputs_test.py --servesim build/servesim [--cases N] [--seed S]
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = ("vllm bench serve --model deepseek-ai/DeepSeek-V3.2 --backend openai-chat "
         "--endpoint /v1/chat/completions --num-prompts 20")
RANDOM = BENCH + " --dataset-name random --random-input-len 200 --random-output-len 10"
VLLM = "vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8"
TRTLLM = "trtllm-serve deepseek-ai/DeepSeek-V3.2 --tp_size 8 --ep_size 8"

# Commands with many flags, each flag's value a place to damage.
VLLM_FLAGS = (VLLM + " -dp 1 --max-num-seqs 256 --max-num-batched-tokens 4096 --max-model-len 32768"
              " --gpu-memory-utilization 0.85 --kv-cache-dtype fp8 --block-size 64"
              " --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'")
SGLANG_FLAGS = ("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8"
                " --dp-size 8 --enable-dp-attention --chunked-prefill-size 4096"
                " --max-running-requests 512 --mem-fraction-static 0.8 --context-length 32768"
                " --cuda-graph-max-bs 256 --page-size 64 --schedule-conservativeness 0.5")
TRTLLM_FLAGS = (TRTLLM + " --max_batch_size 128 --max_num_tokens 4096 --max_seq_len 8192"
                " --kv_cache_free_gpu_memory_fraction 0.8")
BENCH_FLAGS = (RANDOM + " --request-rate 4 --burstiness 0.5 --max-concurrency 16 --seed 7"
               " --random-range-ratio 0.3 --top-p 0.9 --temperature 0.6"
               " --goodput ttft:500 tpot:50 --metric-percentiles 50,90,99")

# Each trace holds the 20 requests the bench command asks for.
MOONCAKE = "".join(
    f'{{"timestamp": {1000 * i}, "input_length": {600 + 17 * i}, "output_length": {5 + i}, '
    f'"hash_ids": [0, {i + 1}]}}\n' for i in range(20))
AZURE = "TIMESTAMP,ContextTokens,GeneratedTokens\n" + "".join(
    f"2023-11-16 18:15:{10 + i:02d}.6805900,{200 + 41 * i},{4 + i}\n" for i in range(20))
ARRIVALS = "arrival_s,input_tokens,output_tokens\n" + "".join(
    f"{0.25 * i},{100 + 13 * i},{3 + i}\n" for i in range(20))
LENGTHS = "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n" + "".join(
    f"{80 + 29 * i},{6 + i},{86 + 30 * i},{(80 + 29 * i) / (6 + i)}\n" for i in range(20))
TRT_OPTIONS = ("enable_attention_dp: true\ncuda_graph_config:\n  max_batch_size: 64\n"
               "kv_cache_config:\n  free_gpu_memory_fraction: 0.8\n")
RESULTS_HEADER = ("case,engine,env,serve_command,bench_command,completed,duration_s,"
                  "total_input_tokens,total_output_tokens,total_token_throughput,mean_ttft_ms,"
                  "mean_tpot_ms,median_itl_ms\n")
RESULTS = RESULTS_HEADER + (
    f"a,vllm,,{VLLM},{RANDOM},20,10.0,4000,200,420.0,500.0,40.0,35.0\n"
    f"b,vllm,VLLM_USE_DEEP_GEMM=0,{VLLM},{RANDOM},20,11.0,4000,200,381.82,520.0,42.0,36.0\n")

# Inserted at random: tokens that parsers get wrong.
NASTY = ["-", "9", "0", "-1", "1e308", "nan", "inf", "99999999999999999999", "\"", "'", "{",
         "}", "[", "]", ":", ",", "\n", "\t", " ", "\\", "é", "\x00"]


NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")
# Numbers that keep the file well formed but test what its values may be.
NASTY_NUMBERS = ["0", "-1", "1e-300", "1e308", "nan", "inf", "-inf", "99999999999999999999",
                 "2147483648", "0.5"]


def mutate(text, rng):
    if rng.random() < 0.5:
        # Half the cases change one number and nothing else, so that the file still
        # parses and its checks of values are what is tested.
        numbers = list(NUMBER.finditer(text))
        if numbers:
            m = rng.choice(numbers)
            return text[:m.start()] + rng.choice(NASTY_NUMBERS) + text[m.end():]
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        if not chars:
            chars = list(rng.choice(NASTY))
            continue
        i = rng.randrange(len(chars))
        op = rng.random()
        if op < 0.3:
            del chars[i:i + rng.randint(1, 20)]
        elif op < 0.6:
            chars[i:i] = list(rng.choice(NASTY))
        elif op < 0.8:
            j = rng.randrange(len(chars))
            chars[i], chars[j] = chars[j], chars[i]
        else:
            k = rng.randrange(len(chars))
            chars[i:i] = chars[k:k + rng.randint(1, 200)]
    return "".join(chars)


def read(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


CMD = f"export VLLM_USE_DEEP_GEMM=1\n{VLLM}\n{RANDOM}\n"


def result_json(servesim, tmp):
    """A --save-result JSON of a run of CMD's commands, as servesim writes it."""
    path = os.path.join(tmp, "result.json")
    status, err, problem = check(
        [servesim, "run", "--serve", VLLM, "--bench", RANDOM, "--result-json", path])
    if status != 0:
        sys.exit(f"mutated_inputs_test: servesim run --result-json failed: {problem or err[-1]}")
    with open(path, encoding="utf-8") as f:
        return f.read()


def beside(path, suffix, text):
    """Writes `text` to `path` with its suffix replaced, and returns that file's path."""
    other = os.path.splitext(path)[0] + suffix
    with open(other, "w", encoding="utf-8") as f:
        f.write(text)
    return other


def sources(servesim, tmp):
    """(name, original text, file suffix, command for a file holding it)."""
    def run(*extra, serve=VLLM, bench=RANDOM):
        return [servesim, "run", "--serve", serve, "--bench", bench, *extra]

    saved = result_json(servesim, tmp)

    def validate_json(f):
        beside(f, ".cmd", CMD)
        return [servesim, "validate", "--runs", f]

    def command_in(f):
        # An argument cannot hold a NUL byte; every other damage reaches servesim.
        with open(f, encoding="utf-8", errors="surrogateescape") as text:
            return text.read().replace("\x00", "")

    def trace(f):
        return run(bench=BENCH + f" --dataset-name trace --dataset-path {f}")

    return [
        ("profile", read("calibration/profiles/h200.textproto"), ".textproto",
         lambda f: run("--profile", f)),
        ("params", read("scenarios/fitted_params.textproto"), ".textproto",
         lambda f: run("--params", f)),
        ("folds", read("scenarios/fitted_params_folds.textproto"), ".textproto",
         lambda f: run("--spread", "--folds", f)),
        ("model spec", read("models/deepseek_v32.textproto"), ".textproto",
         lambda f: run("--model-spec", f)),
        ("arrivals trace", ARRIVALS, ".csv", trace),
        ("lengths table", LENGTHS, ".csv", trace),
        ("mooncake trace", MOONCAKE, ".jsonl", trace),
        ("azure trace", AZURE, ".csv", trace),
        ("results csv", RESULTS, ".csv", lambda f: [servesim, "validate", "--runs", f]),
        ("result json", saved, ".json", validate_json),
        ("result .cmd", CMD, ".cmd",
         lambda f: [servesim, "validate", "--runs", beside(f, ".json", saved)]),
        ("vllm serve command", VLLM_FLAGS, ".txt", lambda f: run(serve=command_in(f))),
        ("sglang serve command", SGLANG_FLAGS, ".txt", lambda f: run(serve=command_in(f))),
        ("trtllm serve command", TRTLLM_FLAGS, ".txt", lambda f: run(serve=command_in(f))),
        ("bench command", BENCH_FLAGS, ".txt", lambda f: run(bench=command_in(f))),
        ("trtllm options", TRT_OPTIONS, ".yml",
         lambda f: run(serve=f"{TRTLLM} --extra_llm_api_options {f}")),
    ]


def check(command):
    """(servesim's exit status or None if it hung, its stderr lines, what is wrong with how it
    ended on `command` or None)."""
    try:
        p = subprocess.run(command, capture_output=True, timeout=120, cwd=REPO)
    except subprocess.TimeoutExpired:
        return None, [], "no answer within 120 s"
    err = p.stderr.decode("utf-8", "replace").strip().splitlines()
    if p.returncode not in (0, 1, 2):
        return p.returncode, err, f"exit {p.returncode}: {err[-3:]}"
    if p.returncode != 0 and len(err) != 1:
        return p.returncode, err, f"exit {p.returncode} with {len(err)} stderr lines: {err[:3]}"
    return p.returncode, err, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servesim", required=True)
    ap.add_argument("--cases", type=int, default=12, help="mutations per input file")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    failures = []
    runs = 0
    exits = {}  # exit status -> runs
    with tempfile.TemporaryDirectory() as tmp:
        for name, text, suffix, command in sources(args.servesim, tmp):
            # The unmutated file must run, or the mutations only test the refusal of
            # something else on the command line.
            path = os.path.join(tmp, f"original{suffix}")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            status, err, problem = check(command(path))
            if status != 0:
                failures.append(f"{name}: the unmutated input does not run: "
                                f"{problem or err[-1]}")
                continue
            for case in range(args.cases):
                path = os.path.join(tmp, f"input{runs}{suffix}")
                with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(mutate(text, rng))
                runs += 1
                status, _, problem = check(command(path))
                exits[status] = exits.get(status, 0) + 1
                if problem:
                    keep = os.path.join(tempfile.gettempdir(), f"servesim_mutated_{runs}{suffix}")
                    os.replace(path, keep)
                    failures.append(f"{name} #{case}: {problem} (input kept as {keep})")
    for failure in failures:
        print(failure)
    print(f"{runs} mutated inputs ({exits.get(0, 0)} ran, {exits.get(1, 0)} refused by the "
          f"engine, {exits.get(2, 0)} refused as bad input), {len(failures)} mishandled")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
