"""A small ctypes binding to MUNGE's client library, ``libmunge.so.2`` (Debian's libmunge2).

Only what auth/munge needs: a context (its socket path and credential time-to-live),
``munge_encode`` and ``munge_decode``. Errors carry MUNGE's own number and the context's
message (``munge_ctx_strerror``, e.g. ``Failed to access "/run/munge/munge.socket.2": No
such file or directory``), else ``munge_strerror``'s.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import threading

__all__ = [
    "EMUNGE_CRED_EXPIRED",
    "EMUNGE_CRED_REPLAYED",
    "EMUNGE_SOCKET",
    "EMUNGE_TIMEOUT",
    "Decoded",
    "MungeContext",
    "MungeError",
]

#: munge_opt_t values (munge.h).
MUNGE_OPT_TTL = 4
MUNGE_OPT_SOCKET = 8
#: munge_err_t values (munge.h) this package acts on.
EMUNGE_SOCKET = 6
EMUNGE_TIMEOUT = 7
EMUNGE_CRED_EXPIRED = 15
EMUNGE_CRED_REPLAYED = 17

_LIBRARY = "libmunge.so.2"


class MungeError(Exception):
    """A MUNGE call that failed: ``code`` is MUNGE's error number."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Decoded:
    """What a credential carried, as munged verified it."""

    __slots__ = ("gid", "payload", "uid")

    def __init__(self, payload: bytes, uid: int, gid: int) -> None:
        self.payload = payload
        self.uid = uid
        self.gid = gid


_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_libc: ctypes.CDLL | None = None


def _load() -> tuple[ctypes.CDLL, ctypes.CDLL]:
    global _lib, _libc
    with _lock:
        if _lib is None or _libc is None:
            try:
                lib = ctypes.CDLL(_LIBRARY)
            except OSError as error:
                raise MungeError(
                    -1, f"cannot load {_LIBRARY} (install libmunge2): {error}"
                ) from None
            lib.munge_ctx_create.restype = ctypes.c_void_p
            lib.munge_ctx_create.argtypes = []
            lib.munge_ctx_destroy.restype = None
            lib.munge_ctx_destroy.argtypes = [ctypes.c_void_p]
            lib.munge_ctx_strerror.restype = ctypes.c_char_p
            lib.munge_ctx_strerror.argtypes = [ctypes.c_void_p]
            lib.munge_strerror.restype = ctypes.c_char_p
            lib.munge_strerror.argtypes = [ctypes.c_int]
            lib.munge_encode.restype = ctypes.c_int
            lib.munge_encode.argtypes = [
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.c_void_p,
                ctypes.c_char_p,
                ctypes.c_int,
            ]
            lib.munge_decode.restype = ctypes.c_int
            lib.munge_decode.argtypes = [
                ctypes.c_char_p,
                ctypes.c_void_p,
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.POINTER(ctypes.c_int),
                ctypes.POINTER(ctypes.c_uint32),
                ctypes.POINTER(ctypes.c_uint32),
            ]
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            libc.free.restype = None
            libc.free.argtypes = [ctypes.c_void_p]
            _lib, _libc = lib, libc
        return _lib, _libc


class MungeContext:
    """One MUNGE context: the daemon's socket and the time-to-live of new credentials."""

    def __init__(self, socket: str | None = None, ttl: int | None = None) -> None:
        self._lib, self._libc = _load()
        self._ctx = self._lib.munge_ctx_create()
        if not self._ctx:
            raise MungeError(5, "munge_ctx_create failed: out of memory")
        self.socket = socket
        if socket is not None:
            self._set(MUNGE_OPT_SOCKET, ctypes.c_char_p(socket.encode()))
        if ttl is not None:
            self._set(MUNGE_OPT_TTL, ctypes.c_int(ttl))

    def _set(self, option: int, value: ctypes.c_char_p | ctypes.c_int) -> None:
        # munge_ctx_set is variadic: each call declares its own argument types.
        setter = self._lib.munge_ctx_set
        setter.restype = ctypes.c_int
        setter.argtypes = [ctypes.c_void_p, ctypes.c_int, type(value)]
        code = setter(self._ctx, option, value)
        if code:
            raise self._error(code)

    def _error(self, code: int) -> MungeError:
        text = self._lib.munge_ctx_strerror(self._ctx) or self._lib.munge_strerror(code)
        return MungeError(code, (text or b"unknown MUNGE error").decode("utf-8", "replace"))

    def encode(self, payload: bytes) -> bytes:
        """A credential for this process's uid and gid, carrying ``payload``."""
        out = ctypes.c_void_p()
        code = self._lib.munge_encode(ctypes.byref(out), self._ctx, payload, len(payload))
        try:
            if code:
                raise self._error(code)
            return ctypes.string_at(out.value) if out.value else b""
        finally:
            if out.value:
                self._libc.free(out)

    def decode(self, credential: bytes) -> Decoded:
        """The payload, uid and gid of a valid credential; MungeError (expired, replayed,
        invalid, unreachable daemon...) otherwise."""
        buf = ctypes.c_void_p()
        length = ctypes.c_int()
        uid = ctypes.c_uint32()
        gid = ctypes.c_uint32()
        code = self._lib.munge_decode(
            credential,
            self._ctx,
            ctypes.byref(buf),
            ctypes.byref(length),
            ctypes.byref(uid),
            ctypes.byref(gid),
        )
        try:
            if code:
                raise self._error(code)
            payload = ctypes.string_at(buf.value, length.value) if buf.value else b""
            return Decoded(payload, uid.value, gid.value)
        finally:
            if buf.value:
                self._libc.free(buf)

    def close(self) -> None:
        if self._ctx:
            self._lib.munge_ctx_destroy(self._ctx)
            self._ctx = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter shutdown the library may be gone
            self.close()
