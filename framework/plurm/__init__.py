"""Plurm: a workload manager built entirely of plugins, on the plan of Slurm.

The public surface so far:

* :mod:`plurm.conf` reads real slurm.conf files (and qos.conf) into typed, frozen values;
* :mod:`plurm.hostlist` expands and compresses hostlists exactly as Slurm 22.05 does;
* :mod:`plurm.errors` holds the exception tree;
* :data:`hookimpl` marks a plugin's hook implementations (see :mod:`plurm.hookspecs`).

The markers are imported on first use (they bring pluggy), so that a module of the package
that needs none of them, the thin ``sbatch`` (:mod:`plurm.live.thin`), starts without it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs a command a tenth of its start
if TYPE_CHECKING:
    from typing import Any

    from plurm._markers import HOOK_API_VERSION, hookimpl, hookspec

__all__ = ["HOOK_API_VERSION", "__version__", "hookimpl", "hookspec"]

__version__ = "0.1.0"

_MARKERS = frozenset({"HOOK_API_VERSION", "hookimpl", "hookspec"})


def __getattr__(name: str) -> Any:
    if name in _MARKERS:
        from plurm import _markers

        value = getattr(_markers, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'plurm' has no attribute {name!r}")
