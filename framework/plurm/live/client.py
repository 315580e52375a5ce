"""The commands' client in live mode: a :class:`~plurm.commands.client.ClusterClient` that
asks ``plurmctld`` over RPC, and the entry points of Slurm's commands as executables.

A command reads the same slurm.conf as the daemons (``SLURM_CONF``, else
/etc/slurm/slurm.conf) to find the controller and the auth plugin, sends its request signed
as the user who runs it, and renders the controller's answer with the same command module
a simulation uses, so that both print the same bytes.

Each command is a new process, so what it imports is most of what it costs: it imports its
own command module only, takes its configuration from the per-user cache while the files
are unchanged (:mod:`plurm.conf.cache`), and imports the codec and the snapshot only for
the calls that need them.
"""

from __future__ import annotations

import grp
import importlib
import os
import pwd
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plurm.commands.base import (
    COMMAND_NAMES,
    VERSION_LINE,
    CommandError,
    CommandResult,
    Invocation,
    version_asked,
)
from plurm.conf.model import SlurmConfig
from plurm.errors import PlurmError
from plurm.live.rpc import RpcError, Signer, call
from plurm.live.settings import LiveSettings, find_conf
from plurm.manager import Plugins

if TYPE_CHECKING:
    from plurm.commands.client import ClusterView
    from plurm.controller.estimates import WillRun
    from plurm.model.acct import AcctQuery, JobRecord, StepRecord
    from plurm.model.job import JobRequest
    from plurm.model.priority import PriorityReport

__all__ = ["RpcClient", "execute", "main"]


