"""The plugin's accounting: each job's allocation, and the rows of each partition.

A partition has as many *rows* as jobs may share a core in it (OverSubscribe=FORCE:n or YES:n
gives n, anything else 1). A row is a set of jobs whose cores do not overlap; a job goes into
the first row of its partition where it fits. Rows are counted per partition: jobs of other
partitions never take a row's place. Running and gang-suspended jobs stay in their rows; a job
an administrator suspended leaves its row (its cores are free) but keeps its memory.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

import attrs

from plurm.model.bitmap import NodeBitmap
from plurm.model.runs import bitmap_of
from plurm_select_cons_res.layout import core_mask
from plurm_select_cons_res.needs import Sharing

__all__ = ["Allocation", "Row", "Runs", "Usage", "View", "nodes_key", "row_empty"]

_V = TypeVar("_V")

Cores = Mapping[str, frozenset[int]]
#: Runs of consecutive nodes, as (first table index, last + 1, core bitmask), where every
#: node of a run gets the same cores and no node had cores held when the placement was made:
#: ``FreeCores``'s hint that lets it hold and release them by slices instead of node by node.
Runs = tuple[tuple[int, int, int], ...]
#: The ids of a row's jobs, in the order they came (the values are unused).
Row = dict[int, None]
#: How many views of node sets a usage keeps (:meth:`Usage.view_on`): past that, the least
#: recently used goes.
_VIEWS_KEPT = 64
#: A kept view whose changed nodes are fewer than one in this many of its nodes has their
#: entries made afresh (:meth:`View.patched`); else it is made anew.
_PATCHED_AT_MOST = 4


def _bits(mask: int) -> Iterator[int]:
    """The set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


@attrs.frozen
class Allocation:
    """What one job holds: cores, CPUs and memory (MiB) per node."""

    job_id: int
    partition: str
    cores: Cores
    cpus: Mapping[str, int]
    memory: Mapping[str, int]
    sharing: Sharing
    #: ``cores`` as runs, when ``FreeCores.place`` made the placement (else empty); a hint,
    #: not part of what the job holds, so equal allocations compare equal with or without.
    runs: Runs = attrs.field(default=(), eq=False, repr=False)
    #: ``cores`` as core bitmasks (``masks``), made when first read.
    _masks: Mapping[str, int] | None = attrs.field(default=None, init=False, eq=False, repr=False)

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(self.cores)

    def masks(self) -> Mapping[str, int]:
        """``cores`` with each node's cores as a core bitmask (bit i: core i)."""
        masks = self._masks
        if masks is None:
            masks = {name: core_mask(cores) for name, cores in self.cores.items()}
            object.__setattr__(self, "_masks", masks)
        return masks

    def overlaps(self, cores: Cores) -> bool:
        return any(cores.get(name, frozenset()) & mine for name, mine in self.cores.items())


@attrs.define
class _Kept:
    """A view :meth:`Usage.view_on` keeps, its refusals, and its nodes as a bitmap of the
    usage's own node numbering, with those of them that changed since it was made."""

    view: View
    refusals: _Refusals
    nodes: int
    changed: int = 0


@attrs.define
class _Refusals:
    """The keys of the tests that found no placement on a view's nodes, while the rows
    changed ``rows`` times."""

    rows: int
    keys: set[Hashable] = attrs.Factory(set)


