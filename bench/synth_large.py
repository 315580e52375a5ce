"""Synthesize the large benchmark workload from the shipped traces, deterministically.

Run:  python bench/synth_large.py [--seed 2024] [--partitions 32] [--nodes-per-partition 160]
                                  [--jobs-per-partition 9500] [--time-scale 1.0]
                                  [--high-partitions 8] [--high-class wide|sample]
                                  [--shape nodes|cores] [--out bench/data]

Writes, under ``--out`` (git-ignored):

* ``large-<seed>-wide.swf.gz``: ``partitions x jobs-per-partition`` jobs (304,000 by default;
  with a time scale other than 1, the names end ``-t<scale>``; the ``sample`` high class below
  has no ``-wide``);
* ``large-<seed>-wide.conf``: the cluster, ``partitions x nodes-per-partition`` one-CPU nodes
  (5,120), select/linear, sched/backfill, preempt/partition_prio with PreemptMode=SUSPEND,GANG,
  JobRequeue=1; partition ``pNN`` (PriorityTier=1) owns its own slice of nodes, odd ones with
  PreemptMode=REQUEUE and even ones with PreemptMode=SUSPEND (OverSubscribe=FORCE:1); partition
  ``high`` (PriorityTier=10, OverSubscribe=FORCE:1) spans the nodes of the first
  ``--high-partitions`` partitions (1,280 nodes);
* ``large-<seed>-wide.toml``: the trace mapping, SWF partition ``i`` to ``pNN``, and the
  high-priority class, which preempts.

The high-priority class (``--high-class``):

* ``wide`` (the default): a seeded 10 % of the jobs at least 32 processors wide (a fifth of
  a partition) in the partitions under ``high`` become ``high`` jobs (SWF partition
  ``partitions + 1``), their processors scaled from their partition's 160 nodes to
  ``high``'s 1,280 (times ``--high-partitions``): an urgent class that takes a share of
  several partitions at once. The mapping marks them high priority by
  rule (``[high_priority.match] partition = 33``). At the sources' own rates their partitions
  are busy often enough that these jobs must preempt (REQUEUE in odd partitions, SUSPEND in
  even ones) to start.
* ``sample``: the workload before the fifth round: a seeded 2 % of *all* jobs, keeping their
  sizes, go to ``high`` (``[high_priority] fraction = 0.02``). Such a job is at most 160
  nodes wide, and at the sources' own rates the 1,280 nodes under ``high`` always had room
  for it: the full run preempted nothing.

The shape (``--shape``):

* ``nodes`` (the default): the one-CPU nodes above, select/linear: a job's processors are
  its nodes.
* ``cores``: the same partitions on multi-core nodes under select/cons_res (CR_Core), odd
  partitions with 16-core nodes and even ones with 32-core nodes (122,880 cores in all), and
  the files end ``-cores``. Processor counts are scaled to the partition's cores
  (``nodes-per-partition x cores / MaxProcs`` of the source, when the source is larger) and
  become tasks, one core each, that cons_res packs onto the nodes beside other jobs; the
  wide class takes jobs at least a fifth of their partition's cores wide, scaled to
  ``high``'s cores. The rest is as above: the same streams, partitions, preemption modes
  and high class, so the two shapes differ only by what a node is.

How the jobs are made: the four shipped traces are read and cleaned (``plurm.workload``).
Partition ``i`` takes its jobs from trace ``i mod 4`` (SDSC-SP2, LLNL-Atlas, NASA-iPSC,
Theta), starting at a seeded offset and wrapping round to the trace's start (a wrapped copy
comes one trace span later), so the trace is concatenated with itself as often as needed.
Each partition's stream is rebased to start at time 0, so all partitions load the cluster at
once, and its submit times are multiplied by ``--time-scale`` (1: the sources' own arrival
rates, about 196 simulated days; 0.5: twice those rates, which overloads the partitions so
that their queues grow without bound, a stress test rather than a site); processor counts are scaled
by ``nodes-per-partition / MaxProcs`` of the source (rounded up, at least 1) when the source
machine is larger than a partition, and run and requested times are kept. Jobs are merged
by submit time (ties by partition) and numbered.
"""

from __future__ import annotations

import argparse
import gzip
import math
import random
from pathlib import Path

from plurm.workload import CleanJob, clean, read_swf

