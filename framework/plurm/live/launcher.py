"""The job processes of one node: start a batch script, signal it, reap it.

``plurmd`` calls this from its asyncio event loop. Nothing here blocks the loop for long:
exits are noticed through a pidfd (``os.pidfd_open`` + ``loop.add_reader``) and reaped with a
non-blocking wait, with no thread per job, and timers are ``loop.call_later``.

How a job starts (slurmstepd's order, Slurm 22.05):

1. The script is written to ``<spool>/job<5-digit id>/slurm_script`` (mode 0700; when the
   daemon runs as root the folder and the file are given to the job's user).
2. The daemon forks a child, which starts a new session (so the job's session id is its
   pid) with ``/dev/null`` as standard input and closes every other descriptor. When the
   daemon is root, the child takes the job's supplementary groups, gid and uid before it
   touches any of the user's files; a daemon that is not root refuses a job of another uid
   (:class:`LaunchError`). (The child is a fork of the daemon, which is single-threaded,
   and calls only the ``os`` functions below before ``exec``: it needs no interpreter of its
   own, which a ``python -I -S`` helper cost, about 15 ms of CPU per job.)
3. As the user, the child opens the output file(s): relative names are relative to the
   working directory, "truncate" or "append" as asked, stderr None meaning the same file.
   When a file cannot be opened, Slurm's slurmstepd logs "Could not open stdout file ...: "
   with the reason and the batch job fails without running; here :meth:`Launcher.launch`
   raises :class:`LaunchError` with that text (the child has already exited and been
   reaped), and plurmd reports the job as failed (:data:`LaunchError.job_exit`, exit 1).
4. As the user, it changes to the working directory. Like slurmstepd, a directory that is
   missing or not accessible is not fatal: the job's stderr gets "couldn't chdir to `DIR':
   REASON: going to /tmp instead" and the script runs in /tmp.
5. It tells the daemon it is ready and waits. The daemon hands the session to the job
   accounting plugins (:meth:`Launcher.launch`'s ``before_exec``: jobacct_gather/cgroup puts
   it in the job's cgroup), then lets it go, so that every process of the script is born
   where its limits hold: slurmstepd's children wait on a pipe the same way until their
   containers are ready. A child whose daemon went away meanwhile exits without running.
6. It sets ``SLURM_TASK_PID`` to its own pid and ``exec``s the script. When the exec fails
   (a ``#!`` interpreter that does not exist, a script on a ``noexec`` mount), the job's
   stderr gets "execve(): SCRIPT: REASON" and the job ends with the errno as its exit code,
   as slurmstepd's task does.

Every process of a job is a process whose session id is the job's: :meth:`RunningJob.pids`
finds them in /proc, never by name. A process that leaves the session (``setsid``,
a daemonizing double fork with setsid) escapes the launcher's signals and is out of scope:
Slurm needs a cgroup for those, which is not this module's business.

When the batch script exits, whatever is left in its session is SIGKILLed, as slurmstepd
kills what is left in the step's container.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno as errno_mod
import logging
import os
import pwd
import resource
import shutil
import signal as signal_mod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import ClassVar, Literal

import attrs

from plurm.errors import PlurmError
from plurm.gather.procfs import stat_fields

__all__ = [
    "SUSPEND_GRACE",
    "JobExit",
    "LaunchError",
    "LaunchSpec",
    "Launcher",
    "RunningJob",
    "job_dir",
    "session_pids",
]

logger = logging.getLogger(__name__)

#: Slurm 22.05 sends SIGTSTP, waits 2 seconds, then sends SIGSTOP when it suspends a step.
SUSPEND_GRACE = 2.0
#: How many rounds of "find the processes, signal the new ones" a signal gets, to catch
#: processes forked while the previous round was being sent.
_SIGNAL_ROUNDS = 5
#: How often the exit of a job is polled where pidfds are not available.
_POLL_INTERVAL = 0.1


@attrs.frozen
class JobExit:
    """How a batch script ended, as Slurm's ``ExitCode=code:signal``.

    ``exit 3`` gives ``JobExit(3, 0)``; a script killed by SIGTERM gives ``JobExit(0, 15)``.
    """

    exit_code: int
    signal: int

    @classmethod
    def from_returncode(cls, returncode: int) -> JobExit:
        """From :attr:`subprocess.Popen.returncode` (negative: the killing signal)."""
        if returncode < 0:
            return cls(0, -returncode)
        return cls(returncode, 0)

    def __str__(self) -> str:
        return f"{self.exit_code}:{self.signal}"


class LaunchError(PlurmError):
    """A job that could not be started; the message reads like slurmstepd's log line."""

    #: What plurmd reports for a job that could not be started.
    job_exit: ClassVar[JobExit] = JobExit(1, 0)

    def __init__(self, job_id: int, message: str) -> None:
        super().__init__(f"job_id={job_id}: {message}")
        self.job_id = job_id
        self.reason = message


