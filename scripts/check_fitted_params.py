#!/usr/bin/env python3
"""Checks that a freshly fitted parameters file reproduces the committed one:
every number equal to 6 significant digits, every other line identical,
except the generation date and the profile's absolute path."""
import re
import sys


def lines(path):
    out = []
    for line in open(path):
        line = line.strip()
        if line.startswith(("generated_at:", "profile:")) or not line:
            continue
        out.append(line)
    return out


def main(committed, fresh):
    a, b = lines(committed), lines(fresh)
    if len(a) != len(b):
        print(f"{fresh}: {len(b)} lines, committed {committed} has {len(a)}")
        return 1
    num = re.compile(r"^(\w+): (-?[0-9.eE+-]+)$")
    for x, y in zip(a, b):
        mx, my = num.match(x), num.match(y)
        if mx and my and mx.group(1) == my.group(1):
            u, v = float(mx.group(2)), float(my.group(2))
            if abs(u - v) > 1e-6 * max(abs(u), abs(v), 1e-12):
                print(f"fitted value differs: committed '{x}', fresh '{y}'")
                return 1
        elif x != y:
            print(f"line differs: committed '{x}', fresh '{y}'")
            return 1
    print("fitted parameters reproduce the committed file")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
