"""Benchmark: replay the SDSC-SP2 trace (128 one-CPU nodes, select/linear, sched/backfill).

Run:  python bench/bench_replay.py [--jobs N] [--trace PATH] [--conf SLURM_CONF] [--map TOML]
                                  [--one-cpu]

Reads and cleans the trace, then replays its first N cleaned jobs (all by default: 54,034)
with ``plurm.sim.trace.replay`` and prints the wall time of each part, the replay's CPU time
(steadier on a busy machine) and the mean wait, so that a faster replay can be checked for
the same decisions. ``--conf`` and ``--map`` replay on another cluster (``bench/replay_*.conf``:
preemption, 5,000 nodes) instead of SDSC-SP2's own 128 nodes.

``--one-cpu`` gives every job one processor. No queue then forms on SDSC-SP2's 128 nodes
(each job starts on the pass after its submit), and no backfill pass has anything to plan:
the replay costs only each job's own path through the controller (submit, start, end, and
the record). That is the floor under any replay of the same jobs, whatever the scheduler.

``--check-python`` then replays the same jobs with ``plurm simulate``, compiled and on the
Python reference (``PLURM_PURE_PYTHON=1``), and checks that the two ``jobs.csv`` are the same
byte for byte (``bench/pure_check.py``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import attrs
from pure_check import simulate_both

from plurm import conf
from plurm.sim.trace import TraceMapping, replay
from plurm.workload import clean, read_swf

TRACE = Path(__file__).resolve().parent.parent.parent / "shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz"
CONF = """ClusterName=sdsc
SlurmctldHost=head
SelectType=select/linear
NodeName=n[001-128] CPUs=1 RealMemory=1000
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--conf", type=Path, default=None, help="slurm.conf (default: SDSC's)")
    parser.add_argument("--map", type=Path, default=None, help="trace mapping (TOML)")
    parser.add_argument(
        "--one-cpu", action="store_true", help="every job asks for one processor (no queue forms)"
    )
    parser.add_argument(
        "--check-python",
        action="store_true",
        help="then replay with plurm simulate, compiled and on the Python reference "
        "(PLURM_PURE_PYTHON=1): the same jobs.csv? (not with --one-cpu)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    cleaned = clean(read_swf(args.trace))
    if args.jobs is not None:
        cleaned = attrs.evolve(cleaned, jobs=cleaned.jobs[: args.jobs])
    if args.one_cpu:
        jobs = tuple(attrs.evolve(job, processors=1) for job in cleaned.jobs)
        cleaned = attrs.evolve(cleaned, jobs=jobs)
    read = time.perf_counter() - started
    mapping = TraceMapping.load(args.map) if args.map is not None else None
    with tempfile.TemporaryDirectory() as directory:
        path = args.conf
        if path is None:
            path = Path(directory) / "slurm.conf"
            path.write_text(CONF)
        config = conf.load(path)
        started = time.perf_counter()
        cpu_started = time.process_time()
        records = replay(cleaned, config, mapping)
        simulated = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
    waits = [r.wait for r in records if r.wait is not None]
    print(
        f"{len(records)} jobs: read+clean {read:.2f} s, replay {simulated:.1f} s "
        f"(CPU {cpu:.1f} s; {len(records) / simulated:.0f} jobs/s), "
        f"mean wait {statistics.fmean(waits):.0f} s, "
        f"{1e6 * cpu / len(records):.0f} us CPU per job"
    )
    if args.check_python and not args.one_cpu:
        with tempfile.TemporaryDirectory() as directory:
            path = args.conf
            if path is None:
                path = Path(directory) / "slurm.conf"
                path.write_text(CONF)
            arguments = ["--trace", str(args.trace), "--conf", str(path)]
            arguments += ["--map", str(args.map)] if args.map is not None else []
            arguments += ["--jobs", str(args.jobs)] if args.jobs is not None else []
            if not simulate_both(arguments):
                raise SystemExit("the compiled core decided otherwise than its Python reference")


if __name__ == "__main__":
    main()
