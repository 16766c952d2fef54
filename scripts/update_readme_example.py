#!/usr/bin/env python3
"""Replaces the README's example output block with what `servesim run` prints
for the README's own example command (run after any model or parameter
change).

usage: python3 scripts/update_readme_example.py
"""
import re
import subprocess

README = "README.md"
OUTPUT_START = "```\n# engine: vLLM v0.13.0"


def main():
    readme = open(README, encoding="utf-8").read()
    command = re.search(r"build/servesim run \\\n\s+--serve '([^']+)' \\\n\s+--bench '([^']+)'", readme)
    if command is None:
        raise SystemExit("update_readme_example: no `build/servesim run --serve ... --bench ...` in README.md")
    out = subprocess.run(["build/servesim", "run", "--serve", command.group(1), "--bench", command.group(2)],
                         capture_output=True, text=True, check=True).stdout
    start = readme.index(OUTPUT_START)
    end = readme.index("```", start + 3)
    with open(README, "w", encoding="utf-8") as f:
        f.write(readme[:start] + "```\n" + out + readme[end:])


if __name__ == "__main__":
    main()
