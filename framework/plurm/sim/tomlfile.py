"""Reading the simulator's small TOML files (trace mappings, comparisons) with Plurm's errors."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from plurm.errors import PlurmError

__all__ = ["read_toml"]


def read_toml(path: str | os.PathLike[str], what: str, error: type[PlurmError]) -> dict[str, Any]:
    """The TOML document at ``path``; an unreadable or invalid file raises ``error`` with a
    message naming the file and ``what`` it was meant to be ("mapping", "comparison")."""
    name = str(path)
    try:
        return tomllib.loads(Path(path).read_text())
    except OSError as problem:
        raise error(f"{name}: cannot read the {what}: {problem.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as problem:
        raise error(f"{name}: not a valid TOML {what}: {problem}") from None