@attrs.define
class Usage:
    """Every allocation, and which jobs sit in which row of which partition."""

    allocations: dict[int, Allocation] = attrs.Factory(dict)
    #: Per partition, its rows: each the ids of its jobs in the order they came (a dict
    #: without values, so that a job leaves a row that holds every running job at once).
    rows: dict[str, list[Row]] = attrs.Factory(dict)
    #: (partition, row index) of each job in a row: every start and end asks, and a copy
    #: copies it whole. Rebuilt whenever ``rows`` is replaced.
    _row_of: dict[int, tuple[str, int]] = attrs.field(
        init=False, factory=dict, eq=False, repr=False
    )
    #: Node -> the jobs with an allocation there, so that a view of a few nodes reads only
    #: their jobs. It may name a job that is gone or no longer holds the node (a copy shares
    #: its origin's index until it adds a job; a resized job keeps its entries): readers
    #: check ``allocations``. A copy is a dry run that lives while its origin stays as it
    #: is (one decision), so it reads its origin's index rather than copying it. None until
    #: a reader first asks (:meth:`jobs_on`): a cluster whose decisions never read a few
    #: nodes alone (no GRES) keeps no index, at no cost per start and end.
    _on_node: dict[str, set[int]] | None = attrs.field(
        init=False, default=None, eq=False, repr=False
    )
    _shared_index: bool = attrs.field(init=False, default=False, eq=False, repr=False)
    #: For a copy (a dry run of the preemption loop): the usage it was copied from, and the
    #: jobs removed from it since, in order. A copy only removes jobs in practice; readers
    #: that use these to find what changed must stay right if it adds some.
    origin: Usage | None = attrs.field(init=False, default=None, eq=False, repr=False)
    dropped: list[int] = attrs.field(init=False, factory=list, eq=False, repr=False)
    #: While a dry run is on (:meth:`dry_run`): what each removal took out, to put back
    #: (job id, allocation if it left ``allocations``, its (partition, row) if it left one).
    _undo: list[tuple[int, Allocation | None, tuple[str, int] | None]] | None = attrs.field(
        init=False, default=None, eq=False, repr=False
    )

    #: The views of node sets made by :meth:`view_on`. Each change marks its nodes in the
    #: kept views that hold them (a change while no view is kept marks nothing: a view made
    #: later is made after it); a view holds while none is marked.
    _views: dict[Hashable, _Kept] = attrs.field(init=False, factory=dict, eq=False, repr=False)
    #: While a dry run is on: the views made in it, of its state (marked as its removals
    #: change their nodes), dropped at its end. The kept views are marked too.
    _dry_views: dict[Hashable, _Kept] | None = attrs.field(
        init=False, default=None, eq=False, repr=False
    )
    #: The bit of each node in the kept views' node bitmaps (numbered as first seen), and
    #: the node of each bit.
    _bit_of: dict[str, int] = attrs.field(init=False, factory=dict, eq=False, repr=False)
    _name_of: list[str] = attrs.field(init=False, factory=list, eq=False, repr=False)
    #: Counts the times a row went from no job to some, or back, or a job in a row shrank:
    #: a test may ask whether a row holds cores on any node (``row_empty``).
    _row_changes: int = attrs.field(init=False, default=0, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self._row_of = {
            job: (part, index)
            for part, rows in self.rows.items()
            for index, row in enumerate(rows)
            for job in row
        }

    def _touch(self, allocation: Allocation | None) -> None:
        """The nodes of ``allocation`` change: mark them in the kept views that hold
        them."""
        if allocation is None or not (self._views or self._dry_views):
            return
        nodes = self._nodes_mask(allocation.cores)
        if allocation.memory:
            nodes |= self._nodes_mask(allocation.memory)
        for kept in self._views.values():
            if kept.nodes & nodes:
                kept.changed |= kept.nodes & nodes
        for kept in (self._dry_views or {}).values():
            if kept.nodes & nodes:
                kept.changed |= kept.nodes & nodes

    def _nodes_mask(self, names: Iterable[str]) -> int:
        """``names`` as a bitmap of this usage's node numbering (new names get new bits)."""
        bit_of = self._bit_of
        bits = []
        for name in names:
            bit = bit_of.get(name)
            if bit is None:
                bit = bit_of[name] = len(bit_of)
                self._name_of.append(name)
            bits.append(bit)
        return bitmap_of(bits)

    def view_on(self, nodes: Sequence[str], key: Hashable | None = None) -> View:
        """``View.of(self, nodes)``: the one made last for these nodes if none of them has
        changed since (a pass tests a partition's jobs on its nodes again and again while
        other partitions' jobs start and end); if a few have, that one with their entries
        made afresh (a job's start or end on a wide partition changes a few of its nodes);
        else one cut from a kept view of more nodes that none changed, or made anew. A dry
        run keeps its own views, from its start to its end (the preemption loop tests after
        each removal: each patches the last); a copy makes a new one each time. ``key``
        stands for the nodes in the memory (by default the tuple of their names; the
        caller's node bitmap saves making the names while the view holds): one node set
        must always come with the same key, and two node sets never with the same one."""
        if self.origin is not None:
            return View.of(self, nodes)
        if key is None:
            key = tuple(nodes)
        dry = self._dry_views
        views = self._views if dry is None else dry
        kept = views.pop(key, None)
        if kept is not None:
            views[key] = kept  # (the most recently used last)
            changed = kept.changed
            if not changed:
                return kept.view
            if changed.bit_count() * _PATCHED_AT_MOST < len(nodes):
                kept.view = View.patched(kept.view, self, self._names_of(changed))
                kept.changed = 0
                kept.refusals = _Refusals(self._row_changes)
                return kept.view
            del views[key]
        listed = tuple(nodes)
        wanted = self._nodes_mask(listed)
        view = None
        for other in views.values() if dry is None else (*dry.values(), *self._views.values()):
            if not other.changed and other.nodes & wanted == wanted:
                # a kept view of these nodes and more, none changed: these nodes' entries
                # are the same (backfill tests the nodes of a partition less those
                # reserved, a set that differs job by job and pass by pass)
                view = View.restricted(other.view, listed)
                break
        if view is None and dry is not None:
            # the kept view of these nodes, with the nodes changed since it was made (the
            # dry run's removals among them) made afresh: the kept one stays as it is
            main = self._views.get(key)
            if main is not None and main.changed.bit_count() * _PATCHED_AT_MOST < len(nodes):
                view = View.patched(main.view, self, self._names_of(main.changed))
        if view is None:
            view = View.of(self, listed)
        if len(views) >= _VIEWS_KEPT:
            del views[next(iter(views))]  # the least recently used
        views[key] = _Kept(view, _Refusals(self._row_changes), wanted)
        return view

    def _names_of(self, mask: int) -> list[str]:
        """The nodes of a bitmap of this usage's node numbering."""
        name_of = self._name_of
        return [name_of[bit] for bit in _bits(mask)]

    def refusals(self, key: Hashable) -> set[Hashable] | None:
        """What tests of the nodes of ``key`` (as given to :meth:`view_on`, which is to be
        called first) found no placement for since their view was made and the rows last
        changed (a test's own key: what else it reads), for the caller to read and add to;
        None in a copy or a dry run."""
        if self._undo is not None or self.origin is not None:
            return None
        kept = self._views.get(key)
        if kept is None:
            return None
        refused = kept.refusals
        if refused.rows != self._row_changes:
            refused.rows = self._row_changes
            refused.keys.clear()
        return refused.keys

    def _index(self, allocation: Allocation) -> None:
        on_node = self._on_node
        if on_node is None:
            return  # no index kept yet (it is built whole when first read)
        if self._shared_index:
            on_node = self._on_node = {name: set(jobs) for name, jobs in on_node.items()}
            self._shared_index = False
        job_id = allocation.job_id
        for name in allocation.cores:
            jobs = on_node.get(name)
            if jobs is None:
                on_node[name] = {job_id}
            else:
                jobs.add(job_id)
        for name in allocation.memory:
            if name not in allocation.cores:
                on_node.setdefault(name, set()).add(job_id)

    def jobs_on(self, name: str) -> Iterable[int]:
        """Ids of the jobs that may hold something on node ``name`` (a superset: check
        ``allocations``)."""
        on_node = self._on_node
        if on_node is None:
            on_node = self._on_node = {}
            self._shared_index = False
            held = list(self.allocations.values())
            if self._undo is not None:  # (the jobs a dry run removed come back at its end)
                held += [allocation for _, allocation, _ in self._undo if allocation]
            for allocation in held:
                self._index(allocation)
        return on_node.get(name, ())

    def copy(self) -> Usage:
        copied = Usage.__new__(Usage)
        copied.allocations = dict(self.allocations)
        copied.rows = {p: [dict(r) for r in rs] for p, rs in self.rows.items()}
        copied._row_of = dict(self._row_of)
        copied._on_node = self._on_node
        copied._shared_index = True
        copied.origin = self
        copied.dropped = []
        copied._undo = None
        copied._views = {}
        copied._dry_views = None
        copied._bit_of = {}
        copied._name_of = []
        copied._row_changes = 0
        return copied

    @property
    def dry(self) -> bool:
        """Whether a dry run is on: ``dropped`` lists the jobs it removed so far."""
        return self._undo is not None

    @contextlib.contextmanager
    def dry_run(self) -> Iterator[Usage]:
        """This usage itself, for removals and unplacings that are undone at the end: the
        preemption loop's trial without a copy of every job. Nothing else may change it
        meanwhile."""
        assert self._undo is None, "one dry run at a time"
        self._undo = []
        self._dry_views = {}
        self.dropped = []
        # what the removals mark, to put back: the kept views stay good for the usage as
        # it was, which the end of the dry run brings back (a view made meanwhile is the
        # dry run's own)
        marks = [(kept, kept.changed) for kept in self._views.values()]
        row_changes = self._row_changes
        try:
            yield self
        finally:
            undo, self._undo = self._undo, None
            self._dry_views = None
            self.dropped = []
            for job_id, allocation, where in reversed(undo):
                if allocation is not None:
                    self.allocations[job_id] = allocation
                if where is not None:
                    self.rows[where[0]][where[1]][job_id] = None
                    self._row_of[job_id] = where
            # (the dry run's views go with it; each removal marked its nodes changed in
            # the kept ones, from which the dry run's views were patched: they are as they
            # were before it, and so are their marks and refusals)
            for kept, changed in marks:
                kept.changed = changed
            self._row_changes = row_changes

    def in_rows(self, job_id: int) -> bool:
        return job_id in self._row_of

    def row_of(self, job_id: int) -> tuple[str, int] | None:
        """(partition, row index) of a job in a row, else None."""
        return self._row_of.get(job_id)

    def _fits(self, row: Iterable[int], allocation: Allocation) -> bool:
        return not any(self.allocations[other].overlaps(allocation.cores) for other in row)

    def place(self, job_id: int, count: int) -> None:
        """Put a job's cores in the first row of its partition where they fit (Slurm puts an
        overflowing job in the last row)."""
        allocation = self.allocations[job_id]
        rows = self.rows.get(allocation.partition)
        if rows is None or len(rows) < count:
            # a new row: every view lists each partition's rows (empty on its nodes or not)
            self._views.clear()
            rows = self.rows.setdefault(allocation.partition, [])
            while len(rows) < count:
                rows.append({})
        # The last row takes the job whether it fits or not: only those before it are
        # tried (with one row, none is: a partition's jobs rarely share, and a row may
        # hold every running job).
        for index in range(max(0, count - 1)):
            if self._fits(rows[index], allocation):
                break
        else:
            index = count - 1
        if not rows[index]:
            self._row_changes += 1
        rows[index][job_id] = None
        self._row_of[job_id] = (allocation.partition, index)
        self._touch(allocation)

    def add(self, allocation: Allocation, count: int) -> None:
        """A new job's allocation (placing it marks its nodes changed)."""
        self.allocations[allocation.job_id] = allocation
        self._index(allocation)
        self.place(allocation.job_id, count)

    def replace(self, allocation: Allocation) -> None:
        """A job's allocation changed in place (it keeps its row): fewer nodes, or the same."""
        self._row_changes += 1  # (its row may hold cores on fewer nodes, or none)
        self._touch(self.allocations.get(allocation.job_id))
        self.allocations[allocation.job_id] = allocation
        self._touch(allocation)
        self._index(allocation)

    def unplace(self, job_id: int) -> None:
        """Take a job's cores out of its row; it keeps its memory."""
        where = self._row_of.pop(job_id, None)
        if where is not None:
            self._touch(self.allocations.get(job_id))
            row = self.rows[where[0]][where[1]]
            del row[job_id]
            if not row:
                self._row_changes += 1
            if self._undo is not None:
                self._undo.append((job_id, None, where))

    def remove(self, job_id: int) -> None:
        self.unplace(job_id)
        allocation = self.allocations.pop(job_id, None)
        if allocation is None:
            return
        self._touch(allocation)
        if self.origin is not None:
            self.dropped.append(job_id)
        if self._undo is not None:
            # (the index keeps the job: readers check ``allocations``)
            self._undo.append((job_id, allocation, None))
            self.dropped.append(job_id)
            return
        on_node = self._on_node
        if on_node is not None and not self._shared_index:
            for name in (*allocation.cores, *allocation.memory):
                jobs = on_node.get(name)
                if jobs is not None:
                    jobs.discard(job_id)
                    if not jobs:
                        del on_node[name]

    def reshape(self, counts: Mapping[str, int]) -> None:
        """Partitions changed: put every placed job back, in job-id order, in the new rows."""
        placed = sorted(job for rows in self.rows.values() for row in rows for job in row)
        self._views.clear()
        self.rows = {}
        self._row_of = {}
        for job_id in placed:
            allocation = self.allocations[job_id]
            self.place(job_id, counts.get(allocation.partition, 1))

    def row_jobs(self) -> Iterator[tuple[str, int, Allocation]]:
        """(partition, row index, allocation) of every job in a row."""
        for part, rows in self.rows.items():
            for index, row in enumerate(rows):
                for job_id in row:
                    yield part, index, self.allocations[job_id]


def _union(target: dict[str, int], masks: Mapping[str, int]) -> None:
    for name, mine in masks.items():
        target[name] = target.get(name, 0) | mine


@attrs.frozen
class View:
    """The usage summed up for one test: memory and state per node, cores per row (each
    node's cores as a core bitmask: bit i is core i)."""

    memory: Mapping[str, int]
    #: Sum of the sharing weights of the jobs in rows (Slurm's node state counter).
    state: Mapping[str, int]
    #: Cores of any job in any row.
    busy: Mapping[str, int]
    #: Cores per partition, and per row of each partition.
    partition_cores: Mapping[str, Mapping[str, int]]
    row_cores: Mapping[str, list[dict[str, int]]]
    #: Cores per partition of the jobs that do not share them.
    private_cores: Mapping[str, Mapping[str, int]]
    #: Per node, the partitions with jobs in rows there.
    partitions_on: Mapping[str, set[str]]
    #: Whether the view covers every node (else only the nodes it was made for: a row
    #: without cores on them may still hold cores elsewhere).
    complete: bool = True

    @classmethod
    def of(cls, usage: Usage, nodes: Iterable[str] | None = None) -> View:
        """The view of ``usage`` on ``nodes`` (every node when None): what a test of a job
        on those nodes reads, built from their jobs alone."""
        if nodes is not None:
            return cls._on(usage, nodes)
        memory: dict[str, int] = {}
        for allocation in usage.allocations.values():
            for name, mib in allocation.memory.items():
                memory[name] = memory.get(name, 0) + mib
        state: dict[str, int] = {}
        busy: dict[str, int] = {}
        partition_cores: dict[str, dict[str, int]] = {}
        row_cores: dict[str, list[dict[str, int]]] = {}
        private_cores: dict[str, dict[str, int]] = {}
        partitions_on: dict[str, set[str]] = {}
        for part, rows in usage.rows.items():
            row_cores[part] = [{} for _ in rows]
        for part, index, allocation in usage.row_jobs():
            masks = allocation.masks()
            _union(busy, masks)
            _union(partition_cores.setdefault(part, {}), masks)
            _union(row_cores[part][index], masks)
            if allocation.sharing is not Sharing.SHARED:
                _union(private_cores.setdefault(part, {}), masks)
            for name in allocation.cores:
                state[name] = state.get(name, 0) + allocation.sharing.weight
                partitions_on.setdefault(name, set()).add(part)
        return cls(memory, state, busy, partition_cores, row_cores, private_cores, partitions_on)

    @classmethod
    def patched(cls, view: View, usage: Usage, names: Sequence[str]) -> View:
        """``view`` (of some nodes, :meth:`_on`) with the entries of its nodes ``names``
        made afresh from ``usage``: the view :meth:`_on` would make now if only those nodes
        changed since ``view`` was made. (The rows of each partition must be as many.)"""
        memory = dict(view.memory)
        state = dict(view.state)
        busy = dict(view.busy)
        partition_cores = {part: dict(cores) for part, cores in view.partition_cores.items()}
        row_cores = {part: [dict(row) for row in rows] for part, rows in view.row_cores.items()}
        private_cores = {part: dict(cores) for part, cores in view.private_cores.items()}
        partitions_on = dict(view.partitions_on)  # (a view never changes its sets)
        for name in names:
            memory.pop(name, None)
            state.pop(name, None)
            busy.pop(name, None)
            partitions_on.pop(name, None)
            for cores in partition_cores.values():
                cores.pop(name, None)
            for cores in private_cores.values():
                cores.pop(name, None)
            for rows in row_cores.values():
                for row in rows:
                    row.pop(name, None)
        for by_part in (partition_cores, private_cores):
            for part in [part for part, cores in by_part.items() if not cores]:
                del by_part[part]  # (a partition with no core left in the view has no entry)
        return cls._filled(
            usage, names, memory, state, busy, partition_cores, row_cores, private_cores,
            partitions_on,
        )  # fmt: skip

    @classmethod
    def restricted(cls, view: View, names: Sequence[str]) -> View:
        """``view`` (of some nodes, :meth:`_on`) restricted to ``names``, some of its nodes:
        the view :meth:`_on` makes of them while none of ``view``'s nodes has changed."""
        wanted = set(names)

        def kept(entries: Mapping[str, _V]) -> dict[str, _V]:
            return {name: value for name, value in entries.items() if name in wanted}

        partition_cores: dict[str, dict[str, int]] = {}
        for part, cores in view.partition_cores.items():
            on = kept(cores)
            if on:  # (a partition with no core on these nodes has no entry)
                partition_cores[part] = on
        private_cores: dict[str, dict[str, int]] = {}
        for part, cores in view.private_cores.items():
            on = kept(cores)
            if on:
                private_cores[part] = on
        return cls(
            kept(view.memory),
            kept(view.state),
            kept(view.busy),
            partition_cores,
            {part: [kept(row) for row in rows] for part, rows in view.row_cores.items()},
            private_cores,
            kept(view.partitions_on),  # (a view never changes its sets: they are shared)
            complete=False,
        )

    @classmethod
    def _on(cls, usage: Usage, nodes: Iterable[str]) -> View:
        """:meth:`of` restricted to ``nodes``: the same entries for those nodes."""
        memory: dict[str, int] = {}
        state: dict[str, int] = {}
        busy: dict[str, int] = {}
        partition_cores: dict[str, dict[str, int]] = {}
        row_cores: dict[str, list[dict[str, int]]] = {}
        private_cores: dict[str, dict[str, int]] = {}
        partitions_on: dict[str, set[str]] = {}
        for part, rows in usage.rows.items():
            row_cores[part] = [{} for _ in rows]
        return cls._filled(
            usage, dict.fromkeys(nodes), memory, state, busy, partition_cores, row_cores,
            private_cores, partitions_on,
        )  # fmt: skip

    @classmethod
    def _filled(
        cls,
        usage: Usage,
        nodes: Iterable[str],
        memory: dict[str, int],
        state: dict[str, int],
        busy: dict[str, int],
        partition_cores: dict[str, dict[str, int]],
        row_cores: dict[str, list[dict[str, int]]],
        private_cores: dict[str, dict[str, int]],
        partitions_on: dict[str, set[str]],
    ) -> View:
        """The view of a node set's maps with the entries of ``nodes`` (each once) added
        from their jobs."""
        allocations = usage.allocations
        row_of = usage._row_of
        shared = Sharing.SHARED
        for name in nodes:
            for job_id in usage.jobs_on(name):
                allocation = allocations.get(job_id)
                if allocation is None:
                    continue
                mib = allocation.memory.get(name)
                if mib is not None:
                    memory[name] = memory.get(name, 0) + mib
                where = row_of.get(job_id)
                if where is None:
                    continue
                cores = allocation.masks().get(name)
                if cores is None:
                    continue
                part, index = where
                busy[name] = busy.get(name, 0) | cores
                on = partition_cores.get(part)
                if on is None:
                    on = partition_cores[part] = {}
                on[name] = on.get(name, 0) | cores
                on = row_cores[part][index]
                on[name] = on.get(name, 0) | cores
                if allocation.sharing is not shared:
                    on = private_cores.get(part)
                    if on is None:
                        on = private_cores[part] = {}
                    on[name] = on.get(name, 0) | cores
                state[name] = state.get(name, 0) + allocation.sharing.weight
                on_node = partitions_on.get(name)
                if on_node is None:
                    partitions_on[name] = {part}
                else:
                    on_node.add(part)
        return cls(
            memory, state, busy, partition_cores, row_cores, private_cores, partitions_on,
            complete=False,
        )  # fmt: skip


def nodes_key(nodes: Sequence[str]) -> Hashable:
    """The key of a node set for :meth:`Usage.view_on` and :meth:`Usage.refusals`: a node
    bitmap's mask (in table order, one node set per mask; its names are made only when a
    view must be), else the tuple of the names."""
    if type(nodes) is NodeBitmap or isinstance(nodes, NodeBitmap):  # (the ABC check is slow)
        return nodes.mask
    return tuple(nodes)


def row_empty(usage: Usage, partition: str, index: int) -> bool:
    """Whether row ``index`` of ``partition`` holds no core on any node."""
    rows = usage.rows.get(partition, [])
    if index >= len(rows):
        return True
    allocations = usage.allocations
    return not any(any(allocations[job].cores.values()) for job in rows[index])