HERE = Path(__file__).resolve().parent
TRACES = HERE.parent.parent / "shared" / "traces"
SOURCES = (
    "SDSC-SP2-1998-4.2-cln.swf.gz",
    "LLNL-Atlas-2006-2.1-cln.swf.gz",
    "NASA-iPSC-1993-3.1-cln.swf.gz",
    "theta_2022.swf.gz",
)
HIGH_FRACTION = 0.02  # the sample class: of all jobs
WIDE_FRACTION = 0.1  # the wide class: of the jobs at least WIDE_LEAST processors wide
WIDE_LEAST = 32


#: The cores per node of the ``cores`` shape, partition by partition (odd, even).
CORES = (16, 32)


def workload_stem(
    out: Path, seed: int, time_scale: float, high_class: str = "wide", shape: str = "nodes"
) -> Path:
    """The workload's files without their suffixes: ``large-SEED-wide``, with ``-tSCALE`` for
    a time scale other than 1, without ``-wide`` for the ``sample`` high class, and with
    ``-cores`` for the ``cores`` shape (so that a workload of another kind is never reused
    for this one)."""
    name = f"large-{seed}" + ("-wide" if high_class == "wide" else "")
    name = name if time_scale == 1 else f"{name}-t{time_scale:g}"
    return out / (name if shape == "nodes" else f"{name}-{shape}")


def stream(
    jobs: list[CleanJob], offset: int, count: int, scale: float, width: int, time_scale: float
) -> list[tuple[int, int, int, int]]:
    """``count`` jobs (submit, run, processors, requested) from ``offset``, wrapping round."""
    span = jobs[-1].submit_time - jobs[0].submit_time + 1
    base = jobs[offset].submit_time
    out = []
    for k in range(count):
        laps, index = divmod(offset + k, len(jobs))
        job = jobs[index]
        submit = int((job.submit_time - base + laps * span) * time_scale)
        procs = job.processors if scale >= 1 else max(1, math.ceil(job.processors * scale))
        out.append((submit, job.run_time, min(procs, width), job.requested_time))
    return out


