"""Benchmark: the CPU a node daemon spends to start one batch job, through
plurm.live.launcher (what plurmd does for each job).

Run:  python bench/bench_launch.py [--launches 40]

Launches a ``#!/bin/true`` script as the current user, one after the other, each waited for,
and prints the CPU per launch of this process (the daemon's part: writing the script,
forking, reading the child's report, reaping) and of its children (the forked child until
it execs, and the script), with the wall time and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import tempfile
import time

from plurm.live.launcher import Launcher, LaunchSpec


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


async def measure(launches: int) -> None:
    root = tempfile.mkdtemp(prefix="bench-launch-")
    try:
        launcher = Launcher(root)

        def spec(job_id: int) -> LaunchSpec:
            return LaunchSpec(
                job_id=job_id,
                uid=os.getuid(),
                gid=os.getgid(),
                script=b"#!/bin/true\n",
                env={"PATH": "/usr/bin:/bin"},
                work_dir=root,
                stdout=os.path.join(root, f"out{job_id}"),
            )

        await (await launcher.launch(spec(1))).wait()  # warm-up
        own = _cpu(resource.getrusage(resource.RUSAGE_SELF))
        kids = _cpu(resource.getrusage(resource.RUSAGE_CHILDREN))
        started = time.perf_counter()
        for job_id in range(2, launches + 2):
            await (await launcher.launch(spec(job_id))).wait()
        wall = time.perf_counter() - started
        own = _cpu(resource.getrusage(resource.RUSAGE_SELF)) - own
        kids = _cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - kids
        print(
            f"per launch: {own / launches * 1000:.1f} ms CPU daemon, "
            f"{kids / launches * 1000:.1f} ms CPU children, {wall / launches * 1000:.1f} ms wall "
            f"(load average {os.getloadavg()[0]:.1f})"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=40)
    asyncio.run(measure(parser.parse_args().launches))


if __name__ == "__main__":
    main()
