"""One placement test against a usage: Slurm's cons_res steps, from idle cores to rows.

1. Nodes the job may not use at all go first: a node held by an exclusive job; for an
   exclusive job, a node with jobs on it (with gang scheduling, jobs of lower tiers it would
   displace do not count); for a job that wants its cores to itself, a node where jobs of
   another multi-row partition hold cores; a node without the memory the job needs.
2. **Step 1**: the cores no job holds. If the job fits there, it goes there. A job that may
   not share stops here unless gang scheduling is on.
3. Without gang scheduling, a sharing job then tries its partition's rows (step 4) beside
   the jobs that do not share: nothing would suspend them.
4. **Step 2** (gang): every core except those of jobs still inside their PreemptExemptTime
   and, when the policy chooses victims by partition (``preempt_by_partition``), those of
   partitions of a higher tier or with PreemptMode=OFF. If the job does not fit even
   then, higher-priority work is in the way.
5. **Step 3** (gang): also without the cores of partitions of the job's own tier. If it
   fits, it avoids lower-tier partitions one at a time while it still fits, and goes there:
   on top of lower-tier jobs, which gang scheduling then suspends (or preempts).
6. **Step 4**: a sharing job tries its own partition's rows, one at a time: it fits in a row
   if it fits beside the row's cores (and those of same-tier jobs that do not share); an
   empty row leaves every other core. When the policy suspends within partitions
   (``preempt_suspend_in_partition``, as preempt/qos does) a partition has one more row,
   used only by a job that preempts by suspension.

Cores are thus shared only by jobs that both allow it (FORCE, or YES with
``--oversubscribe``), counted per partition, or by a higher tier over a lower one under gang.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

import attrs

from plurm.conf.values import PreemptBase
from plurm.model.cluster import Cluster
from plurm_select_cons_res.layout import Layout, Resource, Unit, core_set
from plurm_select_cons_res.needs import MemoryKind, Needs, Sharing
from plurm_select_cons_res.placement import (
    allocated_cpus,
    choose_nodes,
    fill_tasks,
    pick_cores,
    placeable,
    slots,
    slots_of_count,
)
from plurm_select_cons_res.usage import Allocation, Runs, Usage, View, nodes_key, row_empty

__all__ = ["Placement", "Tester"]

#: Cores that a fit may not take, per node, as core bitmasks (bit i: core i).
Blocked = Mapping[str, int]


@attrs.frozen
class Placement:
    """A test's answer: per chosen node, the cores, CPUs and memory the job would get."""

    cores: Mapping[str, frozenset[int]]
    cpus: Mapping[str, int]
    memory: Mapping[str, int]
    #: ``cores`` as runs (``usage.Runs``) when ``FreeCores`` made it; a hint, not compared.
    runs: Runs = attrs.field(default=(), eq=False, repr=False)

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(self.cores)

    def allocation(self, job_id: int, partition: str, sharing: Sharing) -> Allocation:
        return Allocation(job_id, partition, self.cores, self.cpus, self.memory, sharing, self.runs)


class RowCounts(Protocol):
    def __call__(self, partition: str) -> int: ...


def _merge(*maps: Blocked) -> dict[str, int]:
    if not maps:
        return {}
    merged = dict(maps[0])
    for blocked in maps[1:]:
        for name, cores in blocked.items():
            before = merged.get(name)
            merged[name] = cores if before is None else before | cores
    return merged


def _same_on(names: Sequence[str], one: Blocked, other: Blocked) -> bool:
    """Whether two blocked maps take the same cores on every node of ``names`` (no entry
    and no core take nothing alike)."""
    for name in names:  # noqa: SIM110 (a loop: all() of a generator costs more, test by test)
        if one.get(name, 0) != other.get(name, 0):
            return False
    return True


def _refused_before(refused: list[Blocked], names: Sequence[str], blocked: Blocked) -> bool:
    """Whether ``blocked`` takes the same cores on ``names`` as one of ``refused`` (blocked
    maps whose fit found no room): its fit finds none either."""
    return any(_same_on(names, earlier, blocked) for earlier in refused)