def _env_converter(env: Mapping[str, str]) -> Mapping[str, str]:
    return dict(env)


def _argv_converter(argv: Sequence[str]) -> tuple[str, ...]:
    return tuple(argv)


@attrs.frozen(kw_only=True)
class LaunchSpec:
    """One batch job to start on this node.

    ``stdout`` and ``stderr`` are file names after pattern expansion
    (:func:`plurm.live.jobenv.expand_pattern`); relative ones are relative to ``work_dir``.
    ``stderr`` None sends stderr to the stdout file. ``env`` is the whole environment of the
    script (:func:`plurm.live.jobenv.job_environment`). ``spool_dir`` None uses the
    launcher's. ``umask`` is the one the job's files are created with (Slurm takes the
    submitter's, SLURM_UMASK).
    """

    job_id: int
    script: bytes
    argv: tuple[str, ...] = attrs.field(default=(), converter=_argv_converter)
    work_dir: str
    stdout: str
    stderr: str | None = None
    open_mode: Literal["truncate", "append"] = attrs.field(
        default="truncate", validator=attrs.validators.in_(("truncate", "append"))
    )
    env: Mapping[str, str] = attrs.field(factory=dict, converter=_env_converter)
    uid: int
    gid: int
    spool_dir: str | None = None
    umask: int = 0o022


def job_dir(spool_dir: str | os.PathLike[str], job_id: int) -> Path:
    """Where slurmd keeps a batch job's script: ``<spool>/job<5-digit id>``."""
    return Path(spool_dir) / f"job{job_id:05d}"


# ------------------------------------------------------------------------------ processes


def _stat_fields(pid: int) -> tuple[str, int] | None:
    """(state, session id) of a process from /proc/PID/stat, None when it is gone."""
    fields = stat_fields(pid)
    if fields is None:
        return None
    try:
        return fields[0].decode(), int(fields[3])
    except (IndexError, ValueError):
        return None


def session_pids(sid: int) -> list[int]:
    """Every live (not zombie) process whose session id is ``sid``, leader first."""
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:  # pragma: no cover - /proc is always there on Linux
        return found
    for name in entries:
        if not name.isdigit():
            continue
        pid = int(name)
        fields = _stat_fields(pid)
        if fields is not None and fields[1] == sid and fields[0] not in ("Z", "X"):
            found.append(pid)
    found.sort(key=lambda pid: (pid != sid, pid))
    return found


