"""auth/munge: every message signed by the MUNGE daemon, as Slurm's auth/munge does.

A credential is made by the local ``munged`` (through libmunge, :mod:`.libmunge`): it
carries the uid and gid of the process that asked, which munged itself takes from the
socket's peer, and a SHA-256 digest of the message body, sealed with the key every host of
the cluster shares. The receiver has its own munged decode it: a credential made with
another key, altered, past its time-to-live, or decoded once already (munged refuses a
replay) is refused, and so is one whose digest is not the body's (an altered message). The
uid and gid the receiver acts on are those munged verified, never the message's.

``AuthInfo`` (slurm.conf) may name munged's socket (``socket=PATH``; default
``/run/munge/munge.socket.2``) and the credentials' time-to-live (``ttl=SECONDS``; default:
munged's, 300). A munged that is missing or does not answer is an error after a few short
retries (about a second in all), never a hang.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from collections import OrderedDict

from plurm._markers import HOOK_API_VERSION, hookimpl
from plurm.errors import AuthError
from plurm.registry import PluginContext
from plurm_auth_munge.libmunge import (
    EMUNGE_SOCKET,
    EMUNGE_TIMEOUT,
    MungeContext,
    MungeError,
)

__all__ = ["MungeAuth", "parse_auth_info"]

#: munged's socket when AuthInfo names none (MUNGE's default).
DEFAULT_SOCKET = "/run/munge/munge.socket.2"
#: How many times an encode is tried when munged cannot be reached, and the pause between.
RETRIES = 5
RETRY_PAUSE = 0.2
#: Credentials verified and not yet asked for their ids (verify, then get_ids).
_VERIFIED_KEEP = 256


def parse_auth_info(text: str) -> tuple[str | None, int | None]:
    """The ``socket=`` and ``ttl=`` of an AuthInfo value (comma separated, as Slurm's)."""
    socket: str | None = None
    ttl: int | None = None
    for word in text.split(","):
        key, _, value = word.strip().partition("=")
        key = key.strip().lower()
        if key == "socket" and value:
            socket = value.strip()
        elif key == "ttl":
            try:
                ttl = int(value)
            except ValueError:
                raise AuthError(f"auth/munge: AuthInfo ttl={value!r} is not a number") from None
            if ttl < 0:
                raise AuthError(f"auth/munge: AuthInfo ttl={value!r} is negative")
    return socket, ttl


def digest(payload: bytes) -> bytes:
    """What a credential carries for a message body."""
    return hashlib.sha256(payload).digest()


class MungeAuth:
    """Credentials from munged; the ids a receiver acts on are the ones munged verified."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.logger = logging.getLogger(context.logger_name)
        socket, ttl = parse_auth_info(context.config.auth_info)
        self.socket = socket or DEFAULT_SOCKET
        try:
            self.munge = MungeContext(self.socket, ttl)
        except MungeError as error:
            raise AuthError(f"auth/munge: {error.message}") from None
        self._verified: OrderedDict[bytes, tuple[int, int]] = OrderedDict()

    @hookimpl
    def auth_create(self, uid: int, gid: int, payload: bytes) -> bytes:
        """A credential for this process (munged decides the uid and gid it carries)."""
        body = digest(payload)
        for attempt in range(1, RETRIES + 1):
            try:
                return self.munge.encode(body)
            except MungeError as error:
                retry = error.code in (EMUNGE_SOCKET, EMUNGE_TIMEOUT) and attempt < RETRIES
                self.logger.error(
                    "auth/munge: Munge encode failed: %s%s",
                    error.message,
                    " (retrying ...)" if retry else "",
                )
                if not retry:
                    raise AuthError(f"auth/munge: Munge encode failed: {error.message}") from None
                time.sleep(RETRY_PAUSE)
        raise AssertionError("unreachable")  # pragma: no cover

    @hookimpl
    def auth_verify(self, credential: bytes, payload: bytes) -> bool:
        """munged decodes the credential (refusing a foreign key, an expired, rewound or
        replayed credential); its payload must be the body's digest."""
        try:
            decoded = self.munge.decode(credential)
        except MungeError as error:
            self.logger.error("auth/munge: _decode_cred: Munge decode failed: %s", error.message)
            return False
        if not hmac.compare_digest(decoded.payload, digest(payload)):
            self.logger.error(
                "auth/munge: credential of uid=%d does not cover this message (altered body)",
                decoded.uid,
            )
            return False
        self._verified[credential] = (decoded.uid, decoded.gid)
        while len(self._verified) > _VERIFIED_KEEP:
            self._verified.popitem(last=False)
        return True

    @hookimpl
    def auth_get_ids(self, credential: bytes) -> tuple[int, int] | None:
        """The ids of a credential :meth:`auth_verify` accepted (munged decodes a
        credential once only: a second decode would be a replay)."""
        return self._verified.pop(credential, None)
