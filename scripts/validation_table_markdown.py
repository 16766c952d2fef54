#!/usr/bin/env python3
"""Turns a `servesim validate` / `servesim fit --leave-one-out` table into the
README's markdown: the summary rows and one row per case.

usage: python3 scripts/validation_table_markdown.py docs/validation_leave_one_out.txt
"""
import re
import sys

METRICS = ["total tok/s", "mean TTFT", "p99 TTFT", "mean TPOT", "mean ITL", "median ITL", "p99 ITL",
           "peak out tok/s"]
TARGETS = {"total tok/s": "≤ 10 % / ≤ 25 %", "mean TTFT": "≤ 20 %", "mean TPOT": "≤ 20 %"}
NAMES = {"total tok/s": "total token throughput",
         "peak out tok/s": "peak output token throughput (not fitted)"}


def main(path):
    cases, summary, rho = [], {}, None
    for line in open(path, encoding="utf-8"):
        cells = line.split("|")
        if len(cells) in (len(METRICS), len(METRICS) + 1) and re.match(r"^[a-z0-9-]+\s+(yes|no)\s*$", cells[0].strip() + " "):
            name = cells[0].split()[0]
            cols = [c.split() for c in cells[1:]]
            cases.append((name, cols))
        m = re.match(r"\s+(.+?)\s+median\s+([\d.]+)\s+max\s+([\d.]+)", line)
        if m:
            key = m.group(1).replace(" ms", "").strip()
            summary[key] = (m.group(2), m.group(3))
        m = re.match(r"\s+Spearman rho of total tok/s: ([\d.]+)", line)
        if m:
            rho = float(m.group(1))
    out = ["| metric | median abs. error | max | target (issue 6) |", "|---|---|---|---|"]
    for k in METRICS:
        if k not in summary:  # tables made before the peak was compared
            continue
        med, mx = summary[k]
        out.append(f"| {NAMES.get(k, k)} | {med} % | {mx} % | {TARGETS.get(k, '—')} |")
    out.append(f"| Spearman ρ of total tok/s | {rho:.2f} | | ≥ 0.9 |")
    out.append("")
    out.append("| case | total tok/s live → predicted (err) | mean TTFT ms (err) "
               "| mean TPOT ms (err) | median ITL ms (err) |")
    out.append("|---|---|---|---|---|")
    for name, cols in cases:
        # Columns as METRICS: throughput, mean TTFT, mean TPOT, median ITL.
        cells = []
        for i in (0, 1, 3, 5):
            live, pred, err = cols[i]
            cells.append(f"{float(live):.0f} → {float(pred):.0f} ({float(err):+.0f} %)")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])
