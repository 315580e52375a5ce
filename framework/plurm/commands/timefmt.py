"""Times as Slurm's commands print them."""

from __future__ import annotations

import datetime as dt

__all__ = ["EPOCH", "clock_time", "elapsed", "limit", "limit_long"]

#: The wall-clock date of simulated time 0, so that timestamps are the same on every run.
EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def elapsed(seconds: float) -> str:
    """A duration as squeue's TIME column: ``M:SS``, ``H:MM:SS``, ``D-HH:MM:SS``."""
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def limit(minutes: int | None) -> str:
    """A time limit as squeue's TIME_LIMIT: ``UNLIMITED`` or like :func:`elapsed`."""
    return "UNLIMITED" if minutes is None else elapsed(minutes * 60)


def limit_long(minutes: int | None) -> str:
    """A limit as scontrol prints it: ``UNLIMITED``, ``HH:MM:SS`` or ``D-HH:MM:SS``."""
    if minutes is None:
        return "UNLIMITED"
    days, rest = divmod(minutes * 60, 86400)
    clock = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{clock}" if days else clock


def clock_time(seconds: float | None) -> str:
    """A point in simulated time as scontrol prints dates: ``2026-01-01T00:00:05``."""
    if seconds is None:
        return "Unknown"
    moment = EPOCH + dt.timedelta(seconds=int(seconds))
    return moment.strftime("%Y-%m-%dT%H:%M:%S")
