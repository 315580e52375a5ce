"""A local cluster: ``plurmctld`` and one ``plurmd`` per node of a slurm.conf, started on this
host, detached, and stopped again with every job process they started.

Each daemon runs in its own session with its log (``<name>.log``) and pid file
(``<name>.pid``: the pid and the process's start time, so that a later process that reuses
the pid is never taken for it) in the StateSaveLocation. ``up`` starts what does not run
(after a crash, only what died) and returns once every node has registered, or fails within
its timeout saying which nodes did not and how their logs end. ``down`` stops the daemons by
pid (SIGTERM, then SIGKILL), and kills the job processes a killed ``plurmd`` left behind,
found through its spool directory.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from plurm import conf
from plurm.errors import PlurmError
from plurm.gather.procfs import start_time, stat_fields
from plurm.live.noded import NodeDaemon
from plurm.live.rpc import RpcError, Signer, call
from plurm.live.settings import LiveSettings
from plurm.manager import Plugins

__all__ = ["ClusterError", "down", "up"]

#: Seconds ``up`` waits for every node to register.
UP_TIMEOUT = 60.0


class ClusterError(PlurmError):
    """A local cluster that could not be started or stopped; the message says why."""


def _pid_file(state: Path, name: str) -> Path:
    return state / f"{name}.pid"


def _alive(state: Path, name: str) -> int | None:
    """The pid of daemon ``name`` if its pid file names a live process started then (not
    a zombie: one this process started and has not reaped yet is reaped here)."""
    try:
        pid_text, start_text = _pid_file(state, name).read_text().split()
        pid, start = int(pid_text), int(start_text)
    except (OSError, ValueError):
        return None
    if start_time(pid) != start:
        return None
    if _zombie(pid):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        return None
    return pid


def _zombie(pid: int) -> bool:
    fields = stat_fields(pid)
    return fields is None or fields[:1] == [b"Z"]


def _spawn(state: Path, name: str, argv: list[str]) -> int:
    log = open(state / f"{name}.log", "ab")  # noqa: SIM115 - handed to the child
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", *argv],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        log.close()
    start = start_time(process.pid)
    _pid_file(state, name).write_text(f"{process.pid} {start}\n")
    return process.pid


def _daemons(settings: LiveSettings) -> list[str]:
    return ["plurmctld", *(f"plurmd-{node}" for node in settings.nodes)]


def up(config_path: Path, *, timeout: float = UP_TIMEOUT, verbose: int = 1) -> list[str]:
    """Start what is not running; the daemons started."""
    config = conf.load(str(config_path))
    settings = LiveSettings.from_config(config)
    state = settings.state_save
    state.mkdir(parents=True, exist_ok=True)
    flags = ["-v"] * verbose
    started = []
    if _alive(state, "plurmctld") is None:
        _spawn(state, "plurmctld", ["plurm.live.ctld", "-D", "-f", str(config_path), *flags])
        started.append("plurmctld")
    for node in settings.nodes:
        name = f"plurmd-{node}"
        if _alive(state, name) is None:
            _spawn(
                state, name, ["plurm.live.noded", "-D", "-N", node, "-f", str(config_path), *flags]
            )
            started.append(name)
    fresh = {node for node in settings.nodes if f"plurmd-{node}" in started}
    _wait_registered(settings, timeout, fresh)
    return started


def _wait_registered(settings: LiveSettings, timeout: float, fresh: set[str]) -> None:
    """Wait until the controller has every node registered and each daemon in ``fresh``
    (just started: the controller may still list its killed predecessor) says it has
    registered itself."""
    signer = Signer(Plugins.load(settings.config, roles=("auth",)))
    deadline = time.monotonic() + timeout
    missing: list[str] = sorted(settings.nodes)
    last_error = ""
    while time.monotonic() < deadline:
        for name in _daemons(settings):
            if _alive(settings.state_save, name) is None:
                raise ClusterError(f"{name} exited:\n{_tail(settings.state_save, name)}")
        try:
            answer = call(settings.ctld_url, "ping", {}, signer, timeout=2.0)
            missing = sorted(set(settings.nodes) - set(answer.get("registered", [])))
            fresh -= {node for node in fresh if _node_registered(settings, node, signer)}
            missing = sorted({*missing, *fresh})
            if not missing:
                return
        except RpcError as error:
            last_error = error.message
        time.sleep(0.1)
    logs = "\n".join(_tail(settings.state_save, f"plurmd-{node}") for node in missing[:4])
    raise ClusterError(
        f"not every node registered within {timeout:g} s: {','.join(missing)} did not"
        + (f" (controller: {last_error})" if last_error else "")
        + (f"\n{logs}" if logs else "")
    )


def _node_registered(settings: LiveSettings, node: str, signer: Signer) -> bool:
    try:
        answer = call(settings.nodes[node].url, "ping", {}, signer, timeout=2.0)
    except RpcError:
        return False  # not listening yet
    return isinstance(answer, dict) and answer.get("registered") is True


def _tail(state: Path, name: str, lines: int = 5) -> str:
    try:
        text = (state / f"{name}.log").read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return f"{name}: no log"
    return "\n".join(f"{name}: {line}" for line in text)


def down(config_path: Path, *, timeout: float = 15.0) -> list[str]:
    """Stop every daemon of the cluster and the job processes left behind; those stopped."""
    config = conf.load(str(config_path))
    settings = LiveSettings.from_config(config)
    state = settings.state_save
    stopped = []
    pids = {}
    for name in _daemons(settings):
        pid = _alive(state, name)
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
            pids[name] = pid
    deadline = time.monotonic() + timeout
    for name, pid in pids.items():
        while _alive(state, name) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        if _alive(state, name) is not None:
            os.kill(pid, signal.SIGKILL)
        stopped.append(name)
    for name in _daemons(settings):
        _pid_file(state, name).unlink(missing_ok=True)
    for place in settings.nodes.values():
        NodeDaemon.kill_leftovers_in(place.spool_dir)
    return stopped
