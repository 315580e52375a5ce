"""The plugin's accounting: each job's allocation, and the rows of each partition.

A partition has as many *rows* as jobs may share a core in it (OverSubscribe=FORCE:n or YES:n
gives n, anything else 1). A row is a set of jobs whose cores do not overlap; a job goes into
the first row of its partition where it fits. Rows are counted per partition: jobs of other
partitions never take a row's place. Running and gang-suspended jobs stay in their rows; a job
an administrator suspended leaves its row (its cores are free) but keeps its memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import attrs

from plurm_select_cons_res.needs import Sharing

__all__ = ["Allocation", "Runs", "Usage", "View"]

Cores = Mapping[str, frozenset[int]]
#: Runs of consecutive nodes, as (first table index, last + 1, core bitmask), where every
#: node of a run gets the same cores and no node had cores held when the placement was made:
#: ``FreeCores``'s hint that lets it hold and release them by slices instead of node by node.
Runs = tuple[tuple[int, int, int], ...]


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

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(self.cores)

    def overlaps(self, cores: Cores) -> bool:
        return any(cores.get(name, frozenset()) & mine for name, mine in self.cores.items())


@attrs.define
class Usage:
    """Every allocation, and which jobs sit in which row of which partition."""

    allocations: dict[int, Allocation] = attrs.Factory(dict)
    rows: dict[str, list[list[int]]] = attrs.Factory(dict)
    #: The row each job in a row is in (the list itself): every start and end asks, and a
    #: row may hold every running job. Rebuilt whenever ``rows`` is replaced.
    _row_of: dict[int, list[int]] = attrs.field(init=False, factory=dict, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self._row_of = {job: row for rows in self.rows.values() for row in rows for job in row}

    def copy(self) -> Usage:
        return Usage(
            dict(self.allocations), {p: [list(r) for r in rs] for p, rs in self.rows.items()}
        )

    def in_rows(self, job_id: int) -> bool:
        return job_id in self._row_of

    def _fits(self, row: Iterable[int], allocation: Allocation) -> bool:
        return not any(self.allocations[other].overlaps(allocation.cores) for other in row)

    def place(self, job_id: int, count: int) -> None:
        """Put a job's cores in the first row of its partition where they fit (Slurm puts an
        overflowing job in the last row)."""
        allocation = self.allocations[job_id]
        rows = self.rows.setdefault(allocation.partition, [])
        while len(rows) < count:
            rows.append([])
        # The last row takes the job whether it fits or not: only those before it are
        # tried (with one row, none is: a partition's jobs rarely share, and a row may
        # hold every running job).
        for row in rows[: max(0, count - 1)]:
            if self._fits(row, allocation):
                break
        else:
            row = rows[count - 1]
        row.append(job_id)
        self._row_of[job_id] = row

    def add(self, allocation: Allocation, count: int) -> None:
        self.allocations[allocation.job_id] = allocation
        self.place(allocation.job_id, count)

    def unplace(self, job_id: int) -> None:
        """Take a job's cores out of its row; it keeps its memory."""
        row = self._row_of.pop(job_id, None)
        if row is not None:
            row.remove(job_id)

    def remove(self, job_id: int) -> None:
        self.unplace(job_id)
        self.allocations.pop(job_id, None)

    def reshape(self, counts: Mapping[str, int]) -> None:
        """Partitions changed: put every placed job back, in job-id order, in the new rows."""
        placed = sorted(job for rows in self.rows.values() for row in rows for job in row)
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


def _union(target: dict[str, set[int]], cores: Cores) -> None:
    for name, mine in cores.items():
        target.setdefault(name, set()).update(mine)


@attrs.frozen
class View:
    """The usage summed up for one test: memory and state per node, cores per row."""

    memory: Mapping[str, int]
    #: Sum of the sharing weights of the jobs in rows (Slurm's node state counter).
    state: Mapping[str, int]
    #: Cores of any job in any row.
    busy: Mapping[str, set[int]]
    #: Cores per partition, and per row of each partition.
    partition_cores: Mapping[str, Mapping[str, set[int]]]
    row_cores: Mapping[str, list[dict[str, set[int]]]]
    #: Cores per partition of the jobs that do not share them.
    private_cores: Mapping[str, Mapping[str, set[int]]]
    #: Per node, the partitions with jobs in rows there.
    partitions_on: Mapping[str, set[str]]

    @classmethod
    def of(cls, usage: Usage) -> View:
        memory: dict[str, int] = {}
        for allocation in usage.allocations.values():
            for name, mib in allocation.memory.items():
                memory[name] = memory.get(name, 0) + mib
        state: dict[str, int] = {}
        busy: dict[str, set[int]] = {}
        partition_cores: dict[str, dict[str, set[int]]] = {}
        row_cores: dict[str, list[dict[str, set[int]]]] = {}
        private_cores: dict[str, dict[str, set[int]]] = {}
        partitions_on: dict[str, set[str]] = {}
        for part, rows in usage.rows.items():
            row_cores[part] = [{} for _ in rows]
        for part, index, allocation in usage.row_jobs():
            _union(busy, allocation.cores)
            _union(partition_cores.setdefault(part, {}), allocation.cores)
            _union(row_cores[part][index], allocation.cores)
            if allocation.sharing is not Sharing.SHARED:
                _union(private_cores.setdefault(part, {}), allocation.cores)
            for name in allocation.cores:
                state[name] = state.get(name, 0) + allocation.sharing.weight
                partitions_on.setdefault(name, set()).add(part)
        return cls(memory, state, busy, partition_cores, row_cores, private_cores, partitions_on)
