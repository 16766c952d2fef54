#!/usr/bin/env python3
"""Checks compare_profiles.py on a copy of a profile with known changes.

    python3 calibration/compare_profiles_test.py PROFILE.textproto

Every rope point's median is scaled by 1.25 and one rmsnorm point is dropped
from the copy; the comparison must report rope at +25.0 % (median, p90, max),
every other kind at 0.0 %, one point fewer in the total and one point in only
one profile. Compared with itself the profile shows none of that, so this is
what a re-measurement check rests on. Standard library only.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MEDIAN_RE = re.compile(r"(median_us: )([^ ]+)")
ROW_RE = re.compile(r"^(\S+) +(\d+) +([\d.]+)% +([\d.]+)% +([\d.]+)% +([+-][\d.]+)%$", re.M)


def changed_copy(text):
    """The profile with rope's medians x1.25 and the first rmsnorm point removed."""
    out, dropped = [], False
    for block in re.split(r"(?m)^(?=tables \{)", text):
        if block.startswith("tables {") and '  kind: "rope"' in block:
            block = MEDIAN_RE.sub(lambda m: f"{m.group(1)}{float(m.group(2)) * 1.25!r}", block)
        if not dropped and block.startswith("tables {") and '  kind: "rmsnorm"' in block:
            block = re.sub(r"(?m)^  points \{.*\n", "", block, count=1)
            dropped = True
        out.append(block)
    assert dropped, "the profile has no rmsnorm table"
    return "".join(out)


def rows(report):
    return {m.group(1): m.groups()[1:] for m in ROW_RE.finditer(report)}


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        base_text = f.read()
    compare = os.path.join(HERE, "compare_profiles.py")
    with tempfile.TemporaryDirectory() as tmp:
        other = os.path.join(tmp, "changed.textproto")
        with open(other, "w", encoding="utf-8") as f:
            f.write(changed_copy(base_text))
        same = subprocess.run([sys.executable, compare, argv[1], argv[1]], capture_output=True,
                              text=True, check=True).stdout
        changed = subprocess.run([sys.executable, compare, argv[1], other], capture_output=True,
                                 text=True, check=True).stdout
    failures = []

    def expect(ok, what):
        if not ok:
            failures.append(what)

    base, moved = rows(same), rows(changed)
    expect("rope" in moved and moved["rope"][1:] == ("25.0", "25.0", "25.0", "+25.0"),
           f"rope should move +25.0 % at every point: {moved.get('rope')}")
    for kind, figures in moved.items():
        if kind not in ("rope", "all"):
            expect(figures[1:] == ("0.0", "0.0", "0.0", "+0.0"), f"{kind} should not move: {figures}")
    expect(int(moved["rmsnorm"][0]) == int(base["rmsnorm"][0]) - 1,
           f"rmsnorm should lose one point: {base['rmsnorm'][0]} -> {moved['rmsnorm'][0]}")
    expect(int(moved["all"][0]) == int(base["all"][0]) - 1,
           f"one point fewer in all: {base['all'][0]} -> {moved['all'][0]}")
    expect("points in only one profile: 1\n" in changed, "one point in only one profile")
    expect("points in only one profile: 0\n" in same, "the profile against itself: none")
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    if failures:
        print(changed, file=sys.stderr)
        return 1
    print(f"ok: rope +25.0 %, {len(moved) - 2} other kinds unmoved, one rmsnorm point unmatched")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
