#!/usr/bin/env python3
"""Writes (or refreshes) the "## Contents" list of a long Markdown document.

The list is every ## and ### heading after it, linked by GitHub's anchors,
placed before the first ## heading. Run after adding or renaming a section:
  python3 scripts/docs_contents.py docs/fitting.md docs/engines.md docs/calibration.md
"""
import re
import sys

CONTENTS = "## Contents"


def anchor(title, seen):
    a = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
    n = seen.get(a, 0)
    seen[a] = n + 1
    return a if n == 0 else f"{a}-{n}"


def refresh(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    # Drop an earlier list: from its heading to the next ## heading.
    if CONTENTS in lines:
        start = lines.index(CONTENTS)
        end = start + 1
        while end < len(lines) and not lines[end].startswith("## "):
            end += 1
        del lines[start:end]
    heads, in_code = [], False
    for line in lines:
        if line.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"^(##+) (.*)$", line)
        if m and len(m.group(1)) <= 3:
            heads.append((len(m.group(1)), m.group(2)))
    seen = {"contents": 1}  # the list's own heading takes the bare anchor
    block = [CONTENTS, ""]
    for level, title in heads:
        block.append("  " * (level - 2) + f"- [{title}](#{anchor(title, seen)})")
    block.append("")
    first = next(i for i, l in enumerate(lines) if l.startswith("## "))
    lines[first:first] = block
    open(path, "w", encoding="utf-8").write("\n".join(lines))


for p in sys.argv[1:]:
    refresh(p)
