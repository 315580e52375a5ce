"""Times as Slurm's commands print them."""

from __future__ import annotations

import datetime as dt

from plurm.conf.values import format_minutes, format_seconds, format_time_limit

__all__ = ["EPOCH", "clock_time", "date_line", "elapsed", "limit", "limit_long", "sinfo_limit"]

#: The wall-clock date of simulated time 0, so that timestamps are the same on every run.
EPOCH = dt.datetime(2026, 1, 12, tzinfo=dt.UTC)


def elapsed(seconds: float) -> str:
    """A duration as squeue's TIME column: ``M:SS``, ``H:MM:SS``, ``D-HH:MM:SS``."""
    return format_seconds(int(seconds))


def limit(minutes: int | None) -> str:
    """A time limit as squeue's TIME_LIMIT: ``UNLIMITED`` or like :func:`elapsed`."""
    return format_minutes(minutes)


def limit_long(minutes: int | None) -> str:
    """A limit as scontrol prints it: ``UNLIMITED``, ``HH:MM:SS`` or ``D-HH:MM:SS``."""
    return format_time_limit(minutes)


def sinfo_limit(minutes: int | None) -> str:
    """A partition limit as sinfo's TIMELIMIT: ``infinite`` or like :func:`elapsed`."""
    return "infinite" if minutes is None else format_seconds(minutes * 60)


def clock_time(seconds: float | None) -> str:
    """A point in simulated time as scontrol prints dates: ``2026-01-01T00:00:05``."""
    if seconds is None:
        return "Unknown"
    moment = EPOCH + dt.timedelta(seconds=int(seconds))
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def date_line(seconds: float) -> str:
    """The date line squeue -l and sinfo -l print first: ``Mon Jan 12 00:00:05 2026``."""
    return (EPOCH + dt.timedelta(seconds=int(seconds))).strftime("%a %b %d %H:%M:%S %Y")
