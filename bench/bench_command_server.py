"""Benchmark: what a resident per-user command server would save per ``sbatch``, against a
running cluster (``SLURM_CONF`` set; e.g. one ``bench_live.py --keep`` left, or
``plurm cluster up``).

Run:  SLURM_CONF=... python bench/bench_command_server.py [--count 40]

Plurm's commands are a new Python process each, and most of a command's CPU is its start:
the interpreter and the modules it imports. A server that kept them imported would fork
once per command. This measures both sides of such a server without building it:

* server side: this process imports ``plurm.live.client`` and ``plurm.commands.sbatch``
  once, then forks a child per submission that runs ``sbatch --wrap true`` as the console
  script does (the child's CPU, from RUSAGE_CHILDREN);
* client side: a Python start that imports only what passing argv, environment, working
  directory and descriptors over a Unix socket needs (socket, array, json, os);
* today: the ``sbatch`` console script itself, run as ``bench_live.py`` runs it.

Like bench_live.py it unsets PYTHONDONTWRITEBYTECODE and writes bytecode under its own
PYTHONPYCACHEPREFIX, so that every process runs from compiled bytecode.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BIN = Path(sys.executable).parent


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(what: str, count: int, once: Callable[[], None]) -> None:
    once()  # warm-up (bytecode, caches)
    cpu, started = _children_cpu(), time.perf_counter()
    for _ in range(count):
        once()
    cpu, wall = _children_cpu() - cpu, time.perf_counter() - started
    print(
        f"{what:12} {cpu / count * 1000:6.1f} ms CPU, {wall / count * 1000:6.1f} ms wall each "
        f"(load average {os.getloadavg()[0]:.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=40)
    count = parser.parse_args().count
    if "SLURM_CONF" not in os.environ:
        raise SystemExit("set SLURM_CONF to a running cluster's slurm.conf")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.setdefault("PYTHONPYCACHEPREFIX", tempfile.mkdtemp(prefix="bench-pyc-"))
    sbatch = str(BIN / "sbatch")
    # as the console script runs: its directory first on sys.path (the commands' cache of
    # the auth plugin's location is keyed by sys.path)
    sys.path[0] = str(BIN)
    sys.argv = [sbatch]
    import plurm.commands.sbatch  # noqa: F401 - imported once, as a server would keep it
    from plurm.live.client import run

    devnull = os.open(os.devnull, os.O_WRONLY)

    def forked() -> None:
        pid = os.fork()
        if pid == 0:
            os.dup2(devnull, 1)
            os._exit(run("sbatch", ["--wrap", "true"]))
        os.waitpid(pid, 0)

    def client() -> None:
        code = "import array, json, os, socket, sys"
        subprocess.run([sys.executable, "-c", code], check=True)

    def today() -> None:
        subprocess.run([sbatch, "--wrap", "true"], stdout=subprocess.DEVNULL, check=True)

    measure("server side", count, forked)
    measure("client side", count, client)
    measure("sbatch today", count, today)


if __name__ == "__main__":
    main()
