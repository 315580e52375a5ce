"""select/cons_res keeps the view of a node set from test to test while none of its nodes
changes (``Usage.view_on``): after any sequence of starts, ends, suspensions, resumptions,
shrinks, dry runs and reshapes, the view it gives is the one made afresh."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from plurm_select_cons_res import usage as usage_module
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


def _allocation(
    job_id: int, partition: str, nodes: int, cores: int, memory: int, sharing: Sharing
) -> Allocation:
    """The same cores (a bitmap of four) on each node of ``nodes`` (a bitmap)."""
    names = _names(nodes)
    taken = frozenset(core for core in range(4) if cores >> core & 1)
    return Allocation(
        job_id,
        partition,
        dict.fromkeys(names, taken),
        dict.fromkeys(names, len(taken)),
        dict.fromkeys(names, memory) if memory else {},
        sharing,
    )


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
@pytest.mark.parametrize("patched_at_most", [4, 1])
def test_a_kept_view_is_the_view_made_afresh(
    patched_at_most: int, ops: list[tuple[object, ...]]
) -> None:
    """With a view patched where few of its nodes changed (one in four, the plugin's own
    rule: a one-node change of the 4-node view remakes it) and wherever some node did not
    change (one in one), the kept view is the one made afresh."""
    before = usage_module._PATCHED_AT_MOST
    usage_module._PATCHED_AT_MOST = patched_at_most
    try:
        _replay_ops(ops)
    finally:
        usage_module._PATCHED_AT_MOST = before


def _replay_ops(ops: list[tuple[object, ...]]) -> None:
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
            usage.add(_allocation(job_id, partition, nodes, cores, memory, sharing), rows)
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


_TEST = st.tuples(
    st.just("test"),
    st.integers(1, 15),  # nodes
    st.sampled_from(["a", "b", "c"]),  # partition
    st.integers(1, 10),  # tasks
    st.integers(1, 2),  # CPUs per task
    st.integers(1, 3),  # nodes at least
    st.sampled_from(list(Sharing)),
)
_PLACED = st.tuples(
    st.just("add"),
    st.integers(1, 3),
    st.sampled_from(["a", "b", "c"]),
    st.integers(1, 15),
    st.integers(1, 15),
    st.just(0),
    st.sampled_from(list(Sharing)),
    st.integers(1, 2),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(
        st.one_of(
            _TEST, _PLACED, st.tuples(st.sampled_from(["remove", "unplace"]), st.integers(1, 3))
        ),
        max_size=24,
    ),
    st.booleans(),
)
# a refusal on two nodes; a job leaves one of them, which a patched view must not keep
@example(
    [
        ("test", 3, "a", 1, 1, 2, Sharing.SHARED),
        ("add", 1, "b", 1, 1, 0, Sharing.RESERVED, 1),
        ("add", 2, "b", 1, 1, 0, Sharing.SHARED, 1),
        ("remove", 1),
    ],
    False,
)
@pytest.mark.parametrize("patched_at_most", [4, 1])
def test_a_refused_test_is_made_again_once_what_it_reads_changed(
    patched_at_most: int, ops: list[tuple[object, ...]], gang: bool
) -> None:
    """A test that found no placement is answered from memory (``Usage.refusals``) only
    while nothing it reads changed: over random starts, ends and suspensions in partitions
    of two tiers, with and without gang scheduling, every answer is the one the plugin's
    reference (the whole usage, no memory) gives; with views remade and patched alike."""
    before = usage_module._PATCHED_AT_MOST
    usage_module._PATCHED_AT_MOST = patched_at_most
    try:
        _ask_again(ops, gang)
    finally:
        usage_module._PATCHED_AT_MOST = before


def _ask_again(ops: list[tuple[object, ...]], gang: bool) -> None:
    import attrs

    from plurm import conf
    from plurm.model.cluster import Cluster
    from plurm.registry import PluginContext
    from plurm_select_cons_res.needs import Needs
    from plurm_select_cons_res.plugin import ConsResSelect

    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nSelectType=select/cons_res\n"
        "SelectTypeParameters=CR_Core\nPreemptType=preempt/partition_prio\n"
        f"PreemptMode={'SUSPEND,GANG' if gang else 'REQUEUE'}\nJobRequeue=1\n"
        "NodeName=n[1-4] CPUs=4\n"
        "PartitionName=a Nodes=ALL Default=YES PriorityTier=1 OverSubscribe=FORCE:2\n"
        "PartitionName=b Nodes=ALL PriorityTier=1\n"
        "PartitionName=c Nodes=ALL PriorityTier=2 OverSubscribe=FORCE:1\n"
    )
    cluster = Cluster.from_config(config)
    select = ConsResSelect(PluginContext(config, "select/cons_res"))
    select.select_node_init(cluster)
    usage = select.usage
    tester = select._tester(cluster)
    reference = attrs.evolve(tester, reference=True)
    asked: list[tuple[Needs, list[str]]] = []  # every test so far, asked again at each step
    for op in ops:
        kind = op[0]
        if kind == "test":
            _, mask, _, tasks, per_task, least, sharing = op
            assert isinstance(mask, int)
            assert isinstance(tasks, int) and isinstance(per_task, int)
            assert isinstance(least, int) and isinstance(sharing, Sharing)
            nodes = _names(mask)
            asked.append(
                (Needs(tasks, per_task, min(least, len(nodes)), None, (), False, sharing), nodes)
            )
        elif kind == "add":
            _, job_id, partition, nodes, cores, _, sharing, _ = op
            assert isinstance(job_id, int) and isinstance(nodes, int) and isinstance(cores, int)
            assert isinstance(partition, str) and isinstance(sharing, Sharing)
            if job_id in usage.allocations:
                continue
            usage.add(
                _allocation(job_id, partition, nodes, cores, 0, sharing), {"a": 2}.get(partition, 1)
            )
        else:
            job_id = op[1]
            assert isinstance(job_id, int)
            (usage.remove if kind == "remove" else usage.unplace)(job_id)
        for needs, nodes in asked:
            # as names and as a node bitmap (the memory keys each its own way)
            bitmap = cluster.bitmap(cluster.mask_of(nodes))
            for partition in ("a", "b", "c"):  # (one memory for the nodes: keyed apart)
                expected = reference.test(needs, nodes, partition, usage)
                assert tester.test(needs, nodes, partition, usage) == expected
                assert tester.test(needs, bitmap, partition, usage) == expected
