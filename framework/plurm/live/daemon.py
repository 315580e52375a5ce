"""What both daemons do the same way: logging and detaching from the terminal."""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["daemonize", "setup_logging"]


def setup_logging(verbosity: int, path: str | None) -> None:
    """Log to ``path`` (else standard error): warnings, then info with -v, debug with -vv."""
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbosity, 2)]
    handler: logging.Handler = (
        logging.FileHandler(path) if path else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("[%(asctime)s] %(name)s: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def daemonize() -> None:
    """Detach as a daemon does (fork, new session, fork; stdin, stdout to /dev/null)."""
    if os.fork():
        os._exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
