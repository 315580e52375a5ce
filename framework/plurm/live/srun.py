"""srun: run a job step inside an allocation, as Slurm 22.05's srun does within a batch job.

``srun [options] COMMAND [ARGS...]`` asks plurmctld for a step of the job it runs in
(SLURM_JOB_ID), starts the step's tasks, waits for them, reports the step's end and exits
with the tasks' status: the highest exit code, or 128 plus the signal that killed a task.
The step shows in sacct as ``JOB.STEP``.

How Plurm differs from Slurm, on purpose:

* Only inside an allocation: without SLURM_JOB_ID, srun refuses (exit 1) instead of asking
  for a new allocation as Slurm's srun does. (``srun --version`` works anywhere.)
* Every task runs on this host, as a child of srun: the job's batch host, since srun runs
  from the batch script. The tasks' environment names the node the step's layout gives
  them (:mod:`.steps`), as if they ran there.
* The tasks share srun's standard output and error unless ``--output``/``--error`` name
  files, so there is nothing to buffer and ``--unbuffered`` changes nothing; ``--label``
  is not offered. Task 0 reads srun's standard input, the others /dev/null.
* The tasks of a step form one process group, apart from the batch script's: a signal to
  the job's steps (``RunningJob.signal(steps_only=True)``, preemption's grace time) reaches
  them and spares the batch script and srun itself.

Signals: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM and SIGCONT sent to
srun are forwarded to the step's tasks (their process group). With ``--kill-on-bad-exit``
(``-K``) a task that exits non-zero gets the others SIGKILLed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from plurm import conf
from plurm.commands.base import VERSION_LINE, CommandError
from plurm.commands.options import Option, parse_options
from plurm.controller import RequestError
from plurm.errors import PlurmError
from plurm.live.jobenv import expand_pattern
from plurm.live.rpc import RpcError
from plurm.live.settings import find_conf
from plurm.live.steps import StepLayout, task_environment

__all__ = ["main", "run"]

OPTIONS = (
    Option("ntasks", "n", ("ntasks",)),
    Option("nodes", "N", ("nodes",)),
    Option("ntasks_per_node", None, ("ntasks-per-node",)),
    Option("cpus_per_task", "c", ("cpus-per-task",)),
    Option("output", "o", ("output",)),
    Option("error", "e", ("error",)),
    Option("open_mode", None, ("open-mode",)),
    Option("unbuffered", "u", ("unbuffered",), takes_value=False),
    Option("kill_on_bad_exit", "K", ("kill-on-bad-exit",), takes_value=False),
    Option("export", None, ("export",)),
    Option("job_name", "J", ("job-name",)),
    Option("chdir", "D", ("chdir",)),
    Option("verbose", "v", ("verbose",), takes_value=False),
    Option("quiet", "Q", ("quiet",), takes_value=False),
    Option("version", "V", ("version",), takes_value=False),
)

#: The signals srun passes on to its tasks.
FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGALRM,
    signal.SIGCONT,
)

#: srun's input environment variables: the option each stands for when not given.
_INPUT_ENV = {
    "ntasks": "SLURM_NTASKS",
    "nodes": "SLURM_NNODES",
    "ntasks_per_node": "SLURM_NTASKS_PER_NODE",
    "cpus_per_task": "SLURM_CPUS_PER_TASK",
    "open_mode": "SLURM_OPEN_MODE",
    "export": "SLURM_EXPORT_ENV",
}


class _Fail(Exception):
    """srun stops with ``text`` on stderr and exit ``status``."""

    def __init__(self, text: str, status: int = 1) -> None:
        super().__init__(text)
        self.text = text
        self.status = status


def _positive(name: str, text: str) -> int:
    head = text.split("-", 1)[0] if name == "nodes" else text
    if not (head.isascii() and head.isdigit()) or int(head) < 1:
        what = {"ntasks": "number of tasks", "nodes": "node count"}.get(name, name)
        raise _Fail(f"srun: error: Invalid {what} specification: {text}")
    return int(head)


def _kill_on_bad_exit(argv: list[str]) -> tuple[list[str], bool | None]:
    """-K/--kill-on-bad-exit take an optional 0 or 1 glued to them (``-K0``,
    ``--kill-on-bad-exit=1``): read those here, before the options parser."""
    out: list[str] = []
    chosen: bool | None = None
    for index, word in enumerate(argv):
        if word == "--" or not word.startswith("-"):
            out.extend(argv[index:])
            break
        if word.startswith("--kill-on-bad-exit="):
            chosen = word.partition("=")[2] != "0"
            continue
        if word in ("-K0", "-K1"):
            chosen = word == "-K1"
            continue
        out.append(word)
    return out, chosen


def _export(text: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """--export for a step: ALL (default), NONE (only Slurm's variables), or a list of
    names and NAME=value items (with ALL in it, everything else too)."""
    words = [word for word in (text or "ALL").split(",") if word]
    upper = {word.upper() for word in words}
    if "ALL" in upper:
        chosen = dict(environ)
    else:
        chosen = {k: v for k, v in environ.items() if k.startswith("SLURM_")}
    for word in words:
        if word.upper() in ("ALL", "NONE", "NIL"):
            continue
        name, equals, value = word.partition("=")
        if equals:
            chosen[name] = value
        elif name in environ:
            chosen[name] = environ[name]
    return chosen


def _open_mode(text: str | None) -> str:
    word = (text or "truncate").strip().lower()
    for mode in ("append", "truncate"):
        if word and mode.startswith(word):
            return mode
    raise _Fail(f"srun: error: Invalid --open-mode argument: {text}")


class _Step:
    """The running tasks of one step, and the signals srun passes on to them."""

    def __init__(self) -> None:
        self.pgid = 0
        self.pids: dict[int, int] = {}  # pid -> task id
        self.signalled = False

    def forward(self, signum: int, frame: FrameType | None = None) -> None:
        if self.pgid:
            self.signalled = self.signalled or signum != signal.SIGCONT
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, signum)

    def start(
        self, task_id: int, argv: Sequence[str], env: dict[str, str], fds: tuple[int, int, int]
    ) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child execs or exits
            _exec_task(argv, env, fds, self.pgid)
        with contextlib.suppress(OSError):  # the child may have exec'd already
            os.setpgid(pid, self.pgid or pid)
        if not self.pgid:
            self.pgid = pid
        self.pids[pid] = task_id


def _exec_task(
    argv: Sequence[str], env: dict[str, str], fds: tuple[int, int, int], pgid: int
) -> None:
    """In the forked child: join the step's process group, take the task's files and
    environment, exec the command (slurmstepd's message and the errno as exit code if
    that fails)."""
    try:
        os.setpgid(0, pgid)
        for target, fd in enumerate(fds):
            if fd != target:
                os.dup2(fd, target)
        for number in (signal.SIGPIPE, signal.SIGXFSZ, *FORWARDED):
            signal.signal(number, signal.SIG_DFL)
        env["SLURM_TASK_PID"] = str(os.getpid())
        try:
            os.execvpe(argv[0], list(argv), env)
        except OSError as error:
            text = f"slurmstepd: error: execve(): {argv[0]}: {error.strerror}\n"
            os.write(2, text.encode(errors="replace"))
            os._exit((error.errno or 1) & 255)
    finally:
        os._exit(1)


def _open_outputs(
    layout: StepLayout,
    patterns: tuple[str | None, str | None],
    mode: str,
    names: dict[str, Any],
) -> list[tuple[int, int, int]]:
    """Each task's (stdin, stdout, stderr) descriptors: a named file is opened once, for
    every task whose pattern gives that name."""
    opened: dict[str, int] = {}
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
    if mode == "truncate":
        flags |= os.O_TRUNC

    def fd_for(pattern: str | None, task_id: int, fallback: int) -> int:
        if pattern is None:
            return fallback
        index, _ = layout.placement(task_id)
        name = expand_pattern(
            pattern, task_id=task_id, node_index=index, node=layout.nodes[index], **names
        )
        if name not in opened:
            try:
                opened[name] = os.open(name, flags, 0o666)
            except OSError as error:
                raise _Fail(
                    f"srun: error: Could not open stdout file {name}: {error.strerror}"
                ) from None
        return opened[name]

    devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    fds = []
    for task_id in range(layout.ntasks):
        out = fd_for(patterns[0], task_id, 1)
        err = fd_for(patterns[1], task_id, out if patterns[0] is not None else 2)
        fds.append((0 if task_id == 0 else devnull, out, err))
    return fds


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        text = signal.strsignal(number) or f"Signal {number}"
        return text + (" (core dumped)" if os.WCOREDUMP(status) else "")
    return f"Exited with exit code {os.WEXITSTATUS(status)}"


def _report(layout: StepLayout, statuses: dict[int, int], signalled: bool) -> str:
    """srun's lines for the tasks that failed, one per node and kind of end."""
    lines = []
    for index, node in enumerate(layout.nodes):
        groups: dict[str, list[int]] = {}
        for task_id in layout.node_task_ids(index):
            status = statuses.get(task_id, 0)
            failed = os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0
            if failed or (os.WIFSIGNALED(status) and not signalled):
                groups.setdefault(_describe(status), []).append(task_id)
        for text, ids in groups.items():
            word = "task" if len(ids) == 1 else "tasks"
            lines.append(f"srun: error: {node}: {word} {_id_ranges(ids)}: {text}\n")
    return "".join(lines)


def _id_ranges(ids: list[int]) -> str:
    """Task ids as Slurm lists them: ``0-2,5``."""
    runs: list[list[int]] = []
    for task_id in sorted(ids):
        if runs and runs[-1][1] == task_id - 1:
            runs[-1][1] = task_id
        else:
            runs.append([task_id, task_id])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def run(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> int:
    """Run srun's command line; its exit status."""
    environ = dict(os.environ if environ is None else environ)
    try:
        return _run(list(argv), environ)
    except _Fail as failure:
        sys.stderr.write(failure.text if failure.text.endswith("\n") else failure.text + "\n")
        return failure.status


def _run(argv: list[str], environ: dict[str, str]) -> int:
    argv, kill_choice = _kill_on_bad_exit(argv)
    try:
        found, command = parse_options("srun", argv, OPTIONS, stop_at_first_argument=True)
    except CommandError as error:
        raise _Fail(error.text, error.status) from None
    values: dict[str, str | None] = dict(found)
    if "version" in values:
        sys.stdout.write(VERSION_LINE + "\n")
        return 0
    for name, variable in _INPUT_ENV.items():
        if name not in values and environ.get(variable):
            values[name] = environ[variable]
    if not command:
        raise _Fail("srun: fatal: No command given to execute.")
    job_text = environ.get("SLURM_JOB_ID") or environ.get("SLURM_JOBID")
    if not job_text:
        raise _Fail(
            "srun: error: Plurm's srun runs job steps inside an allocation only "
            "(SLURM_JOB_ID is not set): run it from a batch job (sbatch)"
        )
    if not (job_text.isascii() and job_text.isdigit()):
        raise _Fail(f"srun: error: Invalid job id {job_text}")
    job_id = int(job_text)
    ntasks = _positive("ntasks", str(values["ntasks"])) if values.get("ntasks") else None
    nodes = _positive("nodes", str(values["nodes"])) if values.get("nodes") else None
    per_node = (
        _positive("ntasks-per-node", str(values["ntasks_per_node"]))
        if values.get("ntasks_per_node")
        else None
    )
    cpt_given = bool(values.get("cpus_per_task"))
    cpus_per_task = _positive("cpus-per-task", str(values["cpus_per_task"])) if cpt_given else 1
    job_nodes = environ.get("SLURM_JOB_NUM_NODES") or environ.get("SLURM_NNODES")
    if nodes is not None and job_nodes and job_nodes.isdigit() and nodes > int(job_nodes):
        raise _Fail(f"srun: error: Only allocated {job_nodes} nodes asked for {nodes}")
    if nodes is not None and ntasks is not None and ntasks < nodes:
        sys.stderr.write(
            f"srun: Warning: can't run {ntasks} processes on {nodes} nodes, "
            f"setting nnodes to {ntasks}\n"
        )
        nodes = ntasks
    mode = _open_mode(values.get("open_mode"))
    if values.get("chdir"):
        try:
            os.chdir(str(values["chdir"]))
        except OSError as error:
            raise _Fail(f"srun: error: chdir({values['chdir']}): {error.strerror}") from None
    kill_bad = kill_choice if kill_choice is not None else "kill_on_bad_exit" in values
    if kill_choice is None and "kill_on_bad_exit" not in values:
        kill_bad = environ.get("SLURM_KILL_BAD_EXIT", "0") not in ("", "0")
    name = str(values.get("job_name") or Path(command[0]).name)

    from plurm.live.client import RpcClient

    try:
        client = RpcClient(conf.load(str(find_conf())))
        answer = client.call(
            "step_start",
            {
                "job_id": job_id,
                "name": name,
                "ntasks": ntasks,
                "nodes": nodes,
                "ntasks_per_node": per_node,
                "cpus_per_task": cpus_per_task,
            },
        )
    except RequestError as error:
        raise _Fail(
            f"srun: error: Unable to create step for job {job_id}: {error.message}"
        ) from None
    except RpcError as error:
        if error.kind == "unreachable":
            raise _Fail(
                "srun: error: Unable to contact slurm controller (connect failure)"
            ) from None
        raise _Fail(f"srun: error: {error.message}") from None
    except PlurmError as error:
        raise _Fail(f"srun: error: {error}") from None
    step_id = int(answer["step_id"])
    layout = StepLayout(answer["nodes"], answer["tasks"])
    job_cpus = dict(zip(answer["job_nodes"], answer["job_cpus"], strict=True))
    base = _export(values.get("export"), environ)
    names = {
        "job_id": job_id,
        "job_name": environ.get("SLURM_JOB_NAME", name),
        "user": environ.get("SLURM_JOB_USER") or environ.get("USER", ""),
        "array_job_id": _int_or_none(environ.get("SLURM_ARRAY_JOB_ID")),
        "array_task_id": _int_or_none(environ.get("SLURM_ARRAY_TASK_ID")),
        "step_id": step_id,
    }
    step = _Step()
    statuses: dict[int, int] = {}
    try:
        fds = _open_outputs(layout, (values.get("output"), values.get("error")), mode, names)
        for task_id in range(layout.ntasks):
            env = task_environment(
                base,
                job_id=job_id,
                step_id=step_id,
                layout=layout,
                task_id=task_id,
                job_cpus=job_cpus,
                cpus_per_task=cpus_per_task if cpt_given else None,
            )
            step.start(task_id, command, env, fds[task_id])
        for number in FORWARDED:
            signal.signal(number, step.forward)
        statuses = _wait(step, kill_bad)
    except _Fail:
        for pid in step.pids:  # tasks started before the failure go down with the step
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        statuses = _wait(step, False) if step.pids else {}
        _end(client, job_id, step_id, 1, 0)
        raise
    code, killed = _step_exit(statuses.values())
    sys.stderr.write(_report(layout, statuses, step.signalled))
    _end(client, job_id, step_id, code, killed)
    return 128 + killed if killed else code


def _int_or_none(text: str | None) -> int | None:
    return int(text) if text and text.isascii() and text.isdigit() else None


def _wait(step: _Step, kill_bad: bool) -> dict[int, int]:
    """Wait for every task; their wait statuses by task id."""
    statuses: dict[int, int] = {}
    while len(statuses) < len(step.pids):
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid not in step.pids:
            continue
        statuses[step.pids[pid]] = status
        bad = not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0
        if kill_bad and bad and len(statuses) < len(step.pids):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(step.pgid, signal.SIGKILL)
    return statuses


def _step_exit(statuses: Iterable[int]) -> tuple[int, int]:
    """The step's exit code (the highest) and signal (of a killed task, if any)."""
    code = number = 0
    for status in statuses:
        if os.WIFSIGNALED(status):
            number = number or os.WTERMSIG(status)
        else:
            code = max(code, os.WEXITSTATUS(status))
    return code, number


def _end(client: Any, job_id: int, step_id: int, code: int, number: int) -> None:
    try:
        client.call(
            "step_end", {"job_id": job_id, "step_id": step_id, "exit_code": code, "signal": number}
        )
    except (RpcError, RequestError) as error:
        sys.stderr.write(
            f"srun: error: could not report the end of step {job_id}.{step_id}: {error}\n"
        )


def main() -> None:
    """The ``srun`` console script."""
    sys.exit(run(sys.argv[1:]))
