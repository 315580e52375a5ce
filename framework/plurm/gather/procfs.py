"""What /proc says about processes: memory, CPU time and page faults, one read of
``/proc/PID/stat`` each (the fields jobacct_gather/linux reads), and the step and task a
process belongs to, from the environment srun gives its tasks."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

__all__ = ["PAGE_SIZE", "ProcStat", "read_stat", "scan", "start_time", "stat_fields", "task_of"]

#: Bytes per memory page (RSS is counted in pages).
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
#: Clock ticks per second (CPU times are counted in ticks).
_TICKS = os.sysconf("SC_CLK_TCK")


@attrs.frozen
class ProcStat:
    """One process at one moment: sizes in bytes, CPU times in seconds, ``majflt`` the
    major page faults so far (Slurm's "pages"), ``start`` its start time in ticks since boot
    (with ``pid``, who it is)."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int
    rss: int
    vsize: int
    majflt: int
    user: float
    system: float

    @property
    def key(self) -> tuple[int, int]:
        return (self.pid, self.start)


def stat_fields(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name (``[0]`` the state, ``[3]``
    the session, ``[19]`` the start time), or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    # The command name is in parentheses and may hold anything: split after the last ")".
    return data[data.rfind(b")") + 2 :].split()


def start_time(pid: int) -> int | None:
    """A process's start time (clock ticks since boot), to tell it from a later process
    with the same pid; None when it is gone."""
    fields = stat_fields(pid)
    try:
        return None if fields is None else int(fields[19])
    except (IndexError, ValueError):
        return None


def read_stat(pid: int) -> ProcStat | None:
    """Process ``pid`` now; None when it is gone (or a zombie: it holds no memory)."""
    fields = stat_fields(pid)
    if fields is None:
        return None
    try:
        if fields[0] in (b"Z", b"X"):
            return None
        return ProcStat(
            pid=pid,
            ppid=int(fields[1]),
            pgid=int(fields[2]),
            sid=int(fields[3]),
            start=int(fields[19]),
            rss=max(0, int(fields[21])) * PAGE_SIZE,
            vsize=int(fields[20]),
            majflt=int(fields[9]),
            user=int(fields[11]) / _TICKS,
            system=int(fields[12]) / _TICKS,
        )
    except (IndexError, ValueError):
        return None


def scan(sessions: set[int]) -> dict[int, list[ProcStat]]:
    """Every live process whose session is one of ``sessions``, by session."""
    found: dict[int, list[ProcStat]] = {sid: [] for sid in sessions}
    if not sessions:
        return found
    try:
        names = os.listdir("/proc")
    except OSError:  # pragma: no cover - /proc is always there on Linux
        return found
    for name in names:
        if not name.isdigit():
            continue
        stat = read_stat(int(name))
        if stat is not None and stat.sid in found:
            found[stat.sid].append(stat)
    return found


def task_of(stat: ProcStat) -> tuple[str, int]:
    """(step, task id) of a process of a job: the batch step's single task when it is in
    the job's own process group (the batch script, srun, what the script runs), else the
    srun step and task its environment names (SLURM_STEP_ID, SLURM_PROCID)."""
    if stat.pgid == stat.sid:
        return ("batch", 0)
    for pid in (stat.pid, stat.pgid):
        env = _environ(pid)
        step = env.get(b"SLURM_STEP_ID")
        if step is not None and step.isdigit():
            task = env.get(b"SLURM_PROCID", b"0")
            return (step.decode(), int(task) if task.isdigit() else 0)
    return ("batch", 0)


def _environ(pid: int) -> dict[bytes, bytes]:
    try:
        data = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    found = {}
    for item in data.split(b"\0"):
        name, equals, value = item.partition(b"=")
        if equals:
            found[name] = value
    return found
