"""Run one AccaSim 1.1.3 simulation (EASY backfilling, FIFO order, first-fit) and write JSON.

This script runs inside AccaSim's own venv (``bench/.accasim-venv``, made by
``bench/bench_accasim.py``), never with Plurm: it imports nothing from Plurm.

Run:  .accasim-venv/bin/python bench/accasim_runner.py TRACE.swf --nodes 128 --cores 1 --out R.json

AccaSim reads a plain SWF file (not gzip) with its own reader: each processor of a job becomes
one request of one core (``requested_nodes`` = processors), and its first-fit allocator packs
as many of them on a node as it has free cores. The system has ``--nodes`` nodes of
``--cores`` cores and no memory resource (AccaSim's EASY needs "mem" left out of the system
when the trace gives no memory). Its scheduling output and statistics files are off, so the
timed part is the simulation itself; each job's queue, start and end times are collected by
wrapping ``EventManager.finish_event`` (one list append per job).
"""

from __future__ import annotations

import argparse
import collections
import collections.abc
import json
import resource
import statistics
import tempfile
import time
from pathlib import Path

# AccaSim 1.1.3 was written for Python <= 3.9: ``from collections import Mapping``.
for _name in ("Mapping", "MutableMapping", "Sequence", "Iterable", "Callable"):
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))

from accasim.base.allocator_class import FirstFit  # noqa: E402
from accasim.base.event_class import EventManager  # noqa: E402
from accasim.base.scheduler_class import EASYBackfilling  # noqa: E402
from accasim.base.simulator_class import Simulator  # noqa: E402

TAU = 10.0


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM): unlike ru_maxrss, not inherited through
    fork and exec from the parent that started it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def protect(dispatcher: EASYBackfilling) -> None:
    """AccaSim 1.1.3's EASYBackfilling backfills with ``reserved_nodes=[]``, so FirstFit never
    keeps a backfilled job off the blocked job's reservation. With this, the reserved nodes
    are passed on; FirstFit then lets a job backfill only if it ends before the reservation
    starts (it skips every node on overlap, not only the reserved ones)."""
    allocator = dispatcher.nonauto_allocator
    allocate = allocator.allocating_method

    def allocating_method(es, cur_time, skip=False, reserved_time=None, reserved_nodes=None):  # type: ignore[no-untyped-def]
        if reserved_time is not None and reserved_nodes == []:
            reserved_nodes = list(dispatcher._reserved_slot[1])
        return allocate(es, cur_time, skip, reserved_time, reserved_nodes)

    allocator.allocating_method = allocating_method


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path, help="a plain (not gzip) SWF file")
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--protect-reservation",
        action="store_true",
        help="pass the blocked job's reserved nodes to the backfill allocation (see below)",
    )
    args = parser.parse_args()

    jobs: list[tuple[int, int, int, int]] = []
    original = EventManager.finish_event

    def finish_event(self: EventManager, e: object) -> None:
        original(self, e)
        jobs.append((int(e.id), e.queued_time, e.start_time, e.end_time))  # type: ignore[attr-defined]

    EventManager.finish_event = finish_event  # type: ignore[method-assign]

    with tempfile.TemporaryDirectory() as directory:
        system = Path(directory) / "system.json"
        system.write_text(
            json.dumps(
                {
                    "groups": {"node": {"core": args.cores}},
                    "resources": {"node": args.nodes},
                    "equivalence": {"processor": {"core": 1}},
                    "start_time": 0,
                }
            )
        )
        wall = time.perf_counter()
        cpu = time.process_time()
        dispatcher = EASYBackfilling(FirstFit())
        if args.protect_reservation:
            protect(dispatcher)
        simulator = Simulator(
            str(args.trace),
            str(system),
            dispatcher,
            RESULTS_FOLDER_PATH=directory,
            scheduling_output=False,
            statistics_output=False,
            show_statistics=False,
            LOG_LEVEL="WARNING",
        )
        simulator.start_simulation()
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
        inner = simulator.end_simulation_time - simulator.start_simulation_time

    waits = [start - queued for _, queued, start, _ in jobs]
    runs = [end - start for _, _, start, end in jobs]
    bounded = [max(1.0, (w + r) / max(r, TAU)) for w, r in zip(waits, runs, strict=True)]
    result = {
        "simulator": "AccaSim 1.1.3",
        "dispatcher": dispatcher.get_id(),
        "jobs": len(jobs),
        "loaded": simulator.loaded_jobs,
        "rejected": simulator.rejected_jobs,
        "wall_s": wall,
        "simulation_s": inner,
        "cpu_s": cpu,
        "peak_rss_mb": peak_rss_mb(),
        "wait_mean": statistics.fmean(waits) if waits else 0.0,
        "wait_median": statistics.median(waits) if waits else 0.0,
        "bounded_slowdown_mean": statistics.fmean(bounded) if bounded else 0.0,
        "records": sorted(jobs),
    }
    args.out.write_text(json.dumps(result))


if __name__ == "__main__":
    main()
