"""What a priority plugin shows of its work: the weights, each pending job's factors (sprio)
and the fair-share tree (sshare)."""

from __future__ import annotations

import math
from typing import Any

import attrs

__all__ = [
    "PriorityFactors",
    "PriorityReport",
    "PriorityWeights",
    "ShareRow",
    "report_from_dict",
    "report_to_dict",
]


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


@attrs.frozen
class PriorityReport:
    """What sprio and sshare read: the weights (None: the policy has no factors), the
    factors of each pending job that is not held (by job id), and the fair-share tree
    (None: the policy keeps no shares)."""

    weights: PriorityWeights | None
    jobs: tuple[PriorityFactors, ...] = ()
    shares: tuple[ShareRow, ...] | None = None


def _pairs(value: Any) -> tuple[tuple[str, float], ...]:
    return tuple((str(name), float(number)) for name, number in value)


def _finite(instance: object, field: object, value: Any) -> Any:
    """JSON has no infinity (a Level FS without usage): it travels as the text ``inf``."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def report_to_dict(report: PriorityReport) -> dict[str, Any]:
    """The report as strict JSON can carry it (live mode's answer)."""
    return attrs.asdict(report, recurse=True, value_serializer=_finite)


def report_from_dict(data: Any) -> PriorityReport:
    """A report from its ``attrs.asdict`` form (live mode's answer); KeyError, TypeError
    or ValueError when it is malformed."""
    weights = data["weights"]
    shares = data["shares"]
    return PriorityReport(
        None
        if weights is None
        else PriorityWeights(**{**weights, "tres": _pairs(weights["tres"])}),
        tuple(PriorityFactors(**{**job, "tres": _pairs(job["tres"])}) for job in data["jobs"]),
        None
        if shares is None
        else tuple(
            ShareRow(
                **{
                    **row,
                    "level_fs": None if row["level_fs"] is None else float(row["level_fs"]),
                    "tres_run_mins": tuple((str(n), int(v)) for n, v in row["tres_run_mins"]),
                }
            )
            for row in shares
        ),
    )
