"""Plurm: a workload manager built entirely of plugins, on the plan of Slurm.

The public surface so far:

* :mod:`plurm.conf` reads real slurm.conf files (and qos.conf) into typed, frozen values;
* :mod:`plurm.hostlist` expands and compresses hostlists exactly as Slurm 22.05 does;
* :mod:`plurm.errors` holds the exception tree.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
