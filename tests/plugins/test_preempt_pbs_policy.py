"""preempt/pbs's rules, one at a time: preemption levels and a job's preempt priority, the
soft-limit statuses, the percent of walltime left and the ladder, and preempt_targets."""

from __future__ import annotations

import pytest

from plurm import conf
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState

pytest.importorskip("plurm_preempt_pbs")

from plurm_preempt_pbs import policy
from plurm_preempt_pbs.config import parse

SLURM_CONF = """ClusterName=c
SlurmctldHost=h
NodeName=n[1-8] CPUs=1
PartitionName=normal Nodes=ALL Default=YES
PartitionName=express Nodes=ALL
"""


def _job(job_id: int, partition: str = "normal", *, user: str = "alice", **fields: object) -> Job:
    request = JobRequest(user=user, group=f"g{user}", partitions=(partition,))
    return Job(job_id, request, 0.0, partition, **fields)  # type: ignore[arg-type]


def _cluster(*running: Job) -> Cluster:
    cluster = Cluster.from_config(conf.parse_text(SLURM_CONF, qos_text="", plurm_text=""))
    for job in running:
        job.state = JobState.RUNNING
        cluster.add_job(job)
    return cluster


def test_levels_default_express_over_normal_with_queue_priority_added() -> None:
    pbs = parse("", "set queue express priority = 200\n")
    levels = policy.Levels.build(pbs)
    express, normal = _job(1, "express"), _job(2)
    cluster = _cluster()
    assert policy.statuses(pbs, express, cluster) == {"express_queue"}
    assert policy.statuses(pbs, normal, cluster) == frozenset()
    assert levels.value(frozenset({"express_queue"}), 200) == 99000 + 200
    assert levels.value(frozenset(), 0) == 98000
    # A queue just under preempt_queue_prio is not express.
    pbs = parse("", "set queue express priority = 149\n")
    assert policy.statuses(pbs, express, cluster) == frozenset()


def test_the_references_worked_example() -> None:
    # preempt_prio "express_queue, normal_jobs, fairshare+queue_softlimits" with
    # queue_softlimits+server_softlimits standing in for fairshare (which Plurm refuses).
    pbs = parse(
        'preempt_prio: "express_queue, normal_jobs, server_softlimits+queue_softlimits"\n', ""
    )
    levels = policy.Levels.build(pbs)
    both = frozenset({"server_softlimits", "queue_softlimits"})
    assert levels.value(both, 0) == 97000  # the two-status level, matched first
    assert levels.value(frozenset({"queue_softlimits"}), 0) == 98000  # no level: normal
    assert levels.value(frozenset({"express_queue"}), 160) == 99160


def test_a_status_not_in_preempt_prio_counts_as_normal() -> None:
    pbs = parse("", "set queue normal max_run_soft = [u:PBS_GENERIC=1]\n")
    levels = policy.Levels.build(pbs)
    first, second = _job(1), _job(2)
    cluster = _cluster(first, second)
    bits = policy.statuses(pbs, first, cluster)
    assert bits == {"queue_softlimits"}
    assert levels.value(bits, 0) == levels.value(frozenset(), 0) == 98000


def test_soft_limits_count_the_job_itself() -> None:
    pbs = parse("", "set queue normal max_run_soft = [u:PBS_GENERIC=2]\n")
    one, two = _job(1), _job(2)
    cluster = _cluster(one, two)
    # Two running, limit two: neither is over; a third (pending) would put alice over.
    assert policy.statuses(pbs, one, cluster) == frozenset()
    assert policy.statuses(pbs, _job(3), cluster) == {"queue_softlimits"}
    # Another user is not counted; another queue's jobs are not either.
    assert policy.statuses(pbs, _job(4, user="bob"), cluster) == frozenset()
    assert policy.statuses(pbs, _job(5, "express"), cluster) == frozenset()
    three = _job(3)
    cluster = _cluster(one, two, three)
    assert all(
        policy.statuses(pbs, job, cluster) == {"queue_softlimits"} for job in (one, two, three)
    )


