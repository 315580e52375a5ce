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

__all__ = [
    "GresAsk",
    "GresHeld",
    "GresRequest",
    "available",
    "gres_totals",
    "node_counts",
    "node_fits",
    "satisfiable",
]


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

    def node_share(
        self, min_nodes: int, tasks: int, tasks_per_node: int | None
    ) -> tuple[GresAsk, ...]:
        """What each node of a job on ``min_nodes`` nodes must give: the per-node asks,
        the job's totals (--gpus) spread evenly over its nodes (rounded up), and the
        per-task asks times the tasks a node runs (--ntasks-per-node, else the tasks
        spread evenly). Asks of one name and type add up."""
        nodes = max(1, min_nodes)
        on_node = tasks_per_node if tasks_per_node is not None else -(-max(1, tasks) // nodes)
        wanted: dict[tuple[str, str | None], int] = {}
        for ask in self.per_node:
            wanted[(ask.name, ask.type)] = wanted.get((ask.name, ask.type), 0) + ask.count
        for ask in self.per_job:
            share = -(-ask.count // nodes)
            wanted[(ask.name, ask.type)] = wanted.get((ask.name, ask.type), 0) + share
        for ask in self.per_task:
            share = ask.count * on_node
            wanted[(ask.name, ask.type)] = wanted.get((ask.name, ask.type), 0) + share
        return tuple(GresAsk(name, gtype, count) for (name, gtype), count in wanted.items())


@attrs.frozen
class GresHeld:
    """Units of one generic resource (name and type) a job holds on one node: their
    indexes among the node's units of that name (the device indexes)."""

    node: str
    name: str
    type: str | None
    indexes: tuple[int, ...]


def gres_totals(held: Iterable[GresHeld]) -> dict[str, int]:
    """Units held by name (``gpu`` -> 4), in first-seen order."""
    totals: dict[str, int] = {}
    for unit in held:
        totals[unit.name] = totals.get(unit.name, 0) + len(unit.indexes)
    return totals


def available(counts: Iterable[GresCount], ask: GresAsk) -> int:
    """How many of what ``ask`` names a node with ``counts`` has."""
    return sum(
        c.count for c in counts if c.name == ask.name and (ask.type is None or c.type == ask.type)
    )


def node_fits(need: Sequence[GresAsk], counts: Sequence[GresCount]) -> bool:
    """A node with ``counts`` holds ``need`` (one node's part): each ask, and for each name
    the typed and untyped asks together."""
    if not all(available(counts, ask) >= ask.count for ask in need):
        return False
    names = {ask.name for ask in need}
    if len(names) == len(need):
        return True
    return all(
        sum(c.count for c in counts if c.name == name)
        >= sum(ask.count for ask in need if ask.name == name)
        for name in names
    )


def satisfiable(
    request: GresRequest,
    min_nodes: int,
    tasks: int,
    tasks_per_node: int | None,
    nodes: Sequence[Sequence[GresCount]],
    *,
    max_nodes: int | None = None,
    ntasks: int | None = None,
) -> bool:
    """Whether ``min_nodes`` (up to ``max_nodes``) of the nodes (each given by its
    GresCount values) could hold the request, all of them free."""
    counts = node_counts(request, min_nodes, max_nodes, tasks, tasks_per_node, ntasks=ntasks)
    for count in counts:
        if count > len(nodes):
            break
        need = request.node_share(count, tasks, tasks_per_node)
        wanted = max(1, count)
        for configured in nodes:
            if node_fits(need, configured):
                wanted -= 1
                if not wanted:
                    return True
    return False


def node_counts(
    request: GresRequest,
    min_nodes: int,
    max_nodes: int | None,
    tasks: int,
    tasks_per_node: int | None,
    *,
    ntasks: int | None = None,
) -> range:
    """The node counts a job may be placed on, fewest first: its ``-N`` alone, but

    * for ``--gpus-per-task`` without ``--ntasks-per-node`` as many more as it has tasks,
      as Slurm 22.05 spread ``-n4 --gpus-per-task=1`` over two two-GPU nodes
      (tests/data/gres/gpu-per-task);
    * for ``--gpus`` as many more as it asks GPUs (each node gives one at least), as many
      as ``-n`` when given (a node runs a task at least), as Slurm 22.05 spread ``--gpus=4``
      over two two-GPU nodes and refused it with ``-N1`` or ``-n1`` (tests/data/gres/
      gpu-per-gpu);

    never more than its most nodes (``-N min-max``; ``-N n`` is ``n`` alone)."""
    least = max(1, min_nodes)
    most = least
    if request.per_task and tasks_per_node is None:
        most = max(most, tasks)
    if request.per_job:
        wide = sum(ask.count for ask in request.per_job)
        if ntasks is not None:
            wide = min(wide, ntasks)
        most = max(most, wide)
    if max_nodes is not None:
        most = min(most, max_nodes)
    return range(least, max(least, most) + 1)
