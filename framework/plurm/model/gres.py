"""A job's generic resources, as sbatch asks for them: ``--gres`` and ``--gpus-per-node`` per
node, ``--gpus`` for the whole job, ``--gpus-per-task`` per task, with ``--cpus-per-gpu``,
``--mem-per-gpu`` and ``--gres-flags=enforce-binding``.

A job without generic resources has no :class:`GresRequest` at all (``JobRequest.gres_request``
is None), so that nothing here is on its path. :func:`satisfiable` is the submission check:
whether the nodes a job may use could ever hold what it asks, as slurmctld refuses a job
with "Requested node configuration is not available" otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from plurm.conf.model import GresCount

__all__ = ["GresAsk", "GresRequest", "available", "node_fits", "satisfiable"]


@attrs.frozen
class GresAsk:
    """``count`` of the generic resource ``name``, of ``type`` (None: any type)."""

    name: str
    type: str | None
    count: int

    def __str__(self) -> str:
        head = f"{self.name}:{self.type}" if self.type else self.name
        return f"{head}:{self.count}"


@attrs.frozen
class GresRequest:
    """What a job asks of generic resources. ``per_node`` (--gres, --gpus-per-node) is what
    each of its nodes must give, ``per_job`` (--gpus) the total over its nodes, ``per_task``
    (--gpus-per-task) what each task gets. ``mem_per_gpu`` is MiB."""

    per_node: tuple[GresAsk, ...] = ()
    per_job: tuple[GresAsk, ...] = ()
    per_task: tuple[GresAsk, ...] = ()
    cpus_per_gpu: int | None = None
    mem_per_gpu: int | None = None
    enforce_binding: bool = False

    @property
    def names(self) -> frozenset[str]:
        return frozenset(ask.name for ask in (*self.per_node, *self.per_job, *self.per_task))

    def node_need(self, tasks_on_node: int) -> tuple[GresAsk, ...]:
        """What one node must hold for its part: the per-node asks and, for the tasks it
        runs, the per-task ones (the per-job asks are spread, see :func:`satisfiable`)."""
        if not self.per_task:
            return self.per_node
        tasks = max(1, tasks_on_node)
        per_task = tuple(GresAsk(a.name, a.type, a.count * tasks) for a in self.per_task)
        return self.per_node + per_task


def available(counts: Iterable[GresCount], ask: GresAsk) -> int:
    """How many of what ``ask`` names a node with ``counts`` has."""
    return sum(
        c.count for c in counts if c.name == ask.name and (ask.type is None or c.type == ask.type)
    )


def node_fits(request: GresRequest, counts: Sequence[GresCount], tasks_on_node: int) -> bool:
    """The node holds at least what ``request`` asks of each of its nodes."""
    return all(available(counts, ask) >= ask.count for ask in request.node_need(tasks_on_node))


def satisfiable(
    request: GresRequest,
    min_nodes: int,
    tasks: int,
    tasks_per_node: int | None,
    nodes: Sequence[Sequence[GresCount]],
) -> bool:
    """Whether some ``min_nodes`` of the nodes (each given by its GresCount values) could
    hold the request, all of them free: enough nodes fit each node's part, and together
    they hold the job's totals (--gpus, and --gpus-per-task times the tasks)."""
    per_node_tasks = tasks_per_node if tasks_per_node is not None else 1
    fitting = [counts for counts in nodes if node_fits(request, counts, per_node_tasks)]
    if len(fitting) < max(1, min_nodes):
        return False
    totals = list(request.per_job) + [
        GresAsk(a.name, a.type, a.count * max(1, tasks)) for a in request.per_task
    ]
    return all(sum(available(counts, ask) for counts in fitting) >= ask.count for ask in totals)
