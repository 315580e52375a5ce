"""What the commands show of a node's use: the CPUs in use, as sinfo and scontrol count them."""

from __future__ import annotations

from plurm.controller import Controller
from plurm.model.job import JobState

__all__ = ["cpus_in_use"]


def cpus_in_use(controller: Controller) -> dict[str, int]:
    """The CPUs allocated on each node, as select counts them, except that a node whose
    jobs are all suspended shows none: Slurm 22.05 shows such a node idle (a gang-suspended
    job alone on its node, tests/data/oracle/cli linear/193), though select keeps the
    suspended job's resources for it."""
    cluster = controller.cluster
    alloc = controller.plugins.select_node_alloc(cluster)
    suspended = {name for job in cluster.jobs_unordered(JobState.SUSPENDED) for name in job.nodes}
    if not suspended:
        return alloc
    running = {
        name
        for state in (JobState.RUNNING, JobState.COMPLETING)
        for job in cluster.jobs_unordered(state)
        for name in job.held_nodes  # a completing job has released its other nodes
    }
    return {name: cpus for name, cpus in alloc.items() if name in running or name not in suspended}
