"""The /proc sampler of jobacct_gather plugins (:mod:`plurm.gather`) on real processes:
/proc figures, a job's session split into the batch step and srun's steps, tasks' maxima,
and the memory limit."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

import pytest

from plurm.gather.procfs import PAGE_SIZE, read_stat, scan
from plurm.gather.tally import JobTally
from plurm.live.gather import with_rusage
from plurm.model.usage import StepUsage

MB = 1024 * 1024

#: Touches ``MB`` megabytes, says "ready", then sleeps (until killed).
HOLD = (
    "import sys, time\n"
    "block = bytearray(int(sys.argv[1]) * 1024 * 1024)\n"
    "for i in range(0, len(block), 4096):\n"
    "    block[i] = 1\n"
    "print('ready', flush=True)\n"
    "time.sleep(60)\n"
)


LEADER = """
import os, subprocess, sys
hold = [sys.executable, "-c", sys.argv[1]]
batch = subprocess.Popen(hold + ["10"])
env = dict(os.environ, SLURM_STEP_ID="0", SLURM_PROCID="0")
first = subprocess.Popen(hold + ["20"], env=env, process_group=0)
env["SLURM_PROCID"] = "1"
second = subprocess.Popen(hold + ["50"], env=env, process_group=first.pid)
for process in (batch, first, second):
    process.wait()
"""


def _hold(mb: int, **kwargs: object) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(mb)], stdout=subprocess.PIPE, text=True, **kwargs
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


def test_read_stat_of_a_process_holding_memory() -> None:
    process = _hold(80)
    try:
        stat = read_stat(process.pid)
        assert stat is not None
        assert stat.pid == process.pid and stat.ppid == os.getpid()
        assert 80 * MB <= stat.rss <= 160 * MB
        assert stat.rss % PAGE_SIZE == 0 and stat.vsize >= stat.rss
    finally:
        process.kill()
        process.wait()
    assert read_stat(process.pid) is None


def test_a_tally_keeps_each_steps_maxima_and_cpu() -> None:
    # a job's session: a batch process of 10 MB in the session's group, and a step's two
    # tasks in a process group of their own, with srun's environment, as srun starts them
    leader = subprocess.Popen(
        [sys.executable, "-c", LEADER, HOLD],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert leader.stdout is not None
        assert sorted(leader.stdout.readline().strip() for _ in range(3)) == ["ready"] * 3
        tally = JobTally(7, leader.pid, 70 * MB, "n1")
        tally.add(scan({leader.pid})[leader.pid])
        usage = tally.usage()
        assert set(usage) == {"batch", "0"}
        step = usage["0"]
        assert step.max_rss_task == 1 and step.max_rss_node == "n1"
        assert 50 * MB <= step.max_rss <= 90 * MB
        assert step.ave_rss < step.max_rss  # the 20 MB task pulls the average down
        assert step.total_cpu == pytest.approx(step.user_cpu + step.system_cpu)
        assert step.min_cpu <= step.ave_cpu
        assert 10 * MB <= usage["batch"].max_rss < 70 * MB
        # the step holds some 90 MB on the node: over a 70 MB limit; the batch step's
        # two Pythons and 10 MB are not
        assert tally.over_limit() == ["0"]
    finally:
        os.killpg(leader.pid, 9)
        leader.wait()


def test_a_tally_remembers_the_peak_after_memory_is_freed() -> None:
    process = _hold(100, start_new_session=True)
    try:
        tally = JobTally(1, process.pid, None, "n1")
        tally.add(scan({process.pid})[process.pid])
        before = tally.usage()["batch"]
        peak = before.max_rss
        assert peak >= 100 * MB
        tally.add([])  # the process has gone: its maxima and CPU stay
        after = tally.usage()["batch"]
        assert after.max_rss == peak and after.total_cpu == before.total_cpu
        assert after.max_pages == before.max_pages
        assert tally.over_limit() == []
    finally:
        process.kill()
        process.wait()


def test_sampling_is_cheap() -> None:
    # one scan of /proc for a job: well under the one-second sampling period
    started = time.perf_counter()
    for _ in range(10):
        scan({os.getsid(0)})
    assert (time.perf_counter() - started) / 10 < 0.5


def test_a_small_scripts_rusage_is_not_taken_for_the_daemons_size() -> None:
    # a script far smaller than the process that forked it reports that process's size
    # (its current size after fork, its peak after vfork, which subprocess may use)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    process = subprocess.Popen(["/bin/sh", "-c", "exit 0"])
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    assert usage.ru_maxrss * 1024 > 8 * MB  # far more than sh's own: what Linux reports
    assert with_rusage(None, usage, [], "n1", own).max_rss == 0
    sampled = StepUsage(max_rss=3 * MB)
    assert with_rusage(sampled, usage, [], "n1", own).max_rss == 3 * MB


def test_a_job_never_sampled_has_its_scripts_rusage() -> None:
    # A script that ran a child larger than this process and ended before any sample:
    # wait4's figures. (Linux keeps a process's peak size across exec, so a child forked
    # by this process reports at least this process's size: the test's child is larger.)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    size = own + 60 * MB
    script = f"{sys.executable} -c 'bytearray({size})[::4096]' && exit 0"
    process = subprocess.Popen(["/bin/sh", "-c", script])
    pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert pid == process.pid and status == 0
    batch = with_rusage(None, usage, [], "n1", own)
    assert size <= batch.max_rss <= size + 200 * MB and batch.max_rss_node == "n1"
    assert batch.total_cpu == pytest.approx(usage.ru_utime + usage.ru_stime)
    # srun's steps' CPU is not the batch step's; a larger sample is kept
    step = StepUsage(user_cpu=usage.ru_utime, system_cpu=usage.ru_stime)
    assert with_rusage(None, usage, [step], "n1").total_cpu == 0.0
    sampled = StepUsage(max_rss=500 * MB, total_cpu=1.0)
    assert with_rusage(sampled, usage, [], "n1").max_rss == 500 * MB
