"""Benchmark: a large replay with preemption (>= 300,000 jobs, >= 5,000 nodes, >= 30 partitions).

Run:  python bench/bench_large.py [--jobs N | --quick] [--seed 2024] [--time-scale 1.0]
                                  [--shape nodes|cores] [--timeout SECONDS]

Makes the workload with ``bench/synth_large.py`` if it is missing (its defaults: 304,000
jobs at the sources' own arrival rates (``--time-scale 0.5``: twice them), 5,120 one-CPU
nodes, 32 partitions plus ``high`` over 1,280 of the nodes, preempt/partition_prio with
SUSPEND,GANG and REQUEUE partitions, a high-priority class of wide jobs that preempts (or,
with ``--high-class sample``, 2 % of all jobs, which did not); see that script),
then runs exactly (``--shape cores``: the same partitions and jobs on 16- and 32-core nodes
under select/cons_res, files ``large-SEED-wide-cores.*``; see synth_large.py)::

    plurm simulate --trace bench/data/large-SEED-wide.swf.gz \\
        --conf bench/data/large-SEED-wide.conf --map bench/data/large-SEED-wide.toml \\
        --out DIR --jobs N --quiet

as a subprocess and reports its wall time, CPU time and peak RSS (``getrusage`` of the
child), the rate in jobs per second, and from ``summary.json`` the mean wait and the
preemptions, to show that preemption happened. ``--jobs`` replays a prefix (the first N jobs
by submit time); the full-trace time is then *extrapolated* linearly from the prefix's rate,
and the output says so (a lower bound when, as here, the rate falls as the queues grow).
``--timeout`` stops a run that takes too long (it is then reported as not finished).
``--progress`` shows the CLI's progress bar (and cleaning report) instead of ``--quiet``.
``--check-python`` then runs the same replay again on the Python reference of the compiled
core (``PLURM_PURE_PYTHON=1``), reports its times too and checks that its ``jobs.csv`` is
byte for byte the compiled run's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pure_check import same_as_python
from synth_large import HERE, generate, workload_stem

TOTAL = 32 * 9500


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="replay the first N jobs")
    parser.add_argument("--quick", action="store_true", help="the first 2,000 jobs")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--time-scale", type=float, default=1.0)
    parser.add_argument(
        "--high-class",
        choices=("wide", "sample"),
        default="wide",
        help="the high-priority class (see synth_large.py; sample: the workload before the "
        "fifth round, which did not preempt at the sources' rates)",
    )
    parser.add_argument(
        "--shape",
        choices=("nodes", "cores"),
        default="nodes",
        help="one-CPU nodes under select/linear, or 16- and 32-core nodes under select/cons_res",
    )
    parser.add_argument("--timeout", type=float, default=None)
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument(
        "--progress", action="store_true", help="without --quiet: the progress bar on stderr"
    )
    parser.add_argument(
        "--check-python",
        action="store_true",
        help="also run the Python reference (PLURM_PURE_PYTHON=1): same jobs.csv?",
    )
    args = parser.parse_args()
    jobs = 2000 if args.quick and args.jobs is None else args.jobs
    stem = workload_stem(args.data, args.seed, args.time_scale, args.high_class, args.shape)
    swf, conf, mapping = (Path(f"{stem}{s}") for s in (".swf.gz", ".conf", ".toml"))
    if not (swf.exists() and conf.exists() and mapping.exists()):
        print(f"synthesizing {swf} ...", flush=True)
        generate(
            args.data,
            args.seed,
            time_scale=args.time_scale,
            high_class=args.high_class,
            shape=args.shape,
        )
    plurm = Path(sys.executable).parent / "plurm"
    with tempfile.TemporaryDirectory() as out:
        command = [str(plurm), "simulate", "--trace", str(swf), "--conf", str(conf)]
        command += ["--map", str(mapping), "--out", out]
        if not args.progress:
            command.append("--quiet")
        if jobs is not None:
            command += ["--jobs", str(jobs)]
        print("$", " ".join(command), flush=True)
        load = os.getloadavg()[0]
        started = time.perf_counter()
        finished = True
        try:
            subprocess.run(command, check=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            finished = False
        wall = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        summary = json.loads((Path(out) / "summary.json").read_text()) if finished else {}
        if finished and args.check_python and not same_as_python(command, Path(out)):
            raise SystemExit("the compiled core decided otherwise than its Python reference")
    cpu = usage.ru_utime + usage.ru_stime
    count = jobs if jobs is not None else TOTAL
    print(f"load average at start {load:.2f} (2 cores)")
    if not finished:
        print(f"NOT FINISHED: stopped after {wall:.0f} s (--timeout); CPU {cpu:.0f} s")
        return
    rate = count / wall
    print(f"{'jobs':>8} {'wall s':>8} {'CPU s':>8} {'jobs/s':>8} {'peak RSS MB':>12}")
    print(f"{count:>8} {wall:>8.1f} {cpu:>8.1f} {rate:>8.0f} {usage.ru_maxrss / 1024:>12.0f}")
    print(
        f"ended {summary['ended']}, mean wait {summary['wait_mean']:.0f} s, "
        f"preemptions {summary['preemptions']}, high-priority jobs "
        f"{summary['high_priority']['jobs']} (mean wait "
        f"{summary['high_priority']['wait_mean']:.0f} s)"
    )
    if jobs is not None and jobs < TOTAL:
        print(
            f"EXTRAPOLATED (linear, from this prefix's rate; not measured): all {TOTAL} jobs "
            f"in about {TOTAL / rate:.0f} s wall, {TOTAL / count * cpu:.0f} s CPU; a lower "
            "bound if the rate falls as the queues grow"
        )
    print("goal: all 304,000 jobs in under 60 s wall and under 1 GB peak RSS")


if __name__ == "__main__":
    main()
