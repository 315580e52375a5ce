"""The usage priority/multifactor keeps across a restart of the live controller, as JSON
values (what slurmctld keeps in its ``assoc_usage`` and ``priority_last_decay_ran`` files):
each association's usage, when usage was last decayed, the reset period it was in, and the
run time already charged for each job still holding resources.

A state read back is checked field by field: associations no longer in accounts.conf, and
values of the wrong kind, are left out (the file may come from another version).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from plurm_priority_multifactor.fairshare import Tree

__all__ = ["STATE_VERSION", "Saved", "load_state", "save_state"]

#: The version of the saved state's layout.
STATE_VERSION = 1


@attrs.frozen
class Saved:
    """What a saved state gives back."""

    last_ran: float | None
    reset_key: tuple[int, ...] | None
    #: Run time charged per (job id, restarts).
    charged: dict[tuple[int, int], float]


def save_state(
    tree: Tree,
    last_ran: float | None,
    reset_key: tuple[int, ...] | None,
    charged: Mapping[tuple[int, int], float],
    holding: Iterable[tuple[int, int]],
) -> dict[str, Any]:
    """The state as JSON values; ``charged`` only for the runs in ``holding`` (the jobs
    that still hold resources: what a finished job ran is in the usage already)."""
    return {
        "version": STATE_VERSION,
        "last_ran": last_ran,
        "reset_key": None if reset_key is None else list(reset_key),
        "usage": [[node.account, node.user, node.usage] for node in tree.walk()],
        "charged": [
            [job_id, run, charged[(job_id, run)]]
            for job_id, run in holding
            if (job_id, run) in charged
        ],
    }


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def load_state(state: Mapping[str, Any], tree: Tree) -> Saved | None:
    """Put the saved usage back into ``tree``; the rest of the state (None: not a state
    this version reads, and the tree is left as it was)."""
    if state.get("version") != STATE_VERSION:
        return None
    usage = state.get("usage")
    if isinstance(usage, list):
        for item in usage:
            if not (isinstance(item, list) and len(item) == 3):
                continue
            account, user, amount = item
            node = tree.nodes.get((account, user)) if isinstance(account, str) else None
            value = _number(amount)
            if node is not None and (user is None or isinstance(user, str)) and value is not None:
                node.usage = max(0.0, value)
    key = state.get("reset_key")
    reset_key = None
    if isinstance(key, list) and all(isinstance(part, int) for part in key):
        reset_key = tuple(key)
    charged: dict[tuple[int, int], float] = {}
    runs = state.get("charged")
    if isinstance(runs, list):
        for item in runs:
            if isinstance(item, list) and len(item) == 3:
                job_id, run, seconds = item
                value = _number(seconds)
                if isinstance(job_id, int) and isinstance(run, int) and value is not None:
                    charged[(job_id, run)] = value
    return Saved(_number(state.get("last_ran")), reset_key, charged)
