#!/usr/bin/env python3
"""Sets FP8 GEMM tables of two scaling modes side by side, and against DeepGEMM.

    python3 calibration/gemm_scaling_compare.py PER_TENSOR.textproto BLOCK.textproto

Both files are `servesim_calibrate --suites gemm` outputs of one device session
(calibration/run_gemm_scaling_check.sh), the first with --fp8-per-tensor. For
each single FP8 GEMM shape it prints per-tensor time / block-scaled time at
each m, then the median over shapes; then, at m = 64, both against DeepGEMM's
published figures for DeepSeek's shapes (shared/reference/model-and-kernels.md,
source K4, measured on an H800: compare with an H100 or H800 run, whose memory
is as fast). Standard library only.
"""
import re
import statistics
import sys

TABLE_RE = re.compile(r"^tables \{\n(.*?)^\}", re.S | re.M)
KEY_RE = re.compile(r'key \{ name: "(\w+)" value: (\d+) \}')
POINT_RE = re.compile(r"points \{ x: ([^ ]+) median_us: ([^ ]+) ")
# DeepGEMM FP8 1x128/128x128, M = 64, TFLOP/s by (N, K) (reference K4).
DEEPGEMM_M64_TFLOPS = {(2112, 7168): 206, (24576, 1536): 289, (32768, 512): 219,
                       (7168, 16384): 336, (4096, 7168): 287, (7168, 2048): 295}
MS = [1, 2, 4, 8, 16, 64, 256, 1024, 4096, 16384]


def gemm_fp8_tables(path):
    """{(n, k): {m: median_us}} of a profile's gemm_fp8 tables."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tables = {}
    for body in TABLE_RE.findall(text):
        if 'kind: "gemm_fp8"' not in body:
            continue
        key = {name: int(value) for name, value in KEY_RE.findall(body)}
        tables[(key["n"], key["k"])] = {float(x): float(us) for x, us in POINT_RE.findall(body)}
    return tables


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tensor, block = gemm_fp8_tables(sys.argv[1]), gemm_fp8_tables(sys.argv[2])
    shapes = sorted(set(tensor) & set(block))
    if not shapes:
        sys.exit("no gemm_fp8 table in both files")
    print("per-tensor / block-scaled time, by m")
    print("n x k".ljust(14) + "".join(f"{m:>7}" for m in MS))
    ratios = {m: [] for m in MS}
    for shape in shapes:
        cells = []
        for m in MS:
            if m in tensor[shape] and m in block[shape]:
                r = tensor[shape][m] / block[shape][m]
                ratios[m].append(r)
                cells.append(f"{r:7.2f}")
            else:
                cells.append("      -")
        print(f"{shape[0]}x{shape[1]}".ljust(14) + "".join(cells))
    print("median".ljust(14) + "".join(
        f"{statistics.median(ratios[m]):7.2f}" if ratios[m] else "      -" for m in MS))
    print("\nm = 64 against DeepGEMM (us; DeepGEMM measured on an H800)")
    print("n x k".ljust(14) + "DeepGEMM  per-tensor  block")
    for shape, tflops in DEEPGEMM_M64_TFLOPS.items():
        if shape not in tensor or 64 not in tensor[shape] or 64 not in block.get(shape, {}):
            continue
        deepgemm_us = 2.0 * 64 * shape[0] * shape[1] / (tflops * 1e6)
        print(f"{shape[0]}x{shape[1]}".ljust(14) +
              f"{deepgemm_us:8.1f}  {tensor[shape][64]:10.1f}  {block[shape][64]:5.1f}")


if __name__ == "__main__":
    main()
