#!/usr/bin/env python3
"""Replaces a profile's tables of one kind with the same tables of another run.

    python3 calibration/swap_tables.py PROFILE SOURCE KIND

Every table of KIND in PROFILE (a servesim_calibrate textproto) is replaced, in
place and in its position, by the table of SOURCE with the same kind and key;
each gains, at the end of its note, the run it came from (SOURCE's measured_at
and command line) so that the profile says which tables a later session
measured. Both files must hold the same keys of KIND, or nothing is written.
Used once so far: the per-tensor FP8 GEMM tables of one kernel family
(docs/calibration.md, "FP8 scaling mode"). Standard library only.
"""
import re
import sys

# What ends a swapped-in table's note, before the run's measured_at and
# command line (calibration/profile.proto, Table.note; run's header reads it).
SWAP_MARK = "; swapped in from the run of "
TABLE_RE = re.compile(r"^tables \{\n.*?^\}\n", re.S | re.M)
KIND_RE = re.compile(r'^  kind: "(\w+)"$', re.M)
KEY_RE = re.compile(r'^  key \{ name: "(\w+)" value: (\d+) \}$', re.M)
NOTE_RE = re.compile(r'^  note: "(.*)"$', re.M)


def tables_of(text, kind):
    """{key tuple: (start, end, body)} of `text`'s tables of `kind`."""
    out = {}
    for m in TABLE_RE.finditer(text):
        body = m.group(0)
        k = KIND_RE.search(body)
        if not k or k.group(1) != kind:
            continue
        key = tuple(KEY_RE.findall(body))
        if key in out:
            sys.exit(f"two {kind} tables with key {key}")
        out[key] = (m.start(), m.end(), body)
    return out


def device_field(text, name):
    m = re.search(rf'^  {name}: "(.*)"$', text, re.M)
    if not m:
        sys.exit(f"the source has no device {name}")
    return m.group(1)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    profile_path, source_path, kind = sys.argv[1:]
    profile = open(profile_path, encoding="utf-8").read()
    source = open(source_path, encoding="utf-8").read()
    old, new = tables_of(profile, kind), tables_of(source, kind)
    if not old:
        sys.exit(f"{profile_path}: no {kind} tables")
    if set(old) != set(new):
        sys.exit(f"{kind} keys differ: only in the profile {sorted(set(old) - set(new))}, "
                 f"only in the source {sorted(set(new) - set(old))}")
    origin = (f"{SWAP_MARK}{device_field(source, 'measured_at')} "
              f"({device_field(source, 'command_line')})")
    pieces, at = [], 0
    for key, (start, end, _) in sorted(old.items(), key=lambda kv: kv[1][0]):
        body = new[key][2]
        if not NOTE_RE.search(body):
            sys.exit(f"{source_path}: the {kind} table {key} has no note")
        body = NOTE_RE.sub(lambda m: f'  note: "{m.group(1)}{origin}"', body, count=1)
        pieces += [profile[at:start], body]
        at = end
    pieces.append(profile[at:])
    with open(profile_path, "w", encoding="utf-8") as f:
        f.write("".join(pieces))
    print(f"{profile_path}: {len(old)} {kind} tables from {source_path}")


if __name__ == "__main__":
    main()
