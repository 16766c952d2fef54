#!/usr/bin/env python3
"""Host time per GPU kernel that an engine's step pays outside CUDA graphs.

A step that no CUDA graph covers (vLLM batches above the largest captured
size, SGLang and TensorRT-LLM prefills) is launched op by op from Python: the
GPU waits on the host whenever the kernels are shorter than the host work
between them. servesim charges such a step at least (kernels x this time)
(sim/cost/step_predictor.h, eager_launch_us). This bench measures it on the
calibration machine's host, with the PyTorch build there, two ways:

  compiled=0  eager PyTorch module code, one framework op per kernel (SGLang's
              and TensorRT-LLM's PyTorch backends run their prefills so);
  compiled=1  the same layers through torch.compile (Inductor, no CUDA
              graphs), as vLLM runs batches above its captured sizes.

The layers are DeepSeek-shaped in their op sequence (norms, low-rank query
and latent projections, rotary, attention, output projection, router top-k,
routed experts gathered by index, shared expert) at tiny widths and 4 tokens,
so every kernel finishes in a few microseconds and the host sets the pace.
Host time per kernel = wall time of a forward / kernels it launched, counted
with torch.profiler. The GPU's own busy time is reported beside it, to show
the loop is host-bound.

Prints profile tables (calibration/profile.proto text format) to stdout, the
eager one before torch.compile starts, and a log to stderr. Percentiles are
linear between samples, as calibration/cuda/harness.cu computes them.
Usage: python3 launch_overhead_bench.py [--layers N] [--iters N] [--repeats N>=2]
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN, Q_LORA, KV_LORA, ROPE, HEADS, HEAD_DIM = 256, 128, 64, 16, 4, 32
EXPERTS, TOPK, EXPERT_DIM = 16, 4, 64


class Rms(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight, 1e-6)


def rotary(x, cos, sin):
    a, b = x[..., : ROPE // 2], x[..., ROPE // 2 : ROPE]
    rot = torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)
    return torch.cat((rot, x[..., ROPE:]), dim=-1)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_norm = Rms(HIDDEN)
        self.q_a = nn.Linear(HIDDEN, Q_LORA, bias=False)
        self.q_norm = Rms(Q_LORA)
        self.q_b = nn.Linear(Q_LORA, HEADS * HEAD_DIM, bias=False)
        self.kv_a = nn.Linear(HIDDEN, KV_LORA, bias=False)
        self.kv_norm = Rms(KV_LORA)
        self.kv_b = nn.Linear(KV_LORA, 2 * HEADS * HEAD_DIM, bias=False)
        self.o = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)
        self.post_norm = Rms(HIDDEN)
        self.gate = nn.Linear(HIDDEN, EXPERTS, bias=False)
        self.w_up = nn.Parameter(torch.randn(EXPERTS, HIDDEN, 2 * EXPERT_DIM) * 0.02)
        self.w_down = nn.Parameter(torch.randn(EXPERTS, EXPERT_DIM, HIDDEN) * 0.02)
        self.shared_up = nn.Linear(HIDDEN, 2 * EXPERT_DIM, bias=False)
        self.shared_down = nn.Linear(EXPERT_DIM, HIDDEN, bias=False)

    def forward(self, x, cos, sin):
        t = x.shape[0]
        h = self.input_norm(x)
        q = self.q_b(self.q_norm(self.q_a(h))).view(t, HEADS, HEAD_DIM)
        kv = self.kv_b(self.kv_norm(self.kv_a(h))).view(t, HEADS, 2 * HEAD_DIM)
        k, v = kv.split(HEAD_DIM, dim=-1)
        q, k = rotary(q, cos, sin), rotary(k, cos, sin)
        a = F.scaled_dot_product_attention(
            q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), is_causal=True)
        x = x + self.o(a.transpose(0, 1).reshape(t, HEADS * HEAD_DIM))
        h = self.post_norm(x)
        weights, ids = torch.topk(self.gate(h).softmax(dim=-1), TOPK, dim=-1)
        up = torch.einsum("th,tkhe->tke", h, self.w_up[ids])
        g, u = up.chunk(2, dim=-1)
        routed = torch.einsum("tke,tkeh->tkh", F.silu(g) * u, self.w_down[ids])
        routed = (routed * weights.unsqueeze(-1)).sum(dim=1)
        sg, su = self.shared_up(h).chunk(2, dim=-1)
        return x + routed + self.shared_down(F.silu(sg) * su)


class Model(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(layers))

    def forward(self, x, cos, sin):
        for layer in self.layers:
            x = layer(x, cos, sin)
        return x


def kernels_and_gpu_us(fn):
    """Kernels one call launches, and the sum of their GPU times (us)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return len(kernels), sum(e.device_time for e in kernels)


