"""Benchmark: expand (and compress back) a 100,000-host hostlist.

Run:  python bench/bench_hostlist.py [--hosts 100000] [--repeat 5]

The expression is the one a real site writes: a few ranges of at most 65,536 hosts each
(Slurm's per-range cap), zero-padded. It prints the best and median wall times.
"""

from __future__ import annotations

import argparse
import statistics
import time

from plurm import hostlist


def expression(hosts: int) -> str:
    parts = []
    start = 0
    rack = 0
    while start < hosts:
        count = min(50_000, hosts - start)
        parts.append(f"rack{rack}n[{0:05d}-{count - 1:05d}]")
        start += count
        rack += 1
    return ",".join(parts)


def best_and_median(function: object, repeat: int) -> tuple[float, float]:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()  # type: ignore[operator]
        timings.append(time.perf_counter() - start)
    return min(timings), statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    text = expression(args.hosts)
    names = hostlist.expand(text)
    assert len(names) == args.hosts
    assert hostlist.compress(names) == text
    best, median = best_and_median(lambda: hostlist.expand(text), args.repeat)
    print(f"expand {args.hosts} hosts: best {best:.3f} s, median {median:.3f} s")
    best, median = best_and_median(lambda: hostlist.compress(names), args.repeat)
    print(f"compress {args.hosts} hosts: best {best:.3f} s, median {median:.3f} s")


if __name__ == "__main__":
    main()
