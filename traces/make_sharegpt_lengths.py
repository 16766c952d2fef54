#!/usr/bin/env python3
"""Builds traces/sharegpt_v3_first_turn_lengths.csv, the stand-in for ShareGPT_V3.

servesim has neither the ShareGPT_V3 JSON nor the DeepSeek tokenizer. What it has
is sarathi-serve's per-turn length table (Llama-2 tokenizer, see
shared/traces/SOURCES.md) and two facts about the real 1000-prompt sample of
the live runs (shared/validation/README.md): 219,111 input tokens and about
197k output tokens. This program

  1. recovers the first turn of every conversation from the per-turn table,
  2. prompt_tokens = the first prefill times one fixed factor (rounding half up),
  3. completion_tokens = min(the first reply times a tokenizer ratio (1.0: no
     published Llama-2 to DeepSeek figure was found), natural_tokens), with
     natural_tokens drawn once per row from a geometric distribution of mean
     NATURAL_MEAN_TOKENS (Python's random, fixed seed): the dataset's reply,
     what vLLM's filters see and what it sends as max_completion_tokens
     (engine-defaults.md B1),
  4. output_tokens = completion_tokens: the served model writes until
     max_completion_tokens (the live runs' output totals agree to 0.15 % across
     engines and layouts, which replies ended by sampled EOS would not;
     traces/README.md),
  5. writes one row per conversation, in file order.

Two parameters are fitted (--fit), and only on the two live token sums: the
prompt factor and NATURAL_MEAN_TOKENS, so that the sample servesim draws by
default (the C++ sampler replayed here bit for bit: mt19937_64 seed 0,
Fisher-Yates, vLLM's filters, first 1000 passing rows) has 219,111 prompt
tokens and 197,000 output tokens. --check prints the sums for a few seeds,
--stats the seed-0 distribution.

Python 3 standard library only. Usage:
  python3 traces/make_sharegpt_lengths.py            # write the CSV
  python3 traces/make_sharegpt_lengths.py --fit      # refit the two parameters
  python3 traces/make_sharegpt_lengths.py --check    # sample sums, seeds 0 1 2 42
  python3 traces/make_sharegpt_lengths.py --stats    # seed-0 mean/median/p90/p99/max
"""

import argparse
import bisect
import csv
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SOURCE = os.path.join(
    HERE, "..", "..", "shared", "traces",
    "sarathi_sharegpt_8k_filtered_stats_llama2_tokenizer.csv")
DEFAULT_OUT = os.path.join(HERE, "sharegpt_v3_first_turn_lengths.csv")

# Fitted by --fit (see traces/README.md); factor in thousandths.
PROMPT_SCALE_MILLI = 2940
# Mean of the geometric natural reply length (tokens) that shortens the
# completions, fitted by --fit.
NATURAL_MEAN_TOKENS = 291
# Llama-2 to DeepSeek-V3.2 token ratio for the completion, in thousandths. No
# published figure for this pair was found, so 1.0 (an assumption, not a fit).
COMPLETION_TOKENIZER_MILLI = 1000
# Seed of the natural-length draws (one random() per conversation, file order).
NATURAL_SEED = 0

# Live-run facts (shared/validation/README.md, sharegpt_runs.csv): totals over
# the 1000 prompts. Output is "about 197k" (196.6k-197.6k across runs).
TARGET_PROMPT_MEAN = 219111 / 1000
TARGET_OUTPUT_MEAN = 197000 / 1000

# vLLM's is_valid_sequence defaults (reference/engine-defaults.md B1.6).
MIN_LEN = 4
MAX_PROMPT = 1024
MAX_TOTAL = 2048

# The sample the factors are fitted on: vLLM's defaults --seed 0, --num-prompts 1000.
FIT_SEED = 0
FIT_NUM_PROMPTS = 1000