def host_us_per_call(fn, iters, repeats):
    """Median (p10, p90) over `repeats` of the wall time per call, us, with
    the GPU queue drained before and after each timed run of `iters` calls."""
    samples = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) / iters * 1e6)
    samples.sort()
    q = statistics.quantiles(samples, n=10, method="inclusive")
    return statistics.median(samples), q[0], q[-1], len(samples)


def table(compiled, per_kernel, p10, p90, samples, note):
    return (
        "tables {\n"
        '  kind: "host_launch"\n'
        f'  key {{ name: "compiled" value: {compiled} }}\n'
        '  x_name: "kernels"\n'
        f"  points {{ x: 1 median_us: {per_kernel:.4f} p10_us: {p10:.4f} p90_us: {p90:.4f} "
        f"samples: {samples} achieved_tflops: 0 achieved_gbps: 0 }}\n"
        f'  note: "{note}"\n'
        "}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    if args.repeats < 2 or args.iters < 1 or args.layers < 1:
        ap.error("--repeats must be >= 2, --iters and --layers >= 1")
    log = lambda *a: print(*a, file=sys.stderr, flush=True)
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    torch.manual_seed(0)
    dev = torch.device("cuda")
    log(f"{when}: torch {torch.__version__}, {torch.cuda.get_device_name(0)}, "
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    model = Model(args.layers).to(dev, torch.bfloat16).eval()
    x = torch.randn(4, HIDDEN, device=dev, dtype=torch.bfloat16)
    pos = torch.arange(4, device=dev, dtype=torch.float32).unsqueeze(-1)
    freq = torch.arange(ROPE // 2, device=dev, dtype=torch.float32)
    cos = torch.cos(pos * freq).to(torch.bfloat16).unsqueeze(1)
    sin = torch.sin(pos * freq).to(torch.bfloat16).unsqueeze(1)

    # The floor: one framework op on a one-element tensor, no module around it.
    a = torch.ones(1, device=dev)
    b = torch.ones(1, device=dev)
    bare = host_us_per_call(lambda: torch.add(a, b, out=a), 2000, args.repeats)
    log(f"bare torch.add dispatch+launch: {bare[0]:.2f} us (p10 {bare[1]:.2f}, p90 {bare[2]:.2f})")

    def measure(flag, m):
        fn = lambda: m(x, cos, sin)
        for _ in range(5):
            fn()
        kernels, gpu_us = kernels_and_gpu_us(fn)
        med, p10, p90, n = host_us_per_call(fn, args.iters, args.repeats)
        busy = gpu_us / med
        log(f"compiled={flag}: {kernels} kernels per forward ({args.layers} layers), "
            f"wall {med:.1f} us per forward, GPU busy {gpu_us:.1f} us ({100 * busy:.0f} %), "
            f"{med / kernels:.2f} us per kernel (p10 {p10 / kernels:.2f}, p90 {p90 / kernels:.2f})")
        if busy > 0.8:
            log(f"compiled={flag}: GPU busy {100 * busy:.0f} % of the wall time: not host-bound")
        mode = "torch.compile (Inductor, no CUDA graphs)" if flag else "eager PyTorch modules"
        sys.stdout.write(table(
            flag, med / kernels, p10 / kernels, p90 / kernels, n,
            f"host time per kernel, {mode}: wall time of a forward of {args.layers} DeepSeek-shaped "
            f"layers at tiny widths ({kernels} kernels, GPU busy {100 * busy:.0f} %) / kernels; "
            f"torch {torch.__version__}; bare torch.add {bare[0]:.2f} us; measured {when}; "
            f"calibration/host/launch_overhead_bench.py"))
        sys.stdout.flush()

    with torch.inference_mode():
        # The eager table first: a compile that fails or times out keeps it.
        measure(0, model)
        try:
            compiled = torch.compile(model, dynamic=False)
            compiled(x, cos, sin)  # compile outside the timing
        except Exception as e:  # noqa: BLE001 - report; the eager table stands
            log(f"torch.compile failed, compiled table skipped: {type(e).__name__}: {e}")
            return
        measure(1, compiled)

if __name__ == "__main__":
    main()
