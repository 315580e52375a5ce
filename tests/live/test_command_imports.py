"""A live command imports what it needs and nothing else: once the configuration cache is
warm, sbatch loads neither the configuration parser, nor the controller, nor the other
commands, nor cattrs, importlib.metadata, http.client or aiohttp (each a large part of a
command's start-up, see docs/performance.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from plurm.testing.ports import free_ports

PROBE = """
import sys
sys.argv = ["sbatch", "--wrap", "true"]
from plurm.live.client import main
try:
    main()
except SystemExit as stop:
    status = stop.code
loaded = sorted(
    name for name in sys.modules
    if name.split(".")[0] in ("lark", "cattrs", "aiohttp", "http", "email")
    or name in ("importlib.metadata", "plurm.conf.syntax", "plurm.controller",
                "plurm.commands.dispatch", "plurm.commands.squeue", "plurm.model.cluster")
)
print(status, *loaded)
"""


def test_sbatch_imports_only_what_it_needs(tmp_path: Path) -> None:
    (port,) = free_ports(1)  # nothing listens there: the command fails to reach it
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        f"ClusterName=c\nSlurmctldHost=localhost\nSlurmctldPort={port}\nAuthType=auth/none\n"
        "NodeName=n1 CPUs=2\nPartitionName=p Nodes=ALL Default=YES\n"
    )
    env = dict(os.environ, SLURM_CONF=str(conf), XDG_CACHE_HOME=str(tmp_path / "cache"))
    # sys.path as a console script has it (its own directory first, not the cwd)
    command = [sys.executable, "-I", "-c", f"import sys; sys.path[:0] = {sys.path!r}\n{PROBE}"]
    runs = [
        subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True)
        for _ in range(2)
    ]
    for run in runs:
        assert "Unable to contact slurm controller" in run.stderr, run.stderr
    first, second = (run.stdout.split() for run in runs)
    assert first[0] == second[0] == "1"
    assert "plurm.conf.syntax" in first  # the first run parses, and fills the cache
    assert second[1:] == []  # the second needs none of them