def _send(pid: int, sid: int, signum: int) -> bool:
    """Signal ``pid`` if it is (still) in session ``sid``; True when it was signalled.

    A pidfd pins the process, so a pid recycled between the scan and the signal is
    never hit: the session is checked again after the pidfd is open.
    """
    pidfd = -1
    try:
        with contextlib.suppress(OSError):
            pidfd = os.pidfd_open(pid)
        fields = _stat_fields(pid)
        if fields is None or fields[1] != sid:
            return False
        if pidfd >= 0:
            signal_mod.pidfd_send_signal(pidfd, signum)
        else:  # pragma: no cover - kernels before 5.3
            os.kill(pid, signum)
        return True
    except (ProcessLookupError, PermissionError):
        return False
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def _process_group(pid: int) -> int | None:
    """The process group of ``pid`` (None when it is gone)."""
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def _signal_session(
    sid: int, signum: int, *, only: int | None = None, spare_group: int | None = None
) -> int:
    """Send ``signum`` to every process of session ``sid`` (or only to pid ``only``; or to
    all but those of process group ``spare_group``).

    Repeats the scan a few times so that processes forked meanwhile are caught too.
    Returns how many processes were signalled.
    """
    if only is not None:
        return int(_send(only, sid, signum))
    done: set[int] = set()
    for _ in range(_SIGNAL_ROUNDS):
        fresh = [
            pid
            for pid in session_pids(sid)
            if pid not in done
            and (spare_group is None or _process_group(pid) not in (spare_group, None))
        ]
        if not fresh:
            break
        for pid in fresh:
            if _send(pid, sid, signum):
                done.add(pid)
    return len(done)


# ---------------------------------------------------------------------------- exec child


@attrs.frozen
class _ChildPlan:
    """What the forked child does before it execs the script (all worked out before the
    fork, so that the child only makes system calls)."""

    report: int
    #: The read end of the pipe the daemon lets the child go by (one byte; EOF: exit).
    go: int
    uid: int
    gid: int
    groups: tuple[int, ...]
    stdout: str
    stderr: str
    open_mode: str
    work_dir: str
    umask: int
    script: str
    argv: tuple[str, ...]
    env: dict[str, str]


def _say(report: int, kind: str, text: str) -> None:
    """One line to the daemon: "E text" (fatal, before exec), "W text" (warning) or
    "R ready" (waiting for the go)."""
    os.write(report, (kind + " " + text.replace("\n", " ") + "\n").encode(errors="replace"))


def _exec_child(plan: _ChildPlan) -> None:
    """In the forked child: become the job's session leader and user, open its output,
    change to its directory and exec the script; never returns. Reports on ``plan.report``,
    which is close-on-exec, so the daemon sees EOF once the script runs."""
    report = plan.report
    try:
        # the daemon's signal handlers (SIGTERM, SIGINT) are not the job's
        for number in (signal_mod.SIGTERM, signal_mod.SIGINT, signal_mod.SIGHUP):
            signal_mod.signal(number, signal_mod.SIG_DFL)
        signal_mod.set_wakeup_fd(-1)
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        low, high = sorted((report, plan.go))
        os.closerange(3, low)
        os.closerange(low + 1, high)
        os.closerange(high + 1, _max_fd())
        os.umask(plan.umask)
        os.chdir("/")
        if os.getuid() == 0 and plan.uid != 0:
            os.setgroups(list(plan.groups))
            os.setresgid(plan.gid, plan.gid, plan.gid)
            os.setresuid(plan.uid, plan.uid, plan.uid)
        wd = plan.work_dir
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        flags |= 0 if plan.open_mode == "append" else os.O_TRUNC

        def place(name: str) -> str:
            return name if os.path.isabs(name) else os.path.join(wd, name)

        try:
            fd = os.open(place(plan.stdout), flags, 0o666)
        except OSError as e:
            _say(report, "E", f"Could not open stdout file {place(plan.stdout)}: {e.strerror}")
            os._exit(1)
        os.dup2(fd, 1)
        if plan.stderr:
            try:
                efd = os.open(place(plan.stderr), flags, 0o666)
            except OSError as e:
                text = f"Could not open stderr file {place(plan.stderr)}: {e.strerror}"
                _say(report, "E", text)
                os._exit(1)
            os.dup2(efd, 2)
            os.close(efd)
        else:
            os.dup2(fd, 2)
        os.close(fd)
        try:
            os.chdir(wd)
        except OSError as e:
            text = f"couldn't chdir to `{wd}': {e.strerror}: going to /tmp instead"
            os.write(2, ("plurmstepd: error: " + text + "\n").encode(errors="replace"))
            _say(report, "W", text)
            os.chdir("/tmp")
        for number in (signal_mod.SIGPIPE, signal_mod.SIGXFSZ):
            signal_mod.signal(number, signal_mod.SIG_DFL)
        env = dict(plan.env)
        env["SLURM_TASK_PID"] = str(os.getpid())
        _say(report, "R", "ready")
        if os.read(plan.go, 1) != b"1":  # the daemon went away before its go
            os._exit(1)
        try:
            os.execve(plan.script, [plan.script, *plan.argv], env)
        except OSError as e:
            text = f"execve(): {plan.script}: {e.strerror}"
            os.write(2, ("plurmstepd: error: " + text + "\n").encode(errors="replace"))
            _say(report, "W", text)
            os._exit((e.errno or 1) & 255)
    except BaseException as e:  # the child must never return to the loop
        with contextlib.suppress(BaseException):
            _say(report, "E", f"launch failed: {e!r}")
    finally:
        os._exit(1)


