"""Benchmark: read (and clean) the real SWF traces in ../shared/traces.

Run:  python bench/bench_swf.py [TRACE ...] [--repeat 5]

With no TRACE, it reads every ``*.swf.gz`` in ../shared/traces (beside the repository), or,
when that folder is absent, a generated gzip trace of 60,000 jobs shaped like SDSC-SP2 (a
decimal field 6, -1 fields, a header). For each file it prints the best and median wall time
of ``read_swf`` (gunzip, parse, build the records) and of ``clean`` over the repeats.
"""

from __future__ import annotations

import argparse
import gzip
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from plurm.workload import clean, read_swf

TRACES = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"


def generate(path: Path, jobs: int) -> None:
    """A gzip SWF file of ``jobs`` jobs, seeded so that every run reads the same bytes."""
    rng = random.Random(1998)
    rows = ["; Version: 2.2", "; MaxNodes: 128", "; MaxProcs: 128", "; UnixStartTime: 0", ";"]
    submit = 0
    for number in range(1, jobs + 1):
        submit += rng.randrange(0, 2000)
        run = rng.choice([-1, 0, rng.randrange(1, 100_000)])
        procs = rng.choice([1, 2, 4, 8, 16, 32, 64, 128])
        cpu = f"{rng.uniform(0, 100_000):.2f}" if run > 0 else "-1"
        fields = [number, submit, rng.randrange(0, 50_000), run, procs, cpu, -1, procs]
        fields += [rng.choice([-1, 3600, 28800]), -1, rng.choice([0, 1, 5])]
        fields += [rng.randrange(1, 400), rng.randrange(1, 60), -1, rng.randrange(0, 7)]
        fields += [-1, -1, -1]
        rows.append(" ".join(f"{field:>6}" for field in map(str, fields)))
    path.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode()))


def best_and_median(function: Callable[[], object], repeat: int) -> tuple[float, float]:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        timings.append(time.perf_counter() - start)
    return min(timings), statistics.median(timings)


def bench(path: Path, repeat: int) -> None:
    trace = read_swf(path)
    read_best, read_median = best_and_median(lambda: read_swf(path), repeat)
    clean_best, clean_median = best_and_median(lambda: clean(trace), repeat)
    print(
        f"{path.name}: {len(trace.jobs):,} jobs, {path.stat().st_size / 1e6:.1f} MB gz; "
        f"read best {read_best:.3f} s, median {read_median:.3f} s "
        f"({len(trace.jobs) / read_best:,.0f} jobs/s); "
        f"clean best {clean_best:.3f} s, median {clean_median:.3f} s ({repeat} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=60_000, help="size of a generated trace")
    args = parser.parse_args()
    paths = args.traces or (sorted(TRACES.glob("*.swf.gz")) if TRACES.is_dir() else [])
    if paths:
        for path in paths:
            bench(path, args.repeat)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "generated.swf.gz"
        generate(path, args.jobs)
        bench(path, args.repeat)


if __name__ == "__main__":
    main()
