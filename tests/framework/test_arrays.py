"""Job arrays, dependencies and holds in simulation sessions: what squeue, scontrol and sacct
show, and the scheduling they imply (throttle, afterok chains, afternotok, singleton, a
dependency never satisfied, hold and release, a controller restarted on saved jobs)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from plurm import conf
from plurm.commands import CommandResult
from plurm.live.codec import job_from_dict, job_to_dict
from plurm.model.job import JobState
from plurm.sim.session import Simulation

CONF = """\
ClusterName=c
SlurmctldHost=n1
SelectType=select/linear
NodeName=n[1-4] CPUs=1 RealMemory=1000
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=60
"""


class Session:
    def __init__(self, tmp_path: Path, text: str = CONF) -> None:
        (tmp_path / "slurm.conf").write_text(text)
        self.config = conf.load(tmp_path / "slurm.conf")
        self.sim = Simulation(self.config)
        self.cwd = tmp_path

    def run(self, at: float, line: str, status: int = 0) -> CommandResult:
        self.sim.run_until(at)
        result = self.sim.command(shlex.split(line), self.cwd)
        assert result.status == status, result.stderr
        return result

    def out(self, at: float, line: str) -> str:
        return self.run(at, line).stdout

    def queue(self, at: float) -> dict[str, tuple[str, str]]:
        """squeue's JOBID -> (ST, NODELIST(REASON))."""
        rows = [line.split() for line in self.out(at, "squeue -h -o '%i %t %R'").splitlines()]
        return {row[0]: (row[1], row[2]) for row in rows}

    def job_line(self, at: float, job: str, key: str) -> str:
        text = self.out(at, f"scontrol -o show job {job}")
        return next(word for word in text.split() if word.startswith(key + "="))


@pytest.fixture
def session(tmp_path: Path) -> Session:
    return Session(tmp_path)


def test_an_array_is_split_into_tasks_as_they_start_and_its_throttle_is_honoured(
    session: Session,
) -> None:
    assert session.out(0, "sbatch --array=1-6%2 --wrap='sleep 10'") == "Submitted batch job 1\n"
    assert session.queue(1) == {
        "1_[3-6%2]": ("PD", "(JobArrayTaskLimit)"),
        "1_1": ("R", "n1"),
        "1_2": ("R", "n2"),
    }
    # the first task keeps the array's id; the next ones get ids as they are split off
    fields = session.out(1, "squeue -h -o '%A %F %K' -S A").splitlines()
    assert fields == ["1 1 1", "2 1 2", "3 1 3-6%2"]
    text = session.out(1, "scontrol show job 3")
    assert text.startswith("JobId=3 ArrayJobId=1 ArrayTaskId=3-6%2 ArrayTaskThrottle=2 JobName=")
    assert "JobState=PENDING Reason=JobArrayTaskLimit Dependency=(null)" in text
    assert session.out(1, "scontrol show job 1").startswith("JobId=1 ArrayJobId=1 ArrayTaskId=1 ")
    most = 0
    for second in range(1, 60):
        running = [
            job
            for job in session.sim.controller.cluster.jobs.values()
            if job.array_job_id == 1 and job.state is JobState.RUNNING
        ]
        most = max(most, len(running))
        session.sim.run_until(second)
    assert most == 2
    rows = [line.split() for line in session.out(60, "sacct -X -n -o JobID,State").splitlines()]
    assert sorted(rows) == [[f"1_{task}", "COMPLETED"] for task in range(1, 7)]
    # tasks never ran beside more than one other: three rounds of 10 s
    ends = sorted(
        job.end_time or 0.0
        for job in session.sim.controller.cluster.jobs.values()
        if job.array_job_id == 1
    )
    assert ends[-1] >= 30


def test_array_specifications(session: Session) -> None:
    session.run(0, "sbatch --array=1-7:2 -w n1 --wrap='sleep 100'")
    session.run(0, "sbatch -a 0,3,5-6 -w n2 --wrap='sleep 100'")
    assert session.queue(1) == {
        "1_[3,5,7]": ("PD", "(Resources)"),
        "1_1": ("R", "n1"),
        "2_[3,5-6]": ("PD", "(Resources)"),
        "2_0": ("R", "n2"),
    }
    refused = session.run(1, "sbatch --array=0-1001 --wrap='sleep 1'", status=1)
    assert refused.stderr == (
        "sbatch: error: Batch job submission failed: Invalid job array specification\n"
    )
    bad = session.run(1, "sbatch --array=5-2 --wrap='sleep 1'", status=255)
    assert bad.stderr == "sbatch: error: Invalid --array specification\n"