def generate(
    out: Path,
    seed: int,
    partitions: int = 32,
    per_partition: int = 160,
    jobs_per_partition: int = 9500,
    time_scale: float = 1.0,
    high_partitions: int = 8,
    high_class: str = "wide",
    shape: str = "nodes",
) -> tuple[Path, Path, Path]:
    if high_class not in ("wide", "sample"):
        raise ValueError(f"high_class must be 'wide' or 'sample', not {high_class!r}")
    if shape not in ("nodes", "cores"):
        raise ValueError(f"shape must be 'nodes' or 'cores', not {shape!r}")

    def cores(part: int) -> int:
        """The CPUs of each node of partition ``part`` (counted from 0)."""
        return 1 if shape == "nodes" else CORES[part % len(CORES)]

    rng = random.Random(seed)
    traces = [clean(read_swf(TRACES / name)) for name in SOURCES]
    rows: list[tuple[int, int, int, int, int]] = []  # submit, partition, run, procs, req
    for part in range(partitions):
        trace = traces[part % len(traces)]
        jobs = list(trace.jobs)
        size = trace.header.max_procs or max(job.processors for job in jobs)
        capacity = per_partition * cores(part)
        scale = capacity / size
        offset = rng.randrange(len(jobs))
        for submit, run, procs, req in stream(
            jobs, offset, jobs_per_partition, scale, capacity, time_scale
        ):
            rows.append((submit, part + 1, run, procs, req))
    high_part = partitions + 1
    high_capacity = sum(per_partition * cores(part) for part in range(high_partitions))
    if high_class == "wide":
        # drawn after the offsets, so the streams are those of the sample workload
        # (a fifth of the partition: WIDE_LEAST of the one-CPU shape's 160 nodes)
        least = {
            part: per_partition * cores(part - 1) * WIDE_LEAST // 160
            for part in range(1, high_partitions + 1)
        }
        for index, (submit, part, run, procs, req) in enumerate(rows):
            if part <= high_partitions and procs >= least[part] and rng.random() < WIDE_FRACTION:
                wide = min(procs * high_partitions, high_capacity)
                rows[index] = (submit, high_part, run, wide, req)
    rows.sort()
    nodes = partitions * per_partition
    out.mkdir(parents=True, exist_ok=True)
    stem = workload_stem(out, seed, time_scale, high_class, shape)
    swf = Path(f"{stem}.swf.gz")
    header = [
        "; Version: 2.2",
        f"; Note: synthesized by bench/synth_large.py --seed {seed} --time-scale {time_scale}"
        f" from {', '.join(SOURCES)}",
        f"; MaxJobs: {len(rows)}",
        f"; MaxRecords: {len(rows)}",
        f"; MaxNodes: {nodes}",
        f"; MaxProcs: {sum(per_partition * cores(part) for part in range(partitions))}",
        "; UnixStartTime: 0",
        f"; MaxPartitions: {partitions + (high_class == 'wide')}",
    ]
    header += [f"; Partition: {i} p{i:02d}" for i in range(1, partitions + 1)]
    if high_class == "wide":
        header.append(f"; Partition: {high_part} high")
    lines = [*header, ";"]
    for number, (submit, part, run, procs, req) in enumerate(rows, start=1):
        fields = [number, submit, -1, run, procs, -1, -1, procs, req, -1, 1]
        fields += [1 + number % 97, 1, -1, 1, part, -1, -1]
        lines.append(" ".join(map(str, fields)))
    # mtime=0: the same seed gives the same bytes
    with gzip.GzipFile(swf, "wb", mtime=0) as stream_out:
        stream_out.write(("\n".join(lines) + "\n").encode())
    width = len(str(nodes - 1))
    parts = []
    for i in range(1, partitions + 1):
        first = (i - 1) * per_partition
        last = first + per_partition - 1
        mode = (
            "PreemptMode=REQUEUE OverSubscribe=NO"
            if i % 2
            else "PreemptMode=SUSPEND OverSubscribe=FORCE:1"
        )
        parts.append(
            f"PartitionName=p{i:02d} Nodes=n[{first:0{width}d}-{last:0{width}d}]"
            f"{' Default=YES' if i == 1 else ''} PriorityTier=1 MaxTime=INFINITE {mode}"
        )
    last = high_partitions * per_partition - 1
    parts.append(
        f"PartitionName=high Nodes=n[{0:0{width}d}-{last:0{width}d}] PriorityTier=10 "
        "MaxTime=INFINITE OverSubscribe=FORCE:1"
    )
    if shape == "nodes":
        select = "SelectType=select/linear\n"
        node_lines = f"NodeName=n[{0:0{width}d}-{nodes - 1:0{width}d}] CPUs=1 RealMemory=1000\n"
    else:
        select = "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        node_lines = "".join(
            f"NodeName=n[{part * per_partition:0{width}d}-"
            f"{(part + 1) * per_partition - 1:0{width}d}] CPUs={cores(part)} RealMemory=64000\n"
            for part in range(partitions)
        )
    config = Path(f"{stem}.conf")
    config.write_text(
        f"ClusterName=large\nSlurmctldHost=head\n{select}"
        "SchedulerType=sched/backfill\nPreemptType=preempt/partition_prio\n"
        "PreemptMode=SUSPEND,GANG\nJobRequeue=1\n" + node_lines + "\n".join(parts) + "\n"
    )
    mapping = Path(f"{stem}.toml")
    names = "".join(f'{i} = "p{i:02d}"\n' for i in range(1, partitions + 1))
    if high_class == "wide":
        high = '[high_priority]\npartition = "high"\n'
        high += f"[high_priority.match]\npartition = {high_part}\n"
        names += f'{high_part} = "high"\n'
    else:
        high = f'[high_priority]\nfraction = {HIGH_FRACTION}\npartition = "high"\nseed = {seed}\n'
    mapping.write_text("[partitions]\n" + names + high)
    return swf, config, mapping


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--partitions", type=int, default=32)
    parser.add_argument("--nodes-per-partition", type=int, default=160)
    parser.add_argument("--jobs-per-partition", type=int, default=9500)
    parser.add_argument("--time-scale", type=float, default=1.0)
    parser.add_argument("--high-partitions", type=int, default=8)
    parser.add_argument("--high-class", choices=("wide", "sample"), default="wide")
    parser.add_argument("--shape", choices=("nodes", "cores"), default="nodes")
    parser.add_argument("--out", type=Path, default=HERE / "data")
    args = parser.parse_args()
    paths = generate(
        args.out,
        args.seed,
        args.partitions,
        args.nodes_per_partition,
        args.jobs_per_partition,
        args.time_scale,
        args.high_partitions,
        args.high_class,
        args.shape,
    )
    for path in paths:
        print(path)


if __name__ == "__main__":
    main()
