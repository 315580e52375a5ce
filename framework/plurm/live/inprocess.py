"""plurmctld's ``command`` RPC: the thin client's command (:mod:`plurm.live.thin`), run in
the controller with the same command module the full client runs.

The request carries what only the user's side can read: argv, the working directory, the
environment and the host name, and, once asked for, the script file's bytes and standard
input. The user is the verified credential's (uid and gid; names from the user database),
never the body's. The command's client (:class:`LoopbackClient`) calls the controller's own
RPC handlers, as that user, with each message and answer passed through the RPC's JSON
encoding, so that the command sees exactly what it would see over the network. The daemon
never opens a path of the user's: a script the command wants to read, or its standard
input, is asked of the client (``{"need": "file", "path": ...}`` or ``{"need": "stdin"}``),
which sends the request again with it; the command reads them before it changes anything,
so running it again is safe. A script or command line over :data:`THIN_SCRIPT_BYTES`
is answered ``{"need": "local"}``: the client hands it to the full client, so that no
command holds the daemon's loop for long. The answer is ``{"status", "stdout", "stderr"}``.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from plurm.commands.base import CommandResult, Invocation
from plurm.conf.model import SlurmConfig
from plurm.live.client import RpcClient, execute
from plurm.live.rpc import Caller, RpcError, decode, encode

__all__ = ["THIN_COMMANDS", "LoopbackClient", "run_command"]

#: The commands the controller runs for the thin client (none of them blocks).
THIN_COMMANDS = frozenset({"sbatch"})
#: The largest script, and command line, the controller reads for the thin client: its
#: #SBATCH lines are parsed on the daemon's loop (64 KiB take 20 ms, 4 MiB more than a
#: second), so anything larger is left to the full client, which parses it itself.
THIN_SCRIPT_BYTES = 64 * 1024

SyncHandler = Callable[[Caller, dict[str, Any]], Any]


class NeedInput(Exception):
    """The command wants what only the client can read (``path`` None: standard input), or
    (``local``) is too large to run here."""

    def __init__(self, path: str | None, *, local: bool = False) -> None:
        super().__init__(path)
        self.path = path
        self.local = local


def _small(data: bytes) -> bytes:
    if len(data) > THIN_SCRIPT_BYTES:
        raise NeedInput(None, local=True)
    return data


class LoopbackClient(RpcClient):
    """An :class:`RpcClient` whose calls go to the controller's own handlers, as ``caller``."""

    def __init__(
        self, config: SlurmConfig, handlers: Mapping[str, SyncHandler], caller: Caller
    ) -> None:
        self._config = config
        self._handlers = handlers
        self._caller = caller
        self._now = None

    def call(self, method: str, message: Mapping[str, Any]) -> Any:
        handler = self._handlers.get(method)
        if handler is None:
            raise RpcError(f"unknown method {method!r}", "not_found", 404)
        answer = handler(self._caller, decode(encode(dict(message))))
        return decode(encode({"result": answer}))["result"]

    def sleep(self, seconds: float) -> None:
        raise RpcError("the controller does not wait for a command", "internal", 500)


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise RpcError(f"bad command request: {what} is not a string")
    return value


def _bytes(value: object, what: str) -> bytes:
    try:
        return binascii.a2b_base64(_text(value, what).encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        raise RpcError(f"bad command request: {what} is not base64") from None


def run_command(
    config: SlurmConfig,
    handlers: Mapping[str, SyncHandler],
    caller: Caller,
    message: dict[str, Any],
    names: Callable[[Caller], tuple[str, str]],
) -> dict[str, Any]:
    """Run the request's command for ``caller``; its answer (or what it needs first).
    ``names`` gives the caller's user and group names."""
    name = _text(message.get("command"), "command")
    if name not in THIN_COMMANDS:
        raise RpcError(f"bad command request: {name!r} is not run by the controller")
    argv = message.get("argv")
    environ = message.get("environ")
    files = message.get("files", {})
    if not isinstance(argv, list) or not all(isinstance(word, str) for word in argv):
        raise RpcError("bad command request: argv is not a list of strings")
    if not isinstance(environ, dict) or not all(isinstance(v, str) for v in environ.values()):
        raise RpcError("bad command request: environ is not an object of strings")
    if not isinstance(files, dict):
        raise RpcError("bad command request: files is not an object")
    if sum(len(word) + 1 for word in argv) > THIN_SCRIPT_BYTES:
        return {"need": "local"}
    cwd = Path(_text(message.get("cwd"), "cwd"))
    if not cwd.is_absolute():
        raise RpcError("bad command request: cwd is not an absolute path")
    host = _text(message.get("host", ""), "host")
    stdin = _bytes(message["stdin"], "stdin") if "stdin" in message else None
    scripts = {
        _text(path, "a file's path"): None if data is None else _bytes(data, "a file")
        for path, data in files.items()
    }

    def read_stdin() -> bytes:
        if stdin is None:
            raise NeedInput(None)
        return _small(stdin)

    def read_file(path: Path) -> bytes:
        key = str(path)
        if key not in scripts:
            raise NeedInput(key)
        data = scripts[key]
        if data is None:
            raise OSError(f"{key}: cannot be read")
        return _small(data)

    user, group = names(caller)
    invocation = Invocation(
        caller.uid, caller.gid, user, group, dict(environ), host, read_stdin, read_file
    )
    try:
        result: CommandResult = execute(
            name,
            argv,
            lambda: LoopbackClient(config, handlers, caller),
            lambda: cwd,
            lambda: invocation,
        )
    except NeedInput as need:
        if need.local:
            return {"need": "local"}
        if need.path is None:
            return {"need": "stdin"}
        return {"need": "file", "path": need.path}
    return {"status": result.status, "stdout": result.stdout, "stderr": result.stderr}
