"""auth: credentials for the messages between commands and daemons.

The simulator sends no messages and loads no auth plugin; the live daemons (a later issue)
do. ``auth/none`` ships in the core.
"""

from __future__ import annotations

from plurm._markers import hookspec


@hookspec(firstresult=True)
def auth_create(uid: int, gid: int, payload: bytes) -> bytes | None:
    """An opaque credential for ``uid``/``gid`` that covers ``payload``.

    When called: by a command or daemon before it sends a message.

    :returns: the credential. Exclusive: first non-None result wins.
    :Purity: pure apart from reading keys.
    :Slurm equivalent: ``auth_p_create``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def auth_verify(credential: bytes, payload: bytes) -> bool | None:
    """Is ``credential`` valid for ``payload``?

    When called: by a daemon for every message it receives.

    :returns: True or False. Exclusive: first non-None result wins.
    :Purity: pure.
    :Slurm equivalent: ``auth_p_verify``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def auth_get_ids(credential: bytes) -> tuple[int, int] | None:
    """The (uid, gid) a verified ``credential`` speaks for.

    When called: after ``auth_verify``.

    :returns: (uid, gid). Exclusive: first non-None result wins.
    :Purity: pure.
    :Slurm equivalent: ``auth_p_get_ids``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def auth_token_create(username: str, lifespan: int) -> str | None:
    """A token that speaks for ``username`` for ``lifespan`` seconds (``scontrol token``).

    When called: by plurmctld, for a user allowed to ask (only root and SlurmUser may ask
    for another user's). Raises :class:`~plurm.errors.AuthError` when no token can be made.

    :returns: the token, or None when no loaded plugin makes tokens.
        Exclusive: first non-None result wins.
    :Purity: pure apart from reading the key.
    :Slurm equivalent: ``auth_p_token_generate`` (auth/jwt).

    .. versionadded:: 1.7
    """


@hookspec(firstresult=True)
def auth_token_verify(token: str, username: str) -> str | None:
    """Check a token presented for ``username`` (slurmrestd's ``X-SLURM-USER-TOKEN`` and
    ``X-SLURM-USER-NAME``): the name of the user the request acts as.

    When called: by plurmctld's REST API for every request that carries a token. Raises
    :class:`~plurm.errors.AuthError` (with the plugin's reason) when the token is refused.

    :returns: the user name, or None when no loaded plugin checks tokens.
        Exclusive: first non-None result wins.
    :Purity: pure apart from reading the key.
    :Slurm equivalent: ``auth_p_verify`` (auth/jwt).

    .. versionadded:: 1.7
    """
