"""A stamp of Plurm's code as it is on disk, for the caches that must not outlive it.

Standard library only (``os``, ``sys``): the thin sbatch imports it at start-up."""

from __future__ import annotations

import os
import sys

__all__ = ["code_stamp"]


def code_stamp(layout: int) -> str:
    """Plurm's code as it is on disk: its files' names, sizes and modification times, after
    ``layout`` (the cache's format) and the Python version. Kept whole, not hashed: compared
    for equality only (hashlib would load OpenSSL)."""
    root = os.path.dirname(os.path.realpath(__file__))
    parts = [f"{layout} {sys.version} {root}"]
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.name.endswith((".py", ".lark")):
                    st = entry.stat(follow_symlinks=False)
                    parts.append(f"{entry.path} {st.st_size} {st.st_mtime_ns}")
    return "\n".join(parts)
