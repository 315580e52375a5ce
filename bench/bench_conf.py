"""Benchmark: parse a generated slurm.conf of 10,000 nodes and 200 partitions.

Run:  python bench/bench_conf.py [--nodes 10000] [--partitions 200] [--repeat 5]

The file has one NodeName line per node (the slow shape: 10,000 lines to parse, where a
real site would write a few hostlist ranges), 200 PartitionName lines of 50 nodes each
given as hostlists, a DEFAULT record and the usual global keys. It prints the best and
median wall time of the whole load (read, grammar, build) over the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from plurm import conf


def generate(nodes: int, partitions: int) -> str:
    lines = [
        "ClusterName=bench",
        "SlurmctldHost=head(10.0.0.1)",
        "SelectType=select/cons_res",
        "SelectTypeParameters=CR_Core_Memory",
        "PreemptType=preempt/partition_prio",
        "PreemptMode=SUSPEND,GANG",
        "SchedulerParameters=bf_window=2880,bf_max_job_test=1000",
        "NodeName=DEFAULT Sockets=2 CoresPerSocket=16 ThreadsPerCore=2 RealMemory=256000",
    ]
    lines += [
        f"NodeName=n{index:05d} Weight={1 + index % 4} Features=f{index % 8}"
        for index in range(nodes)
    ]
    lines.append("PartitionName=DEFAULT MaxTime=2-00:00:00 OverSubscribe=FORCE:1")
    per = max(1, nodes // partitions)
    for index in range(partitions):
        first = (index * per) % nodes
        last = min(nodes - 1, first + per - 1)
        lines.append(
            f"PartitionName=p{index:03d} Nodes=n[{first:05d}-{last:05d}] "
            f"PriorityTier={1 + index % 5} Default={'YES' if index == 0 else 'NO'}"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "slurm.conf"
        path.write_text(generate(args.nodes, args.partitions))
        timings = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            config = conf.load(path)
            timings.append(time.perf_counter() - start)
    assert len(config.node_names) == args.nodes and len(config.partitions) == args.partitions
    print(
        f"parse {args.nodes} nodes / {args.partitions} partitions: "
        f"best {min(timings):.3f} s, median {statistics.median(timings):.3f} s "
        f"({args.repeat} runs)"
    )


if __name__ == "__main__":
    main()
