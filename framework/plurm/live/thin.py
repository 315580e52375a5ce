"""The thin ``sbatch``: a client that imports almost nothing and has ``plurmctld`` run the
command.

A command is a new Python process per call, and most of what the full client
(:mod:`plurm.live.client`) costs is importing the configuration's and the request's
modules. This client imports only ``os``, ``sys`` and ``io`` (all three loaded at start-up anyway)
and the C modules ``_json``, ``_socket``,
``binascii`` and ``zlib``: not even ``json`` (which brings ``re``), nor ``socket`` (``enum``
and ``selectors``), nor ``typing``; and it is installed as a plain script, not a console
script, whose launcher imports ``re`` (scripts/sbatch). It reads what only the user's
side can read (argv, the working directory, the environment, the host name, and, when the
controller asks for them, the script file and standard input, as the calling user), signs
one ``command`` RPC and prints the controller's answer: the controller runs the same
command module (:func:`plurm.live.client.execute`) with a client bound to itself, as the
user the credential names.

It takes the controller's address from a small JSON sidecar that the full client writes
beside its configuration cache (:mod:`plurm.conf.cache`), stamped like that cache (every
file the configuration was read from, Plurm's own code, the plugin directories). Whenever
that sidecar is missing or stale, the configuration names an auth plugin other than the
built-in auth/none (whose credential is ``uid:gid``), or the command line asks for what
cannot run inside the controller (``--wait`` blocks), or the controller leaves a script or
command line over 64 KiB to the client (``{"need": "local"}``), it hands over to the full
client, which behaves exactly as before (standard input already read is handed on).
"""

from __future__ import annotations

import _json
import binascii
import io
import os
import sys
import zlib

from plurm import _stamp

TYPE_CHECKING = False  # typing itself is not imported: it costs more than this client's work
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SIDECAR_LAYOUT", "code_stamp", "main", "plugins_stamp", "sidecar_path", "stamp"]

#: Bumped when the sidecar's layout changes.
SIDECAR_LAYOUT = 1
#: The auth plugin whose credential this client makes itself, and where it comes from.
NONE_AUTH = ("auth/none", "plurm.builtin.auth_none:NoAuth")
#: The commands the controller runs for this client.
THIN_COMMANDS = frozenset({"sbatch"})
#: The most bytes read from a script (as :data:`plurm.inputfile.MAX_SCRIPT_BYTES`).
MAX_SCRIPT_BYTES = 4 * 1024 * 1024
#: The largest answer read.
MAX_ANSWER = 8 * 1024 * 1024


class _Decoding:
    """What ``_json``'s scanner reads of a decoder: strict JSON, no NaN nor infinities."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")


def loads(text: str) -> Any:
    """JSON text's value (as ``json.loads``, with NaN and infinities refused); ValueError."""
    decoding: Any = _Decoding()
    scan = _json.make_scanner(decoding)
    try:
        value, end = scan(text, len(text) - len(text.lstrip()))
    except StopIteration:
        raise ValueError("not JSON") from None
    if text[end:].strip():
        raise ValueError("extra data after JSON")
    return value


