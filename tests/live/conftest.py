"""A live cluster for the tests: plurmctld and four plurmd (4 CPUs each) on 127.0.0.1, on
free ports, in a temporary directory, started with ``plurm cluster up``'s code and stopped
with ``plurm cluster down``'s, which stops every process they started by pid."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest

from plurm.live import local
from plurm.testing.ports import free_ports

BIN = Path(sys.executable).parent


CONF = """\
ClusterName=live
SlurmctldHost=localhost
SlurmctldPort={ctld}
AuthType=auth/none
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool/%n
SlurmdParameters=config_overrides
SlurmdTimeout={slurmd_timeout}
KillWait=2
MessageTimeout=5
SchedulerParameters={scheduler_parameters}
{extra}
{nodes}
{partitions}
"""


@attrs.define
class LiveCluster:
    """A running test cluster and the way to run Slurm's commands against it."""

    root: Path
    conf: Path
    env: dict[str, str]

    def run(
        self, *argv: str, check: bool = True, cwd: Path | None = None, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run a command (sbatch, squeue, ...) installed with Plurm, with SLURM_CONF set."""
        command = [str(BIN / argv[0]), *argv[1:]]
        result = subprocess.run(
            command,
            env=self.env,
            cwd=cwd or self.root,
            text=True,
            capture_output=True,
            timeout=60,
            input=input,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"{argv} exited {result.returncode}: {result.stderr}")
        return result

    def sbatch(self, *argv: str) -> int:
        return int(self.run("sbatch", "--parsable", *argv).stdout.strip())

    def state(self, job_id: int) -> str:
        out = self.run("squeue", "-h", "-t", "all", "-j", str(job_id), "-o", "%T").stdout
        return out.strip()

    def wait_for(
        self, predicate: Callable[[], bool], timeout: float = 30.0, what: str = "condition"
    ) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.2)
        raise AssertionError(f"timed out after {timeout} s waiting for {what}")

    def up(self) -> None:
        local.up(self.conf, timeout=60)

    def down(self) -> None:
        local.down(self.conf)


def make_cluster(
    root: Path,
    *,
    nodes: int = 4,
    cpus: int = 4,
    slurmd_timeout: int = 300,
    extra: str = "",
    partitions: str | None = None,
    scheduler_parameters: str = "sched_interval=1",
) -> LiveCluster:
    ports = free_ports(nodes + 1)
    node_lines = "\n".join(
        f"NodeName=n{i + 1} NodeHostname=localhost Port={ports[i + 1]} CPUs={cpus} "
        f"RealMemory=1000 State=UNKNOWN"
        for i in range(nodes)
    )
    partitions = partitions or f"PartitionName=debug Nodes=n[1-{nodes}] Default=YES State=UP"
    text = CONF.format(
        ctld=ports[0],
        root=root,
        slurmd_timeout=slurmd_timeout,
        extra=extra,
        nodes=node_lines,
        partitions=partitions,
        scheduler_parameters=scheduler_parameters,
    )
    conf = root / "slurm.conf"
    conf.write_text(text)
    # the commands' configuration cache (plurm.conf.cache) stays in the test's directory
    env = dict(
        os.environ,
        SLURM_CONF=str(conf),
        PATH=f"{BIN}:{os.environ.get('PATH', '')}",
        XDG_CACHE_HOME=str(root / "cache"),
    )
    return LiveCluster(root, conf, env)


@pytest.fixture
def live_cluster(tmp_path: Path) -> Iterator[LiveCluster]:
    cluster = make_cluster(tmp_path)
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.down()
