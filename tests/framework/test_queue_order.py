"""The builtin queue order: Slurm's key (higher PriorityTier, higher priority, earlier
submission, lower job id), however the pending jobs come in."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from plurm import conf
from plurm.builtin.sched_builtin import BuiltinScheduler
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, never_preempts
from plurm.registry import PluginContext

CONFIG = conf.parse_text(
    "ClusterName=c\nSlurmctldHost=h\nNodeName=n[1-4] CPUs=1\n"
    "PartitionName=low Nodes=ALL Default=YES PriorityTier=1\n"
    "PartitionName=also_low Nodes=ALL PriorityTier=1\n"
    "PartitionName=high Nodes=ALL PriorityTier=7\n"
)
CLUSTER = Cluster.from_config(CONFIG)
ORDER = BuiltinScheduler(PluginContext(CONFIG, "sched/builtin"))

# few values, so that many jobs tie on every field but the job id
_JOB = st.tuples(
    st.sampled_from(["low", "also_low", "high"]),
    st.integers(min_value=-2, max_value=2),  # priority (--nice can make it negative)
    st.sampled_from([0.0, 1.5, 3.0]),  # submit time
)


@given(st.lists(_JOB, max_size=40), st.randoms(use_true_random=False))
def test_the_queue_is_in_key_order_whatever_the_input_order(
    specs: list[tuple[str, int, float]], rng: object
) -> None:
    jobs = []
    for job_id, (partition, priority, submit) in enumerate(specs, start=1):
        job = Job(job_id, JobRequest(), submit, partition)
        job.priority = priority
        jobs.append(job)
    shuffled = list(jobs)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    tier = {"low": 1, "also_low": 1, "high": 7}
    expected = sorted(
        jobs, key=lambda job: (-tier[job.partition], -job.priority, job.submit_time, job.job_id)
    )
    for given_order in (jobs, shuffled):
        assert ORDER.sched_queue_order(given_order, never_preempts, CLUSTER) == expected


def test_without_a_kept_queue_every_pass_asks_the_queue_order_even_with_none_pending(
    tmp_path: Path,
) -> None:
    """sched_queue_order is called at the start of every scheduling pass: a pass that finds
    no pending job skips its work only when the queue is kept (sort key), never this call."""
    from plurm.testing.cluster import HookRecorder, JobBuilder, build_cluster

    cluster = build_cluster(
        "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        "PreemptType=preempt/qos\nPreemptMode=SUSPEND,GANG\n"
        "NodeName=n[1-2] CPUs=2\nPartitionName=p Nodes=ALL Default=YES\n",
        tmp_path,
        qos_text="QOS=low\nQOS=high Preempt=low\n",
    )
    assert not cluster.controller._pending.kept
    recorder = HookRecorder(cluster.plugins.manager)
    cluster.submit(JobBuilder().nodes(1).runtime(30))
    cluster.run_until(200)
    # the pass after the submission, and the one after the job's end (nothing pending)
    assert recorder.names().count("sched_queue_order") == 2
    recorder.close()
