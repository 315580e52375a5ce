"""The common case on node bitmaps: a job that wants whole cores to itself on free cores.

When a job neither shares (no OverSubscribe) nor wants whole nodes (no ``--exclusive``),
memory is not counted, it requires no node and need not be contiguous, the partition counts
cores or CPUs, gang scheduling is off and no partition has several rows, a test against the
usage is step 1 of ``steps`` alone: each node offers the CPUs of its free cores, and
``placement.choose_nodes`` picks nodes by best fit over runs of consecutive nodes.

:class:`FreeCores` keeps what that step reads up to date job by job, over the node table:
each node's held cores, the CPUs its free cores give, Slurm's node state counter, and
bitmaps of the nodes by free CPUs. A test then costs C-speed operations over the table
(bitmaps, sums of task slots over runs of usable nodes) plus Python work per run and per node
chosen, where the general code does Python work per node. The rounds, best fit and
tie-breaks are ``choose_nodes``'s and ``fill_tasks``'s; a property test in
``tests/plugins/test_select_cons_res.py`` compares the two on random clusters.

Jobs of whole nodes make per-node work the cost: a placement on runs of consecutive nodes
of one layout with no core busy gives every node of a run the same cores, so ``place``
builds it run by run and records the runs on the placement (``Placement.runs``); ``hold``
then sets each run's values by list slices and bitmap operations, and ``release`` clears
them the same way, as long as the job still holds the run alone. A node another job comes
onto leaves its run and is kept node by node from then on. A property test holds the same
allocations with and without their runs and compares everything derived.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Mapping, Sequence

from plurm.model.runs import best_span, bitmap_of, set_bit_spans
from plurm_select_cons_res.layout import Layout, Unit
from plurm_select_cons_res.needs import MemoryKind, Needs, Sharing
from plurm_select_cons_res.placement import fill_tasks_in_order
from plurm_select_cons_res.steps import Placement
from plurm_select_cons_res.usage import Allocation, Runs

__all__ = ["FreeCores", "first_on_free_cores", "on_free_cores"]

#: How many sets of partitions ``FreeCores.holds_only`` keeps the other partitions' nodes of.
_OUTSIDE_KEPT = 256
#: How many node sets' task slots ``FreeCores._room_for`` keeps between two changes.
_TOTALS_KEPT = 1024
#: Units whose task slots are the CPUs of a node's free cores (not whole sockets, not memory).
_CORE_UNITS = (Unit.CORE, Unit.CPU)
#: Slurm's node state counter at and above which an exclusive job holds the node.
_RESERVED = Sharing.RESERVED.weight
# Enum members read once (on Python 3.11 a read through the enum class goes through its
# __getattr__ hook): on_free_cores is asked at every test.
_ONE_ROW = Sharing.ONE_ROW
_RESERVED_SHARING = Sharing.RESERVED
_NO_MEMORY = MemoryKind.NONE


def on_free_cores(needs: Needs, unit: Unit) -> bool:
    """Whether a test of ``needs`` under ``unit`` on an *idle* usage is FreeCores's common
    case. Against a usage with jobs, gang scheduling must also be off and no partition may
    have several rows of its own (the callers know those)."""
    return (
        needs.sharing is _ONE_ROW
        and needs.memory_kind is _NO_MEMORY
        and not needs.required
        and not needs.contiguous
        and unit in _CORE_UNITS
    )


def first_on_free_cores(needs: Needs, unit: Unit) -> bool:
    """Whether step 1 of a gang-scheduled test of ``needs`` under ``unit`` (the fit on the
    cores no job holds) is FreeCores's :meth:`FreeCores.place`: :func:`on_free_cores`, for a
    job that shares (OverSubscribe=FORCE) too. The callers know the rest (see
    :meth:`FreeCores.gang_step_one`)."""
    return (
        needs.sharing is not _RESERVED_SHARING
        and needs.memory_kind is _NO_MEMORY
        and not needs.required
        and not needs.contiguous
        and unit in _CORE_UNITS
    )


class FreeCores:
    """The cores jobs in rows hold on each node, and what they leave, over the node table.

    ``hold`` and ``release`` follow the plugin's usage job by job: a job counts while it
    sits in a row (running or gang-suspended), as in ``usage.View``.
    """

    def __init__(
        self, table: Sequence[str], node_index: Mapping[str, int], layouts: Mapping[str, Layout]
    ) -> None:
        """``table``: the node names in table order; ``node_index``: each one's place."""
        self.table = tuple(table)
        self.layouts = [layouts[name] for name in self.table]
        self._index = node_index
        self._all = [(1 << layout.cores) - 1 for layout in self.layouts]
        # Per node, the CPUs a number of cores gives (``Layout.cpus_of``), by that number;
        # one tuple per distinct layout, shared by its nodes.
        by_layout = {
            layout: tuple(layout.cpus_of(cores) for cores in range(layout.cores + 1))
            for layout in set(self.layouts)
        }
        self._cpus_of = [by_layout[layout] for layout in self.layouts]
        #: Per node with jobs, the cores each of them holds there (job id -> core bitmask).
        self._jobs_on: dict[int, dict[int, int]] = {}
        #: What each held job holds: its nodes (held one by one), its sharing weight and the
        #: runs it holds by slices (``_hold_runs``; then no nodes).
        self._held: dict[int, tuple[list[int], int, Runs]] = {}
        #: Each held job's partition, and per partition the nodes (a bitmap) where its held
        #: jobs hold an entry: which partitions a test's nodes hold jobs of
        #: (``holds_only``).
        self._partition_of: dict[int, str] = {}
        self._on_partition: dict[str, int] = {}
        #: Counts the changes of ``_on_partition``; per set of partitions ``holds_only``
        #: asked about, the nodes of all others' jobs, at that count.
        self._partition_changes = 0
        self._outside: dict[frozenset[str], tuple[int, int]] = {}
        #: Per node, the union of its held cores (a core bitmask), and that within the
        #: node's cores (``busy``).
        self._union = [0] * len(self.table)
        self.busy = [0] * len(self.table)
        #: Per node, Slurm's state counter: the sum of the held jobs' sharing weights.
        self._weight = [0] * len(self.table)
        #: Per node, the CPUs of its free cores.
        self.free_cpus = [layout.cpus_of(layout.cores) for layout in self.layouts]
        #: Per node, the CPUs of its free cores by how many of its cores are busy.
        left = {counts: counts[::-1] for counts in by_layout.values()}
        self._cpus_left = [left[counts] for counts in self._cpus_of]
        #: Bitmaps of the nodes by free CPUs (index: the number of free CPUs).
        self._by_free = [0] * (max(self.free_cpus, default=0) + 1)
        for index, cpus in enumerate(self.free_cpus):
            self._by_free[cpus] |= 1 << index
        #: Nodes an exclusive job holds cores on: no other job may go there.
        self.barred = 0
        #: Nodes where the jobs hold cores and leave CPUs free: the CPUs of the cores held
        #: (``held_cpus``) are more than none and fewer than the node's CPUs.
        self.partly = 0
        # Each node's layout as a number, and per number the nodes of that layout (a bitmap),
        # its cores (a bitmask) and what its free CPUs are with none busy: runs of nodes of
        # one layout with no core held get the same cores, so they go by slices.
        numbers: dict[Layout, int] = {}
        self._layout_number = [numbers.setdefault(layout, len(numbers)) for layout in self.layouts]
        self._layout_nodes = [0] * len(numbers)
        for index, number in enumerate(self._layout_number):
            self._layout_nodes[number] |= 1 << index
        ordered = sorted(numbers, key=numbers.__getitem__)
        self._layout_all = [(1 << layout.cores) - 1 for layout in ordered]
        self._layout_full = [layout.cpus_of(layout.cores) for layout in ordered]
        self._layout_cpus_of = [by_layout[layout] for layout in ordered]
        self._layout_left = [left[by_layout[layout]] for layout in ordered]
        self._layout_per_core = [layout.cpus_per_core for layout in ordered]
        #: Whether every node has the same layout (a homogeneous cluster).
        self.one_layout = len(ordered) == 1
        #: Placements on one run of wholly free nodes (``_on_run``), and their node count.
        self._on_runs: dict[tuple[int, int, int], Placement] = {}
        self._on_runs_nodes = 0
        #: Nodes with a held job (with cores or not).
        self._occupied = 0
        #: Nodes held by one job that holds them by runs (``_hold_runs``): they are not in
        #: ``_jobs_on``; ``_owner`` says whose they are. A node leaves this set when another
        #: job comes onto it (it goes into ``_jobs_on`` then) or its job leaves.
        self._solo = 0
        self._owner = [0] * len(self.table)
        # Derived from the above per tasks' CPUs; emptied on every change.
        self._slots: dict[int, tuple[list[int], int, dict[int, int]]] = {}
        # Pure functions of their keys, remembered: core sets recur job after job.
        self._picked: dict[tuple[int, int], frozenset[int]] = {}
        self._masks: dict[frozenset[int], int] = {}

    # ----------------------------------------------------------------------------- upkeep

    def held_cpus(self) -> Iterator[tuple[str, int]]:
        """(node, the CPUs of the distinct cores the jobs in rows hold there:
        ``Layout.cpus_of``) for each node where they hold any, in table order."""
        table, cpus_of = self.table, self._cpus_of
        for index, union in enumerate(self._union):
            if union:
                count = union.bit_count()
                by_count = cpus_of[index]
                if count < len(by_count):
                    yield table[index], by_count[count]
                else:  # (cores beyond the node's own: never placed so, but counted alike)
                    yield table[index], self.layouts[index].cpus_of(count)

    def hold(self, allocation: Allocation) -> None:
        """The job sits in a row (again) with ``allocation``."""
        job_id = allocation.job_id
        if job_id in self._held:
            self.release(job_id)
        weight = allocation.sharing.weight
        if allocation.runs and self._hold_runs(allocation, weight):
            return
        index_of = self._index
        masks = self._masks
        jobs_on = self._jobs_on
        weights = self._weight
        unions = self._union
        occupied = self._occupied
        nodes = []
        for name, cores in allocation.cores.items():
            index = index_of[name]
            mask = masks.get(cores)
            if mask is None:
                mask = self._mask(cores)
            on = jobs_on.get(index)
            if on is None and self._solo >> index & 1:
                on = self._list_solo(index)
            if on is None:  # the node's first job (the common case: no sums to keep)
                jobs_on[index] = {job_id: mask}
                weights[index] = weight
                unions[index] = mask
                occupied |= 1 << index
            else:
                on[job_id] = mask
                weights[index] += weight
                unions[index] |= mask
            nodes.append(index)
        self._occupied = occupied
        self._held[job_id] = (nodes, weight, ())
        self._in_partition(job_id, allocation.partition, bitmap_of(nodes))
        self._derive(nodes)

    def _in_partition(self, job_id: int, partition: str, nodes: int) -> None:
        self._partition_of[job_id] = partition
        self._on_partition[partition] = self._on_partition.get(partition, 0) | nodes
        self._partition_changes += 1

    def _list_solo(self, index: int) -> dict[int, int]:
        """Another job comes onto (or a release walks) a node held by runs: its job goes
        into ``_jobs_on`` like any other."""
        self._solo ^= 1 << index
        on = self._jobs_on[index] = {self._owner[index]: self._union[index]}
        return on

    def _hold_runs(self, allocation: Allocation, weight: int) -> bool:
        """``hold`` by slices, when every node of the allocation's runs is still without a
        job (else False, and nothing changed): per run, every node gets the same values."""
        runs = allocation.runs
        occupied = self._occupied
        count = 0
        for start, end, _ in runs:
            count += end - start
            if occupied >> start & ((1 << (end - start)) - 1):
                return False
        if count != len(allocation.cores):
            return False
        job_id = allocation.job_id
        by_free = self._by_free
        barred = self.barred
        reserved = weight >= _RESERVED
        for start, end, mask in runs:
            size = end - start
            bits = ((1 << size) - 1) << start
            number = self._layout_number[start]
            busy = mask & self._layout_all[number]
            self._owner[start:end] = [job_id] * size
            self._union[start:end] = [mask] * size
            self.busy[start:end] = [busy] * size
            self._weight[start:end] = [weight] * size
            full = self._layout_full[number]  # every node's free CPUs until now
            after = self._layout_left[number][busy.bit_count()]
            if after != full:
                self.free_cpus[start:end] = [after] * size
                by_free[full] &= ~bits
                by_free[after] |= bits
            if mask and reserved:
                barred |= bits
            occupied |= bits
            layout = self.layouts[start]  # (every node of a run has its layout)
            if 0 < layout.cpus_of(mask.bit_count()) < layout.cpus:
                self.partly |= bits  # (nodes without a job: none was in it)
        self.barred = barred
        self._solo |= occupied & ~self._occupied
        self._occupied = occupied
        self._held[job_id] = ([], weight, runs)
        bits = 0
        for start, end, _ in runs:
            bits |= ((1 << (end - start)) - 1) << start
        self._in_partition(job_id, allocation.partition, bits)
        self._slots.clear()
        return True

    def release(self, job_id: int) -> None:
        """The job left its row (ended, or suspended by an administrator)."""
        held = self._held.pop(job_id, None)
        if held is None:
            return
        nodes, weight, runs = held
        partition = self._partition_of.pop(job_id)
        left = 0  # the nodes where no held job of the partition is left
        if runs:
            nodes, left = self._release_runs(runs)
            if not nodes:
                self._on_partition[partition] &= ~left
                self._partition_changes += 1
                self._slots.clear()
                return
        jobs_on = self._jobs_on
        weights = self._weight
        unions = self._union
        occupied = self._occupied
        partition_of = self._partition_of
        gone = []
        for index in nodes:
            on = jobs_on[index]
            if len(on) == 1:  # the node's last job: nothing is left on it
                del jobs_on[index]
                weights[index] = 0
                unions[index] = 0
                occupied &= ~(1 << index)
                gone.append(index)
                continue
            del on[job_id]
            weights[index] -= weight
            union = 0
            for mask in on.values():
                union |= mask
            unions[index] = union
            for other in on:
                if partition_of[other] == partition:
                    break
            else:
                gone.append(index)
        self._occupied = occupied
        self._on_partition[partition] &= ~(left | bitmap_of(gone))
        self._partition_changes += 1
        self._derive(nodes)

    def _release_runs(self, runs: Runs) -> tuple[list[int], int]:
        """``release`` of a job held by runs: a run whose nodes it still holds alone is
        emptied by slices; the nodes of any other run (another job came onto some of them)
        are returned, each in ``_jobs_on``, for the release node by node, with the bitmap of
        the runs emptied."""
        by_free = self._by_free
        left: list[int] = []
        emptied = 0
        for start, end, _ in runs:
            size = end - start
            bits = ((1 << size) - 1) << start
            if self._solo & bits != bits:
                for index in range(start, end):
                    if self._solo >> index & 1:
                        self._list_solo(index)
                left.extend(range(start, end))
                continue
            number = self._layout_number[start]
            zeros = [0] * size  # (a slice assignment copies it: one list serves three)
            self._union[start:end] = zeros
            self.busy[start:end] = zeros
            self._weight[start:end] = zeros
            before = self.free_cpus[start]  # the same on every node of the run
            full = self._layout_full[number]
            if before != full:
                self.free_cpus[start:end] = [full] * size
                by_free[before] &= ~bits
                by_free[full] |= bits
            self.barred &= ~bits
            self._occupied &= ~bits
            self._solo &= ~bits
            if self.partly & bits:
                self.partly &= ~bits
            emptied |= bits
        return left, emptied

    def _derive(self, nodes: list[int]) -> None:
        """The held cores of ``nodes`` changed: update what is derived from them."""
        unions = self._union
        busies = self.busy
        all_cores = self._all
        weights = self._weight
        free_cpus = self.free_cpus
        cpus_left = self._cpus_left
        by_free = self._by_free
        barred = self.barred
        partly = self.partly
        cpus_of = self._cpus_of
        layouts = self.layouts
        for index in nodes:
            union = unions[index]
            busy = busies[index] = union & all_cores[index]
            if union and weights[index] >= _RESERVED:
                barred |= 1 << index
            elif barred and barred >> index & 1:
                barred ^= 1 << index
            some_free = False
            if union:
                count = union.bit_count()
                by_count = cpus_of[index]
                # (cores beyond the node's own: never placed so, but counted as held_cpus)
                held = by_count[count] if count < len(by_count) else layouts[index].cpus_of(count)
                some_free = 0 < held < layouts[index].cpus
            if some_free:
                partly |= 1 << index
            elif partly >> index & 1:
                partly ^= 1 << index
            before = free_cpus[index]
            after = cpus_left[index][busy.bit_count()]
            if after != before:
                free_cpus[index] = after
                bit = 1 << index
                by_free[before] ^= bit
                by_free[after] |= bit
        self.barred = barred
        self.partly = partly
        self._slots.clear()

    # ----------------------------------------------------------------------------- tests

    def _slots_for(self, cpus_per_task: int) -> tuple[list[int], int, dict[int, int]]:
        """(task slots per node, bitmap of the nodes with a slot, the task slots of node
        sets summed so far by ``_room_for``)."""
        known = self._slots.get(cpus_per_task)
        if known is None:
            if cpus_per_task == 1:
                slots = self.free_cpus
            else:
                slots = [cpus // cpus_per_task for cpus in self.free_cpus]
            some = 0
            for mask in self._by_free[cpus_per_task:]:
                some |= mask
            known = self._slots[cpus_per_task] = slots, some, {}
        return known

    def place(self, needs: Needs, nodes: int, unit: Unit) -> Placement | None:
        """``Tester.test`` for FreeCores's common case (see ``on_free_cores``) on the nodes
        of the bitmap ``nodes``."""
        allowed = nodes & ~self.barred
        if allowed.bit_count() < needs.min_nodes:
            return None
        slots, some, totals = self._slots_for(needs.cpus_per_task)
        usable = allowed & some
        if not self._room_for(needs, usable, totals):
            return None
        most_cpus = len(self._by_free) - 1  # no node has more free CPUs
        widest = most_cpus // needs.cpus_per_task
        # Whole-node jobs on one kind of node leave every usable node wholly free: then
        # every one has the same slots, and runs are summed by their lengths.
        even = 0 if usable & ~self._by_free[most_cpus] else widest
        chose = self._choose(needs, usable, slots, widest, even)
        if chose is None:
            return None
        taken, spare = chose
        cores: dict[str, frozenset[int]] = {}
        cpus: dict[str, int] = {}
        if spare:  # fewer tasks than the chosen nodes' slots: fill them in the order taken
            chosen = list(itertools.chain.from_iterable(range(first, end) for first, end in taken))
            layouts = self.layouts
            dealt = fill_tasks_in_order(
                [slots[index] for index in chosen],
                [layouts[index].cpus_per_core for index in chosen],
                needs,
            )
            order = sorted(range(len(chosen)), key=chosen.__getitem__)
            chosen = [chosen[position] for position in order]
            dealt = [dealt[position] for position in order]
            self._per_node(chosen, dealt, needs.cpus_per_task, cores, cpus)
            return Placement(cores, cpus, dict.fromkeys(cores, 0))
        taken.sort()
        # Every chosen node gets all its task slots: a run of nodes of one layout with no
        # core busy gives every node the same cores, set by slices.
        by_free = self._by_free
        if len(taken) == 1:  # the common case: one run, whose dictionaries are made whole
            first, end = taken[0]
            number = self._layout_number[first]
            bits = ((1 << (end - first)) - 1) << first
            if not bits & ~(self._layout_nodes[number] & by_free[self._layout_full[number]]):
                count = -(-slots[first] * needs.cpus_per_task // self._layout_per_core[number])
                return self._on_run(first, end, number, count)
        runs = []
        for first, end in taken:
            number = self._layout_number[first]
            bits = ((1 << (end - first)) - 1) << first
            if bits & ~(self._layout_nodes[number] & by_free[self._layout_full[number]]):
                indexes = range(first, end)
                self._per_node(indexes, slots[first:end], needs.cpus_per_task, cores, cpus)
                continue
            count = -(-slots[first] * needs.cpus_per_task // self._layout_per_core[number])
            lowest = self._pick_lowest(self._layout_all[number], count)
            names = self.table[first:end]
            cores.update(zip(names, itertools.repeat(lowest)))
            cpus.update(zip(names, itertools.repeat(self._layout_cpus_of[number][count])))
            runs.append((first, end, self._mask(lowest)))
        # runs are a hint for ``hold`` only when they cover every chosen node
        whole = len(runs) == len(taken)
        return Placement(cores, cpus, dict.fromkeys(cores, 0), tuple(runs) if whole else ())

    def _room_for(self, needs: Needs, usable: int, totals: dict[int, int]) -> bool:
        """Whether the nodes of ``usable`` have, all together, the job's nodes and task
        slots (``_choose`` can only place it then): a busy test mostly ends here. The slots
        are counted from the bitmaps of the nodes by free CPUs and kept in ``totals`` (per
        CPUs per task, until the next change): the tests of a pass ask about the same node
        sets again and again."""
        if usable.bit_count() < needs.min_nodes:
            return False
        total = totals.get(usable)
        if total is None:
            total = 0
            per_task = needs.cpus_per_task
            by_free = self._by_free
            for cpus in range(per_task, len(by_free)):
                on = by_free[cpus] & usable
                if on:
                    total += cpus // per_task * on.bit_count()
            if len(totals) >= _TOTALS_KEPT:
                totals.clear()
            totals[usable] = total
        return total >= needs.tasks

    def gang_step_one(self, nodes: int) -> bool:
        """Whether :meth:`place` on the bitmap ``nodes`` is step 1 of ``steps.Tester``
        under gang scheduling, for a job of :func:`first_on_free_cores` when no partition
        has several rows of its own: the fit on the cores no job in a row holds, on the
        nodes the job may use. Tester leaves out a node an exclusive job holds only when
        that job's partition is not of a lower tier, where ``place`` leaves out every one
        (``barred``); they agree when every such node of ``nodes`` has no CPU free (an
        exclusive job placed by select holds all the cores; one the core started elsewhere
        may not)."""
        return not nodes & self.barred & ~self._by_free[0]

    def holds_only(self, nodes: int, partitions: frozenset[str]) -> bool:
        """Whether every job in a row that holds something on the bitmap ``nodes`` is of
        one of ``partitions``. (The nodes of the jobs of all other partitions are kept per
        set of partitions asked about, until a job is held or released.)"""
        known = self._outside.get(partitions)
        if known is None or known[0] != self._partition_changes:
            outside = 0
            for partition, on in self._on_partition.items():
                if partition not in partitions:
                    outside |= on
            if len(self._outside) >= _OUTSIDE_KEPT:
                self._outside.clear()
            known = self._outside[partitions] = (self._partition_changes, outside)
        return not known[1] & nodes

    def _on_run(self, first: int, end: int, number: int, count: int) -> Placement:
        """The placement that gives each node of the run ``first:end`` (wholly free, of
        layout ``number``) its ``count`` lowest cores, remembered: jobs of one size land on
        the same free runs again and again. A placement is frozen and its mappings are
        never changed, so jobs share it."""
        key = (first, end, count)
        placed = self._on_runs.get(key)
        if placed is None:
            if self._on_runs_nodes > 2 * len(self.table):  # (bounded: a few tables' worth)
                self._on_runs.clear()
                self._on_runs_nodes = 0
            lowest = self._pick_lowest(self._layout_all[number], count)
            names = self.table[first:end]
            placed = self._on_runs[key] = Placement(
                dict.fromkeys(names, lowest),
                dict.fromkeys(names, self._layout_cpus_of[number][count]),
                dict.fromkeys(names, 0),
                ((first, end, self._mask(lowest)),),
            )
            self._on_runs_nodes += end - first
        return placed

    def _per_node(
        self,
        chosen: Sequence[int],
        dealt: Sequence[int],
        per_task: int,
        cores: dict[str, frozenset[int]],
        cpus: dict[str, int],
    ) -> None:
        """The cores and CPUs of ``chosen`` nodes given ``dealt`` tasks, node by node."""
        table = self.table
        layouts = self.layouts
        all_cores = self._all
        busy = self.busy
        cpus_of = self._cpus_of
        for index, tasks in zip(chosen, dealt, strict=True):
            name = table[index]
            # pick_cores and allocated_cpus: whole cores, the lowest free ones (a CPU is a
            # core of one thread under CR_CPU, so the same sums hold there)
            count = -(-tasks * per_task // layouts[index].cpus_per_core)
            cores[name] = self._pick_lowest(all_cores[index] & ~busy[index], count)
            cpus[name] = cpus_of[index][count]

    def _pick_lowest(self, free: int, count: int) -> frozenset[int]:
        """``_lowest``, remembered: core sets recur job after job."""
        key = (free, count)
        lowest = self._picked.get(key)
        if lowest is None:
            lowest = self._picked[key] = _lowest(free, count)
        return lowest

    def _mask(self, cores: frozenset[int]) -> int:
        """``cores`` as a bitmask, remembered."""
        mask = self._masks.get(cores)
        if mask is None:
            mask = self._masks[cores] = sum(1 << core for core in cores)
        return mask

    @staticmethod
    def _choose(
        needs: Needs, usable: int, slots: list[int], widest: int, even: int = 0
    ) -> tuple[list[tuple[int, int]], int] | None:
        """``choose_nodes`` without required nodes or contiguity, on the bitmap of the
        nodes with a slot: runs of consecutive nodes are runs of set bits. The chosen nodes
        as ranges of table indexes (first, last + 1), in the order taken, and how many of
        their slots are left over once the job's tasks are dealt. ``widest``: no node has
        more slots (a job of more tasks needs several); ``even``, if not 0: every usable
        node has that many."""
        most = needs.max_nodes if needs.max_nodes is not None else usable.bit_count()
        most = max(most, needs.min_nodes)
        want_nodes = needs.min_nodes
        want_tasks = needs.tasks
        runs = set_bit_spans(usable)
        if even:
            totals = [even * (end - start) for start, end in runs]
        else:
            totals = [sum(slots[start:end]) for start, end in runs]
        taken: list[tuple[int, int]] = []  # ranges of node indexes, first to last + 1
        count = 0
        while runs and (want_nodes > 0 or want_tasks > 0) and count < most:
            best, _ = best_span(runs, totals, want_tasks, want_nodes)
            start, end = runs.pop(best)
            del totals[best]
            if want_nodes <= 1 and want_tasks <= widest:
                if even:  # the first node holds it, if any does
                    single: int | None = 0 if want_tasks <= even else None
                else:
                    single = _fewest_that_hold(slots[start:end], want_tasks)
                if single is not None:
                    taken.append((start + single, start + single + 1))
                    count += 1
                    want_nodes -= 1
                    want_tasks -= slots[start + single]
                    continue
            # Nodes from the start of the run until both needs are met, the run ends or
            # ``most`` is reached: the fewest that give want_tasks (a search on the
            # running slot totals) and at least want_nodes.
            if even:
                by_tasks = -(-want_tasks // even) if want_tasks > 0 else 0
                take = min(max(want_nodes, by_tasks), end - start, most - count)
                want_tasks -= even * take
            else:
                running = list(itertools.accumulate(slots[start:end]))
                by_tasks = bisect.bisect_left(running, want_tasks) + 1 if want_tasks > 0 else 0
                take = min(max(want_nodes, by_tasks), end - start, most - count)
                want_tasks -= running[take - 1]
            taken.append((start, start + take))
            count += take
            want_nodes -= take
        if want_nodes > 0 or want_tasks > 0:
            return None
        return taken, -want_tasks


def _fewest_that_hold(run: list[int], want: int) -> int | None:
    """The position in ``run`` (slots of consecutive nodes) of the node with the fewest
    slots that still holds ``want`` tasks, the first of them on ties; None if none does.
    Slot counts are small, so each is looked for in turn, smallest first."""
    for value in range(max(want, min(run)), max(run) + 1):
        if value in run:
            return run.index(value)
    return None


def _lowest(free: int, count: int) -> frozenset[int]:
    """``pick_cores``: the ``count`` lowest-numbered cores of the core bitmask ``free``."""
    bits = format(free, "b")[::-1]
    return frozenset([core for core, bit in enumerate(bits) if bit == "1"][:count])
