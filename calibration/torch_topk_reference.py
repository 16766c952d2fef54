#!/usr/bin/env python3
"""A reference for servesim's own top-k kernel (the `topk` and `topk_row`
tables of calibration/profiles/h200.textproto): PyTorch's torch.topk on the
same shapes, on the same GPU. The engines run kernels of their own (vLLM
v0.13's top_k_per_row_decode, SGLang's fast_topk_v2), which are not here;
torch.topk is what vLLM's indexer used before them and a published,
tuned selection to hold servesim's one-block-per-row radix select against.

Run on the H200 machine: python3 calibration/torch_topk_reference.py > LOG
Prints one line per shape: rows, keys per row, median and p10/p90 us over
100 timed calls (CUDA events, after 20 warm-ups), sorted and unsorted.
"""
import sys

import torch

K = 2048
# (rows, keys per row): the topk_row points, then the topk points.
SHAPES = [(1, n) for n in (4096, 8192, 16384, 32768, 65536, 131072, 163840, 262144)] + [
    (2, 4096), (8, 8192), (32, 4096), (64, 4096), (256, 8192), (64, 65536), (1024, 16384)]


def time_us(fn, reps=100, warmup=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    times.sort()
    return times[len(times) // 2], times[len(times) // 10], times[(9 * len(times)) // 10]


def main():
    dev = torch.cuda.get_device_properties(0)
    print(f"# torch {torch.__version__}, {dev.name}, {dev.multi_processor_count} SMs; "
          f"torch.topk(k={K}, dim=-1) on float32 N(0,1) logits", flush=True)
    print("rows,keys_per_row,total_keys,sorted_median_us,sorted_p10_us,sorted_p90_us,"
          "unsorted_median_us,unsorted_p10_us,unsorted_p90_us")
    gen = torch.Generator(device="cuda").manual_seed(0)
    for rows, n in SHAPES:
        x = torch.randn(rows, n, device="cuda", dtype=torch.float32, generator=gen)
        # Correctness: the selected set is the true top-k (ties have measure 0).
        v, _ = torch.topk(x, K, dim=-1, sorted=False)
        want = torch.sort(x, dim=-1, descending=True).values[:, :K]
        if not torch.equal(torch.sort(v, dim=-1, descending=True).values, want):
            print(f"# {rows}x{n}: topk set differs from the sort", file=sys.stderr)
            sys.exit(1)
        s = time_us(lambda: torch.topk(x, K, dim=-1, sorted=True))
        u = time_us(lambda: torch.topk(x, K, dim=-1, sorted=False))
        print(f"{rows},{n},{rows * n},{s[0]:.2f},{s[1]:.2f},{s[2]:.2f},{u[0]:.2f},{u[1]:.2f},{u[2]:.2f}",
              flush=True)


if __name__ == "__main__":
    main()
