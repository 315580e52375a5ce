"""The benchmarks' check that the compiled core decides as its Python reference does.

``same_as_python(command, out)`` runs a ``plurm simulate`` command line again with
``PLURM_PURE_PYTHON=1`` (the Python reference of every compiled part), writing to another
directory, and compares the two ``jobs.csv`` byte for byte. ``simulate_both`` runs both for
a benchmark that replays in-process.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLURM = Path(sys.executable).parent / "plurm"


def _run(command: list[str], pure: bool) -> tuple[float, float]:
    env = {**os.environ, "PLURM_PURE_PYTHON": "1" if pure else "0"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu


def same_as_python(command: list[str], out: Path) -> bool:
    """Run ``command`` (a ``plurm simulate`` whose ``--out`` is ``out``, run already) on the
    Python reference; print its times and whether its jobs.csv is the same."""
    with tempfile.TemporaryDirectory() as other:
        again = [other if part == str(out) else part for part in command]
        wall, cpu = _run(again, pure=True)
        same = (Path(other) / "jobs.csv").read_bytes() == (out / "jobs.csv").read_bytes()
    print(
        f"Python reference (PLURM_PURE_PYTHON=1): {wall:.1f} s wall, {cpu:.1f} s CPU; jobs.csv "
        + ("identical to the compiled run's" if same else "DIFFERENT from the compiled run's")
    )
    return same


def simulate_both(arguments: list[str]) -> bool:
    """``plurm simulate ARGUMENTS --out DIR --quiet`` compiled, then on the Python reference."""
    with tempfile.TemporaryDirectory() as out:
        command = [str(PLURM), "simulate", *arguments, "--out", out, "--quiet"]
        print("$", " ".join(command), flush=True)
        wall, cpu = _run(command, pure=False)
        print(f"compiled: {wall:.1f} s wall, {cpu:.1f} s CPU")
        return same_as_python(command, Path(out))
