"""plurm.live.launcher with real processes: sh scripts, sleep, trap, real files.

Every test runs its coroutines on one event loop (the ``run`` fixture) and starts processes
only through the ``launcher`` fixture, whose finalizer SIGKILLs, by pid, every process left
in the session of every job it started, and reaps them, even when the test failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pytest

from plurm.errors import PlurmError
from plurm.live.jobenv import JobEnvInfo, expand_pattern, job_environment
from plurm.live.launcher import (
    JobExit,
    Launcher,
    LaunchError,
    LaunchSpec,
    RunningJob,
    job_dir,
    session_pids,
)

T = TypeVar("T")
Run = Callable[[Awaitable[T]], T]

#: Generous bound for anything that should take well under a second.
TIMEOUT = 30.0
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}


@pytest.fixture
def runner() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as runner:
        yield runner


@pytest.fixture
def run(runner: asyncio.Runner) -> Run[Any]:
    def run(awaitable: Awaitable[T]) -> T:
        async def bounded() -> T:
            return await asyncio.wait_for(awaitable, TIMEOUT)

        return runner.run(bounded())

    return run


@pytest.fixture
def launcher(tmp_path: Path, runner: asyncio.Runner) -> Iterator[Launcher]:
    launcher = Launcher(tmp_path / "spool")
    sessions: list[int] = []
    launch = launcher.launch

    async def recording_launch(
        spec: LaunchSpec, before_exec: Callable[[RunningJob], object] | None = None
    ) -> RunningJob:
        job = await launch(spec, before_exec)
        sessions.append(job.sid)
        return job

    launcher.launch = recording_launch  # type: ignore[method-assign]
    yield launcher
    jobs = list(launcher.running().values())
    sessions.extend(job.sid for job in jobs)
    for sid in sessions:
        for pid in session_pids(sid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    async def reap() -> None:
        await asyncio.wait_for(asyncio.gather(*(job.wait() for job in jobs)), TIMEOUT)

    if jobs:
        runner.run(reap())


def spec(tmp_path: Path, script: str, job_id: int = 1, **fields: Any) -> LaunchSpec:
    values: dict[str, Any] = {
        "job_id": job_id,
        "script": ("#!/bin/sh\n" + script).encode(),
        "work_dir": str(tmp_path),
        "stdout": "out.txt",
        "env": BASE_ENV,
        "uid": os.geteuid(),
        "gid": os.getegid(),
    }
    values.update(fields)
    return LaunchSpec(**values)


def proc_state(pid: int) -> str:
    """The State line of /proc/PID/status, e.g. 'T (stopped)'."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("State:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no State line for {pid}")


async def until(predicate: Callable[[], bool], what: str) -> None:
    """Poll ``predicate`` until it holds (TIMEOUT bounds it through ``run``)."""
    while not predicate():
        await asyncio.sleep(0.02)
    assert predicate(), what


def stopped(pid: int) -> bool:
    return proc_state(pid).startswith("T")


def running_again(pid: int) -> bool:
    return proc_state(pid)[0] in "SR"


def gone_or_zombie(pid: int) -> bool:
    try:
        return proc_state(pid).startswith(("Z", "X"))
    except FileNotFoundError:
        return True


def my_zombies() -> list[int]:
    zombies = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            data = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if fields[0] == b"Z" and int(fields[1]) == os.getpid():
            zombies.append(int(name))
    return zombies


# ------------------------------------------------------------------------------ exit codes


def test_exit_code_and_exit_signal(tmp_path: Path, launcher: Launcher, run: Run[Any]) -> None:
    job = run(launcher.launch(spec(tmp_path, "exit 3\n")))
    assert run(job.wait()) == JobExit(3, 0)
    assert job.ended and job.exit == JobExit(3, 0)
    job = run(launcher.launch(spec(tmp_path, "kill -TERM $$\nsleep 60\n", job_id=2)))
    result = run(job.wait())
    assert result == JobExit(0, 15)
    assert str(result) == "0:15"
    assert launcher.running() == {}