@attrs.define
class Tester:
    """Tests placements for one job in one partition against one usage."""

    cluster: Cluster
    layouts: Mapping[str, Layout]
    resource: Resource
    rows: RowCounts
    #: Jobs whose cores no one may take (inside their PreemptExemptTime under gang).
    exempt: Collection[int] = ()
    #: Sum up the whole usage at every test (the reference the tests compare with), rather
    #: than only the jobs on the nodes tested.
    reference: bool = False

    # ----------------------------------------------------------------------------- parts

    def _own_rows(self, partition: str) -> int:
        """Rows of a partition without the extra row of a policy that suspends within
        partitions (``preempt_suspend_in_partition``)."""
        extra = self.cluster.preempt_traits.suspend_in_partition
        return self.rows(partition) - (1 if extra else 0)

    def _unit(self, partition: str) -> Unit:
        return self.resource.for_partition(self.cluster.partition(partition))

    def _free_memory(self, name: str, view: View, needs: Needs) -> int | None:
        if needs.memory_kind is MemoryKind.NONE:
            return None
        free = self.layouts[name].memory - view.memory.get(name, 0)
        if needs.max_memory is not None:
            free = min(free, needs.max_memory)
        return free

    def _allowed_nodes(
        self, nodes: Sequence[str], partition: str, needs: Needs, view: View, kept: Blocked
    ) -> list[str]:
        """The nodes of ``nodes`` that pass Slurm's node-level checks: exclusivity, sharing
        partitions, memory. ``kept`` are the cores no job may be placed on top of (jobs gang
        scheduling would not suspend for it): an exclusive job needs a node without them,
        and a node an exclusive job holds is out unless that job may be displaced. (What the
        checks read of the job and the cluster is read once per test.)"""
        unit_none = self.resource.unit is Unit.NONE
        exclusive = needs.exclusive
        one_row = needs.sharing is Sharing.ONE_ROW and not unit_none
        memory_kind = needs.memory_kind
        state, partitions_on = view.state, view.partitions_on
        reserved = Sharing.RESERVED.weight
        multi_row: dict[str, bool] = {}  # other partitions: whether they have rows to share
        allowed: list[str] = []
        for name in nodes:
            # Without cores to count (CR_Memory), any job on the node keeps it.
            held = bool(kept.get(name)) or (unit_none and name in partitions_on)
            if held and (exclusive or state.get(name, 0) >= reserved):
                continue
            if one_row and name in partitions_on:
                shares = False
                for other in partitions_on[name]:
                    if other != partition:
                        rows = multi_row.get(other)
                        if rows is None:
                            rows = multi_row[other] = self._own_rows(other) > 1
                        if rows:
                            shares = True
                            break
                if shares:
                    continue
            if memory_kind is not MemoryKind.NONE and not self._memory_allowed(name, needs, view):
                continue
            allowed.append(name)
        return allowed

    def _memory_allowed(self, name: str, needs: Needs, view: View) -> bool:
        """Whether the node has the memory the job needs (which it counts)."""
        free = self._free_memory(name, view, needs)
        if free is None:
            return True
        if needs.memory_kind is MemoryKind.WHOLE_NODE:
            return view.memory.get(name, 0) == 0
        if needs.memory_kind is MemoryKind.PER_NODE:
            return free >= needs.memory
        return free >= needs.memory * needs.cpus_per_task

    def _slots(
        self,
        needs: Needs,
        names: Sequence[str],
        unit: Unit,
        view: View,
        blocked: Blocked,
    ) -> dict[str, int]:
        """Each node's task slots using only cores not in ``blocked`` (its free cores:
        :meth:`_free_cores`)."""
        caps: dict[str, int] = {}
        layouts = self.layouts
        # Per core or per CPU, and with memory not counted, a node's slots depend only on
        # how many of its cores are free.
        by_count = unit in (Unit.CORE, Unit.CPU) and needs.memory_kind is MemoryKind.NONE
        exclusive, per_task = needs.exclusive, needs.cpus_per_task
        if by_count:
            # (each layout's slots by free-core count, as slots_of_count gives them: a
            # node with no core blocked has the last of them)
            kind = (exclusive, per_task)
            taken_on = blocked.get
            for name in names:
                layout = layouts[name]
                counts = layout.slot_counts.get(kind)
                if counts is None:
                    counts = layout.slot_counts[kind] = tuple(
                        slots_of_count(layout, count, exclusive, per_task)
                        for count in range(layout.cores + 1)
                    )
                taken = taken_on(name)
                if taken:
                    caps[name] = counts[(layout.all_mask & ~taken).bit_count()]
                else:
                    caps[name] = counts[-1]
            return caps
        for name in names:
            mine = self._free_cores(name, unit, blocked)
            caps[name] = slots(
                layouts[name], core_set(mine), unit, needs, self._free_memory(name, view, needs)
            )
        return caps

    def _free_cores(self, name: str, unit: Unit, blocked: Blocked) -> int:
        """The cores of node ``name`` not in ``blocked`` (a core bitmask); all of them when
        cores are not counted."""
        cores = self.layouts[name].all_mask
        taken = blocked.get(name) if unit is not Unit.NONE else None
        return cores & ~taken if taken else cores

    def room(
        self,
        needs: Needs,
        names: Sequence[str],
        partition: str,
        view: View,
        blocked: Blocked,
    ) -> bool:
        """Whether :meth:`fit` would place the job (the nodes chosen, no cores picked)."""
        caps = self._slots(needs, names, self._unit(partition), view, blocked)
        return placeable(names, caps, needs, self.cluster.node_index)

    def fit(
        self,
        needs: Needs,
        names: Sequence[str],
        partition: str,
        view: View,
        blocked: Blocked,
    ) -> Placement | None:
        """Place the job on ``names`` using only cores not in ``blocked``."""
        unit = self._unit(partition)
        caps = self._slots(needs, names, unit, view, blocked)
        chosen = choose_nodes(names, caps, needs, self.cluster.node_index)
        if chosen is None:
            return None
        tasks = fill_tasks(chosen, caps, needs, self.layouts, unit)
        chosen.sort(key=self.cluster.node_index.__getitem__)
        cores: dict[str, frozenset[int]] = {}
        cpus: dict[str, int] = {}
        memory: dict[str, int] = {}
        for name in chosen:
            layout = self.layouts[name]
            want = tasks[name] * needs.cpus_per_task
            free = core_set(self._free_cores(name, unit, blocked))
            cores[name] = pick_cores(layout, free, unit, want, needs.exclusive)
            cpus[name] = allocated_cpus(layout, unit, want, needs.exclusive)
            memory[name] = self._memory(layout, needs, cpus[name])
        return Placement(cores, cpus, memory)

    def _fit_anew(
        self,
        refused: list[Blocked],
        needs: Needs,
        names: Sequence[str],
        partition: str,
        view: View,
        blocked: Blocked,
    ) -> Placement | None:
        """:meth:`fit`, except on ``blocked`` maps that take the same cores on ``names`` as
        one that found no placement earlier in this test (``refused``, which a refusal
        joins): the same placement test, the same None. (Under gang scheduling, a
        partition with no job of a lower tier on its nodes has step 3 read the very cores
        step 1 did, and a one-row partition alone in its tier has its row read them too.)"""
        if _refused_before(refused, names, blocked):
            return None
        placed = self.fit(needs, names, partition, view, blocked)
        if placed is None:
            refused.append(blocked)
        return placed

    @staticmethod
    def _memory(layout: Layout, needs: Needs, cpus: int) -> int:
        kind = needs.memory_kind
        if kind is MemoryKind.PER_NODE:
            return needs.memory
        if kind is MemoryKind.PER_CPU:
            return needs.memory * cpus
        if kind is MemoryKind.WHOLE_NODE:
            return min(layout.memory, needs.max_memory or layout.memory)
        return 0

    # ----------------------------------------------------------------------------- steps

    def _higher(self, partition: str, view: View, usage: Usage) -> dict[str, int]:
        """Cores of exempt jobs and, with tiers preempting, of partitions the job may not
        displace (a higher tier, or PreemptMode=OFF)."""
        config = self.cluster.config
        blocked = _merge(
            *(usage.allocations[job].masks() for job in self.exempt if usage.in_rows(job))
        )
        if not self.cluster.preempt_traits.by_partition:
            return blocked
        tier = self.cluster.partition(partition).priority_tier
        for name, cores in view.partition_cores.items():
            if name == partition:
                continue
            part = self.cluster.partition(name)
            mode = part.preempt_mode or config.preempt_mode
            if part.priority_tier > tier or mode.base is PreemptBase.OFF:
                blocked = _merge(blocked, cores)
        return blocked

    def test(
        self,
        needs: Needs,
        nodes: Sequence[str],
        partition: str,
        usage: Usage,
        suspend: Collection[int] | None = None,
        free_failed: bool = False,
    ) -> Placement | None:
        """The job's placement on ``nodes`` against ``usage``, or None. ``suspend`` lists
        the jobs a QOS preemptor suspends: it may then use its partition's extra row.
        ``free_failed``: the caller knows that step 1 (the fit on the cores no job holds)
        finds no room (``FreeCores`` found none), so it is not made again.

        A test reads the usage on ``nodes`` (their view: only their jobs, never more work
        than summing every job), whether rows hold cores anywhere, the jobs inside their
        PreemptExemptTime and the configuration: a test that found no placement is not made
        again while none of these changed (``Usage.refusals``; a change of configuration
        reshapes the usage)."""
        if self.reference:
            view = View.of(usage)
            return self._test(needs, nodes, partition, usage, view, suspend, free_failed)
        key = nodes_key(nodes)
        view = usage.view_on(nodes, key)
        refused = usage.refusals(key) if suspend is None else None
        exempt = self.exempt
        key = (needs, partition, exempt if isinstance(exempt, frozenset) else frozenset(exempt))
        if refused is not None and key in refused:
            return None
        placed = self._test(needs, nodes, partition, usage, view, suspend, free_failed)
        if placed is None and refused is not None:
            refused.add(key)
        return placed

    def _test(
        self,
        needs: Needs,
        nodes: Sequence[str],
        partition: str,
        usage: Usage,
        view: View,
        suspend: Collection[int] | None,
        free_failed: bool = False,
    ) -> Placement | None:
        gang = self.cluster.config.gang_scheduling
        stacking = self.resource.unit is not Unit.NONE and (gang or needs.shared)
        higher = self._higher(partition, view, usage) if stacking else {}
        tier = self.cluster.partition(partition).priority_tier
        by_tier = sorted(
            view.partition_cores,
            key=lambda name: (-self.cluster.partition(name).priority_tier, name),
        )
        same = _merge(
            higher,
            *(
                view.partition_cores[name]
                for name in by_tier
                if self.cluster.partition(name).priority_tier == tier
            ),
        )
        # An exclusive job may only displace what gang scheduling would suspend for it.
        kept = same if gang and stacking else view.busy
        names = self._allowed_nodes(nodes, partition, needs, view, kept)
        if len(names) < needs.min_nodes:
            return None
        placed = None if free_failed else self.fit(needs, names, partition, view, view.busy)
        if placed is not None or not stacking:
            return placed
        refused: list[Blocked] = [view.busy]  # the cores of the fits that found no room
        if not gang:
            # Nothing would suspend the jobs underneath: a sharing job only shares with
            # jobs that share too, in its partition's rows.
            private = _merge(higher, *view.private_cores.values())
            return self._rows(needs, names, partition, view, usage, private, suspend, refused)
        if _refused_before(refused, names, higher) or not self.room(
            needs, names, partition, view, higher
        ):
            return None
        placed = self._fit_anew(refused, needs, names, partition, view, same)
        if placed is not None:
            for name in by_tier:
                if self.cluster.partition(name).priority_tier >= tier:
                    continue
                trial = _merge(same, view.partition_cores[name])
                better = self._fit_anew(refused, needs, names, partition, view, trial)
                if better is not None:
                    same, placed = trial, better
            return placed
        if not needs.shared:
            return None
        # Jobs that did not ask to share keep their cores to themselves.
        private = _merge(
            higher,
            *(
                view.private_cores.get(name, {})
                for name in by_tier
                if self.cluster.partition(name).priority_tier == tier
            ),
        )
        return self._rows(needs, names, partition, view, usage, private, suspend, refused)

    def _rows(
        self,
        needs: Needs,
        names: Sequence[str],
        partition: str,
        view: View,
        usage: Usage,
        blocked: Blocked,
        suspend: Collection[int] | None,
        refused: list[Blocked],
    ) -> Placement | None:
        """Step 4: the partition's rows in order; an empty row leaves ``blocked`` only."""
        count = self._own_rows(partition)
        rows = view.row_cores.get(partition, [])
        for index in range(count):
            row = rows[index] if index < len(rows) else {}
            if not any(row.values()) and (view.complete or row_empty(usage, partition, index)):
                return self._fit_anew(refused, needs, names, partition, view, blocked)
            placed = self._fit_anew(refused, needs, names, partition, view, _merge(blocked, row))
            if placed is not None:
                return placed
        if suspend is None:
            return None
        seed = _merge(
            *(
                usage.allocations[job_id].masks()
                for row_jobs in usage.rows.get(partition, [])
                for job_id in row_jobs
                if job_id not in suspend
            )
        )
        return self.fit(needs, names, partition, view, _merge(blocked, seed))