def _max_fd() -> int:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return soft if 0 < soft < 1 << 20 else 1 << 16


class _Child:
    """The forked child as :class:`RunningJob` sees a process: its pid and exit status."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


# ---------------------------------------------------------------------------- running job


class RunningJob:
    """A started batch job: its processes, its signals and its end."""

    def __init__(
        self,
        spec: LaunchSpec,
        process: _Child,
        script_dir: Path,
        loop: asyncio.AbstractEventLoop,
        on_end: _EndCallback,
    ) -> None:
        self.spec = spec
        self.job_id = spec.job_id
        self.pid = process.pid
        #: The job's session id (the script was started as a session leader).
        self.sid = process.pid
        self._process = process
        self._script_dir = script_dir
        self._loop = loop
        self._on_end = on_end
        self._done: asyncio.Future[JobExit] = loop.create_future()
        self._suspended = False
        #: The batch script's resource usage when it was reaped (None until then).
        self.rusage: resource.struct_rusage | None = None
        #: The node daemon's peak resident size when it forked the job (bytes): Linux
        #: keeps a process's peak size across exec, and a forked child's starts from its
        #: parent's size (a vforked one's from its parent's peak), so the script's
        #: ``ru_maxrss`` may be as large as this whatever the script used.
        self.inherited_rss = 0
        self._lock = asyncio.Lock()
        self._kill_timer: asyncio.TimerHandle | None = None
        self._poll_timer: asyncio.TimerHandle | None = None
        self._pidfd = -1
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except OSError:  # pragma: no cover - kernels before 5.3: poll instead
            self._poll_timer = loop.call_later(_POLL_INTERVAL, self._poll)
        else:
            loop.add_reader(self._pidfd, self._reap)

    # ---- state

    @property
    def ended(self) -> bool:
        """Whether the batch script has exited (and been reaped)."""
        return self._done.done()

    @property
    def suspended(self) -> bool:
        """Whether the job is suspended (from the start of :meth:`suspend` to :meth:`resume`)."""
        return self._suspended

    @property
    def exit(self) -> JobExit | None:
        """How the script ended, None while it runs."""
        return self._done.result() if self._done.done() else None

    async def wait(self) -> JobExit:
        """Wait for the batch script to end; its exit code and signal."""
        return await asyncio.shield(self._done)

    def pids(self) -> list[int]:
        """Every live process of the job (its session), the script first when it runs."""
        return session_pids(self.sid)

    # ---- signals

    def signal(self, signum: int, *, steps_only: bool = False, batch_only: bool = False) -> int:
        """Send ``signum`` as ``scancel --signal`` does; how many processes got it.

        By default every process of the job gets it (``scancel --full``). ``batch_only``
        signals only the batch shell (``scancel --batch``), ``steps_only`` spares the batch
        step (plain ``scancel --signal``): it reaches the tasks of the job's steps, which
        srun starts in process groups of their own (:mod:`plurm.live.srun`), and no process
        of the batch script's group (the script, srun, what the script runs itself).
        SIGKILL always goes to every process, as in Slurm.
        """
        if self.ended:
            return 0
        if signum == signal_mod.SIGKILL:
            steps_only = batch_only = False
        if steps_only:
            count = _signal_session(self.sid, signum, spare_group=self.sid)
            logger.info("signal job_id=%d sig=%d steps processes=%d", self.job_id, signum, count)
            return count
        count = _signal_session(self.sid, signum, only=self.pid if batch_only else None)
        logger.info("signal job_id=%d sig=%d processes=%d", self.job_id, signum, count)
        return count

    async def suspend(self, grace: float = SUSPEND_GRACE) -> bool:
        """Suspend the job as Slurm 22.05 does: SIGTSTP, ``grace`` seconds, then SIGSTOP.

        SIGTSTP first lets programs that catch it (MPI launchers) stop their own tasks;
        SIGSTOP then stops everything. False when the job had ended or was suspended already.
        """
        async with self._lock:
            if self.ended or self._suspended:
                return False
            self._suspended = True
            _signal_session(self.sid, signal_mod.SIGTSTP)
            if grace > 0:
                await asyncio.sleep(grace)
            if self._suspended and not self.ended:
                count = _signal_session(self.sid, signal_mod.SIGSTOP)
                logger.info("suspend job_id=%d processes=%d", self.job_id, count)
            return True

    async def resume(self) -> bool:
        """SIGCONT to every process; False when the job was not suspended."""
        async with self._lock:
            if self.ended or not self._suspended:
                return False
            self._suspended = False
            count = _signal_session(self.sid, signal_mod.SIGCONT)
            logger.info("resume job_id=%d processes=%d", self.job_id, count)
            return True

    def kill(self, kill_wait: float) -> None:
        """End the job as slurmd does: SIGCONT and SIGTERM now, SIGKILL ``kill_wait`` s later.

        A suspended job gets SIGKILL at once (slurmd does not bother with a nice end for a
        suspended step). Slurm waits ``max(KillWait, 5)`` seconds; the caller passes that.
        """
        if self.ended:
            return
        if self._suspended:
            count = _signal_session(self.sid, signal_mod.SIGKILL)
            logger.info("kill job_id=%d suspended sigkill processes=%d", self.job_id, count)
            return
        _signal_session(self.sid, signal_mod.SIGCONT)
        count = _signal_session(self.sid, signal_mod.SIGTERM)
        logger.info(
            "kill job_id=%d sigterm processes=%d kill_wait=%s", self.job_id, count, kill_wait
        )
        if self._kill_timer is None:
            self._kill_timer = self._loop.call_later(max(0.0, kill_wait), self._kill_now)

    def _kill_now(self) -> None:
        self._kill_timer = None
        count = _signal_session(self.sid, signal_mod.SIGKILL)
        if count:
            logger.info("kill job_id=%d sigkill processes=%d", self.job_id, count)

    # ---- end

    def _poll(self) -> None:  # pragma: no cover - kernels before 5.3
        self._poll_timer = None
        if not self._reap():
            self._poll_timer = self._loop.call_later(_POLL_INTERVAL, self._poll)

    def _reap(self) -> bool:
        """Collect the exit status if the script has exited; True when it has."""
        if self._done.done():
            return True
        if self._process.returncode is None:
            # reap with wait4 for the script's resource usage (its own and that of the
            # children it waited for), then let Popen see the status
            with contextlib.suppress(ChildProcessError):
                pid, status, usage = os.wait4(self.pid, os.WNOHANG)
                if pid == self.pid:
                    self._process.returncode = os.waitstatus_to_exitcode(status)
                    self.rusage = usage
        returncode = self._process.poll()
        if returncode is None:
            return False
        if self._pidfd >= 0:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = -1
        if self._kill_timer is not None:
            self._kill_timer.cancel()
            self._kill_timer = None
        self._suspended = False
        leftover = _signal_session(self.sid, signal_mod.SIGKILL)
        shutil.rmtree(self._script_dir, ignore_errors=True)
        result = JobExit.from_returncode(returncode)
        logger.info(
            "ended job_id=%d pid=%d exit=%s leftover_killed=%d",
            self.job_id,
            self.pid,
            result,
            leftover,
        )
        self._done.set_result(result)
        self._on_end(self)
        return True

    def __repr__(self) -> str:
        state = "ended" if self.ended else "suspended" if self._suspended else "running"
        return f"<RunningJob job_id={self.job_id} pid={self.pid} {state}>"


class _EndCallback:
    """The launcher's bookkeeping when a job ends (a class so mypy sees its signature)."""

    def __init__(self, running: dict[int, RunningJob]) -> None:
        self._running = running

    def __call__(self, job: RunningJob) -> None:
        if self._running.get(job.job_id) is job:
            del self._running[job.job_id]


