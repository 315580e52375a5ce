"""jobacct_gather/linux and /cgroup in a simulation: a trace's used memory is what its jobs
use, and with OverMemoryKill a job over its limit ends OUT_OF_MEMORY in the replay, at the
first poll after its start; without the plugins the same trace runs as before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from plurm import conf
from plurm.model.job import JobState
from plurm.sim.trace import replay
from plurm.testing import JobBuilder, TestCluster
from plurm.workload import clean, parse_swf

CONF = """ClusterName=t
SlurmctldHost=h
SelectType=select/linear
DefMemPerCPU=100
NodeName=n[1-4] CPUs=2 RealMemory=1000
PartitionName=batch Nodes=ALL Default=YES
"""
GATHER = "JobAcctGatherType={type}\nJobAcctGatherFrequency=task=10\nJobAcctGatherParams={params}\n"

# number submit wait run alloc cpu mem(KB/proc) req_procs req_time req_mem status user group
# exe queue partition preceding think
TRACE = """; MaxProcs: 8
1 0 -1 100 2 -1 51200 2 200 -1 1 1 1 1 1 1 -1 -1
2 0 -1 100 2 -1 409600 2 200 -1 1 1 1 1 1 1 -1 -1
3 0 -1 100 2 -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1
"""


def _replay(tmp_path: Path, extra: str) -> list[tuple[int, float | None, str]]:
    path = tmp_path / "slurm.conf"
    path.write_text(CONF + extra)
    records = replay(clean(parse_swf(TRACE)), conf.load(path))
    return [(r.trace_number, r.end, r.state) for r in records]


@pytest.mark.parametrize("kind", ["jobacct_gather/linux", "jobacct_gather/cgroup"])
def test_a_job_over_its_memory_ends_out_of_memory_in_the_replay(tmp_path: Path, kind: str) -> None:
    # 400 MB per CPU against DefMemPerCPU=100: job 2 is over its limit (800 > 200 MiB on
    # its node); job 1 uses 50 MB per CPU, job 3 says nothing of its memory
    ends = _replay(tmp_path, GATHER.format(type=kind, params="OverMemoryKill"))
    assert ends == [(1, 101.0, "COMPLETED"), (2, 11.0, "OUT_OF_MEMORY"), (3, 101.0, "COMPLETED")]


def test_without_over_memory_kill_or_the_plugin_the_trace_runs_as_before(
    tmp_path: Path,
) -> None:
    plain = _replay(tmp_path, "")
    assert plain == [(1, 101.0, "COMPLETED"), (2, 101.0, "COMPLETED"), (3, 101.0, "COMPLETED")]
    assert _replay(tmp_path, GATHER.format(type="jobacct_gather/linux", params="NoShared")) == (
        plain
    )


def test_a_simulated_job_is_polled_and_ends_out_of_memory(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    cluster = make_cluster(
        "SelectType=select/linear\nJobAcctGatherType=jobacct_gather/linux\n"
        "JobAcctGatherFrequency=5\nJobAcctGatherParams=OverMemoryKill\n"
        "NodeName=n1 CPUs=4 RealMemory=1000\nPartitionName=p Nodes=n1 Default=YES\n"
    )
    request = attrs.evolve(job().runtime(60).build(), mem_per_node=100, sim_mem_per_cpu=50)
    job_id = cluster.submit(request)
    cluster.run_until(30)
    ended = cluster.job(job_id)
    assert ended.state is JobState.OUT_OF_MEMORY and ended.exit_signal == 125
    assert ended.end_time is not None and ended.start_time is not None
    assert ended.end_time - ended.start_time == 5.0  # the first poll
    # select/linear gives the job the whole node: 4 CPUs of 50 MiB, over the 100 MiB limit
    assert cluster.plugins.acct_gather_stat_job(ended) == {"max_rss_mib": 200.0}
