"""auth/none: credentials that carry the ids in the clear and always verify (Slurm's auth/none).

It guarantees nothing: anyone who can reach a daemon's port can claim any uid, root's
included. It is for simulation and trusted single-user setups (test clusters) only; a
daemon says so in its log the first time it accepts a message with it. Use auth/munge
wherever more than one user can reach the cluster."""

from __future__ import annotations

import logging

from plurm._markers import HOOK_API_VERSION, hookimpl
from plurm.registry import PluginContext


class NoAuth:
    """``uid:gid`` in plain text."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self._warned = False

    @hookimpl
    def auth_create(self, uid: int, gid: int, payload: bytes) -> bytes:
        return f"{uid}:{gid}".encode()

    @hookimpl
    def auth_verify(self, credential: bytes, payload: bytes) -> bool:
        if not self._warned:
            # Only daemons verify: the commands, which load the plugin too, stay quiet.
            self._warned = True
            logging.getLogger(self.context.logger_name).warning(
                "auth/none: credentials are not checked, any local user may act as any "
                "other (root included); for trusted single-user setups only: use auth/munge"
            )
        uid, colon, gid = credential.decode("ascii", "replace").partition(":")
        return bool(colon) and uid.isdigit() and gid.isdigit()

    @hookimpl
    def auth_get_ids(self, credential: bytes) -> tuple[int, int] | None:
        if not self.auth_verify(credential, b""):
            return None
        uid, _, gid = credential.decode("ascii").partition(":")
        return int(uid), int(gid)
