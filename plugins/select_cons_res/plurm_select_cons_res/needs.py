"""What a job needs, worked out once per test from its request, partition and the cluster.

* Sharing: ``--exclusive`` or OverSubscribe=EXCLUSIVE wants whole nodes to itself
  (``RESERVED``); FORCE, or YES with ``--oversubscribe``, may share cores with the other jobs
  of its partition (``SHARED``); anything else wants its cores to itself (``ONE_ROW``).
* Memory (when SelectTypeParameters counts it): ``--mem`` per node, ``--mem-per-cpu`` per
  allocated CPU, else the partition's DefMemPerNode/DefMemPerCPU, else the cluster's; with no
  default at all a job takes the whole memory of each node, as Slurm does. ``--mem=0`` also
  means the whole node.
* MaxMemPerNode (partition, else cluster) refuses a job that asks more per node; a
  ``--mem-per-cpu`` above MaxMemPerCPU raises the job's CPUs per task instead, as Slurm does,
  so that the memory per CPU fits.
"""

from __future__ import annotations

import enum
import math

import attrs

from plurm.conf.model import PartitionSpec, SlurmConfig
from plurm.conf.values import OverSubscribeKind
from plurm.model.job import Job

__all__ = ["MemoryKind", "Needs", "Sharing", "needs_of", "row_count"]


class Sharing(enum.Enum):
    """Slurm's node requirement of a job: its weight in a node's state counter."""

    SHARED = 0
    ONE_ROW = 1
    RESERVED = 64000

    @property
    def weight(self) -> int:
        return self.value


class MemoryKind(enum.Enum):
    NONE = "none"  # memory is not counted
    PER_NODE = "per_node"
    PER_CPU = "per_cpu"
    WHOLE_NODE = "whole_node"


@attrs.frozen(cache_hash=True)  # a key of the idle tests' memo, looked up at every test
class Needs:
    """A job's requirements, in the plugin's terms."""

    tasks: int
    cpus_per_task: int
    min_nodes: int
    max_nodes: int | None
    required: tuple[str, ...]
    contiguous: bool
    sharing: Sharing
    memory_kind: MemoryKind = MemoryKind.NONE
    #: MiB per node (PER_NODE) or per CPU (PER_CPU).
    memory: int = 0
    #: MaxMemPerNode, when set.
    max_memory: int | None = None
    #: --ntasks-per-node, when asked: at most that many tasks on each node.
    ntasks_per_node: int | None = None

    @property
    def shared(self) -> bool:
        return self.sharing is Sharing.SHARED

    @property
    def exclusive(self) -> bool:
        return self.sharing is Sharing.RESERVED


def row_count(part: PartitionSpec, extra_row: bool) -> int:
    """Rows of a partition: jobs per core under OverSubscribe YES:n or FORCE:n, else 1; one
    more with preempt/qos (the row QOS preemptees are stacked in)."""
    over = part.oversubscribe
    rows = over.count if over.kind in (OverSubscribeKind.YES, OverSubscribeKind.FORCE) else 1
    return max(1, rows) + (1 if extra_row else 0)


def _sharing(part: PartitionSpec, job: Job) -> Sharing:
    over = part.oversubscribe.kind
    if job.request.exclusive or over is OverSubscribeKind.EXCLUSIVE:
        return Sharing.RESERVED
    if over is OverSubscribeKind.FORCE or (
        over is OverSubscribeKind.YES and job.request.oversubscribe
    ):
        return Sharing.SHARED
    return Sharing.ONE_ROW


def _limits(part: PartitionSpec, config: SlurmConfig) -> tuple[int | None, int | None]:
    """(MaxMemPerCPU, MaxMemPerNode): the partition's pair if it sets one, else the cluster's."""
    if part.max_mem_per_cpu is not None or part.max_mem_per_node is not None:
        return part.max_mem_per_cpu, part.max_mem_per_node
    return config.max_mem_per_cpu, config.max_mem_per_node


def _default(part: PartitionSpec, config: SlurmConfig) -> tuple[int | None, int | None]:
    """(DefMemPerCPU, DefMemPerNode): the partition's pair if it sets one, else the cluster's."""
    if part.def_mem_per_cpu is not None or part.def_mem_per_node is not None:
        return part.def_mem_per_cpu, part.def_mem_per_node
    return config.def_mem_per_cpu, config.def_mem_per_node


def needs_of(job: Job, part: PartitionSpec, config: SlurmConfig, memory: bool) -> Needs | None:
    """The job's needs in ``part``; None when its memory request is beyond the limits.

    The plugin keeps needs by partition object and request shape (``ConsResSelect._needs``):
    a request field read here must join that shape."""
    request = job.request
    cpus_per_task = request.cpus_per_task
    kind = MemoryKind.NONE
    amount = 0
    max_per_cpu, max_per_node = _limits(part, config)
    if memory:
        per_cpu, per_node = request.mem_per_cpu, request.mem_per_node
        if per_cpu is None and per_node is None:
            per_cpu, per_node = _default(part, config)
        if per_node is not None:
            kind, amount = (
                (MemoryKind.PER_NODE, per_node) if per_node else (MemoryKind.WHOLE_NODE, 0)
            )
        elif per_cpu is not None:
            kind, amount = MemoryKind.PER_CPU, per_cpu
            if max_per_cpu and per_cpu > max_per_cpu:
                factor = math.ceil(per_cpu / max_per_cpu)
                cpus_per_task *= factor
                amount = math.ceil(per_cpu / factor)
        else:
            kind = MemoryKind.WHOLE_NODE
        if kind is MemoryKind.PER_NODE and max_per_node is not None and amount > max_per_node:
            return None
    tasks = max(request.tasks, 1)
    per_node = request.ntasks_per_node
    # -n with --ntasks-per-node: as many nodes as that many tasks a node take (trials/misc.out:
    # -n3 --ntasks-per-node=1 on two nodes is refused, and shows three nodes)
    spread = -(-tasks // per_node) if per_node and request.ntasks is not None else 1
    return Needs(
        tasks=tasks,
        cpus_per_task=max(1, cpus_per_task),
        min_nodes=max(1, request.min_nodes, spread),
        max_nodes=request.max_nodes,
        required=tuple(dict.fromkeys(request.nodelist)),
        contiguous=request.contiguous,
        sharing=_sharing(part, job),
        memory_kind=kind,
        memory=amount,
        max_memory=max_per_node if memory else None,
        ntasks_per_node=request.ntasks_per_node or None,
    )
