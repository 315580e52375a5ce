"""The factors of a job's priority, each between 0 and 1, as Slurm 22.05's
priority_multifactor.html defines them.

* age: time eligible over PriorityMaxAge, at most 1 (0 without a PriorityMaxAge);
* job size: by default (larger first) the mean of the job's node count over the cluster's
  and its CPUs over the cluster's; with PriorityFavorSmall each fraction is counted from
  the other end (``1 - fraction``); with ``PriorityFlags=SMALL_RELATIVE_TO_TIME`` the job's
  size in CPUs (at least its nodes times the cluster's mean CPUs per node) over its time
  limit in minutes, over the cluster's CPUs (and ``1 -`` that with PriorityFavorSmall);
  clamped to [0, 1];
* partition: the partition's PriorityJobFactor over the largest of any partition;
* QOS: the QOS's Priority over the largest of any QOS;
* TRES: for each weighted TRES, the job's count over the cluster's.
"""

from __future__ import annotations

import attrs

from plurm.conf.model import SlurmConfig
from plurm.model.job import Job

__all__ = ["ClusterTotals", "age", "job_size", "partition", "qos", "tres"]


@attrs.frozen
class ClusterTotals:
    """What the job-size and TRES factors divide by."""

    nodes: int
    cpus: int
    memory: int
    max_partition_factor: int
    max_qos_priority: int

    @classmethod
    def of(cls, config: SlurmConfig) -> ClusterTotals:
        specs = [config.node(name) for name in config.node_names]
        return cls(
            nodes=len(specs),
            cpus=sum(spec.cpus for spec in specs),
            memory=sum(spec.real_memory for spec in specs),
            max_partition_factor=max(
                (part.priority_job_factor for part in config.partitions), default=0
            ),
            max_qos_priority=max((qos.priority for qos in config.qos), default=0),
        )


def age(job: Job, now: float, max_age: int) -> float:
    if max_age <= 0:
        return 0.0
    waited = now - job.eligible_time
    if waited <= 0:
        return 0.0
    return min(1.0, waited / max_age)


def job_size(
    job: Job, totals: ClusterTotals, *, favor_small: bool, relative_to_time: bool, cpus: int
) -> float:
    nodes = max(1, job.request.min_nodes)
    if totals.nodes <= 0 or totals.cpus <= 0:
        return 0.0
    if relative_to_time:
        size = max(float(cpus), nodes * totals.cpus / totals.nodes)
        size /= max(1, job.time_limit or 1)
        size /= totals.cpus
        value = 1.0 - size if favor_small else size
    elif favor_small:
        value = (totals.nodes - nodes) / totals.nodes
        if cpus:
            value = (value + (totals.cpus - cpus) / totals.cpus) / 2
    else:
        value = nodes / totals.nodes
        if cpus:
            value = (value + cpus / totals.cpus) / 2
    return min(1.0, max(0.0, value))


def partition(config: SlurmConfig, job: Job, totals: ClusterTotals) -> float:
    if totals.max_partition_factor <= 0:
        return 0.0
    try:
        factor = config.partition(job.partition).priority_job_factor
    except KeyError:
        return 0.0
    return factor / totals.max_partition_factor


def qos(config: SlurmConfig, job: Job, totals: ClusterTotals) -> float:
    if totals.max_qos_priority <= 0:
        return 0.0
    spec = config.qos_spec(job.qos or "normal")
    return 0.0 if spec is None else spec.priority / totals.max_qos_priority


def tres(
    job: Job, totals: ClusterTotals, weights: tuple[tuple[str, float], ...], cpus: int
) -> tuple[tuple[str, float], ...]:
    """Each weighted TRES's factor (cpu, mem, node; others count 0)."""
    request = job.request
    nodes = max(1, request.min_nodes)
    if request.mem_per_node is not None:
        memory = request.mem_per_node * nodes
    elif request.mem_per_cpu is not None:
        memory = request.mem_per_cpu * cpus
    else:
        memory = 0
    counts = {
        "cpu": (cpus, totals.cpus),
        "mem": (memory, totals.memory),
        "node": (nodes, totals.nodes),
    }
    found = []
    for name, _ in weights:
        have, total = counts.get(name, (0, 0))
        found.append((name, min(1.0, have / total) if total else 0.0))
    return tuple(found)
