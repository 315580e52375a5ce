"""The cluster view on the wire: what ``plurmctld`` answers to a command's ``view`` call, and
the :class:`~plurm.commands.client.ClusterView` a live command rebuilds from it.

The command reads the same slurm.conf as the controller; the answer carries what changes:
the clock, the jobs, the partitions as ``scontrol update`` left them, the nodes out of
service or not responding, and the select plugin's answers the commands print (CPUs and
memory in use per node, the (node, core) pairs of each job holding resources).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from plurm.commands.client import ClusterView
from plurm.conf.model import SlurmConfig
from plurm.live.codec import (
    CodecError,
    condition_from_dict,
    condition_to_dict,
    job_from_dict,
    job_to_dict,
    partition_from_dict,
    partition_to_dict,
)
from plurm.model.cluster import Cluster
from plurm.model.job import Job

__all__ = ["view_from_dict", "view_to_dict"]


def view_to_dict(view: ClusterView, jobs: Iterable[Job] | None = None) -> dict[str, Any]:
    """The view as JSON-able data; ``jobs`` (default: all of the cluster's) limits the jobs
    sent."""
    cluster = view.cluster
    chosen = list(cluster.jobs.values() if jobs is None else jobs)
    units = {}
    for job in chosen:
        if job.state.holds_resources:
            held = view.units(job)
            if held is not None:
                units[str(job.job_id)] = sorted([node, core] for node, core in held)
    return {
        "now": view.now,
        "jobs": [_shown(job) for job in chosen],
        "partitions": [partition_to_dict(part) for part in cluster.partitions.values()],
        "node_down": {name: condition_to_dict(c) for name, c in cluster.node_down.items()},
        "not_responding": sorted(cluster.not_responding),
        "node_alloc": dict(view.node_alloc()),
        "alloc_mem": dict(view.alloc_mem()),
        "units": units,
    }


#: What a job carries that the commands never print: its script and its environment (which
#: may hold its user's secrets), left out of the view everyone may read.
_PRIVATE = ("script", "environment")


def _shown(job: Job) -> dict[str, Any]:
    data = job_to_dict(job)
    request = data["request"]
    for key in _PRIVATE:
        request.pop(key, None)
    return data


def view_from_dict(config: SlurmConfig, data: dict[str, Any]) -> ClusterView:
    """The view a controller's answer describes, on the command's own configuration."""
    try:
        cluster = Cluster.from_config(config)
        for name in list(cluster.node_down):
            cluster.set_condition(name, None)
        for name, condition in data["node_down"].items():
            if name in cluster.node_index:
                cluster.set_condition(name, condition_from_dict(condition))
        for name in data["not_responding"]:
            if name in cluster.node_index:
                cluster.set_responding(name, False)
        cluster.partitions = {}
        for item in data["partitions"]:
            part = partition_from_dict(item)
            cluster.partitions[part.name] = part
        for item in data["jobs"]:
            cluster.add_job(job_from_dict(item))
        now = float(data["now"])
        alloc = {str(k): int(v) for k, v in data["node_alloc"].items()}
        memory = {str(k): int(v) for k, v in data.get("alloc_mem", {}).items()}
        units = {
            int(k): frozenset((str(node), int(core)) for node, core in v)
            for k, v in data["units"].items()
        }
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CodecError(f"the controller's view is malformed: {error!r}") from None
    cluster.now = now
    return ClusterView(
        cluster, now, lambda: alloc, lambda job: units.get(job.job_id), lambda: memory
    )
