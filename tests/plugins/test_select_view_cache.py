"""select/cons_res keeps the view of a node set from test to test while none of its nodes
changes (``Usage.view_on``): after any sequence of starts, ends, suspensions, resumptions,
shrinks, dry runs and reshapes, the view it gives is the one made afresh."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from plurm_select_cons_res.needs import Sharing
from plurm_select_cons_res.usage import Allocation, Usage, View

NODES = ("n1", "n2", "n3", "n4")

_OP = st.one_of(
    st.tuples(
        st.just("add"),
        st.integers(1, 3),  # job id
        st.sampled_from(["a", "b"]),  # partition
        st.integers(1, 15),  # nodes (a bitmap)
        st.integers(1, 15),  # cores on each (a bitmap)
        st.integers(0, 2),  # memory per node
        st.sampled_from(list(Sharing)),
        st.integers(1, 2),  # the partition's rows
    ),
    st.tuples(st.sampled_from(["remove", "unplace", "shrink"]), st.integers(1, 3)),
    st.tuples(st.just("place"), st.integers(1, 3), st.integers(1, 3)),
    st.tuples(st.just("dry"), st.lists(st.integers(1, 3), max_size=3), st.integers(1, 15)),
    st.tuples(st.just("reshape"), st.integers(1, 3)),
    st.tuples(st.just("view"), st.integers(0, 15)),
)


def _names(mask: int) -> list[str]:
    return [name for index, name in enumerate(NODES) if mask >> index & 1]


def _check(usage: Usage, mask: int) -> None:
    nodes = _names(mask)
    assert usage.view_on(nodes) == View.of(usage, nodes)


_ADD = ("add", 1, "a", 3, 1, 2, Sharing.SHARED, 1)


@settings(max_examples=600, deadline=None, derandomize=True)
@given(st.lists(_OP, max_size=30))
# a suspended job resumes; one leaves that only held memory; a job shrinks; one is
# replaced by a job of the same id on other nodes
@example([_ADD, ("unplace", 1), ("place", 1, 1)])
@example([_ADD, ("unplace", 1), ("remove", 1)])
@example([_ADD, ("shrink", 1)])
@example([_ADD, ("remove", 1), ("add", 1, "a", 12, 1, 2, Sharing.SHARED, 1)])
def test_a_kept_view_is_the_view_made_afresh(ops: list[tuple[object, ...]]) -> None:
    usage = Usage()
    for op in ops:
        kind = op[0]
        if kind == "add":
            _, job_id, partition, nodes, cores, memory, sharing, rows = op
            assert isinstance(job_id, int) and isinstance(nodes, int)
            assert isinstance(cores, int) and isinstance(memory, int)
            assert isinstance(partition, str) and isinstance(sharing, Sharing)
            assert isinstance(rows, int)
            if job_id in usage.allocations:
                continue
            names = _names(nodes)
            taken = frozenset(core for core in range(4) if cores >> core & 1)
            usage.add(
                Allocation(
                    job_id,
                    partition,
                    dict.fromkeys(names, taken),
                    dict.fromkeys(names, len(taken)),
                    dict.fromkeys(names, memory) if memory else {},
                    sharing,
                ),
                rows,
            )
        elif kind in ("remove", "unplace", "shrink"):
            job_id = op[1]
            assert isinstance(job_id, int)
            if kind == "remove":
                usage.remove(job_id)
            elif kind == "unplace":
                usage.unplace(job_id)
            else:
                allocation = usage.allocations.get(job_id)
                if allocation is None or len(allocation.cores) < 2:
                    continue
                kept = allocation.nodes[1:]
                usage.replace(
                    Allocation(
                        job_id,
                        allocation.partition,
                        {name: allocation.cores[name] for name in kept},
                        {name: allocation.cpus[name] for name in kept},
                        {n: m for n, m in allocation.memory.items() if n in kept},
                        allocation.sharing,
                    )
                )
        elif kind == "place":
            _, job_id, count = op
            assert isinstance(job_id, int) and isinstance(count, int)
            if job_id in usage.allocations and not usage.in_rows(job_id):
                usage.place(job_id, count)
        elif kind == "dry":
            _, gone, mask = op
            assert isinstance(gone, list) and isinstance(mask, int)
            with usage.dry_run() as trial:
                for job_id in gone:
                    trial.remove(job_id)
                    _check(trial, mask)  # (a dry run's views are made afresh)
        elif kind == "reshape":
            count = op[1]
            assert isinstance(count, int)
            usage.reshape({"a": count, "b": count})
        else:
            mask = op[1]
            assert isinstance(mask, int)
            _check(usage, mask)
        # views kept from before this step, and each one-node view
        _check(usage, 15)
        _check(usage, 3)
        for index in range(len(NODES)):
            _check(usage, 1 << index)