def test_scancel_of_one_task_and_of_a_whole_array(session: Session) -> None:
    session.run(0, "sbatch --array=1-4 -w n1 --wrap='sleep 100'")
    session.run(1, "scancel 1_3")
    assert session.queue(2) == {"1_[2,4]": ("PD", "(Resources)"), "1_1": ("R", "n1")}
    session.run(2, "scancel 1")
    assert session.queue(40) == {}
    rows = [line.split() for line in session.out(40, "sacct -X -n -o JobID,State").splitlines()]
    assert sorted(row[0] for row in rows) == ["1_1", "1_3", "1_[2,4]"]
    # (CANCELLED by root, as sacct abbreviates it)
    assert {row[1] for row in rows} == {"CANCELLED+"}


def test_an_afterok_chain_runs_in_order(session: Session) -> None:
    session.run(0, "sbatch --wrap='sleep 5'")
    session.run(0, "sbatch -d afterok:1 --wrap='sleep 5'")
    session.run(0, "sbatch --dependency=afterok:2 --wrap='sleep 5'")
    assert session.queue(1) == {
        "1": ("R", "n1"),
        "2": ("PD", "(Dependency)"),
        "3": ("PD", "(Dependency)"),
    }
    assert session.job_line(1, "2", "Dependency") == "Dependency=afterok:1(unfulfilled)"
    assert session.out(1, "squeue -h -j 3 -o %E") == "afterok:2(unfulfilled)\n"
    assert session.queue(7) == {"2": ("R", "n1"), "3": ("PD", "(Dependency)")}
    assert session.job_line(7, "2", "Dependency") == "Dependency=(null)"
    assert session.queue(13) == {"3": ("R", "n1")}
    jobs = session.sim.controller.cluster.jobs
    assert jobs[2].start_time is not None and jobs[1].end_time is not None
    assert jobs[2].start_time >= jobs[1].end_time
    assert jobs[3].start_time is not None and jobs[2].end_time is not None
    assert jobs[3].start_time >= jobs[2].end_time


def test_afternotok_runs_after_a_failure_and_afterok_is_never_satisfied(
    session: Session,
) -> None:
    session.run(0, "sbatch --wrap='exit 3'")
    session.run(0, "sbatch -d afternotok:1 --wrap='sleep 5'")
    session.run(0, "sbatch -d afterok:1 --wrap='sleep 5'")
    session.run(0, "sbatch -d afterany:1 --wrap='sleep 5'")
    queue = session.queue(3)
    assert queue["2"][0] == "R" and queue["4"][0] == "R"
    assert queue["3"] == ("PD", "(DependencyNeverSatisfied)")
    assert session.job_line(3, "3", "Dependency") == "Dependency=afterok:1(failed)"
    # Slurm 22.05 keeps it pending (no kill_invalid_depend)
    assert session.queue(100) == {"3": ("PD", "(DependencyNeverSatisfied)")}


def test_afternotok_of_a_success_is_never_satisfied_and_any_of_needs_one(
    session: Session,
) -> None:
    session.run(0, "sbatch --wrap='sleep 2'")
    session.run(0, "sbatch --wrap='exit 1'")
    session.run(0, "sbatch -d afternotok:1 --wrap='sleep 5'")
    session.run(0, "sbatch -d 'afterok:1?afterok:2' --wrap='sleep 5'")
    assert session.job_line(3, "4", "Dependency") == (
        "Dependency=afterok:1(unfulfilled)?afterok:2(failed)"
    )
    queue = session.queue(5)
    assert queue["3"] == ("PD", "(DependencyNeverSatisfied)")
    assert queue["4"][0] == "R"


