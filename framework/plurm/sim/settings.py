"""The settings a replay's report shows at its top: the plugins the configuration loads and
how it preempts (cluster-wide keys as slurm.conf writes them, then each partition's
PriorityTier and PreemptMode), so that a page read alone says what was replayed.
"""

from __future__ import annotations

from collections.abc import Mapping

from plurm.conf.model import SlurmConfig

__all__ = ["partition_settings", "plugin_settings"]


def _options(words: Mapping[str, str | None]) -> str:
    return ",".join(key if value is None else f"{key}={value}" for key, value in words.items())


def _exempt(seconds: int | None) -> str:
    if not seconds:
        return "NONE"
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def plugin_settings(config: SlurmConfig) -> list[tuple[str, str]]:
    """(key, value) of the plugin types and the preemption and scheduling settings; a
    parameters key left empty is left out."""
    pairs = [
        ("SelectType", config.select_type),
        ("SelectTypeParameters", str(config.select_type_parameters)),
        ("SchedulerType", config.scheduler_type),
        ("SchedulerParameters", _options(config.scheduler_parameters.options)),
        ("PriorityType", config.priority_type),
        ("PreemptType", config.preempt_type),
        ("PreemptMode", str(config.preempt_mode)),
        ("PreemptParameters", _options(config.preempt_parameters.options)),
        ("PreemptExemptTime", _exempt(config.preempt_exempt_time)),
        ("PreemptGuards (plurm.conf)", ",".join(config.preempt_guards)),
    ]
    return [(key, value) for key, value in pairs if value]


def partition_settings(config: SlurmConfig) -> list[tuple[str, str, str, str]]:
    """(partition, nodes, PriorityTier, PreemptMode) per partition; a partition without a
    PreemptMode of its own shows the cluster's, marked as such."""
    rows = []
    for partition in config.partitions:
        mode = (
            str(partition.preempt_mode)
            if partition.preempt_mode is not None
            else f"{config.preempt_mode} (cluster)"
        )
        rows.append((partition.name, str(len(partition.nodes)), str(partition.priority_tier), mode))
    return rows
