"""What a job step used, as a jobacct_gather plugin reports it (sacct's and sstat's usage
fields), and the settings of Slurm's ``JobAcctGather*`` keys that the core reads.

A :class:`StepUsage` is one step's figures on the nodes that ran it: sizes in bytes, pages
as major page faults, CPU times in seconds (user plus system). Maxima say on which node and
task they were seen; averages are over the step's tasks. Plugins build them; the node
daemon sends them to the controller as :meth:`StepUsage.to_dict`, which keeps them in the
step's :class:`~plurm.model.acct.StepRecord` (:func:`with_usage`).

``SIG_OOM`` is Slurm's exit status for a step ended by its memory limit: sacct prints its
low seven bits as the signal of an OUT_OF_MEMORY step (``0:125``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from plurm.errors import PlurmError
from plurm.model.acct import StepRecord

__all__ = [
    "OOM_SIGNAL",
    "SIG_OOM",
    "GatherSettings",
    "StepUsage",
    "UsageError",
    "step_usage",
    "with_usage",
]

#: Slurm's status for a step killed for its memory (a wait status whose signal is 125).
SIG_OOM = 253
#: The signal sacct shows for an OUT_OF_MEMORY job or step (``ExitCode 0:125``).
OOM_SIGNAL = SIG_OOM & 0x7F


class UsageError(PlurmError):
    """A usage report or a JobAcctGather setting that does not parse."""


@attrs.frozen(kw_only=True)
class StepUsage:
    """One step's usage (module doc)."""

    max_rss: int = 0
    max_rss_node: str = ""
    max_rss_task: int = 0
    ave_rss: float = 0.0
    max_vmsize: int = 0
    max_vmsize_node: str = ""
    max_vmsize_task: int = 0
    ave_vmsize: float = 0.0
    max_pages: int = 0
    max_pages_node: str = ""
    max_pages_task: int = 0
    ave_pages: float = 0.0
    min_cpu: float = 0.0
    min_cpu_node: str = ""
    min_cpu_task: int = 0
    ave_cpu: float = 0.0
    total_cpu: float = 0.0
    user_cpu: float = 0.0
    system_cpu: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> StepUsage:
        """The usage ``data`` encodes; :class:`~plurm.model.usage.UsageError` when it is not one."""
        if not isinstance(data, Mapping):
            raise UsageError("usage is not a mapping")
        values: dict[str, Any] = {}
        for field in attrs.fields(cls):
            if field.name not in data:
                continue
            value = data[field.name]
            if field.type in ("str", str):
                if not isinstance(value, str) or len(value) > 256:
                    raise UsageError(f"usage {field.name} is not a name")
            elif field.type in ("int", int):
                if type(value) is not int or not 0 <= value < 1 << 63:
                    raise UsageError(f"usage {field.name} is not a count")
            else:
                if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
                    raise UsageError(f"usage {field.name} is not a number")
                value = float(value)
            values[field.name] = value
        unknown = set(data) - {field.name for field in attrs.fields(cls)}
        if unknown:
            raise UsageError(f"usage has unknown fields: {', '.join(sorted(map(str, unknown)))}")
        return cls(**values)


def with_usage(step: StepRecord, usage: StepUsage) -> StepRecord:
    """``step`` with ``usage``'s figures."""
    return attrs.evolve(step, **attrs.asdict(usage))


def step_usage(step: StepRecord) -> StepUsage | None:
    """The usage kept in ``step``, None when nothing gathered it."""
    if step.max_rss is None and step.total_cpu is None:
        return None
    values = {
        field.name: getattr(step, field.name)
        for field in attrs.fields(StepUsage)
        if getattr(step, field.name) is not None
    }
    return StepUsage(**values)


@attrs.frozen
class GatherSettings:
    """``JobAcctGatherFrequency`` (seconds between samples of the tasks, 0: none) and
    ``JobAcctGatherParams`` (the words, such as ``OverMemoryKill``), as slurm.conf sets
    them: the frequency is ``N`` or ``task=N`` (other types, such as ``energy=N``, are
    for plugins Plurm does not have); Slurm's default is 30."""

    frequency: int = 30
    params: frozenset[str] = frozenset()

    @property
    def over_memory_kill(self) -> bool:
        return "overmemorykill" in self.params

    @classmethod
    def from_values(cls, frequency: str | None, params: str | None) -> GatherSettings:
        seconds = 30
        for item in (frequency or "").split(","):
            item = item.strip()
            if not item:
                continue
            kind, equals, value = item.partition("=")
            if not equals:
                kind, value = "task", kind
            if kind.strip().lower() != "task":
                continue
            value = value.strip()
            if not (value.isascii() and value.isdigit()):
                raise UsageError(f"JobAcctGatherFrequency: invalid task frequency {value!r}")
            seconds = int(value)
        words = frozenset(
            word.strip().lower() for word in (params or "").split(",") if word.strip()
        )
        return cls(seconds, words)

    @classmethod
    def from_config(cls, inactive: Mapping[str, str]) -> GatherSettings:
        """From a configuration's keys (``SlurmConfig.inactive``)."""
        return cls.from_values(
            inactive.get("JobAcctGatherFrequency"), inactive.get("JobAcctGatherParams")
        )
