"""One `servesim run --result-json` call, read back as a dict.

The scripts that generate committed docs all ask servesim for predictions
this way; keeping the command line in one place keeps them agreeing on how a
live run's env column becomes --env flags.
"""

import json
import os
import re
import subprocess
import tempfile


def env_flags(env):
    """--env flags for a results CSV's env column ("K=V", several split by ';' or spaces,
    as `servesim validate` reads it)."""
    flags = []
    for kv in re.split(r"[; ]+", env or ""):
        if kv:
            flags += ["--env", kv]
    return flags


def run_result(binary, serve, bench, env="", params=None, model_spec=None, spread=False,
               folds=None):
    """(the run's --save-result JSON as a dict, "") or (None, servesim's last error line).

    With `spread`, the dict carries servesim_spread over the leave-one-out fits (`folds`, or
    the committed ones), and the central figures come from their fit on every run: servesim
    refuses `params` beside it."""
    if spread and params:
        raise ValueError("run_result: --spread takes its parameters from the fold file, not params")
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "result.json")
        cmd = [binary, "run", "--serve", serve, "--bench", bench, "--result-json", result]
        cmd += env_flags(env)
        if model_spec:
            cmd += ["--model-spec", model_spec]
        if params:
            cmd += ["--params", params]
        if spread:
            cmd += ["--spread"]
            if folds:
                cmd += ["--folds", folds]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            return None, (p.stderr.strip().splitlines() or ["failed"])[-1]
        with open(result, encoding="utf-8") as f:
            return json.load(f), ""
