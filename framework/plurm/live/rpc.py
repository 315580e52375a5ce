"""The daemons' RPC: versioned JSON messages over HTTP, each signed by the auth plugin.

A call is ``POST /rpc/<method>`` with a JSON object as its body, the protocol version in
``X-Plurm-Protocol`` and a credential made by the configured ``auth`` plugin over the body
(``auth_create``) in ``X-Plurm-Credential``. The receiver checks the size, the version and
the credential (``auth_verify``, then ``auth_get_ids``: the caller's uid and gid come from
the credential only, never from the body), decodes the JSON strictly, and calls the
method's handler with the verified :class:`Caller`. An answer is ``{"result": ...}``, or
``{"error": {"kind": ..., "message": ...}}`` with a 4xx or 5xx status.

Servers run on aiohttp. The daemons call each other with aiohttp's client
(:class:`AsyncRpc`); Slurm's commands, which live for one call, send it over a plain socket
(:func:`call`: one request, ``Connection: close``, the answer read to its Content-Length or
to the end), which imports nothing beyond ``socket`` (``http.client`` would bring the email
parser and ``ssl``, a tenth of a command's start-up).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import socket
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from plurm.errors import AuthError, PlurmError, RequestError

if TYPE_CHECKING:
    import aiohttp
    from aiohttp import web

    from plurm.manager import Plugins

__all__ = [
    "MAX_BODY",
    "PROTOCOL",
    "AsyncRpc",
    "Caller",
    "RpcError",
    "Signer",
    "call",
    "decode",
    "encode",
    "rpc_routes",
]

logger = logging.getLogger(__name__)

#: The message version; a receiver refuses any other.
PROTOCOL = 1
#: The largest body a daemon reads (Slurm's default max_script_size is 4 MB; a script
#: travels inside a submission).
MAX_BODY = 8 * 1024 * 1024
#: The longest credential header accepted (aiohttp itself refuses a header over 8190 bytes).
MAX_CREDENTIAL = 4 * 1024
#: The largest uid or gid a credential may carry (uid_t; 0xFFFFFFFF is "none").
MAX_ID = 0xFFFF_FFFE
PROTOCOL_HEADER = "X-Plurm-Protocol"
CREDENTIAL_HEADER = "X-Plurm-Credential"
#: Seconds a command waits for the controller (Slurm's MessageTimeout default is 10).
DEFAULT_TIMEOUT = 10.0


class RpcError(PlurmError):
    """A call that failed: refused by the receiver (``kind`` says why: "request" for
    Slurm's own refusals, "auth", "protocol", "bad_request", "not_found", "internal") or
    not delivered ("unreachable")."""

    def __init__(self, message: str, kind: str = "bad_request", status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status


@attrs.frozen
class Caller:
    """Who sent a message, as its verified credential says."""

    uid: int
    gid: int


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def encode(value: Any) -> bytes:
    """Compact JSON; NaN and infinities are refused (they are not JSON)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode()


def decode(body: bytes) -> dict[str, Any]:
    """A message body: a JSON object in UTF-8, at most :data:`MAX_BODY` bytes."""
    if len(body) > MAX_BODY:
        raise RpcError(f"message of {len(body)} bytes exceeds the limit of {MAX_BODY}")
    try:
        value = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise RpcError("message is not UTF-8") from None
    except RecursionError:
        raise RpcError("message nests too deeply") from None
    except ValueError as error:  # JSONDecodeError, NaN, integers past the digit limit
        raise RpcError(f"message is not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise RpcError("message is not a JSON object")
    return value


class Signer:
    """Makes and checks credentials with the configured auth plugin."""

    def __init__(self, plugins: Plugins) -> None:
        self.plugins = plugins

    def sign(self, body: bytes, uid: int | None = None, gid: int | None = None) -> str:
        """A credential for this process's user (or ``uid``/``gid``) over ``body``; RpcError
        (kind "auth") when the plugin cannot make one (its daemon is missing, say)."""
        try:
            credential = self.plugins.auth_create(
                os.getuid() if uid is None else uid, os.getgid() if gid is None else gid, body
            )
        except AuthError as error:
            raise RpcError(str(error), "auth", 0) from None
        return base64.b64encode(credential).decode("ascii")

    def verify(self, header: str | None, body: bytes) -> Caller:
        """The caller a credential header speaks for; RpcError (kind "auth") if none."""
        if not header:
            raise RpcError("Protocol authentication error: no credential", "auth", 401)
        if len(header) > MAX_CREDENTIAL:
            raise RpcError("Protocol authentication error: credential too long", "auth", 401)
        try:
            credential = base64.b64decode(header.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError):
            raise RpcError(
                "Protocol authentication error: malformed credential", "auth", 401
            ) from None
        if not self.plugins.auth_verify(credential, body):
            raise RpcError("Protocol authentication error", "auth", 401)
        ids = self.plugins.auth_get_ids(credential)
        if ids is None or not all(type(i) is int and 0 <= i <= MAX_ID for i in ids):
            raise RpcError("Protocol authentication error", "auth", 401)
        return Caller(*ids)


Handler = Callable[[Caller, dict[str, Any]], Awaitable[Any]]


def rpc_routes(app: web.Application, signer: Signer, handlers: Mapping[str, Handler]) -> None:
    """Serve ``handlers`` as ``POST /rpc/<method>`` on ``app``. A handler's RpcError (or
    RequestError, Slurm's refusal) becomes an error answer; any other exception is logged
    with its traceback and answered as an internal error: the daemon keeps running."""
    from aiohttp import web

    async def dispatch(request: web.Request) -> web.Response:
        method = request.match_info["method"]
        try:
            handler = handlers.get(method)
            if handler is None:
                raise RpcError(f"unknown method {method!r}", "not_found", 404)
            version = request.headers.get(PROTOCOL_HEADER)
            if version != str(PROTOCOL):
                shown = "none" if version is None else repr(version[:20])
                raise RpcError(
                    "Protocol version has changed, re-link your code"
                    f" (message version {shown}, this daemon's {PROTOCOL})",
                    "protocol",
                    400,
                )
            too_large = RpcError(f"message exceeds the limit of {MAX_BODY} bytes", status=413)
            if request.content_length is not None and request.content_length > MAX_BODY:
                raise too_large
            try:
                body = await request.read()
            except web.HTTPRequestEntityTooLarge:  # a body in chunks, found too long
                raise too_large from None
            caller = signer.verify(request.headers.get(CREDENTIAL_HEADER), body)
            message = decode(body)
            result = await handler(caller, message)
        except RequestError as error:
            refusal = {"kind": "request", "message": error.message}
            if error.detail is not None:
                refusal["detail"] = error.detail
            return _answer({"error": refusal}, 200)
        except RpcError as error:
            logger.info("rpc refused method=%s kind=%s: %s", method, error.kind, error.message)
            return _answer({"error": {"kind": error.kind, "message": error.message}}, error.status)
        except web.HTTPException:
            raise
        except Exception:
            logger.exception("rpc failed method=%s", method)
            return _answer({"error": {"kind": "internal", "message": "internal error"}}, 500)
        return _answer({"result": result}, 200)

    app.router.add_post("/rpc/{method}", dispatch)


def _answer(value: Any, status: int) -> web.Response:
    from aiohttp import web

    return web.Response(body=encode(value), status=status, content_type="application/json")


def _result(status: int, body: bytes) -> Any:
    """A call's result, or the error it answered raised as RpcError (or RequestError)."""
    try:
        answer = decode(body)
    except RpcError as error:
        raise RpcError(f"bad answer (HTTP {status}): {error.message}", "protocol", status) from None
    refusal = answer.get("error")
    if isinstance(refusal, dict):
        message = str(refusal.get("message", "error"))
        kind = str(refusal.get("kind", "bad_request"))
        if kind == "request":
            detail = refusal.get("detail")
            raise RequestError(message, None if detail is None else str(detail))
        raise RpcError(message, kind, status)
    if status != 200 or "result" not in answer:
        raise RpcError(f"bad answer (HTTP {status})", "protocol", status)
    return answer["result"]


def call(
    url: str,
    method: str,
    message: Mapping[str, Any],
    signer: Signer,
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> Any:
    """Call ``method`` at ``url`` and wait for its result (for short-lived commands)."""
    body = encode(message)
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or 80
    head = (
        f"POST /rpc/{urllib.parse.quote(method)} HTTP/1.1\r\n"
        f"Host: {host}:{port}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"{PROTOCOL_HEADER}: {PROTOCOL}\r\n"
        f"{CREDENTIAL_HEADER}: {signer.sign(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode("latin-1")
    try:
        with _connect(host, port, timeout) as sock:
            sock.sendall(head + body)
            status, data = _read_response(sock)
    except (TimeoutError, OSError) as error:
        raise RpcError(f"{url}: {error}", "unreachable", 0) from None
    return _result(status, data)


def _connect(host: str, port: int, timeout: float) -> socket.socket:
    """A connected socket (as socket.create_connection, but an ASCII host is looked up as
    bytes: a str would load the idna codec and unicodedata into every command)."""
    address: bytes | str = host.encode("ascii") if host.isascii() else host
    error: OSError = OSError(f"cannot resolve {host}")
    for family, kind, proto, _, place in socket.getaddrinfo(address, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(place)
        except OSError as failed:
            sock.close()
            error = failed
            continue
        return sock
    raise error


def _read_response(sock: socket.socket) -> tuple[int, bytes]:
    """An HTTP/1.1 answer's status and body (read to its Content-Length, through chunked
    transfer coding, or to the end of the connection), at most :data:`MAX_BODY` bytes."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk or len(data) > MAX_CREDENTIAL * 4:
            raise OSError("connection closed before the answer's headers")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    words = lines[0].split(" ", 2)
    if len(words) < 2 or not words[0].startswith("HTTP/") or not words[1].isdigit():
        raise OSError(f"not an HTTP answer: {lines[0][:80]!r}")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = headers.get("content-length")
    chunks = [rest]
    size = len(rest)
    limit = MAX_BODY + 1
    if length is not None and length.isdigit():
        limit = min(int(length), limit)
    while size < limit:
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    body = b"".join(chunks)[:limit]
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = _unchunk(body)
    return int(words[1]), body


def _unchunk(data: bytes) -> bytes:
    out: list[bytes] = []
    while True:
        size_line, _, data = data.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            raise OSError("bad chunked answer") from None
        if size == 0:
            return b"".join(out)
        out.append(data[:size])
        data = data[size + 2 :]


class AsyncRpc:
    """Calls between daemons, on one aiohttp session."""

    def __init__(self, signer: Signer, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.signer = signer
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        import aiohttp

        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                connector=aiohttp.TCPConnector(limit=64),
            )
        return self._session

    async def call(
        self, url: str, method: str, message: Mapping[str, Any], *, timeout: float | None = None
    ) -> Any:
        import aiohttp

        body = encode(message)
        headers = {
            "Content-Type": "application/json",
            PROTOCOL_HEADER: str(PROTOCOL),
            CREDENTIAL_HEADER: self.signer.sign(body),
        }
        client = self._client()
        try:
            async with client.post(
                f"{url}/rpc/{method}",
                data=body,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout or self.timeout),
            ) as response:
                data = await response.content.read(MAX_BODY + 1)
                status = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            raise RpcError(f"{url}: {error or type(error).__name__}", "unreachable", 0) from None
        return _result(status, data)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
