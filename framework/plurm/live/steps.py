"""Job steps: where a step's tasks go on the job's nodes, and what each task's environment
holds, as Slurm 22.05 gives them to the tasks of ``srun`` inside an allocation.

Pure functions, no I/O: :func:`step_layout` is the controller's answer to a step request
(plurmctld's ``step_start``), :func:`task_environment` what ``srun`` (:mod:`.srun`) gives
each task.

Layout: a step runs on the first ``nodes`` of the job's nodes (all of them by default) and
its tasks are laid out in blocks, as srun's default distribution does: every node gets one
task, then nodes are filled in order up to what their CPUs hold
(:func:`~plurm.live.jobenv.tasks_per_node`); with ``--ntasks-per-node`` every node gets that
many. Task ids run over the nodes in order, so a node's tasks have consecutive ids.

Plurm's steps are logical on the nodes: every task process runs on the host where ``srun``
runs (the job's batch host, since srun runs inside the batch script). A task's environment
names the node the layout gives it (SLURMD_NODENAME, SLURM_NODEID), as if it ran there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from plurm.errors import PlurmError
from plurm.hostlist import compress
from plurm.live.jobenv import compact_counts, tasks_per_node

__all__ = ["StepError", "StepLayout", "step_layout", "task_environment"]


class StepError(PlurmError):
    """A step the job cannot hold; the message is Slurm's (``Unable to create step ...``)."""


def _names(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(names)


def _counts(counts: Iterable[int]) -> tuple[int, ...]:
    return tuple(counts)


@attrs.frozen
class StepLayout:
    """A step's nodes and how many of its tasks each one gets."""

    nodes: tuple[str, ...] = attrs.field(converter=_names)
    tasks: tuple[int, ...] = attrs.field(converter=_counts)

    @property
    def ntasks(self) -> int:
        return sum(self.tasks)

    def placement(self, task_id: int) -> tuple[int, int]:
        """(node index in the step, local id on that node) of task ``task_id``."""
        first = 0
        for index, count in enumerate(self.tasks):
            if task_id < first + count:
                return index, task_id - first
            first += count
        raise ValueError(f"no task {task_id} in a step of {self.ntasks} tasks")

    def node_task_ids(self, index: int) -> range:
        """The task ids on the step's node ``index``."""
        first = sum(self.tasks[:index])
        return range(first, first + self.tasks[index])


def step_layout(
    job_nodes: Sequence[str],
    job_cpus: Sequence[int],
    *,
    ntasks: int | None,
    nodes: int | None,
    ntasks_per_node: int | None = None,
    cpus_per_task: int = 1,
) -> StepLayout:
    """The layout of a step asking for ``ntasks`` tasks of ``cpus_per_task`` CPUs on
    ``nodes`` nodes (None: as srun's defaults make them) in a job holding ``job_cpus`` CPUs
    on each of ``job_nodes``; :class:`StepError` when the job cannot hold it."""
    count = len(job_nodes) if nodes is None else nodes
    if count < 1 or count > len(job_nodes):
        raise StepError("Requested node configuration is not available")
    if ntasks is None:
        ntasks = count * ntasks_per_node if ntasks_per_node else count
    if ntasks < 1 or ntasks < count:
        raise StepError("Requested node configuration is not available")
    cpus = list(job_cpus[:count])
    layout = tasks_per_node(
        ntasks, cpus, cpus_per_task=cpus_per_task, ntasks_per_node=ntasks_per_node
    )
    if sum(layout) < ntasks or any(
        tasks * cpus_per_task > held for tasks, held in zip(layout, cpus, strict=True)
    ):
        raise StepError("More processors requested than permitted")
    if 0 in layout:
        raise StepError("Requested node configuration is not available")
    return StepLayout(job_nodes[:count], layout)


def task_environment(
    base: Mapping[str, str],
    *,
    job_id: int,
    step_id: int,
    layout: StepLayout,
    task_id: int,
    job_cpus: Mapping[str, int],
    cpus_per_task: int | None = None,
) -> dict[str, str]:
    """The environment of task ``task_id`` of step ``step_id``: ``base`` (what srun
    exports) with the variables Slurm 22.05 sets for a step's task. ``cpus_per_task`` is
    given when ``-c`` was (srun then sets SLURM_CPUS_PER_TASK). SLURM_TASK_PID is the
    task's own pid, set when it starts."""
    env = dict(base)
    index, local = layout.placement(task_id)
    node = layout.nodes[index]
    nodelist = compress(layout.nodes)
    per_node = compact_counts(layout.tasks)
    values: dict[str, object | None] = {
        "SLURM_JOB_ID": job_id,
        "SLURM_JOBID": job_id,
        "SLURM_STEP_ID": step_id,
        "SLURM_STEPID": step_id,
        "SLURM_STEP_NODELIST": nodelist,
        "SLURM_STEP_NUM_NODES": len(layout.nodes),
        "SLURM_STEP_NUM_TASKS": layout.ntasks,
        "SLURM_STEP_TASKS_PER_NODE": per_node,
        "SLURM_NODELIST": nodelist,
        "SLURM_NNODES": len(layout.nodes),
        "SLURM_NTASKS": layout.ntasks,
        "SLURM_NPROCS": layout.ntasks,
        "SLURM_TASKS_PER_NODE": per_node,
        "SLURM_PROCID": task_id,
        "SLURM_LOCALID": local,
        "SLURM_NODEID": index,
        "SLURM_GTIDS": ",".join(str(t) for t in layout.node_task_ids(index)),
        "SLURMD_NODENAME": node,
        "SLURM_TOPOLOGY_ADDR": node,
        "SLURM_CPUS_ON_NODE": job_cpus.get(node),
        "SLURM_CPUS_PER_TASK": cpus_per_task,
        "SLURM_DISTRIBUTION": "block",
    }
    env.update({key: str(value) for key, value in values.items() if value is not None})
    return env
