"""Plurm's command line as a user runs it: a new process of ``python -m plurm.cli.main``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def plurm(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``plurm ARGS`` and return what it did (its exit status is not checked)."""
    return subprocess.run(
        [sys.executable, "-m", "plurm.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=None if env is None else dict(env),
        check=False,
    )


def simulate(
    conf: Path, session: Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``plurm simulate --conf CONF SESSION``."""
    return plurm("simulate", "--conf", str(conf), str(session), cwd=cwd)
