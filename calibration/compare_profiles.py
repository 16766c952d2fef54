#!/usr/bin/env python3
"""Compares two calibration profiles point by point: how far a re-measurement moves each table.

    python3 calibration/compare_profiles.py BASE.textproto OTHER.textproto

Points are matched by table kind, table keys and x; for each kind it prints the
number of matched points and the median, p90 and max of |OTHER / BASE - 1| of
the median time, plus the signed median (a whole table moving one way is a
machine or clock difference; scatter around zero is noise). The host-launch
and ceiling figures are listed last. Standard library only: the profile is
read as text (calibration/profile.proto's text format as the calibrator
writes it).
"""
import re
import statistics
import sys
from collections import defaultdict

TABLE_RE = re.compile(r"^tables \{\n(.*?)^\}", re.S | re.M)
KIND_RE = re.compile(r'^  kind: "([^"]+)"', re.M)
KEY_RE = re.compile(r'^  key \{ name: "([^"]+)" value: ([^ ]+) \}', re.M)
POINT_RE = re.compile(r"^  points \{ x: ([^ ]+) median_us: ([^ ]+) ", re.M)
CEILING_RE = re.compile(r"^  (copy_gbps|bf16_gemm_tflops|fp8_gemm_tflops): ([^ \n]+)", re.M)


def read_points(path):
    """{(kind, keys, x): median_us} and the ceilings of one profile."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    points = {}
    for body in TABLE_RE.findall(text):
        kind = KIND_RE.search(body)
        if not kind:
            raise ValueError(f"{path}: a table without a kind")
        keys = tuple(KEY_RE.findall(body))
        for x, median in POINT_RE.findall(body):
            points[(kind.group(1), keys, float(x))] = float(median)
    ceilings = {name: float(v) for name, v in CEILING_RE.findall(text)}
    return points, ceilings


def percentile(values, p):
    s = sorted(values)
    k = (len(s) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        base, base_ceilings = read_points(argv[1])
        other, other_ceilings = read_points(argv[2])
    except (OSError, ValueError) as e:
        print(f"compare_profiles: {e}", file=sys.stderr)
        return 2
    by_kind = defaultdict(list)
    for key, t in base.items():
        if key in other and t > 0:
            by_kind[key[0]].append(other[key] / t - 1)
    if not by_kind:
        print(f"compare_profiles: no table point of {argv[1]} is in {argv[2]}", file=sys.stderr)
        return 2
    unmatched = len(set(base) ^ set(other))
    print(f"{'table kind':<28} {'points':>6} {'median |d|':>11} {'p90 |d|':>8} {'max |d|':>8} "
          f"{'median d':>9}")
    every = []
    for kind in sorted(by_kind):
        d = by_kind[kind]
        every += d
        a = [abs(v) for v in d]
        print(f"{kind:<28} {len(d):>6} {100 * statistics.median(a):>10.1f}% "
              f"{100 * percentile(a, 90):>7.1f}% {100 * max(a):>7.1f}% "
              f"{100 * statistics.median(d):>+8.1f}%")
    a = [abs(v) for v in every]
    print(f"{'all':<28} {len(every):>6} {100 * statistics.median(a):>10.1f}% "
          f"{100 * percentile(a, 90):>7.1f}% {100 * max(a):>7.1f}% "
          f"{100 * statistics.median(every):>+8.1f}%")
    print(f"points in only one profile: {unmatched}")
    for name in sorted(base_ceilings):
        if name in other_ceilings:
            print(f"ceiling {name}: {base_ceilings[name]:.1f} -> {other_ceilings[name]:.1f} "
                  f"({100 * (other_ceilings[name] / base_ceilings[name] - 1):+.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
