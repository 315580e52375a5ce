"""Run one of Slurm's commands as another user: ``python as_user.py UID GID COMMAND ARGS...``.

The test's Python lives where other users may not read it (a root-only home, say), so the
command cannot simply be exec'd as the user. This helper starts as root, imports everything
the command needs, then drops to the user for good (supplementary groups, gid, uid) before
the command reads its configuration or talks to munged or the controller: what the daemons
see is the user, as MUNGE verifies it from the socket's peer."""

from __future__ import annotations

import os
import pwd
import sys


def main() -> int:
    uid, gid, name, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    # Everything the commands import, imported while still root.
    import base64  # noqa: F401
    import encodings.idna  # noqa: F401  (http.client's host encoding)
    import hashlib  # noqa: F401
    import http.client  # noqa: F401
    import importlib
    import json  # noqa: F401
    import pickle  # noqa: F401  (the command's configuration cache)
    import pkgutil
    import shlex  # noqa: F401
    import socket  # noqa: F401
    import urllib.parse  # noqa: F401
    from importlib import metadata

    import plurm.commands
    import plurm.commands.dispatch as dispatch
    import plurm.conf
    import plurm.conf.cache
    import plurm.live
    import plurm.live.client as client
    import plurm.live.codec
    import plurm.live.snapshot
    import plurm.live.updates
    import plurm.manager
    import plurm.model
    from plurm.commands.base import COMMAND_NAMES
    from plurm.live.settings import find_conf

    for command in COMMAND_NAMES:
        importlib.import_module(f"plurm.commands.{command}")
    # and every module a command may import late (scontrol's job updates, sacct's formats...)
    for package in (plurm.commands, plurm.conf, plurm.model, plurm.live):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(module.name)
    # the parser and its grammar file, loaded once: the user's own cache is empty
    plurm.conf.load(str(find_conf()))

    for group in ("plurm.auth",):
        for entry in metadata.entry_points(group=group):
            entry.load()
    # The installed entry points, found now: a test environment's site-packages may be
    # unreadable to the user (tox makes .tox mode 0700), where a real install is readable.
    found = metadata.entry_points()
    metadata.entry_points = lambda **select: found.select(**select) if select else found  # type: ignore[assignment]
    assert dispatch.COMMANDS
    user = pwd.getpwuid(uid).pw_name
    os.setgroups(os.getgrouplist(user, gid))
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    os.environ.update(HOME=pwd.getpwuid(uid).pw_dir, USER=user, LOGNAME=user)
    return client.run(name, argv)


if __name__ == "__main__":
    sys.exit(main())
