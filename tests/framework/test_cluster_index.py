"""Cluster's job indexes: the lists jobs_in and jobs_by_partition keep between state changes
must follow every added job and every state change."""

from __future__ import annotations

import random

from plurm import conf
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState


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
