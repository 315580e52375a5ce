"""Benchmark: load and check large configurations (issue 31, amplification).

Run:  python bench/bench_conf_scale.py [--nodes 10000 50000 100000] [--shapes disjoint overlap]

For each node count N it writes a slurm.conf with ``NodeName=n[1-N] CPUs=1`` (in ranges of at
most 50,000, Slurm's cap on one range being 65,536) and N/100 partitions, and times, in a
fresh child process each, what ``plurm conf check`` does (``conf.load`` and ``render``)
followed by ``Cluster.from_config`` (what ``plurm simulate`` builds first). It prints the wall
time and the child's peak resident memory (``ru_maxrss``).

Shapes:
  disjoint  each partition holds its own 100 nodes (N/100 partitions of 100 nodes);
  overlap   each partition holds N/10 nodes starting 100 nodes after the previous one's start,
            wrapping around, so each node is in about 100 partitions (the total membership is
            N*N/1000: 10 million for N=100,000);
  down      disjoint, plus one DownNodes line naming every node.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = """
import json, resource, sys, time
start = time.perf_counter()
from plurm import conf
from plurm.conf.render import render
from plurm.model.cluster import Cluster
config = conf.load(sys.argv[1])
text = render(config)
loaded = time.perf_counter()
cluster = Cluster.from_config(config)
built = time.perf_counter()
print(json.dumps({
    "check": loaded - start,
    "cluster": built - loaded,
    "members": sum(len(part.nodes) for part in config.partitions),
    "rendered": len(text),
    "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def _ranges(first: int, last: int) -> str:
    parts = []
    while first <= last:
        end = min(last, first + 49_999)
        parts.append(f"{first}-{end}")
        first = end + 1
    return "n[" + ",".join(parts) + "]"


def generate(nodes: int, shape: str) -> str:
    """The slurm.conf of ``nodes`` nodes and ``nodes // 100`` partitions of ``shape``."""
    lines = ["ClusterName=bench", "SlurmctldHost=head", f"NodeName={_ranges(1, nodes)} CPUs=1"]
    count = nodes // 100
    for index in range(count):
        first = index * 100 + 1
        if shape == "overlap":
            last = first + nodes // 10 - 1
            spec = _ranges(first, min(nodes, last))
            if last > nodes:
                spec += "," + _ranges(1, last - nodes)
        else:
            spec = _ranges(first, first + 99)
        default = " Default=YES" if index == 0 else ""
        lines.append(f"PartitionName=p{index} Nodes={spec}{default}")
    if shape == "down":
        lines.append(f"DownNodes={_ranges(1, nodes)} Reason=bench")
    return "\n".join(lines) + "\n"


def measure(path: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[10_000, 50_000, 100_000])
    parser.add_argument(
        "--shapes", nargs="+", default=["disjoint", "overlap", "down"],
        choices=["disjoint", "overlap", "down"],
    )  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for shape in args.shapes:
            for nodes in args.nodes:
                path = Path(folder) / f"{shape}{nodes}.conf"
                path.write_text(generate(nodes, shape))
                r = measure(path)
                print(
                    f"{shape:8} {nodes:>7} nodes {nodes // 100:>5} partitions "
                    f"{int(r['members']):>9} memberships: check {r['check']:6.2f} s, "
                    f"Cluster.from_config {r['cluster']:5.2f} s, peak {r['peak_mib']:6.0f} MiB",
                    flush=True,
                )


if __name__ == "__main__":
    main()
