"""Gang suspensions after a start: which are preemptions. A lower-tier job that gang
scheduling suspends because a higher-PriorityTier job it overlaps resumes (at a time slice of
the higher partition, at another job's end, or when gang takes in a job an admin resumed) is
preempted by that job (``Job.preemptions``, ``preempted_by``,
explain's "Preempted by"); a job that loses only its own partition's time slice is not, even
while a higher tier casts a shadow elsewhere on its partition. Both under select/linear and
select/cons_res, PreemptMode=SUSPEND,GANG, two nodes of two cores."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from plurm import conf
from plurm.commands.timefmt import clock_time
from plurm.model.job import JobState
from plurm.sim.session import SessionLine, Simulation

CONF = """ClusterName=t
SlurmctldHost=h
{select}
PreemptType=preempt/partition_prio
PreemptMode={mode}
SchedulerTimeSlice=30
NodeName=n[1-2] CPUs=2 Sockets=1 CoresPerSocket=2 RealMemory=1000
PartitionName=batch Nodes=ALL Default=YES PriorityTier=1 OverSubscribe=FORCE:2
PartitionName=urgent Nodes=ALL PriorityTier=2 OverSubscribe=FORCE:2
"""

SELECTS = {
    "select/linear": "SelectType=select/linear",
    "select/cons_res": "SelectType=select/cons_res\nSelectTypeParameters=CR_Core",
}


class _Session:
    """A simulation of CONF; records every job's state after each second."""

    def __init__(self, tmp_path: Path, select: str, mode: str = "SUSPEND,GANG") -> None:
        (tmp_path / "slurm.conf").write_text(CONF.format(select=SELECTS[select], mode=mode))
        self.sim = Simulation(conf.load(tmp_path / "slurm.conf"))
        self.cwd = tmp_path
        self.number = 0
        self.suspensions: list[tuple[int, int]] = []  # (time, job id)
        self.was: dict[int, JobState] = {}

    def run(self, at: int, command: str) -> str:
        """Run ``command`` at second ``at`` (following the jobs up to then)."""
        self.follow(at)
        self.number += 1
        line = SessionLine(self.number, at, tuple(shlex.split(command)), command)
        text = self.sim.run_lines([line], self.cwd)
        self._note(at)
        return text

    def follow(self, until: int) -> None:
        """Step second by second up to ``until``, noting each job that became SUSPENDED."""
        for second in range(int(self.sim.clock.now()) + 1, until + 1):
            self.sim.run_until(second)
            self._note(second)

    def _note(self, second: int) -> None:
        for job_id, job in self.sim.controller.cluster.jobs.items():
            if job.state is JobState.SUSPENDED and self.was.get(job_id) is not JobState.SUSPENDED:
                self.suspensions.append((second, job_id))
            self.was[job_id] = job.state


@pytest.mark.parametrize("select", sorted(SELECTS))
def test_a_resumed_higher_tier_job_preempts_the_job_under_it(tmp_path: Path, select: str) -> None:
    session = _Session(tmp_path, select)
    # 1 (batch) on n2; 2 (urgent) needs both nodes and preempts it at its start; 3 (urgent,
    # n1 only) shares n1 with 2 in their partition's time slices. When 3's turn comes, 2 is
    # suspended and 1 resumes on n2; when 2's turn comes back, 2 resumes and displaces 1.
    session.run(0, "sbatch -p batch -n2 -w n2 --wrap='sleep 600'")
    session.run(1, "sbatch -p urgent -n4 --wrap='sleep 600'")
    session.run(2, "sbatch -p urgent -n2 -w n1 --wrap='sleep 600'")
    session.follow(100)
    jobs = session.sim.controller.cluster.jobs
    # (the time slices tick at 60 and 90: 3 runs, then 2 again)
    assert session.suspensions == [(2, 1), (3, 3), (60, 2), (90, 1), (90, 3)]
    low = jobs[1]
    # Once at 2's start (placed on top of it), once at 2's resume at the slice of 90; Slurm's
    # PreemptTime stays at the start's (as on 22.05: records linear/186, linear/191).
    assert (low.preemptions, low.preempted_by, low.preempt_time) == (2, 2, 2)
    # 2's own suspension is its partition's time slice, and 3's too: no preemption.
    assert (jobs[2].preemptions, jobs[3].preemptions) == (0, 0)
    assert jobs[2].preempted_by is None and jobs[3].preempted_by is None
    text = session.run(101, "scontrol explain 1")
    assert f"   Preempted by JobId=2 at {clock_time(90)}\n" in text