# --------------------------------------------------------------------- files, env, script


def test_script_sees_its_environment_directory_and_arguments(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    info = JobEnvInfo(
        job_id=77,
        job_name="envtest",
        user=pwd.getpwuid(os.geteuid()).pw_name,
        uid=os.geteuid(),
        gid=os.getegid(),
        partition="debug",
        nodes=("n1", "n2"),
        node_name="n1",
        cpus_on_node=2,
        ntasks=2,
        submit_dir="/home/x",
        submit_host="login",
        cluster_name="plurm",
        base_env={**BASE_ENV, "MY_VAR": "a b"},
    )
    env = job_environment(info)
    work = tmp_path / "work"
    work.mkdir()
    script = 'env > "$1"\npwd > "$2"\necho "$0"\ncat\necho "args=$# $3"\n'
    job = run(
        launcher.launch(
            spec(tmp_path, script, job_id=77, env=env, work_dir=str(work), argv=["e", "p", "x y"])
        )
    )
    assert run(job.wait()) == JobExit(0, 0)
    seen = dict(line.split("=", 1) for line in (work / "e").read_text().splitlines() if "=" in line)
    for key, value in env.items():
        assert seen[key] == value, key
    assert seen["SLURM_TASK_PID"] == str(job.pid)
    # Nothing the launcher added, and no locale coercion leaking in.
    assert set(seen) - set(env) <= {"SLURM_TASK_PID", "PWD", "OLDPWD", "SHLVL", "_"}
    assert (work / "p").read_text().strip() == str(work)
    lines = (work / "out.txt").read_text().splitlines()
    assert lines[0] == str(job_dir(tmp_path / "spool", 77) / "slurm_script")
    # stdin is /dev/null: `cat` printed nothing.
    assert lines[1:] == ["args=3 x y"]


def test_script_file_in_spool_while_running_and_removed_after(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    job = run(launcher.launch(spec(tmp_path, "sleep 60\n", job_id=42)))
    script = tmp_path / "spool" / "job00042" / "slurm_script"
    assert stat.S_IMODE(script.stat().st_mode) == 0o700
    assert stat.S_IMODE(script.parent.stat().st_mode) == 0o700
    assert script.read_bytes() == b"#!/bin/sh\nsleep 60\n"
    job.kill(0)
    assert run(job.wait()).signal in (signal.SIGTERM, signal.SIGKILL)
    assert not script.parent.exists()


def test_output_patterns_separate_stderr_and_relative_names(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    names: dict[str, Any] = {"job_id": 5, "job_name": "pat", "user": "u", "node": "n7.example"}
    out = expand_pattern("%x-%4j.%N.out", **names)
    err = expand_pattern(str(tmp_path / "logs" / "%x-%j.err"), **names)
    (tmp_path / "logs").mkdir()
    job = run(
        launcher.launch(
            spec(tmp_path, "echo to-out\necho to-err >&2\n", job_id=5, stdout=out, stderr=err)
        )
    )
    assert run(job.wait()) == JobExit(0, 0)
    assert (tmp_path / "pat-0005.n7.out").read_text() == "to-out\n"
    assert (tmp_path / "logs" / "pat-5.err").read_text() == "to-err\n"


def test_stderr_none_shares_the_file_and_open_modes(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    (tmp_path / "out.txt").write_text("old\n")
    job = run(launcher.launch(spec(tmp_path, "echo one\necho two >&2\n")))
    run(job.wait())
    assert (tmp_path / "out.txt").read_text() == "one\ntwo\n"
    job = run(launcher.launch(spec(tmp_path, "echo three\n", job_id=2, open_mode="append")))
    run(job.wait())
    assert (tmp_path / "out.txt").read_text() == "one\ntwo\nthree\n"
    job = run(launcher.launch(spec(tmp_path, "echo four\n", job_id=3, open_mode="truncate")))
    run(job.wait())
    assert (tmp_path / "out.txt").read_text() == "four\n"
    with pytest.raises(ValueError):
        spec(tmp_path, "true\n", open_mode="overwrite")


def test_before_exec_runs_while_the_session_leader_waits_to_exec(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    """The job accounting plugins get the session before the script runs (a cgroup holds
    from the script's first byte): the leader is alone in it, not yet the script, and the
    script sees what the callback did."""
    marker = tmp_path / "marker"
    seen: list[tuple[int, list[int], bytes]] = []

    def before_exec(job: RunningJob) -> None:
        seen.append((job.sid, session_pids(job.sid), Path(f"/proc/{job.pid}/cmdline").read_bytes()))
        marker.write_text("before\n")

    job = run(launcher.launch(spec(tmp_path, f"cat {marker}\n"), before_exec))
    assert run(job.wait()) == JobExit(0, 0)
    assert seen == [(job.pid, [job.pid], seen[0][2])]
    assert b"slurm_script" not in seen[0][2]  # the daemon's fork, not yet the script
    assert (tmp_path / "out.txt").read_text() == "before\n"


def test_a_failing_before_exec_is_logged_and_the_job_runs(
    tmp_path: Path, launcher: Launcher, run: Run[Any], caplog: pytest.LogCaptureFixture
) -> None:
    def before_exec(job: RunningJob) -> None:
        raise RuntimeError("plugin broke")

    job = run(launcher.launch(spec(tmp_path, "echo ran\n"), before_exec))
    assert run(job.wait()) == JobExit(0, 0)
    assert (tmp_path / "out.txt").read_text() == "ran\n"
    assert "before the script of job_id=1" in caplog.text and "plugin broke" in caplog.text


# ----------------------------------------------------------------------- failed launches


def test_output_file_that_cannot_be_opened_is_a_launch_error(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "out.txt"
    marker = tmp_path / "ran"
    with pytest.raises(LaunchError) as caught:
        run(launcher.launch(spec(tmp_path, f"touch {marker}\n", job_id=9, stdout=str(missing))))
    error = caught.value
    assert isinstance(error, PlurmError)
    assert error.job_id == 9
    assert error.reason == f"Could not open stdout file {missing}: No such file or directory"
    assert LaunchError.job_exit == JobExit(1, 0)
    assert not marker.exists()
    assert launcher.running() == {}
    assert my_zombies() == []
    assert not job_dir(tmp_path / "spool", 9).exists()
    with pytest.raises(LaunchError, match="Could not open stderr file"):
        run(launcher.launch(spec(tmp_path, "true\n", job_id=10, stderr=str(missing))))


def test_missing_work_dir_runs_in_tmp_like_slurmstepd(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    missing = tmp_path / "gone"
    out = tmp_path / "out.txt"
    job = run(launcher.launch(spec(tmp_path, "pwd\n", work_dir=str(missing), stdout=str(out))))
    assert run(job.wait()) == JobExit(0, 0)
    assert out.read_text().splitlines() == [
        f"plurmstepd: error: couldn't chdir to `{missing}': No such file or directory: "
        "going to /tmp instead",
        "/tmp",
    ]


def test_a_script_that_cannot_be_executed_ends_with_the_errno(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    job = run(
        launcher.launch(
            LaunchSpec(
                job_id=3,
                script=b"#!/no/such/interpreter\necho hi\n",
                work_dir=str(tmp_path),
                stdout="out.txt",
                env=BASE_ENV,
                uid=os.geteuid(),
                gid=os.getegid(),
            )
        )
    )
    assert run(job.wait()) == JobExit(2, 0)  # ENOENT
    script = job_dir(tmp_path / "spool", 3) / "slurm_script"
    assert (tmp_path / "out.txt").read_text() == (
        f"plurmstepd: error: execve(): {script}: No such file or directory\n"
    )


def test_refused_launches(
    tmp_path: Path, launcher: Launcher, run: Run[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    job = run(launcher.launch(spec(tmp_path, "sleep 60\n", job_id=4)))
    with pytest.raises(LaunchError, match="already running"):
        run(launcher.launch(spec(tmp_path, "true\n", job_id=4)))
    assert launcher.running() == {4: job}
    # A daemon that is not root cannot run a job of another user.
    monkeypatch.setattr(os, "geteuid", lambda: 4321)
    with pytest.raises(LaunchError, match=r"cannot run a job of uid 65534: .* not root"):
        run(launcher.launch(spec(tmp_path, "true\n", job_id=5, uid=65534, gid=65534)))
    monkeypatch.undo()
    assert not job_dir(tmp_path / "spool", 5).exists()
    job.kill(0)
    run(job.wait())


# -------------------------------------------------------------------------------- signals


TSTP_TRAP = """trap 'echo tstp >> "$1"' TSTP
sleep 300 &
echo $! > "$2"
while :; do wait; done
"""


def test_suspend_stops_every_process_and_resume_continues_them(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    log, child_file = tmp_path / "log", tmp_path / "child"
    job = run(launcher.launch(spec(tmp_path, TSTP_TRAP, argv=[str(log), str(child_file)])))
    run(until(lambda: child_file.exists() and child_file.read_text().strip() != "", "child"))
    child = int(child_file.read_text())
    pids = job.pids()
    assert pids[0] == job.pid and child in pids
    assert run(job.suspend(grace=0.3)) is True
    assert job.suspended
    # A signal is acted on when its target next runs: wait for each to reach the stop.
    for pid in pids:
        run(until(partial(stopped, pid), f"{pid} stopped"))
        assert proc_state(pid) == "T (stopped)"
    assert run(job.suspend(grace=0)) is False  # already suspended
    assert run(job.resume()) is True
    assert not job.suspended
    for pid in pids:
        run(until(partial(running_again, pid), f"{pid} running again"))
        assert proc_state(pid)[0] in "SR"
    # SIGTSTP was sent too: the shell's trap has run (before the stop, or after SIGCONT).
    run(until(lambda: log.exists() and log.read_text() == "tstp\n", "TSTP trap"))
    assert run(job.resume()) is False
    job.kill(0)
    run(job.wait())


def test_default_suspend_waits_two_seconds_between_tstp_and_stop(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    log, child_file = tmp_path / "log", tmp_path / "child"
    job = run(launcher.launch(spec(tmp_path, TSTP_TRAP, argv=[str(log), str(child_file)])))
    run(until(lambda: child_file.exists() and child_file.read_text().strip() != "", "child"))
    start = time.monotonic()
    run(job.suspend())
    assert time.monotonic() - start >= 2.0
    run(until(partial(stopped, job.pid), "stopped"))
    job.kill(600)  # suspended: SIGKILL at once, not after 600 s
    assert run(job.wait()) == JobExit(0, 9)


def test_kill_runs_the_term_trap(tmp_path: Path, launcher: Launcher, run: Run[Any]) -> None:
    trapped = tmp_path / "trapped"
    script = f"trap 'echo term > {trapped}; exit 7' TERM\nsleep 300 &\nwait\n"
    job = run(launcher.launch(spec(tmp_path, script)))
    run(until(lambda: len(job.pids()) == 2, "sleep started"))
    job.kill(60)
    assert run(job.wait()) == JobExit(7, 0)
    assert trapped.read_text() == "term\n"


def test_kill_sends_sigkill_after_kill_wait_to_what_ignores_sigterm(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    child_file = tmp_path / "child"
    script = f"trap '' TERM\nsleep 300 &\necho $! > {child_file}\nwait\n"
    job = run(launcher.launch(spec(tmp_path, script)))
    run(until(lambda: child_file.exists() and child_file.read_text().strip() != "", "child"))
    child = int(child_file.read_text())
    start = time.monotonic()
    job.kill(0.5)
    assert not job.ended
    assert run(job.wait()) == JobExit(0, 9)
    assert time.monotonic() - start >= 0.5
    run(until(lambda: gone_or_zombie(child), "the ignoring child is killed too"))


def test_signal_scopes(tmp_path: Path, launcher: Launcher, run: Run[Any]) -> None:
    log = tmp_path / "log"
    script = (
        f"trap 'echo usr1 >> {log}' USR1\n"
        f"sh -c 'trap \"echo child-usr1 >> {log}\" USR1; while :; do sleep 0.05; done' &\n"
        "while :; do wait; done\n"
    )
    job = run(launcher.launch(spec(tmp_path, script)))
    run(until(lambda: len(job.pids()) >= 2, "child started"))
    assert job.signal(signal.SIGUSR1, steps_only=True) == 0
    assert job.signal(signal.SIGUSR1, batch_only=True) == 1
    run(until(lambda: log.exists() and "usr1\n" in log.read_text(), "batch shell trap"))
    assert "child-usr1" not in log.read_text()
    assert job.signal(signal.SIGUSR1) >= 2
    run(until(lambda: "child-usr1" in log.read_text(), "child trap"))
    # SIGKILL goes to everything whatever the scope.
    assert job.signal(signal.SIGKILL, steps_only=True) >= 2
    assert run(job.wait()) == JobExit(0, 9)
    assert job.signal(signal.SIGUSR1) == 0


def test_steps_only_reaches_the_process_groups_of_steps(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    """srun starts a step's tasks in a process group of their own: a signal to the steps
    reaches them, and neither the batch script nor what it runs in its own group."""
    log = tmp_path / "log"
    task = (
        "import os, signal, time\n"
        "os.setpgid(0, 0)\n"
        "def note(*_):\n"
        f"    open({str(log)!r}, 'a').write('step-usr1\\n')\n"
        "signal.signal(signal.SIGUSR1, note)\n"
        f"open({str(log)!r}, 'a').write('step-ready\\n')\n"
        "while True: time.sleep(0.05)\n"
    )
    (tmp_path / "task.py").write_text(task)
    script = (
        f"trap 'echo batch-usr1 >> {log}' USR1\n"
        f"sh -c 'trap \"echo child-usr1 >> {log}\" USR1; while :; do sleep 0.05; done' &\n"
        f"{sys.executable} {tmp_path / 'task.py'} &\n"
        "while :; do wait; done\n"
    )
    job = run(launcher.launch(spec(tmp_path, script)))
    run(until(lambda: log.exists() and "step-ready" in log.read_text(), "step task started"))
    assert job.signal(signal.SIGUSR1, steps_only=True) == 1
    run(until(lambda: "step-usr1" in log.read_text(), "step task's handler"))
    assert "batch-usr1" not in log.read_text()
    assert "child-usr1" not in log.read_text()
    job.kill(0)
    assert run(job.wait()).signal in (9, 15)


def test_leftover_processes_are_killed_when_the_script_ends(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    child_file = tmp_path / "child"
    job = run(launcher.launch(spec(tmp_path, f"sleep 300 &\necho $! > {child_file}\n")))
    assert run(job.wait()) == JobExit(0, 0)
    child = int(child_file.read_text())
    run(until(lambda: gone_or_zombie(child), "leftover sleep killed"))
    assert job.pids() == []


def test_running_and_kill_all(tmp_path: Path, launcher: Launcher, run: Run[Any]) -> None:
    jobs = [run(launcher.launch(spec(tmp_path, "sleep 300\n", job_id=i))) for i in (11, 12, 13)]
    assert launcher.running() == {job.job_id: job for job in jobs}
    run(launcher.kill_all(kill_wait=5))
    assert all(job.exit == JobExit(0, 15) for job in jobs)
    assert launcher.running() == {}
    run(launcher.kill_all())  # nothing left: returns at once


def test_many_short_jobs_leave_no_zombie_and_no_fd(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    async def batch(first: int) -> list[JobExit]:
        jobs = [
            await launcher.launch(spec(tmp_path, "true\n", job_id=i, stdout="/dev/null"))
            for i in range(first, first + 20)
        ]
        return [await job.wait() for job in jobs]

    # One job first so that lazily opened things (the selector, /dev/null) are counted.
    run(batch(1000))
    before = open_fds()
    for first in range(0, 200, 20):
        assert run(batch(first)) == [JobExit(0, 0)] * 20
    assert my_zombies() == []
    assert open_fds() == before
    assert launcher.running() == {}
    assert list((tmp_path / "spool").iterdir()) == []


# ----------------------------------------------------------------------- another user


NOBODY = 65534


@pytest.fixture
def nobody_dir() -> Iterator[Path]:
    """A folder the nobody user can reach and write (tmp_path's parents are 0700)."""
    path = Path(tempfile.mkdtemp(prefix="plurm-launcher-"))
    try:
        os.chmod(path, 0o755)
        (path / "spool").mkdir(mode=0o755)
        (path / "work").mkdir()
        os.chown(path / "work", NOBODY, NOBODY)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another user needs root")
def test_job_runs_as_its_user(nobody_dir: Path, run: Run[Any], runner: asyncio.Runner) -> None:
    user = pwd.getpwuid(NOBODY)
    launcher = Launcher(nobody_dir / "spool")
    work = nobody_dir / "work"
    script = 'id -u\nid -g\nid -G\nls -ln "$0" | cut -d" " -f3\nsleep 300\n'
    job = run(
        launcher.launch(
            LaunchSpec(
                job_id=65,
                script=("#!/bin/sh\n" + script).encode(),
                work_dir=str(work),
                stdout="out.txt",
                env=BASE_ENV,
                uid=NOBODY,
                gid=user.pw_gid,
            )
        )
    )
    try:
        out = work / "out.txt"
        run(until(lambda: out.exists() and len(out.read_text().splitlines()) >= 4, "output"))
        lines = out.read_text().splitlines()
        groups = sorted(os.getgrouplist(user.pw_name, user.pw_gid))
        assert lines[0] == str(NOBODY)
        assert lines[1] == str(user.pw_gid)
        assert sorted(int(group) for group in lines[2].split()) == groups
        assert lines[3] == str(NOBODY)  # the script file is the user's
        assert out.stat().st_uid == NOBODY
        assert job_dir(nobody_dir / "spool", 65).stat().st_uid == NOBODY
        for pid in job.pids():
            assert os.stat(f"/proc/{pid}").st_uid == NOBODY
        # A file only root may write is refused, as the user would be refused.
        private = nobody_dir / "private"
        private.mkdir(mode=0o700)
        with pytest.raises(LaunchError, match=r"Could not open stdout file .*Permission denied"):
            run(
                launcher.launch(
                    LaunchSpec(
                        job_id=66,
                        script=b"#!/bin/sh\ntrue\n",
                        work_dir=str(work),
                        stdout=str(private / "out.txt"),
                        uid=NOBODY,
                        gid=user.pw_gid,
                    )
                )
            )
    finally:
        for pid in session_pids(job.sid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        runner.run(asyncio.wait_for(job.wait(), TIMEOUT))
    assert job.exit == JobExit(0, 9)


def test_a_job_killed_before_its_go_ends_as_killed(
    tmp_path: Path, launcher: Launcher, run: Run[Any]
) -> None:
    """A child killed while it waits for the go (its job cancelled as it started) is no
    launch failure: the job ends by its signal, its script never ran."""
    marker = tmp_path / "ran"

    def before_exec(job: RunningJob) -> None:
        os.kill(job.pid, signal.SIGKILL)
        os.waitid(os.P_PID, job.pid, os.WEXITED | os.WNOWAIT)  # gone before the go

    job = run(launcher.launch(spec(tmp_path, f"touch {marker}\n"), before_exec))
    assert run(job.wait()) == JobExit(0, 9)
    assert not marker.exists()