def read_first_turns(path, margin=None):
    """Returns [(prefill, decode)] of each conversation's first turn.

    A row continues the previous row's conversation when its prefill holds
    the previous prefill and decode (the history) plus the new user message:
    prefill >= prev_prefill + prev_decode. Any other row starts a new
    conversation. A new conversation whose first prompt happens to be longer
    than the whole previous row is misread as a continuation and lost; this
    only drops rows, it never invents one. `margin` (only for --rules) also
    starts a conversation when the new message would exceed `margin` tokens.
    """
    firsts = []
    prev = None
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        if header[:2] != ["num_prefill_tokens", "num_decode_tokens"]:
            sys.exit(f"{path}: unexpected header {header}")
        for line_no, row in enumerate(reader, start=2):
            try:
                prefill, decode = int(row[0]), int(row[1])
            except (IndexError, ValueError):
                sys.exit(f"{path}:{line_no}: malformed row {row}")
            if (prev is None or prefill < prev[0] + prev[1]
                    or (margin is not None and prefill > prev[0] + prev[1] + margin)):
                firsts.append((prefill, decode))
            prev = (prefill, decode)
    return firsts


def scale(value, milli):
    """round(value * milli / 1000), half up, at least 1 (integer arithmetic)."""
    return max(1, (value * milli + 500) // 1000)


def natural_uniforms(count):
    """One uniform in [0, 1) per conversation, file order, fixed seed.

    Drawn independently of the fitted mean, so refitting the mean moves every
    natural length the same way (monotone) instead of reshuffling them.
    """
    rng = random.Random(NATURAL_SEED)
    return [rng.random() for _ in range(count)]


def geometric(u, mean_tokens):
    """Inverse CDF of the geometric law on {1, 2, ...} with the given mean."""
    if mean_tokens <= 1:
        return 1
    return max(1, math.ceil(math.log1p(-u) / math.log1p(-1.0 / mean_tokens)))


def transform(firsts, uniforms, prompt_milli, natural_mean):
    """[(prompt_tokens, completion_tokens, output_tokens)], one per conversation."""
    rows = []
    for (prefill, decode), u in zip(firsts, uniforms):
        completion = min(scale(decode, COMPLETION_TOKENIZER_MILLI), geometric(u, natural_mean))
        rows.append((scale(prefill, prompt_milli), completion, completion))
    return rows


def passes(prompt, completion):
    """vLLM's is_valid_sequence: it sees the dataset's completion length."""
    return (prompt >= MIN_LEN and completion >= MIN_LEN and prompt <= MAX_PROMPT
            and prompt + completion <= MAX_TOTAL)


def filtered_means(rows):
    kept = [r for r in rows if passes(r[0], r[1])]
    return (sum(r[0] for r in kept) / len(kept),
            sum(r[2] for r in kept) / len(kept), len(kept))


def sample_means(rows):
    s = sample(rows, FIT_NUM_PROMPTS, FIT_SEED)
    return (sum(r[0] for r in s) / len(s), sum(r[2] for r in s) / len(s))


def smallest_reaching(lo, hi, mean_of, target):
    """Smallest integer in [lo, hi) whose mean_of(value) >= target (bisection)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if mean_of(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


def fit(firsts, uniforms):
    """Bisection on the prompt factor and on the natural mean, alternated.

    The target is the mean of the seed-0 sample of 1000 that servesim itself
    draws (the live facts are sums over one sample of 1000, and the spread of
    1000-sample means is about 3 %, as large as the tolerance). The natural
    mean shortens completions and so changes which rows pass the >= 4 filter,
    which moves the prompt sum: the two bisections alternate until neither
    moves (two rounds on the source).
    """
    prompt_milli, natural_mean = 1000, 100000
    for _ in range(20):
        new_prompt = smallest_reaching(
            1, 10000,
            lambda p: sample_means(transform(firsts, uniforms, p, natural_mean))[0],
            TARGET_PROMPT_MEAN)
        new_natural = smallest_reaching(
            1, 100000,
            lambda mu: sample_means(transform(firsts, uniforms, new_prompt, mu))[1],
            TARGET_OUTPUT_MEAN)
        if (new_prompt, new_natural) == (prompt_milli, natural_mean):
            return prompt_milli, natural_mean
        prompt_milli, natural_mean = new_prompt, new_natural
    sys.exit("the prompt factor and natural mean did not settle in 20 rounds")


def estimate_lost_conversations(path):
    """Inverse-probability estimate of the conversations the rule loses.

    A first prompt p is seen only when p < T, the total of the row before it
    (the previous conversation's last turn), so each seen start stands for
    1 / P(T > p) starts. P(T > p) comes from the T seen at detected boundaries,
    themselves seen with probability P(p < T); both weights are iterated to a
    fixed point. Returns (estimated conversations, estimated lost starts with
    prefill <= 350 Llama-2 tokens, i.e. below the 1024 prompt filter after the
    prompt factor).
    """
    rows = []
    with open(path, newline="") as f:
        reader = csv.reader(f)
        next(reader)
        rows = [(int(r[0]), int(r[1])) for r in reader]
    prompts, totals = [], []
    for i, (prefill, _) in enumerate(rows):
        if i == 0 or prefill < rows[i - 1][0] + rows[i - 1][1]:
            prompts.append(prefill)
            if i > 0:
                totals.append(rows[i - 1][0] + rows[i - 1][1])

    def weighted_cdf(values, weights):
        pairs = sorted(zip(values, weights))
        xs, cum = [v for v, _ in pairs], [0.0]
        for _, w in pairs:
            cum.append(cum[-1] + w)
        return xs, cum

    w_totals = [1.0] * len(totals)
    for _ in range(20):
        ts, tc = weighted_cdf(totals, w_totals)
        w_prompts = [1 / max((tc[-1] - tc[bisect.bisect_right(ts, p)]) / tc[-1], 1e-3)
                     for p in prompts]
        ps, pc = weighted_cdf(prompts, w_prompts)
        w_totals = [1 / max(pc[bisect.bisect_left(ps, t)] / pc[-1], 1e-3) for t in totals]
    short_lost = sum(w - 1 for p, w in zip(prompts, w_prompts) if p <= 350)
    return sum(w_prompts), short_lost


def print_rules(path):
    for margin in (None, 4096, 2048, 1024, 512, 256, 128, 64):
        firsts = read_first_turns(path, margin)
        prefills = sorted(p for p, _ in firsts)
        name = "prefill < prev total" if margin is None else f"... or > prev total + {margin}"
        print(f"{name:32s} conversations={len(firsts):6d} prefill {describe(prefills)}")
    total, short_lost = estimate_lost_conversations(path)
    print(f"estimated true conversations {total:.0f}; of the lost, {short_lost:.0f} have "
          f"prefill <= 350")


def percentile(sorted_values, q):
    """Nearest rank: the smallest value with at least q of the values <= it."""
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def describe(values):
    v = sorted(values)
    return (f"mean {sum(v) / len(v):.1f} median {percentile(v, 0.5)} "
            f"p90 {percentile(v, 0.9)} p99 {percentile(v, 0.99)} max {v[-1]}")


class Mt19937_64:
    """std::mt19937_64, bit for bit (C++ [rand.predef])."""
    N, M = 312, 156
    MASK = (1 << 64) - 1

    def __init__(self, seed):
        self.mt = [0] * self.N
        self.mt[0] = seed & self.MASK
        for i in range(1, self.N):
            prev = self.mt[i - 1]
            self.mt[i] = (6364136223846793005 * (prev ^ (prev >> 62)) + i) & self.MASK
        self.index = self.N

    def __call__(self):
        if self.index >= self.N:
            upper, lower = 0xFFFFFFFF80000000, 0x7FFFFFFF
            for i in range(self.N):
                x = (self.mt[i] & upper) | (self.mt[(i + 1) % self.N] & lower)
                xa = x >> 1
                if x & 1:
                    xa ^= 0xB5026F5AA96619E9
                self.mt[i] = self.mt[(i + self.M) % self.N] ^ xa
            self.index = 0
        x = self.mt[self.index]
        self.index += 1
        x ^= (x >> 29) & 0x5555555555555555
        x ^= (x << 17) & 0x71D67FFFEDA60000
        x ^= (x << 37) & 0xFFF7EEE000000000
        x ^= x >> 43
        return x & self.MASK


def uniform_index(rng, n):
    """Uniform integer in [0, n): rejection on 64-bit draws (sim/workload/rng.cc)."""
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        x = rng()
        if x < limit:
            return x % n


def sample(rows, num_prompts, seed):
    """The C++ ShareGPT sampler of sim/workload/dataset.cc, without oversampling."""
    order = list(range(len(rows)))
    rng = Mt19937_64(seed)
    for i in range(len(order) - 1, 0, -1):
        j = uniform_index(rng, i + 1)
        order[i], order[j] = order[j], order[i]
    out = []
    for k in order:
        if passes(rows[k][0], rows[k][1]):
            out.append(rows[k])
            if len(out) == num_prompts:
                break
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", default=DEFAULT_SOURCE)
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--fit", action="store_true", help="print fitted factors")
    parser.add_argument("--check", action="store_true", help="print sample sums")
    parser.add_argument("--stats", action="store_true", help="print seed-0 distribution")
    parser.add_argument("--rules", action="store_true",
                        help="compare first-turn recovery rules (traces/README.md)")
    args = parser.parse_args()

    # Self-test of the generator against the value the C++ standard requires.
    rng = Mt19937_64(5489)
    for _ in range(9999):
        rng()
    assert rng() == 9981545732273789042, "Mt19937_64 does not match std::mt19937_64"

    if args.rules:
        print_rules(args.source)
        return
    firsts = read_first_turns(args.source)
    uniforms = natural_uniforms(len(firsts))
    if args.fit:
        p, mu = fit(firsts, uniforms)
        rows = transform(firsts, uniforms, p, mu)
        sp, so = sample_means(rows)
        mp, mo, kept = filtered_means(rows)
        print(f"conversations={len(firsts)} PROMPT_SCALE_MILLI={p} NATURAL_MEAN_TOKENS={mu}\n"
              f"seed-{FIT_SEED} sample of {FIT_NUM_PROMPTS}: mean_prompt={sp:.3f} "
              f"mean_output={so:.3f}\n"
              f"all {kept} passing rows: mean_prompt={mp:.3f} mean_output={mo:.3f}")
        return
    if PROMPT_SCALE_MILLI <= 0 or NATURAL_MEAN_TOKENS <= 0:
        sys.exit("parameters not fitted yet: run with --fit and paste them in")
    rows = transform(firsts, uniforms, PROMPT_SCALE_MILLI, NATURAL_MEAN_TOKENS)
    if args.check:
        for seed in (0, 1, 2, 42):
            s = sample(rows, 1000, seed)
            print(f"seed={seed} n={len(s)} prompt_sum={sum(r[0] for r in s)} "
                  f"output_sum={sum(r[2] for r in s)}")
        return
    if args.stats:
        s = sample(rows, FIT_NUM_PROMPTS, FIT_SEED)
        print(f"seed-{FIT_SEED} sample of {len(s)}")
        print("prompt_tokens     " + describe([r[0] for r in s]))
        print("completion_tokens " + describe([r[1] for r in s]))
        print("output_tokens     " + describe([r[2] for r in s]))
        print(f"output == completion (capped by max_completion_tokens): "
              f"{sum(r[1] == r[2] for r in s)} of {len(s)}")
        return
    with open(args.out, "w", newline="") as f:
        f.write("prompt_tokens,completion_tokens,output_tokens\n")
        for p, c, o in rows:
            f.write(f"{p},{c},{o}\n")
    print(f"wrote {len(rows)} rows to {args.out}")

if __name__ == "__main__":
    main()