class RpcClient:
    """Implements :class:`~plurm.commands.client.ClusterClient` over RPC."""

    def __init__(
        self, config: SlurmConfig, auth: Mapping[str, tuple[str, str]] | None = None
    ) -> None:
        """``auth``: where the auth plugins come from, when already known (the command
        cache's); else they are looked up among the installed entry points."""
        self._config = config
        self.settings = LiveSettings.from_config(config)
        self.signer = Signer(_auth_plugins(config, auth))
        self._now: float | None = None

    @property
    def config(self) -> SlurmConfig:
        return self._config

    def call(self, method: str, message: Mapping[str, Any]) -> Any:
        timeout = float(max(self._config.message_timeout, 1))
        return call(self.settings.ctld_url, method, message, self.signer, timeout=timeout)

    @property
    def now(self) -> float:
        import time

        from plurm.live.wallclock import epoch_seconds

        return epoch_seconds(time.time())

    def view(self) -> ClusterView:
        from plurm.live.snapshot import view_from_dict

        return view_from_dict(self._config, self.call("view", {}))

    def submit(self, request: JobRequest) -> int:
        from plurm.live.codec import request_to_dict

        answer = self.call("submit", {"request": request_to_dict(request)})
        return int(answer["job_id"])

    def cancel(self, job_id: int, task: int | None = None) -> None:
        self.call("cancel", {"job_id": job_id, "task": task})

    def hold(self, job_id: int, *, user: bool = False) -> None:
        self.call("hold", {"job_id": job_id, "user": user})

    def release(self, job_id: int) -> None:
        self.call("release", {"job_id": job_id})

    def signal(self, job_id: int, signal: str) -> None:
        self.call("signal", {"job_id": job_id, "signal": signal})

    def suspend(self, job_id: int) -> None:
        self.call("suspend", {"job_id": job_id})

    def resume(self, job_id: int) -> None:
        self.call("resume", {"job_id": job_id})

    def requeue(self, job_id: int) -> None:
        self.call("requeue", {"job_id": job_id})

    def update_partition(self, name: str, changes: Mapping[str, Any]) -> None:
        from plurm.live.updates import partition_changes_to_dict

        self.call("update_partition", {"name": name, "changes": partition_changes_to_dict(changes)})

    def update_nodes(self, names: Sequence[str], state: str | None, reason: str | None) -> None:
        self.call("update_nodes", {"names": list(names), "state": state, "reason": reason})

    def job_usage(self, job_id: int) -> list[StepRecord] | None:
        from plurm.live.codec import step_from_dict
        from plurm.model.acct import StepRecord
        from plurm.model.usage import StepUsage, UsageError, with_usage

        answer = self.call("sstat", {"job_id": job_id})
        if not answer.get("running"):
            return None
        try:
            usage = {
                str(step): StepUsage.from_dict(value)
                for step, value in dict(answer.get("steps") or {}).items()
            }
        except UsageError as error:
            raise RpcError(f"bad usage: {error}") from None
        steps = [step_from_dict(item) for item in answer.get("records") or []]
        if "batch" in usage and not any(step.step_key == "batch" for step in steps):
            steps.insert(0, StepRecord(job_id=job_id, step="batch", name="batch", state="RUNNING"))
        return [
            with_usage(step, usage[step.step_key]) if step.step_key in usage else step
            for step in steps
        ]

    def records(self, query: AcctQuery) -> list[JobRecord]:
        from plurm.live.codec import query_to_dict, record_from_dict

        answer = self.call("acct", {"query": query_to_dict(query)})
        return [record_from_dict(item) for item in answer["records"]]

    def update_job(self, job_id: int, changes: Mapping[str, Any]) -> None:
        from plurm.live.updates import job_changes_to_dict

        self.call("update_job", {"job_id": job_id, "changes": job_changes_to_dict(changes)})

    def token(self, username: str | None, lifespan: int) -> str:
        """scontrol token: a JWT the controller makes (auth/jwt)."""
        answer = self.call("token", {"username": username, "lifespan": lifespan})
        token = answer.get("token") if isinstance(answer, dict) else None
        if not isinstance(token, str):
            raise RpcError("malformed token answer")
        return token

    def will_run(self, request: JobRequest) -> WillRun:
        from plurm.controller.estimates import WillRun
        from plurm.live.codec import request_to_dict

        answer = self.call("will_run", {"request": request_to_dict(request)})
        try:
            return WillRun(
                int(answer["job_id"]),
                float(answer["start"]),
                tuple(str(name) for name in answer["nodes"]),
                int(answer["cpus"]),
                str(answer["partition"]),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise RpcError(f"malformed will_run answer: {error!r}") from None

    def expected_starts(self) -> dict[int, float]:
        answer = self.call("expected_starts", {})
        try:
            return {int(key): float(value) for key, value in answer["starts"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise RpcError(f"malformed expected_starts answer: {error!r}") from None

    def explain(self, job_id: int) -> dict[str, Any]:
        answer = self.call("explain", {"job_id": job_id})
        if not isinstance(answer, dict):
            raise RpcError("malformed explain answer")
        return answer

    def priorities(self) -> PriorityReport:
        from plurm.model.priority import report_from_dict

        answer = self.call("priorities", {})
        try:
            return report_from_dict(answer)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise RpcError(f"malformed priorities answer: {error!r}") from None

    def sleep(self, seconds: float) -> None:
        import time

        time.sleep(seconds)


def _auth_plugins(config: SlurmConfig, auth: Mapping[str, tuple[str, str]] | None) -> Plugins:
    from plurm.registry import Registry, import_factory

    if auth is not None:
        try:
            factories = {name: import_factory(value) for name, (value, _) in auth.items()}
        except (ImportError, AttributeError):
            pass  # moved since it was cached: the ordinary lookup reports it if it is gone
        else:
            sources = {name: source for name, (_, source) in auth.items()}
            registry = Registry(entry_points=(), factories=factories, sources=sources)  # type: ignore[arg-type]
            return Plugins.load(config, roles=("auth",), registry=registry)
    return Plugins.load(config, roles=("auth",))


def invocation(stdin: Callable[[], bytes] | None = None) -> Invocation:
    """This process's user, environment and host."""
    uid, gid = os.getuid(), os.getgid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    return Invocation(uid, gid, user, group, dict(os.environ), socket.gethostname(), stdin)


def run(name: str, argv: Sequence[str]) -> int:
    """Run Slurm's command ``name`` against the live cluster; its exit status."""
    from plurm.conf import cache

    result = execute(
        name,
        argv,
        lambda: RpcClient(*cache.load_for_command(find_conf(), loaded=_write_sidecar)),
        Path.cwd,
        lambda: invocation(sys.stdin.buffer.read),
    )
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    sys.stdout.flush()
    return result.status


def _write_sidecar(
    main: Path,
    config: SlurmConfig,
    stamps: Mapping[str, tuple[int, ...] | None],
    auth: Mapping[str, tuple[str, str]] | None,
) -> None:
    """What the thin sbatch (:mod:`plurm.live.thin`) needs of the configuration, stamped as
    the configuration cache is: the controller's address, the message timeout and the auth
    plugin. Written only for the auth plugin that client signs for itself."""
    import json

    from plurm.live import thin

    if auth is None or config.auth_type != thin.NONE_AUTH[0]:
        return
    if auth.get(thin.NONE_AUTH[0], ("", ""))[0] != thin.NONE_AUTH[1]:
        return
    try:
        settings = LiveSettings.from_config(config)
        data = json.dumps(
            {
                "main": str(main),
                "stamps": {path: None if s is None else list(s) for path, s in stamps.items()},
                "code": thin.code_stamp(),
                "plugins": thin.plugins_stamp(),
                "auth": list(thin.NONE_AUTH),
                "host": settings.ctld_address,
                "port": settings.ctld_port,
                "timeout": float(max(config.message_timeout, 1)),
            }
        ).encode()
        entry = thin.sidecar_path(str(main))
        temp = f"{entry}.{os.getpid()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, entry)
    except (OSError, PlurmError, ValueError):
        pass  # no sidecar: the thin sbatch hands over to this client


def execute(
    name: str,
    argv: Sequence[str],
    client: Callable[[], RpcClient],
    cwd: Callable[[], Path],
    caller: Callable[[], Invocation],
) -> CommandResult:
    """What command ``name`` prints and exits with, as the client made by ``client`` answers
    it; also what plurmctld runs for the thin client (:mod:`plurm.live.thin`)."""
    if version_asked(name, argv):
        return CommandResult(0, VERSION_LINE + "\n")
    try:
        if name not in COMMAND_NAMES:
            raise CommandError(f"{name}: command not found", 127)
        command: Callable[..., CommandResult]
        command = importlib.import_module(f"plurm.commands.{name}").run
        result = command(argv, client(), cwd(), caller())
    except CommandError as error:
        result = CommandResult(
            error.status, "", error.text if error.text.endswith("\n") else error.text + "\n"
        )
    except RpcError as error:
        if error.kind == "unreachable":
            text = f"{name}: error: Unable to contact slurm controller (connect failure)\n"
        else:
            text = f"{name}: error: {error.message}\n"
        result = CommandResult(1, "", text)
    except PlurmError as error:
        result = CommandResult(1, "", f"{name}: error: {error}\n")
    return result


def main() -> None:
    """The console scripts' entry point: the command is the program's name."""
    name = Path(sys.argv[0]).name
    sys.exit(run(name, sys.argv[1:]))
