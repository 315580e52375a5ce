"""auth/none: credentials that carry the ids in the clear and always verify (Slurm's auth/none;
for test clusters only)."""

from __future__ import annotations

from plurm._markers import HOOK_API_VERSION, hookimpl
from plurm.registry import PluginContext


class NoAuth:
    """``uid:gid`` in plain text."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context

    @hookimpl
    def auth_create(self, uid: int, gid: int, payload: bytes) -> bytes:
        return f"{uid}:{gid}".encode()

    @hookimpl
    def auth_verify(self, credential: bytes, payload: bytes) -> bool:
        uid, colon, gid = credential.decode("ascii", "replace").partition(":")
        return bool(colon) and uid.isdigit() and gid.isdigit()

    @hookimpl
    def auth_get_ids(self, credential: bytes) -> tuple[int, int] | None:
        if not self.auth_verify(credential, b""):
            return None
        uid, _, gid = credential.decode("ascii").partition(":")
        return int(uid), int(gid)