def test_a_dependency_on_an_array_waits_for_all_of_its_tasks(session: Session) -> None:
    session.run(0, "sbatch --array=1-3 -w n1 --wrap='sleep 5'")
    session.run(0, "sbatch -d afterok:1 --wrap='sleep 5'")
    assert session.job_line(1, "2", "Dependency") == "Dependency=afterok:1_*(unfulfilled)"
    assert session.queue(12)["2"] == ("PD", "(Dependency)")
    assert session.queue(18)["2"] == ("PD", "(Dependency)")
    assert session.queue(20)["2"][0] == "R"
    last_task = max(
        job.end_time or 0.0
        for job in session.sim.controller.cluster.jobs.values()
        if job.array_job_id == 1
    )
    started = session.sim.controller.cluster.jobs[2].start_time
    assert started is not None and started >= last_task


def test_singleton_runs_one_job_of_a_name_at_a_time(session: Session) -> None:
    session.run(0, "sbatch -J one -d singleton --wrap='sleep 5'")
    session.run(0, "sbatch -J one -d singleton --wrap='sleep 5'")
    session.run(0, "sbatch -J other -d singleton --wrap='sleep 5'")
    queue = session.queue(1)
    assert queue["1"][0] == "R" and queue["3"][0] == "R"
    assert queue["2"] == ("PD", "(Dependency)")
    assert session.job_line(1, "2", "Dependency") == "Dependency=singleton(unfulfilled)"
    assert session.queue(8) == {"2": ("R", "n1")}


def test_an_unknown_job_in_a_dependency_is_refused(session: Session) -> None:
    refused = session.run(0, "sbatch -d afterok:77 --wrap='sleep 5'", status=1)
    assert refused.stderr == "sbatch: error: Batch job submission failed: Job dependency problem\n"
    session.run(0, "sbatch --wrap='sleep 5'")
    bad = session.run(0, "sbatch -d afterwards:1 --wrap='sleep 5'", status=1)
    assert "Job dependency problem" in bad.stderr


def test_hold_and_release(session: Session) -> None:
    session.run(0, "sbatch -H --wrap='sleep 5'")
    session.run(0, "sbatch -w n2 --wrap='sleep 100'")
    session.run(0, "sbatch -w n2 --wrap='sleep 5'")
    assert session.queue(1) == {
        "1": ("PD", "(JobHeldUser)"),
        "2": ("R", "n2"),
        "3": ("PD", "(Resources)"),
    }
    assert session.job_line(1, "1", "Priority") == "Priority=0"
    refused = session.run(1, "scontrol hold 2", status=1)
    assert refused.stderr == "Job is no longer pending execution for job 2\n"
    session.run(1, "scontrol hold 3")
    assert session.queue(2)["3"] == ("PD", "(JobHeldAdmin)")
    assert session.job_line(2, "3", "Priority") == "Priority=0"
    session.run(2, "scontrol release 1")
    assert session.queue(4)["1"] == ("R", "n1")
    assert session.job_line(4, "1", "Priority") != "Priority=0"
    session.run(4, "scontrol release 3")
    session.run(4, "scontrol uhold 3")
    assert session.queue(5)["3"] == ("PD", "(JobHeldUser)")


def test_a_restarted_controller_keeps_arrays_dependencies_and_holds(session: Session) -> None:
    session.run(0, "sbatch --array=1-4%1 --wrap='sleep 10'")
    session.run(0, "sbatch -d afterok:1 --wrap='sleep 5'")
    session.run(0, "sbatch -H --wrap='sleep 5'")
    session.sim.run_until(3)
    saved = [
        job_from_dict(job_to_dict(job)) for job in session.sim.controller.cluster.jobs.values()
    ]
    restarted = Simulation(session.config, start=3)
    restarted.controller.restore(saved, session.sim.controller.next_job_id)
    # the running task "still runs": its end is reported as the node's daemon would
    restarted.executor.on_end = restarted.controller.job_ended
    again = Session.__new__(Session)
    again.config, again.sim, again.cwd = session.config, restarted, session.cwd
    queue = again.queue(4)
    assert queue["1_[2-4%1]"] == ("PD", "(JobArrayTaskLimit)")
    assert queue["2"] == ("PD", "(Dependency)")
    assert queue["3"] == ("PD", "(JobHeldUser)")
    assert again.job_line(4, "2", "Dependency") == "Dependency=afterok:1_*(unfulfilled)"
    restarted.controller.job_ended(1)  # the task ran on through the restart and ended
    queue = again.queue(6)
    assert "1_2" in queue and queue["1_2"][0] == "R"
    assert queue["3"] == ("PD", "(JobHeldUser)")
