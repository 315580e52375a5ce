"""Benchmark: the controller's memory per 1,000 nodes, with an empty queue.

Run:  python bench/bench_memory.py [--nodes 1000 10000] [--quick]

For each size and each selector (select/linear, and select/cons_res with CR_Core_Memory on
32-CPU nodes), a slurm.conf with one ``NodeName`` range and four partitions over all nodes
is parsed first (outside the measure); then ``tracemalloc`` measures what building the
simulated controller (``Simulation``: plugins, cluster state, select's per-node state, clock,
executor) allocates and keeps. Reported: the kept bytes, per 1,000 nodes, and the marginal
cost per 1,000 nodes between the smallest and largest size (which leaves out fixed costs
such as the plugins). A 10-node controller is built first, unmeasured, so that imports and
one-time caches are not counted. The parsed configuration is reported apart (the controller
refers to it; config + controller is the whole footprint).
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc

from plurm import conf
from plurm.conf.model import SlurmConfig
from plurm.sim.session import Simulation

SELECTORS = {
    "select/linear": ("SelectType=select/linear\n", 1),
    "select/cons_res": ("SelectType=select/cons_res\nSelectTypeParameters=CR_Core_Memory\n", 32),
}


def config_text(nodes: int, select: str) -> str:
    lines, cpus = SELECTORS[select]
    width = len(str(nodes))
    parts = "".join(
        f"PartitionName=p{i} Nodes=ALL{' Default=YES' if i == 0 else ''} MaxTime=INFINITE\n"
        for i in range(4)
    )
    return (
        f"ClusterName=mem\nSlurmctldHost=head\n{lines}"
        f"NodeName=n[{0:0{width}d}-{nodes - 1:0{width}d}] CPUs={cpus} RealMemory=64000\n{parts}"
    )


def measure(build: object, *args: object) -> tuple[int, object]:
    """Bytes ``build(*args)`` allocated and still holds, and its result."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = build(*args)  # type: ignore[operator]
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return after - before, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--quick", action="store_true", help="1,000 and 2,000 nodes")
    args = parser.parse_args()
    sizes = [1000, 2000] if args.quick else sorted(args.nodes)
    print(
        f"{'selector':16} {'nodes':>6} {'config MB':>10} {'controller MB':>14} "
        f"{'MB/1000 nodes':>14} {'with config':>12}"
    )
    for select in SELECTORS:
        kept: dict[int, int] = {}
        # Warm up: imports, plugin loading and caches happen once per process, not per node.
        Simulation(conf.parse_text(config_text(10, select)))
        for nodes in sizes:
            config_bytes, config = measure(conf.parse_text, config_text(nodes, select))
            assert isinstance(config, SlurmConfig)
            controller_bytes, simulation = measure(Simulation, config)
            kept[nodes] = controller_bytes
            print(
                f"{select:16} {nodes:>6} {config_bytes / 2**20:>10.2f} "
                f"{controller_bytes / 2**20:>14.2f} "
                f"{controller_bytes / 2**20 / (nodes / 1000):>14.3f} "
                f"{(controller_bytes + config_bytes) / 2**20 / (nodes / 1000):>12.3f}"
            )
            del simulation, config
        if len(sizes) > 1:
            low, high = sizes[0], sizes[-1]
            marginal = (kept[high] - kept[low]) / 2**20 / ((high - low) / 1000)
            print(f"{select:16} marginal {marginal:.3f} MB per 1,000 nodes ({low} -> {high})")
    print("goal: <= 2 MB of controller state per 1,000 nodes")


if __name__ == "__main__":
    main()