def dumps(value: Any) -> str:
    """Compact JSON of strings, integers, lists, dicts of strings and None (all this client
    sends); ASCII only, as ``json.dumps`` writes by default."""
    if isinstance(value, str):
        return str(_json.encode_basestring_ascii(value))
    if value is None:
        return "null"
    if type(value) is int:
        return str(value)
    if isinstance(value, list):
        return "[" + ",".join(dumps(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{dumps(str(k))}:{dumps(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot encode {type(value).__name__}")


def stamp(path: str) -> list[int] | None:
    """A file's identity and version (as the configuration cache stamps it)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def code_stamp() -> str:
    """Plurm's code as it is on disk (:func:`plurm._stamp.code_stamp`)."""
    return _stamp.code_stamp(SIDECAR_LAYOUT)


def plugins_stamp() -> str:
    """The directories plugins are found in, as they are now."""
    parts = [os.environ.get("PLURM_DISABLED_PLUGINS", "")]
    for place in sys.path:
        if not place or place == ".":
            continue
        try:
            st = os.stat(place)
        except OSError:
            continue
        parts.append(f"{place} {st.st_ino} {st.st_mtime_ns} {st.st_ctime_ns}")
    return "\n".join(parts)


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "plurm")


def sidecar_path(main: str) -> str:
    return os.path.join(cache_dir(), f"thin-{zlib.crc32(os.fsencode(main)):08x}.json")


def _conf_path() -> str:
    return os.path.abspath(os.environ.get("SLURM_CONF") or "/etc/slurm/slurm.conf")


def _sidecar(main: str) -> dict[str, Any] | None:
    """The sidecar's values, if it is this user's and still true."""
    try:
        fd = os.open(sidecar_path(main), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return None
        try:
            saved = loads(handle.read(1 << 20).decode("utf-8"))
        except ValueError:  # UnicodeDecodeError too
            return None
    if not isinstance(saved, dict) or saved.get("main") != main:
        return None
    stamps = saved.get("stamps")
    if not isinstance(stamps, dict) or saved.get("auth") != list(NONE_AUTH):
        return None
    if not isinstance(saved.get("host"), str) or type(saved.get("port")) is not int:
        return None
    if any(stamp(path) != value for path, value in stamps.items()):
        return None
    if saved.get("plugins") != plugins_stamp() or saved.get("code") != code_stamp():
        return None
    return saved


def _thin_argv(argv: list[str]) -> bool:
    """Whether the command line can run inside the controller: not --wait (``-W``, or a
    prefix of ``--wait``), which blocks until the job ends."""
    for word in argv:
        if word.startswith("--wa") or (word[:1] == "-" and word[1:2] != "-" and "W" in word):
            return False
    return True


def _read_script(path: str) -> str | None:
    """The script file's bytes (base64), read as the user; None if it cannot be read (a
    regular file of at most :data:`MAX_SCRIPT_BYTES` only: a FIFO is never waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if (os.fstat(fd).st_mode & 0o170000) != 0o100000:
            return None
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_SCRIPT_BYTES:
                return None
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return binascii.b2a_base64(b"".join(chunks), newline=False).decode("ascii")


def _post(host: str, port: int, timeout: float, body: bytes) -> tuple[int, bytes]:
    """One ``POST /rpc/command`` (the wire format of :func:`plurm.live.rpc.call`)."""
    import _socket

    credential = binascii.b2a_base64(f"{os.getuid()}:{os.getgid()}".encode(), newline=False)
    head = (
        "POST /rpc/command HTTP/1.1\r\n"
        f"Host: {host}:{port}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "X-Plurm-Protocol: 1\r\n"
        f"X-Plurm-Credential: {credential.decode('ascii')}\r\n"
        "Connection: close\r\n\r\n"
    ).encode("latin-1")
    infos = _socket.getaddrinfo(host.encode("ascii"), port, 0, _socket.SOCK_STREAM)
    error: OSError = OSError("no address")
    for family, kind, proto, _, address in infos:
        sock = _socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(address)
        except OSError as failed:
            sock.close()
            error = failed
            continue
        try:
            sock.sendall(head + body)
            data = bytearray()
            while len(data) <= MAX_ANSWER:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        finally:
            sock.close()
        head_end = data.find(b"\r\n\r\n")
        status_line = bytes(data[: data.find(b"\r\n")]).split()
        if head_end < 0 or len(status_line) < 2 or not status_line[1].isdigit():
            return 0, b""
        headers = bytes(data[:head_end]).lower()
        if b"transfer-encoding: chunked" in headers:
            return 0, b""
        return int(status_line[1]), bytes(data[head_end + 4 :])
    raise error


def _thin(name: str, argv: list[str], saved: dict[str, Any]) -> int | None:
    """Run the command through the controller; its exit status, or None if the controller
    cannot run it here (the full client then does)."""
    message: dict[str, Any] = {
        "command": name,
        "argv": argv,
        "cwd": os.getcwd(),
        "environ": dict(os.environ),
        "host": os.uname().nodename,
        "files": {},
    }
    timeout = float(saved.get("timeout") or 10)
    for _ in range(3):
        body = dumps(message).encode("ascii")
        try:
            status, data = _post(saved["host"], saved["port"], timeout, body)
        except OSError:
            sys.stderr.write(
                f"{name}: error: Unable to contact slurm controller (connect failure)\n"
            )
            return 1
        try:
            answer = loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            answer = None
        if not isinstance(answer, dict):
            sys.stderr.write(f"{name}: error: bad answer (HTTP {status})\n")
            return 1
        refusal = answer.get("error")
        if isinstance(refusal, dict):
            if refusal.get("kind") == "not_found":
                return None  # a controller without the command method
            sys.stderr.write(f"{name}: error: {refusal.get('message', 'error')}\n")
            return 1
        result = answer.get("result")
        if not isinstance(result, dict):
            sys.stderr.write(f"{name}: error: bad answer (HTTP {status})\n")
            return 1
        need = result.get("need")
        if need == "stdin":
            data = sys.stdin.buffer.read()
            # what was read stays readable, should the full client take over
            sys.stdin = io.TextIOWrapper(io.BytesIO(data))
            message["stdin"] = binascii.b2a_base64(data, newline=False).decode("ascii")
            continue
        if need == "file" and isinstance(result.get("path"), str):
            message["files"][result["path"]] = _read_script(result["path"])
            continue
        if need is not None:
            return None
        sys.stdout.write(str(result.get("stdout", "")))
        sys.stderr.write(str(result.get("stderr", "")))
        sys.stdout.flush()
        status_code = result.get("status")
        return status_code if type(status_code) is int else 1
    return None


def main() -> None:
    """The console script's entry point: the command is the program's name."""
    name = os.path.basename(sys.argv[0])
    argv = sys.argv[1:]
    if name in THIN_COMMANDS and _thin_argv(argv):
        saved = _sidecar(_conf_path())
        if saved is not None:
            status = _thin(name, argv, saved)
            if status is not None:
                sys.exit(status)
    from plurm.live.client import main as full

    full()
