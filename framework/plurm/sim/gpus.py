"""GPUs for trace jobs: the ``[gpus]`` table of a trace mapping, and what a job holds.

SWF traces record processors, not GPUs. A mapping may give each trace job GPUs::

    [gpus]
    per_node = 2          # each node of the job gets 2 GPUs (as --gpus-per-node=2), or
    per_processor = 1     # the job gets 1 GPU per trace processor (as --gpus=N, spread evenly
                          #   over its nodes, rounded up)
    type = "a100"         # optional: only GPUs of this type
    [gpus.match]          # optional: only the jobs this rule picks (plurm.sim.rule) get GPUs
    queue = 3

Exactly one of ``per_node`` and ``per_processor`` (a whole number >= 1). The cluster must have
GPUs (``Gres=gpu...`` on some node; of ``type`` if given), else the mapping is refused before
the replay. The metrics then count each job's GPUs as select gave them (select/linear gives a
node's all): :func:`held_gpus`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from plurm.conf.model import SlurmConfig
from plurm.errors import TraceError
from plurm.model.gres import GresAsk, GresRequest
from plurm.model.job import Job
from plurm.sim.rule import JobRule
from plurm.workload import CleanJob

__all__ = ["GpuMapping", "cluster_gpus", "held_gpus"]

_KEYS = frozenset({"per_node", "per_processor", "type", "match"})


def cluster_gpus(config: SlurmConfig, gpu_type: str | None = None) -> int:
    """The GPUs of the cluster (of ``gpu_type`` if given), as its nodes' ``Gres=`` count
    them."""
    return sum(
        count.count
        for counts in config.gres.counts.values()
        for count in counts
        if count.name == "gpu" and (gpu_type is None or count.type == gpu_type)
    )


def held_gpus(job: Job) -> int:
    """The GPUs ``job`` holds (or held last, once it left its nodes)."""
    return sum(len(unit.indexes) for unit in job.gres_alloc if unit.name == "gpu")


def _count(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TraceError(f"{where} must be a whole number >= 1, not {value!r}")
    return value


@attrs.frozen
class GpuMapping:
    """The ``[gpus]`` table: how many GPUs a trace job asks for (see the module's doc)."""

    per_node: int | None = None
    per_processor: int | None = None
    type: str | None = None
    match: JobRule | None = None

    @classmethod
    def from_dict(cls, data: object, name: str) -> GpuMapping:
        if not isinstance(data, Mapping):
            raise TraceError(f"{name}: gpus must be a table")
        table: Mapping[str, Any] = data
        unknown = sorted(set(table) - _KEYS)
        if unknown:
            raise TraceError(f"{name}: unknown gpus key {unknown[0]!r}")
        if ("per_node" in table) == ("per_processor" in table):
            raise TraceError(f"{name}: gpus needs one of per_node and per_processor")
        per_node = per_processor = None
        if "per_node" in table:
            per_node = _count(table["per_node"], f"{name}: gpus.per_node")
        else:
            per_processor = _count(table["per_processor"], f"{name}: gpus.per_processor")
        gpu_type = table.get("type")
        if gpu_type is not None and (not isinstance(gpu_type, str) or not gpu_type):
            raise TraceError(f"{name}: gpus.type must be a name, not {gpu_type!r}")
        match = None
        if "match" in table:
            match = JobRule.from_dict(table["match"], f"{name}: gpus.match")
        return cls(per_node, per_processor, gpu_type, match)

    def check(self, config: SlurmConfig, name: str, where: str) -> None:
        """Refuse GPUs the cluster does not have: every job asking would be rejected."""
        if not cluster_gpus(config, self.type):
            what = f"GPUs of type {self.type!r}" if self.type else "GPUs"
            raise TraceError(f"{name}: gpus: {where} has no {what} (no node's Gres= gives any)")

    def request(self, job: CleanJob) -> dict[str, Any]:
        """The JobRequest fields that ask for the job's GPUs (none when the rule leaves the
        job out)."""
        if self.match is not None and not self.match.matches(job):
            return {}
        if self.per_node is not None:
            ask = GresAsk("gpu", self.type, self.per_node)
            head = f"{self.type}:" if self.type else ""
            return {
                "gres": (f"gpus-per-node={head}{ask.count}",),
                "gres_request": GresRequest(per_node=(ask,)),
            }
        ask = GresAsk("gpu", self.type, (self.per_processor or 0) * max(1, job.processors))
        head = f"{self.type}:" if self.type else ""
        return {"gres": (f"gpus={head}{ask.count}",), "gres_request": GresRequest(per_job=(ask,))}