@pytest.mark.parametrize("select", sorted(SELECTS))
def test_a_time_slice_under_a_shadow_elsewhere_is_no_preemption(
    tmp_path: Path, select: str
) -> None:
    session = _Session(tmp_path, select)
    # 1 (urgent) runs on n1 and casts its shadow on batch there; 2 and 3 (batch) take turns
    # on n2, which the shadow does not cover.
    session.run(0, "sbatch -p urgent -n2 -w n1 --wrap='sleep 600'")
    session.run(1, "sbatch -p batch -n2 -w n2 --wrap='sleep 600'")
    session.run(2, "sbatch -p batch -n2 -w n2 --wrap='sleep 600'")
    session.follow(130)
    jobs = session.sim.controller.cluster.jobs
    assert session.suspensions == [(3, 3), (60, 2), (90, 3), (120, 2)]
    for job_id in (1, 2, 3):
        job = jobs[job_id]
        assert (job.preemptions, job.preempted_by, job.preempt_time) == (0, None, None)
    assert "Preempted by" not in session.run(131, "scontrol explain 2")


@pytest.mark.parametrize("select", sorted(SELECTS))
def test_a_higher_tier_job_an_admin_resumed_preempts_the_job_under_it_when_gang_takes_it_in(
    tmp_path: Path, select: str
) -> None:
    session = _Session(tmp_path, select)
    session.run(0, "sbatch -p batch -n2 -w n1 --wrap='sleep 600'")
    session.run(1, "sbatch -p urgent -n2 -w n1 --wrap='sleep 600'")  # preempts 1 at its start
    session.run(10, "scontrol suspend 2")  # 1 resumes
    session.run(20, "scontrol resume 2")  # 2 runs beside 1 until the slicer's tick at 30
    session.follow(40)
    low = session.sim.controller.cluster.jobs[1]
    assert session.suspensions == [(2, 1), (10, 2), (30, 1)]
    assert (low.preemptions, low.preempted_by, low.preempt_time) == (2, 2, 2)


@pytest.mark.parametrize("select", sorted(SELECTS))
def test_a_higher_tier_job_resumed_at_another_ones_end_preempts_the_job_under_it(
    tmp_path: Path, select: str
) -> None:
    session = _Session(tmp_path, select)
    session.run(0, "sbatch -p batch -n2 -w n2 --wrap='sleep 600'")
    session.run(1, "sbatch -p urgent -n2 -w n1 --wrap='sleep 20'")
    # 3 shares n1 with 2 in their partition: suspended at its start, it resumes when 2 ends
    # (at 22) and then displaces 1 on n2.
    session.run(2, "sbatch -p urgent -N2 -n4 --wrap='sleep 600'")
    session.follow(30)
    jobs = session.sim.controller.cluster.jobs
    assert session.suspensions == [(3, 3), (22, 1)]
    assert (jobs[1].preemptions, jobs[1].preempted_by, jobs[1].preempt_time) == (1, 3, None)
    assert "   Preempted by JobId=3 at " + clock_time(22) in session.run(31, "scontrol explain 1")
    assert jobs[3].preemptions == 0  # its own partition's turn, at its start


@pytest.mark.parametrize("select", sorted(SELECTS))
def test_under_requeue_gang_requeues_the_displaced_job_for_the_resumed_one(
    tmp_path: Path, select: str
) -> None:
    """PreemptMode=REQUEUE,GANG: the job that 3's resume displaces is requeued, and its
    preemptor is 3 (explain says so)."""
    session = _Session(tmp_path, select, mode="REQUEUE,GANG")
    session.run(0, "sbatch -p batch -n2 -w n2 --wrap='sleep 600'")
    session.run(1, "sbatch -p urgent -n2 -w n1 --wrap='sleep 20'")
    session.run(2, "sbatch -p urgent -N2 -n4 --wrap='sleep 600'")
    session.follow(30)
    low = session.sim.controller.cluster.jobs[1]
    assert (low.state, low.restarts) == (JobState.PENDING, 1)
    assert (low.preemptions, low.preempted_by, low.preempt_time) == (1, 3, 22)
    text = session.run(31, "scontrol explain 1")
    assert f"   Preempted by JobId=3 at {clock_time(22)}\n" in text
