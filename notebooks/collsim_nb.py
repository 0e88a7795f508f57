"""Helpers the course's notebooks share: run the collsim command line and
read its JSON or CSV, and check an exercise's answer.

The notebooks run collsim from the repository they sit in: the first call
builds it with `go build` (a second or two once Go's cache is warm) unless
the COLLSIM environment variable names a binary already built.
"""

import io
import json
import math
import os
import pathlib
import subprocess

import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parent.parent
_binary = None


def binary():
    """The collsim binary: $COLLSIM, or one built from this repository."""
    global _binary
    if _binary is None:
        _binary = os.environ.get("COLLSIM")
        if not _binary:
            out = ROOT / "notebooks" / ".bin" / "collsim"
            subprocess.run(["go", "build", "-o", str(out), "./cmd/collsim"], cwd=ROOT, check=True)
            _binary = str(out)
    return _binary


def collsim(*args):
    """Runs collsim with args and returns what it prints; a failure raises
    with collsim's own message."""
    p = subprocess.run([binary(), *map(str, args)], capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        raise RuntimeError(f"collsim {' '.join(map(str, args))}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def run_json(*args):
    """collsim ... --json, parsed."""
    return json.loads(collsim(*args, "--json", "-q"))


def run_csv(*args):
    """collsim run ... --csv as a pandas DataFrame (one row per run)."""
    return pd.read_csv(io.StringIO(collsim(*args, "--csv", "-q")))


def check(name, answer, expected, rel=0.01, strict=False):
    """Checks an exercise's answer against the expected value (a number,
    within rel; or anything else, exactly). An answer left as None is not
    yet given: it prints a reminder, unless strict (the solutions), where it
    fails."""
    if answer is None:
        if strict:
            raise AssertionError(f"{name}: no answer")
        print(f"{name}: not answered yet")
        return
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        ok = math.isclose(float(answer), float(expected), rel_tol=rel)
    else:
        ok = answer == expected
    assert ok, f"{name}: {answer!r} is not right; look again at the cells above"
    print(f"{name}: right")