def test_server_soft_limits_count_every_queue() -> None:
    pbs = parse("", 'set server max_run_soft = "[o:PBS_ALL=2]"\n')
    cluster = _cluster(_job(1), _job(2, "express", user="bob"))
    assert policy.statuses(pbs, _job(3, user="carol"), cluster) == {"server_softlimits"}


def _timed(job_id: int, minutes: int | None, partition: str = "normal") -> Job:
    request = JobRequest(time_limit=minutes, partitions=(partition,))
    return Job(job_id, request, 0.0, partition, time_limit=minutes, start_time=0.0)


def test_percent_left_and_the_ladder() -> None:
    pbs = parse('preempt_order: "SCR 80 SC 50 S"\n', "")
    job = _timed(1, 600)  # 10 h, the reference's example
    cluster = _cluster()
    for hours, percent, letters in ((1, 90, "SCR"), (3, 70, "SC"), (6, 40, "S")):
        cluster.now = hours * 3600.0
        assert policy.percent_left(job, cluster) == percent
        assert policy.methods(pbs, job, cluster) == letters
    cluster.now = 11 * 3600.0
    assert policy.percent_left(job, cluster) == 1  # past its time


def test_a_job_without_a_walltime_request_takes_the_first_range() -> None:
    pbs = parse('preempt_order: "SCR 80 SC 50 S"\n', "")
    cluster = _cluster()
    cluster.now = 100_000.0
    # A MaxTime caps the job's limit but is no request: the first range.
    job = _timed(1, None)
    job.time_limit = 1440
    assert policy.percent_left(job, cluster) is None
    assert policy.methods(pbs, job, cluster) == "SCR"


def test_a_partitions_default_time_is_the_request() -> None:
    text = SLURM_CONF.replace(
        "PartitionName=express Nodes=ALL", "PartitionName=express Nodes=ALL DefaultTime=10"
    )
    cluster = Cluster.from_config(conf.parse_text(text, qos_text="", plurm_text=""))
    cluster.now = 420.0
    assert policy.percent_left(_timed(1, None, "express"), cluster) == 30


def test_suspended_time_is_not_used_walltime() -> None:
    job = _timed(1, 10)
    job.state = JobState.SUSPENDED
    job.suspend_time = 100.0
    job.pre_suspend_time = 100.0  # ran 100 s, then was suspended
    cluster = _cluster()
    cluster.now = 500.0
    assert policy.percent_left(job, cluster) == 84  # 100 of 600 s used


@pytest.mark.parametrize(
    ("comment", "queues", "none"),
    [
        ("-l preempt_targets=queue=normal,queue=scavenger", {"normal", "scavenger"}, False),
        ("urgent run preempt_targets=queue=normal", {"normal"}, False),
        ("preempt_targets=NONE", set(), True),
        ("preempt_targets=Resource_List.arch=linux", set(), False),
    ],
)
def test_preempt_targets_from_the_comment(comment: str, queues: set[str], none: bool) -> None:
    job = _job(1)
    job.request = JobRequest(comment=comment)
    targets = policy.job_targets(job)
    assert targets is not None
    assert (set(targets.queues), targets.none) == (queues, none)
    assert targets.allows(_job(2, "normal")) is ("normal" in queues)


def test_no_preempt_targets_without_one_in_the_comment() -> None:
    job = _job(1)
    job.request = JobRequest(comment="a comment")
    assert policy.job_targets(job) is None


def test_queue_and_server_default_preempt_targets() -> None:
    pbs = parse(
        "",
        'set queue express resources_default.preempt_targets = "queue=normal"\n'
        "set server resources_default.preempt_targets = NONE\n",
    )
    express, normal = _job(1, "express"), _job(2)
    express_targets = policy.job_targets(express, pbs)
    assert express_targets is not None and express_targets.queues == {"normal"}
    normal_targets = policy.job_targets(normal, pbs)  # the server's default
    assert normal_targets is not None and normal_targets.none
    # A job's own preempt_targets win over the defaults.
    express.request = JobRequest(comment="preempt_targets=queue=express")
    own = policy.job_targets(express, pbs)
    assert own is not None and own.queues == {"express"}
