"""A job's memory limit on one node, as slurmd gives it to slurmstepd.

``--mem`` (MiB per node) when given; else ``--mem-per-cpu`` times the job's CPUs on the
node; else the partition's ``DefMemPerNode``/``DefMemPerCPU``, then the cluster's; never
more than ``MaxMemPerNode`` (the partition's, then the cluster's) when one is set. None
when nothing limits the job (Slurm's ``--mem=0``, all of the node's memory, is not
enforced either).
"""

from __future__ import annotations

from plurm.conf.model import SlurmConfig
from plurm.model.job import Job

__all__ = ["batch_host_cpus", "memory_limit"]


def memory_limit(job: Job, cpus_here: int, config: SlurmConfig) -> int | None:
    """``job``'s memory limit in MiB on a node where it holds ``cpus_here`` CPUs."""
    request = job.request
    try:
        part = config.partition(job.partition)
    except (KeyError, ValueError, LookupError):
        part = None
    limit: int | None = None
    if request.mem_per_node:
        limit = request.mem_per_node
    elif request.mem_per_cpu:
        limit = request.mem_per_cpu * cpus_here
    else:
        for source in (part, config):
            if source is None:
                continue
            if source.def_mem_per_node:
                limit = source.def_mem_per_node
                break
            if source.def_mem_per_cpu:
                limit = source.def_mem_per_cpu * cpus_here
                break
    cap = (part.max_mem_per_node if part is not None else None) or config.max_mem_per_node
    if cap:
        limit = min(limit, cap) if limit else cap
    return limit or None


def batch_host_cpus(job: Job, config: SlurmConfig) -> int:
    """The CPUs a started ``job`` holds on its first node (its batch host)."""
    if not job.nodes:
        return 0
    host = job.nodes[0]
    if job.units is not None:
        return sum(1 for node, _ in job.units if node == host)
    return config.node(host).cpus