# ------------------------------------------------------------------------------- launcher


class Launcher:
    """Starts and tracks the batch jobs of one node (one per job id at a time)."""

    def __init__(self, spool_dir: str | os.PathLike[str]) -> None:
        self.spool_dir = Path(spool_dir)
        self._running: dict[int, RunningJob] = {}
        self._end = _EndCallback(self._running)

    def running(self) -> dict[int, RunningJob]:
        """The jobs whose script still runs, by job id."""
        return dict(self._running)

    async def launch(
        self, spec: LaunchSpec, before_exec: Callable[[RunningJob], object] | None = None
    ) -> RunningJob:
        """Start ``spec``'s script; :class:`LaunchError` when it cannot start (module doc).

        ``before_exec`` is called with the job once its session exists, before the script
        runs (a failure there is logged and the job runs on)."""
        loop = asyncio.get_running_loop()
        job_id = spec.job_id
        if job_id in self._running:
            raise LaunchError(job_id, "the job is already running on this node")
        as_root = os.geteuid() == 0
        if not as_root and spec.uid != os.geteuid():
            raise LaunchError(
                job_id,
                f"cannot run a job of uid {spec.uid}: the daemon runs as uid {os.geteuid()}, "
                "not root",
            )
        groups = _groups_of(spec.uid, spec.gid) if as_root else []
        script_dir = job_dir(spec.spool_dir or self.spool_dir, job_id)
        try:
            script = _write_script(script_dir, spec, chown=as_root)
        except OSError as error:
            shutil.rmtree(script_dir, ignore_errors=True)
            raise LaunchError(job_id, f"could not write {script_dir}: {error.strerror}") from error
        env = {key: value for key, value in spec.env.items() if key != "SLURM_TASK_PID"}
        read_end, write_end = os.pipe2(os.O_CLOEXEC)
        go_read, go_write = os.pipe2(os.O_CLOEXEC)
        plan = _ChildPlan(
            report=write_end,
            go=go_read,
            uid=spec.uid,
            gid=spec.gid,
            groups=tuple(groups),
            stdout=spec.stdout,
            stderr=spec.stderr or "",
            open_mode=spec.open_mode,
            work_dir=spec.work_dir,
            umask=spec.umask,
            script=str(script),
            argv=tuple(spec.argv),
            env=env,
        )
        try:
            # this daemon's peak size, which the child's peak starts from (see inherited_rss)
            own_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            pid = os.fork()
        except OSError as error:
            for fd in (read_end, write_end, go_read, go_write):
                os.close(fd)
            shutil.rmtree(script_dir, ignore_errors=True)
            raise LaunchError(job_id, f"could not start the job: {error}") from error
        if pid == 0:  # pragma: no cover - the child execs or exits (coverage never sees it)
            _exec_child(plan)
        os.close(write_end)
        os.close(go_read)
        process = _Child(pid)
        job = RunningJob(spec, process, script_dir, loop, self._end)
        job.inherited_rss = own_peak
        self._running[job_id] = job
        lines = _Lines(loop, read_end)
        try:
            report = await lines.until("R ")
            if report[-1:] == ["R ready"]:
                if before_exec is not None:
                    try:
                        before_exec(job)
                    except Exception:  # a plugin's failure must not hold the job forever
                        logger.exception("before the script of job_id=%d", job_id)
                with contextlib.suppress(BrokenPipeError):  # (it was killed meanwhile)
                    os.write(go_write, b"1")
                report += await lines.until(None)
        except BaseException:
            # Cancelled while the child was starting: take the job down with us.
            job.signal(signal_mod.SIGKILL)
            raise
        finally:
            os.close(go_write)
            lines.close()
        fatal = [line[2:] for line in report if line.startswith("E ")]
        for line in report:
            if line.startswith("W "):
                logger.warning("launch job_id=%d: %s", job_id, line[2:])
        if fatal:
            await job.wait()
            logger.error("launch failed job_id=%d: %s", job_id, fatal[0])
            raise LaunchError(job_id, fatal[0])
        logger.info("launched job_id=%d pid=%d uid=%d", job_id, job.pid, spec.uid)
        return job

    async def kill_all(self, kill_wait: float = 0.0) -> None:
        """Kill every running job (:meth:`RunningJob.kill`) and wait until all have ended."""
        jobs = list(self._running.values())
        for job in jobs:
            job.kill(kill_wait)
        if jobs:
            await asyncio.gather(*(job.wait() for job in jobs))


