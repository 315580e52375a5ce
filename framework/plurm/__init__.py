"""Plurm: a workload manager built entirely of plugins, on the plan of Slurm.

The public surface so far:

* :mod:`plurm.conf` reads real slurm.conf files (and qos.conf) into typed, frozen values;
* :mod:`plurm.hostlist` expands and compresses hostlists exactly as Slurm 22.05 does;
* :mod:`plurm.errors` holds the exception tree;
* :data:`hookimpl` marks a plugin's hook implementations (see :mod:`plurm.hookspecs`).
"""

from __future__ import annotations

from plurm._markers import HOOK_API_VERSION, hookimpl, hookspec

__all__ = ["HOOK_API_VERSION", "__version__", "hookimpl", "hookspec"]

__version__ = "0.1.0"
