"""Usage as Slurm's priority/multifactor keeps it: charged to associations as jobs run,
decayed by PriorityDecayHalfLife, reset by PriorityUsageResetPeriod.

Decay: Slurm turns the half-life ``h`` (seconds) into a factor per second
``d = 1 - 0.693 / h`` and multiplies every usage by ``d ** t`` after ``t`` seconds (so usage
halves in about ``h``); without a half-life nothing decays. A job's new usage over a
stretch of ``t`` seconds of run time is its CPUs (Slurm's billing TRES without
TRESBillingWeights) times its QOS's UsageFactor times ``t * d ** t``, charged to its
association and every account above it.
"""

from __future__ import annotations

import datetime as dt

from plurm.commands.timefmt import EPOCH

__all__ = ["decay_per_second", "reset_period_key"]

#: Slurm's rounding of ln 2 in its decay factor.
LN2 = 0.693


def decay_per_second(half_life: int) -> float:
    """The factor usage is multiplied by each second (1.0: no decay)."""
    if half_life <= 0:
        return 1.0
    return 1.0 - LN2 / half_life


def reset_period_key(period: str, now: float) -> tuple[int, ...] | None:
    """Which reset period ``now`` falls in (usage is reset when it changes); None when
    usage is never reset (NONE, and NOW, which resets only at start-up)."""
    moment = EPOCH + dt.timedelta(seconds=now)
    if period == "DAILY":
        return (moment.year, moment.month, moment.day)
    if period == "WEEKLY":  # weeks start on Sunday
        sunday = moment.date() - dt.timedelta(days=(moment.weekday() + 1) % 7)
        return (sunday.year, sunday.month, sunday.day)
    if period == "MONTHLY":
        return (moment.year, moment.month)
    if period == "QUARTERLY":
        return (moment.year, (moment.month - 1) // 3)
    if period == "YEARLY":
        return (moment.year,)
    return None
