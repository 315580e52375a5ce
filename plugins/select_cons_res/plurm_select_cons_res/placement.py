"""Choosing nodes and cores once it is known which cores a job may use.

Node choice is Slurm's best fit over runs of consecutive usable nodes (node-table order):
required nodes (``-w``) first; then, while the job needs more, the run that is enough with the
fewest free task slots (else the largest run) gives its nodes in order. When at most one more
node is needed, the node of that run with the fewest slots that still holds the rest is taken
alone, so small jobs fill partly used nodes before idle ones. ``--contiguous`` needs one
block of consecutive nodes. When the rounds may take every usable node (no required nodes,
no contiguity, no node limit), they place the job exactly when all those nodes together hold
its tasks and node count: that is checked first, and ``placeable`` (the gang steps' room
question) answers from it without choosing.

The job's CPUs are then given out node by node in the order the nodes were taken, as Slurm
22.05's consumable-resource plugins do: each node gives all the CPUs it can, less those still
owed to the job's remaining minimum nodes (one core's worth each), and never more than the job
still needs; a node gets at least one task (``--ntasks-per-node``: at most that many). So
``-n6`` on two free 4-CPU nodes takes 4 CPUs of the first and 2 of the second, not 3 and 3.
Each node then gets the cores its tasks need (whole sockets under CR_Socket, every core for
``--exclusive``), the lowest-numbered free ones first.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

from plurm.model.runs import best_span, consecutive_runs, consecutive_spans
from plurm_select_cons_res.layout import Layout, Unit
from plurm_select_cons_res.needs import MemoryKind, Needs

__all__ = [
    "allocated_cpus",
    "choose_nodes",
    "fill_tasks",
    "fill_tasks_in_order",
    "pick_cores",
    "placeable",
    "slots",
    "slots_of_count",
]


def _usable_cores(layout: Layout, free: frozenset[int], unit: Unit) -> frozenset[int]:
    """The free cores a job may take: under CR_Socket only those of wholly free sockets."""
    if unit is not Unit.SOCKET:
        return free
    return frozenset(core for socket in layout.sockets() if socket <= free for core in socket)


def allocated_cpus(layout: Layout, unit: Unit, cpus: int, exclusive: bool) -> int:
    """The CPUs a job asking ``cpus`` on a node is given: whole cores (all their threads),
    whole sockets under CR_Socket, the whole node when exclusive."""
    if exclusive:
        return layout.cpus
    if unit in (Unit.NONE, Unit.CPU):
        return min(layout.cpus, cpus)
    cores = math.ceil(cpus / layout.cpus_per_core)
    if unit is Unit.SOCKET:
        per_socket = layout.cores_per_socket
        cores = math.ceil(cores / per_socket) * per_socket
    return layout.cpus_of(cores)


def slots(
    layout: Layout, free: frozenset[int], unit: Unit, needs: Needs, memory: int | None
) -> int:
    """How many of the job's tasks fit on a node with ``free`` cores and ``memory`` MiB free
    for it (None: memory is not a limit). Memory per CPU counts every CPU the tasks are
    given, rounding included."""
    if needs.exclusive and len(free) < layout.cores:
        return 0
    if unit is Unit.NONE:
        cpus = layout.cpus
    else:
        cpus = layout.cpus_of(len(_usable_cores(layout, free, unit)))
    tasks = cpus // needs.cpus_per_task
    if memory is not None and needs.memory_kind is MemoryKind.PER_CPU and needs.memory:
        tasks = min(tasks, memory // (needs.memory * needs.cpus_per_task))
        while tasks > 0:
            given = allocated_cpus(layout, unit, tasks * needs.cpus_per_task, needs.exclusive)
            if given * needs.memory <= memory:
                break
            tasks -= 1
    return max(0, tasks)


def slots_of_count(layout: Layout, count: int, exclusive: bool, cpus_per_task: int) -> int:
    """:func:`slots` where it depends only on how many cores are free (``count``): per core
    or per CPU, with memory not a limit. A test reads it for every node it looks at."""
    if exclusive and count < layout.cores:
        return 0
    return min(layout.cpus, count * layout.cpus_per_core) // cpus_per_task


def _contiguous(
    names: Sequence[str], caps: Mapping[str, int], needs: Needs, index: Mapping[str, int]
) -> list[str] | None:
    """The block of consecutive nodes, holding every required node, that is enough with the
    fewest slots (the first such block on ties)."""
    most = needs.max_nodes or len(names)
    best: list[str] | None = None
    best_slots = 0
    required = set(needs.required)
    for run in consecutive_runs(names, index):
        for start in range(len(run)):
            total = 0
            for end in range(start, min(len(run), start + most)):
                total += caps[run[end]]
                block = run[start : end + 1]
                if (
                    len(block) >= needs.min_nodes
                    and total >= needs.tasks
                    and required <= set(block)
                ):
                    if best is None or total < best_slots:
                        best, best_slots = block, total
                    break
    return best


def choose_nodes(
    names: Sequence[str], caps: Mapping[str, int], needs: Needs, index: Mapping[str, int]
) -> list[str] | None:
    """The nodes for the job among ``names`` (table order), given each node's task slots, in
    the order they were taken (which decides how its CPUs are split: ``fill_tasks``)."""
    usable = [name for name in names if caps.get(name, 0) > 0]
    if any(name not in usable for name in needs.required):
        return None
    if needs.contiguous:
        block = _contiguous(usable, caps, needs, index)
        return None if block is None else block
    if _takes_any(needs) and not _enough(usable, caps, needs):
        return None  # (the rounds below would take every node and still want more)
    chosen = sorted(needs.required, key=index.__getitem__)
    most = needs.max_nodes if needs.max_nodes is not None else len(usable)
    most = max(most, needs.min_nodes)
    want_nodes = needs.min_nodes - len(chosen)
    want_tasks = needs.tasks - sum(caps[name] for name in chosen)
    if len(chosen) > most:
        return None
    rest = [name for name in usable if name not in chosen] if chosen else usable
    # the runs of consecutive nodes among them, as ranges of their positions in ``rest``,
    # with each run's slots (counted once, not at every round)
    slots = list(map(caps.__getitem__, rest))
    spans = consecutive_spans(list(map(index.__getitem__, rest)))
    before = [0, *itertools.accumulate(slots)]
    totals = [before[end] - before[start] for start, end in spans]
    while spans and (want_nodes > 0 or want_tasks > 0) and len(chosen) < most:
        position, _ = best_span(spans, totals, want_tasks, want_nodes)
        start, end = spans.pop(position)
        del totals[position]
        if want_nodes <= 1:
            fitting = [at for at in range(start, end) if slots[at] >= want_tasks]
            if fitting:
                single = min(fitting, key=slots.__getitem__)  # first of the smallest
                chosen.append(rest[single])
                want_nodes -= 1
                want_tasks -= slots[single]
                continue
        for at in range(start, end):
            if (want_nodes <= 0 and want_tasks <= 0) or len(chosen) >= most:
                break
            chosen.append(rest[at])
            want_nodes -= 1
            want_tasks -= slots[at]
    if want_nodes > 0 or want_tasks > 0:
        return None
    return chosen


def _takes_any(needs: Needs) -> bool:
    """Whether :func:`choose_nodes` may end up taking every usable node: no required nodes,
    no contiguity, no node limit. Its rounds then take runs until the job has enough, so it
    places the job exactly when all the usable nodes together are enough."""
    return not needs.required and not needs.contiguous and needs.max_nodes is None


def _enough(usable: Sequence[str], caps: Mapping[str, int], needs: Needs) -> bool:
    """Whether the nodes of ``usable`` (each with task slots) hold the job's tasks and
    minimum node count all together."""
    return len(usable) >= needs.min_nodes and sum(map(caps.__getitem__, usable)) >= needs.tasks


def placeable(
    names: Sequence[str], caps: Mapping[str, int], needs: Needs, index: Mapping[str, int]
) -> bool:
    """Whether :func:`choose_nodes` would choose nodes, without choosing them when it need
    not (see :func:`_takes_any`)."""
    if not _takes_any(needs):
        return choose_nodes(names, caps, needs, index) is not None
    return _enough([name for name in names if caps.get(name, 0) > 0], caps, needs)


def fill_tasks_in_order(slots: Sequence[int], reserve: Sequence[int], needs: Needs) -> list[int]:
    """Tasks per chosen node, the nodes given in the order they were taken with their task
    slots and the CPUs each would keep back for every node still owed (one core's worth).

    Slurm's rule: with ``left`` the CPUs the job still needs and ``owed`` its minimum nodes
    not yet taken, a node gives its CPUs, but no more than ``left`` less ``reserve`` for each
    of the other owed nodes, and no fewer than one task's. A node never gets more than
    ``needs.ntasks_per_node`` tasks, nor fewer than one."""
    per_task = needs.cpus_per_task
    most = needs.ntasks_per_node
    left = needs.tasks * per_task
    owed = needs.min_nodes
    dealt = []
    for count, kept in zip(slots, reserve, strict=True):
        if most is not None:
            count = min(count, most)
        cpus = count * per_task
        cap = left - max(owed - 1, 0) * kept
        if cpus > cap:
            cpus = max(cap, per_task)
        tasks = max(1, cpus // per_task)
        if most is not None:
            tasks = min(tasks, most)
        dealt.append(tasks)
        left -= cpus
        owed -= 1
    short = needs.tasks - sum(dealt)  # (rounding to whole tasks): the first with room
    for position, count in enumerate(slots):
        if short <= 0:
            break
        room = min(count, most or count) - dealt[position]
        if room > 0:
            dealt[position] += min(room, short)
            short -= min(room, short)
    return dealt


def fill_tasks(
    chosen: Sequence[str],
    caps: Mapping[str, int],
    needs: Needs,
    layouts: Mapping[str, Layout],
    unit: Unit,
) -> dict[str, int]:
    """``fill_tasks_in_order`` by node name: tasks per chosen node (``chosen`` in the
    order taken). A node keeps back one core's CPUs for each owed node, a whole socket's
    under CR_Socket."""
    reserve = []
    for name in chosen:
        layout = layouts[name]
        kept = layout.cpus_per_core
        if unit is Unit.SOCKET:
            kept *= layout.cores_per_socket
        reserve.append(kept)
    dealt = fill_tasks_in_order([caps[name] for name in chosen], reserve, needs)
    return dict(zip(chosen, dealt, strict=True))


def pick_cores(
    layout: Layout, free: frozenset[int], unit: Unit, cpus: int, exclusive: bool
) -> frozenset[int]:
    """The cores that give ``cpus`` CPUs: the lowest free ones, whole sockets under
    CR_Socket, all of them for an exclusive job, none when cores are not counted."""
    if unit is Unit.NONE:
        return frozenset()
    if exclusive:
        return layout.all_cores
    want = math.ceil(cpus / layout.cpus_per_core)
    if unit is Unit.SOCKET:
        taken: set[int] = set()
        for socket in layout.sockets():
            if len(taken) >= want:
                break
            if socket <= free:
                taken |= socket
        return frozenset(taken)
    return frozenset(sorted(free)[:want])
