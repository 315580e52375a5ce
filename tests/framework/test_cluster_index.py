"""Cluster's indexes: the lists jobs_in and jobs_by_partition keep between state changes must
follow every added job and every state change, and the out-of-service node bitmap every
change of a node's condition or responsiveness."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plurm import conf
from plurm.model import cluster as cluster_module
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState
from plurm.model.node import NodeCondition


def test_job_indexes_follow_every_change() -> None:
    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nNodeName=n[1-4] CPUs=1\n"
        "PartitionName=a Nodes=ALL Default=YES\nPartitionName=b Nodes=n[1-2]\n"
    )
    cluster = Cluster.from_config(config)
    rng = random.Random(2)
    states = (JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETED)
    for job_id in range(1, 200):
        if rng.random() < 0.4 or not cluster.jobs:
            job = Job(job_id, JobRequest(), 0.0, rng.choice(("a", "b")))
            cluster.add_job(job)
        else:
            job = cluster.job(rng.choice(list(cluster.jobs)))
            cluster.set_state(job, rng.choice(states))
        for wanted in ((JobState.RUNNING, JobState.SUSPENDED), (JobState.PENDING,)):
            expected = sorted(
                (j for j in cluster.jobs.values() if j.state in wanted), key=lambda j: j.job_id
            )
            assert list(cluster.jobs_in(*wanted)) == expected
            grouped = cluster.jobs_by_partition(*wanted)
            assert {name: list(jobs) for name, jobs in grouped.items()} == {
                name: [j for j in expected if j.partition == name]
                for name in {j.partition for j in expected}
            }


def test_the_out_of_service_bitmap_follows_every_node_change() -> None:
    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nNodeName=n[1-6] CPUs=1\n"
        "DownNodes=n2 State=DOWN Reason=r\nDownNodes=n5 State=DRAIN Reason=r\n"
        "PartitionName=a Nodes=ALL Default=YES\n"
    )
    cluster = Cluster.from_config(config)
    assert list(cluster.bitmap(cluster.out_of_service)) == ["n2", "n5"]
    rng = random.Random(3)
    conditions = (None, NodeCondition(down=True), NodeCondition(drain=True))
    for _ in range(300):
        name = rng.choice(config.node_names)
        if rng.random() < 0.5:
            cluster.set_condition(name, rng.choice(conditions))
        else:
            cluster.set_responding(name, rng.random() < 0.5)
        down, silent = cluster.node_down, cluster.not_responding
        out = [n for n in config.node_names if n in down or n in silent]
        assert list(cluster.bitmap(cluster.out_of_service)) == out
        assert [n for n in config.node_names if not cluster.node_available(n)] == out


def test_mask_of_a_tuple_answers_the_same_for_equal_tuples() -> None:
    """mask_of remembers a tuple's answer; the same tuple, an equal one (another object)
    and many short-lived tuples get their own right answers."""
    from plurm import conf
    from plurm.model.cluster import Cluster

    cluster = Cluster.from_config(
        conf.parse_text("ClusterName=c\nSlurmctldHost=h\nNodeName=n[1-8] CPUs=1\n")
    )
    first = ("n1", "n3")
    assert cluster.mask_of(first) == 0b101
    assert cluster.mask_of(first) == 0b101  # remembered
    assert cluster.mask_of(tuple(["n1", "n3"])) == 0b101  # equal, not the same object
    for index in range(200):  # new tuples, some of which may reuse a dead tuple's id
        names = (f"n{index % 8 + 1}", f"n{(index + 3) % 8 + 1}")
        expected = (1 << (index % 8)) | (1 << ((index + 3) % 8))
        assert cluster.mask_of(names) == expected
        del names


def _twelve_nodes() -> tuple[Cluster, tuple[str, ...]]:
    """A cluster of n1 to n12, and its node table (n10 sorts before n2 as text: table order
    is not name order)."""
    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nNodeName=n[1-12] CPUs=1\n"
        "PartitionName=a Nodes=ALL Default=YES\n"
    )
    return Cluster.from_config(config), tuple(config.node_names)


def test_names_come_once_each_in_table_order_whatever_order_they_are_given_in() -> None:
    cluster, table = _twelve_nodes()
    rng = random.Random(4)
    for _ in range(300):
        names = rng.choices(table, k=rng.randint(0, 8))
        draw = rng.random()
        if draw < 0.3:
            names = sorted(set(names), key=table.index)  # in order already: the fast path
        elif draw < 0.6:
            # a stretch of the table (the fastest path), in new string objects
            start = rng.randint(0, len(table) - 1)
            names = ["".join(name) for name in table[start : start + rng.randint(1, 5)]]
            if rng.random() < 0.3:
                names.insert(rng.randint(0, len(names)), rng.choice(names))  # a repeat
        expected = tuple(name for name in table if name in names)
        assert cluster.in_table_order(names) == expected
        assert cluster.in_table_order(iter(names)) == expected


def test_mask_of_answers_for_the_names_whatever_tuple_objects_carry_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """mask_of remembers node tuples by value and by object: a tuple dropped and another
    made in its memory (the same id) still gets its own mask, as do equal copies, and the
    memos start afresh when full."""
    monkeypatch.setattr(cluster_module, "_SAME_MEMO_SIZE", 8)
    monkeypatch.setattr(cluster_module, "_MASK_MEMO_SIZE", 16)
    cluster, table = _twelve_nodes()
    rng = random.Random(5)
    kept = []
    for _ in range(2000):
        names = tuple(rng.sample(table, rng.randint(0, 5)))
        expected = sum(1 << table.index(name) for name in names)
        assert cluster.mask_of(names) == expected
        assert cluster.mask_of(names) == expected  # the same object again
        assert cluster.mask_of(tuple(list(names))) == expected  # an equal copy
        if rng.random() < 0.3:
            kept.append(names)  # some stay alive; the others' ids are free for new tuples
        else:
            del names
    for names in kept:
        assert cluster.mask_of(names) == sum(1 << table.index(name) for name in names)


def test_the_node_indexes_follow_the_node_table_and_leave_attribute_reads_plain() -> None:
    """Cluster's node_index and node_bits, and the configuration's node table and indexes,
    are worked out at construction (the node table never changes). Neither class may get a
    __getattr__ (attrs adds one for a functools.cached_property): on Python 3.11 it sends
    every attribute read of the class through a slow hook, and the core reads both in its
    hottest paths."""
    from plurm.conf.model import SlurmConfig

    config = conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nNodeName=b[1-2] CPUs=2\nNodeName=a1 CPUs=1\n"
        "PartitionName=p Nodes=ALL Default=YES\n"
    )
    cluster = Cluster.from_config(config)
    # the node table is in name order, whatever the order of the lines
    assert config.node_names == ("a1", "b1", "b2")
    assert config.node("a1").cpus == 1 and config.node("b2").cpus == 2
    assert cluster.node_index == {"a1": 0, "b1": 1, "b2": 2}
    assert dict(cluster.node_bits) == {"a1": 1, "b1": 2, "b2": 4}
    assert cluster.node_bits["b2"] == 4
    assert "a1" in cluster.node_bits and "x" not in cluster.node_bits
    for kind in (Cluster, SlurmConfig):
        assert not any("__getattr__" in vars(base) for base in kind.__mro__), kind


@given(st.lists(st.integers(min_value=0, max_value=200), max_size=60))
def test_a_mask_of_indexes_sets_exactly_those_bits_in_runs_or_not(indexes: list[int]) -> None:
    """Runs of consecutive indexes are set with one shift each; any order, any repeats."""
    expected = 0
    for index in indexes:
        expected |= 1 << index
    assert cluster_module.mask_of_indexes(indexes) == expected
    assert cluster_module.mask_of_indexes(sorted(set(indexes))) == expected
