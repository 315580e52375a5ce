"""auth/jwt: JSON Web Tokens (HS256) as Slurm's ``AuthAltTypes=auth/jwt`` makes and checks them.

The key is the file ``AuthAltParameters=jwt_key=FILE`` names (default
``StateSaveLocation/jwt_hs256.key``); it is read when first needed, so the commands, which
load the plugin too but never see the key, do not need to read it. A key file that others
may read or write is refused ("key file is insecure"), and one owned by neither root nor
SlurmUser is warned about, as Slurm does.

A token carries Slurm's claims: ``iat`` (issued at), ``exp`` (expires) and ``sun`` (Slurm user
name; ``username`` is read too). A token is accepted for the user the request names when
its signature is the key's, it has not expired, and its user is that user, or root or
SlurmUser (who may act for anyone).
"""

from __future__ import annotations

import logging
import os
import pwd
import stat
import time
from pathlib import Path

import jwt

from plurm._markers import HOOK_API_VERSION, hookimpl
from plurm.errors import AuthError
from plurm.registry import PluginContext

__all__ = ["JwtAuth"]

#: The key file's name in StateSaveLocation when AuthAltParameters names none.
DEFAULT_KEY = "jwt_hs256.key"


def _option(text: str, name: str) -> str | None:
    for word in text.split(","):
        key, _, value = word.strip().partition("=")
        if key.strip().lower() == name and value:
            return value.strip()
    return None


class JwtAuth:
    """Makes tokens (plurmctld, ``scontrol token``) and checks them (the REST API)."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.logger = logging.getLogger(context.logger_name)
        config = context.config
        named = _option(config.auth_alt_parameters, "jwt_key")
        if named is None:
            state = config.inactive.get("StateSaveLocation", "/var/spool/slurmctld")
            named = str(Path(state) / DEFAULT_KEY)
        self.key_path = Path(named)
        self._key: bytes | None = None

    def _slurm_uid(self) -> int:
        name = self.context.config.slurm_user
        if name.isdigit():
            return int(name)
        try:
            return pwd.getpwnam(name).pw_uid
        except KeyError:
            return 0

    def key(self) -> bytes:
        """The signing key, read and checked once."""
        if self._key is None:
            path = self.key_path
            try:
                info = path.stat()
                data = path.read_bytes()
            except OSError as error:
                raise AuthError(
                    f"auth/jwt: Could not load key file ({path}): {error.strerror}"
                ) from None
            if info.st_mode & stat.S_IRWXO:
                raise AuthError(
                    f"auth/jwt: key file is insecure: '{path}' mode=0{info.st_mode & 0o777:o}"
                )
            if info.st_uid not in (0, self._slurm_uid(), os.getuid()):
                self.logger.warning(
                    "auth/jwt: '%s' owned by uid=%d, instead of SlurmUser or root",
                    path,
                    info.st_uid,
                )
            if not data:
                raise AuthError(f"auth/jwt: key file {path} is empty")
            self._key = data
        return self._key

    @hookimpl
    def auth_token_create(self, username: str, lifespan: int) -> str:
        if lifespan <= 0 or lifespan >= 0xFFFFFFFE:
            raise AuthError(f"cannot issue token: requested lifespan {lifespan}s not supported")
        now = int(time.time())
        claims = {"iat": now, "exp": now + lifespan, "sun": username}
        token = jwt.encode(claims, self.key(), algorithm="HS256")
        self.logger.info("created token for %s for %d seconds", username, lifespan)
        return token

    @hookimpl
    def auth_token_verify(self, token: str, username: str) -> str:
        try:
            claims = jwt.decode(
                token,
                self.key(),
                algorithms=["HS256"],
                options={"require": ["exp"]},
                leeway=0,
            )
        except jwt.ExpiredSignatureError:
            self.logger.error("auth_p_verify: token expired")
            raise AuthError("token expired") from None
        except jwt.InvalidTokenError as error:
            self.logger.error("auth_p_verify: jwt_decode failure: %s", error)
            raise AuthError(f"jwt_decode failure: {error}") from None
        named = claims.get("sun", claims.get("username"))
        if not isinstance(named, str) or not named:
            self.logger.error("auth_p_verify: jwt_get_grant failure")
            raise AuthError("jwt_get_grant failure")
        if not username or named == username:
            return named
        try:
            uid = pwd.getpwnam(named).pw_uid
        except KeyError:
            raise AuthError("uid_from_string failure") from None
        if uid != 0 and uid != self._slurm_uid():
            self.logger.error(
                "auth_p_verify: attempt to authenticate as alternate user %s from non-SlurmUser %s",
                username,
                named,
            )
            raise AuthError(f"attempt to authenticate as alternate user {username}")
        return username
