"""Benchmark: one pass's queue order (sched/builtin's ``sched_queue_order``) on a long queue.

Run:  python bench/bench_queue.py [--jobs 50000] [--repeat 20]

Orders N pending jobs (one in 50 in a higher-tier partition, three jobs per submit second,
all of priority 1: ties on every field but the job id) as each scheduling pass does, and
prints the mean time per pass, beside the same order computed the way it was before the
sixth round (a key tuple per job, one sort), as a check that both give the same order.
"""

from __future__ import annotations

import argparse
import time

from plurm import conf
from plurm.builtin.sched_builtin import BuiltinScheduler
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, never_preempts
from plurm.registry import PluginContext

CONFIG = (
    "ClusterName=c\nSlurmctldHost=h\nNodeName=n[1-4] CPUs=1\n"
    "PartitionName=low Nodes=ALL Default=YES PriorityTier=1\n"
    "PartitionName=high Nodes=ALL PriorityTier=7\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    config = conf.parse_text(CONFIG)
    cluster = Cluster.from_config(config)
    order = BuiltinScheduler(PluginContext(config, "sched/builtin"))
    jobs = [
        Job(i + 1, JobRequest(), float(i // 3), "high" if i % 50 == 0 else "low")
        for i in range(args.jobs)
    ]
    tiers = {name: part.priority_tier for name, part in cluster.partitions.items()}

    def one_key_per_job() -> list[Job]:
        keyed = [
            ((-tiers[job.partition], -job.priority, job.submit_time, job.job_id), job)
            for job in jobs
        ]
        keyed.sort(key=lambda pair: pair[0])
        return [job for _, job in keyed]

    timings = {}
    for name, run in (
        ("sched_queue_order", lambda: order.sched_queue_order(jobs, never_preempts, cluster)),
        ("a key tuple per job", one_key_per_job),
    ):
        started = time.perf_counter()
        for _ in range(args.repeat):
            result = run()
        timings[name] = (time.perf_counter() - started) / args.repeat * 1000
        print(f"{name:22} {timings[name]:8.1f} ms a pass ({args.jobs} pending jobs)")
    assert order.sched_queue_order(jobs, never_preempts, cluster) == one_key_per_job()
    assert result == one_key_per_job()
    print("same order: yes")


if __name__ == "__main__":
    main()