def _groups_of(uid: int, gid: int) -> list[int]:
    """The user's supplementary groups (with ``gid``); only ``gid`` for an unknown uid."""
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        return [gid]
    return sorted(set(os.getgrouplist(name, gid)))


def _write_script(script_dir: Path, spec: LaunchSpec, *, chown: bool) -> Path:
    """Write the batch script as slurmd does: ``job<id>/slurm_script``, 0700, the user's."""
    script_dir.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        script_dir.mkdir(mode=0o700)
    os.chmod(script_dir, 0o700)
    if chown:
        os.chown(script_dir, spec.uid, spec.gid)
    path = script_dir / "slurm_script"
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o700)
    try:
        os.fchmod(fd, 0o700)
        if chown:
            os.fchown(fd, spec.uid, spec.gid)
        view = memoryview(spec.script)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return path


class _Lines:
    """The child's report pipe, read line by line without blocking the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        os.set_blocking(fd, False)
        self._loop = loop
        self._fd: int | None = fd
        self._pending = b""
        self._eof = False

    async def until(self, prefix: str | None) -> list[str]:
        """The lines up to and with the first that starts with ``prefix``, or to EOF."""
        found: list[str] = []
        while True:
            while b"\n" in self._pending:
                raw, _, self._pending = self._pending.partition(b"\n")
                found.append(raw.decode(errors="replace"))
                if prefix is not None and found[-1].startswith(prefix):
                    return found
            if self._eof or self._fd is None:
                if self._pending:
                    found.append(self._pending.decode(errors="replace"))
                    self._pending = b""
                return found
            await self._read()

    async def _read(self) -> None:
        fd = self._fd
        assert fd is not None
        ready: asyncio.Future[None] = self._loop.create_future()

        def readable() -> None:
            if not ready.done():
                ready.set_result(None)

        self._loop.add_reader(fd, readable)
        try:
            await ready
        finally:
            self._loop.remove_reader(fd)
        while True:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                return
            except OSError as error:  # pragma: no cover - a pipe read does not fail
                if error.errno == errno_mod.EINTR:
                    continue
                data = b""
            if not data:
                self._eof = True
                return
            self._pending += data

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
