"""What a priority plugin shows of its work: the weights, each pending job's factors (sprio)
and the fair-share tree (sshare)."""

from __future__ import annotations

import attrs

__all__ = ["PriorityFactors", "PriorityWeights", "ShareRow"]


@attrs.frozen
class PriorityWeights:
    """The weight of each factor (slurm.conf's ``PriorityWeight*``), as ``sprio -w`` shows
    them; ``tres`` holds ``PriorityWeightTRES`` as (TRES name, weight) pairs."""

    age: int = 0
    assoc: int = 0
    fairshare: int = 0
    jobsize: int = 0
    partition: int = 0
    qos: int = 0
    tres: tuple[tuple[str, float], ...] = ()


@attrs.frozen
class PriorityFactors:
    """One pending job's priority taken apart: each factor already multiplied by its
    weight, as Slurm's controller hands them to sprio (which divides by the weight again
    to show the normalized factor). ``direct`` marks a priority an administrator set: sprio
    then shows it with every factor 0."""

    job_id: int
    partition: str
    user: str
    account: str
    qos: str
    priority: int
    site: float = 0.0
    age: float = 0.0
    assoc: float = 0.0
    fairshare: float = 0.0
    jobsize: float = 0.0
    part: float = 0.0
    qos_factor: float = 0.0
    tres: tuple[tuple[str, float], ...] = ()
    nice: int = 0
    direct: bool = False


@attrs.frozen
class ShareRow:
    """One association of the fair-share tree, as sshare prints it: an account
    (``user`` None) or a user's association with ``account``. ``depth`` is its depth
    below root (root 0). ``raw_shares`` None means none (the root) and ``parent`` True
    means ``Fairshare=parent``; ``fairshare`` and ``level_fs`` None print blank."""

    account: str
    user: str | None
    depth: int
    raw_shares: int | None
    norm_shares: float
    raw_usage: float
    norm_usage: float
    effective_usage: float
    fairshare: float | None
    level_fs: float | None = None
    parent: bool = False
    #: TRES-minutes of the association's running jobs still to run (sshare's TRESRunMins),
    #: as (TRES name, minutes) pairs.
    tres_run_mins: tuple[tuple[str, int], ...] = ()
