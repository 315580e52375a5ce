"""Shared test helpers: where the recorded Slurm data lives."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
ORACLE = DATA / "oracle"
REPO = Path(__file__).parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture
def oracle_dir() -> Path:
    return ORACLE
