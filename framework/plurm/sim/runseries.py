"""What a comparison's run sends back for the page beside its summary: its utilization (all
and later thrown away) and queue-length series, its preemptions with their victims, its
waits and its configuration's settings. Plain, picklable values, made where the run ran
(:func:`RunSeries.build`), drawn by :mod:`plurm.sim.compare_report` where the page is
written; no matplotlib here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from plurm.conf.model import SlurmConfig
from plurm.sim import series
from plurm.sim.settings import plugin_settings
from plurm.sim.trace import JobRecord, Transition

__all__ = ["RunSeries"]


@attrs.frozen
class RunSeries:
    """One run's series. ``used`` and ``lost`` are shares of all CPUs (``lost``: running
    attempts later thrown away by requeue or cancel); ``window`` is the summary's (first
    submission to last end)."""

    total_cpus: int
    window: tuple[float, float]
    used: series.Step
    lost: series.Step
    queue: series.Step
    victims: tuple[series.Victim, ...]
    waits: tuple[float, ...]
    high_waits: tuple[float, ...]
    settings: tuple[tuple[str, str], ...]

    @classmethod
    def build(
        cls,
        records: Sequence[JobRecord],
        transitions: Sequence[Transition],
        summary: Mapping[str, Any],
        config: SlurmConfig,
        total_cpus: int,
    ) -> RunSeries:
        first, last = summary["utilization_window"]
        intervals = series.run_intervals(records, transitions)
        started = [r for r in records if r.wait is not None]
        return cls(
            total_cpus=total_cpus,
            window=(float(first), float(last)),
            used=series.utilization(intervals, total_cpus, float(first)),
            lost=series.utilization([i for i in intervals if i.lost], total_cpus, float(first)),
            queue=series.queue_length(records, transitions),
            victims=tuple(series.victims(records, transitions)),
            waits=tuple(r.wait for r in started if r.wait is not None),
            high_waits=tuple(r.wait for r in started if r.high_priority and r.wait is not None),
            settings=tuple(plugin_settings(config)),
        )
