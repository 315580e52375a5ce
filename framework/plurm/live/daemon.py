"""What both daemons do the same way: logging and detaching from the terminal."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from plurm.errors import PlurmError

__all__ = ["daemonize", "run_daemon", "setup_logging"]


def setup_logging(verbosity: int, path: str | None) -> None:
    """Log to ``path`` (else standard error): warnings, then info with -v, debug with -vv."""
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbosity, 2)]
    handler: logging.Handler = (
        logging.FileHandler(path) if path else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("[%(asctime)s] %(name)s: %(levelname)s: %(message)s"))
    handler.addFilter(_bad_http_request)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def _bad_http_request(record: logging.LogRecord) -> bool:
    """aiohttp logs a request it cannot parse (garbage on the port, a bad header) as an
    error with its traceback; the daemon logs it as one warning line with the reason."""
    error = record.exc_info[1] if record.exc_info else None
    if error is None or not record.name.startswith("aiohttp."):
        return True
    if not any(kind.__name__ == "HttpProcessingError" for kind in type(error).__mro__):
        return True
    reason = " ".join(str(error).split())
    said = record.getMessage().replace("Error handling request", "bad HTTP request")
    record.msg, record.args = "%s: %s", (said, reason[:300])
    record.exc_info = record.exc_text = None
    record.levelno, record.levelname = logging.WARNING, "WARNING"
    return True


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


def common_flags(parser: argparse.ArgumentParser) -> None:
    """The flags both daemons take, as Slurm's do: -D, -f FILE, -v..., and -L LOGFILE."""
    parser.add_argument("-D", action="store_true", help="run in the foreground")
    parser.add_argument("-f", metavar="FILE", help="the slurm.conf to read")
    parser.add_argument("-v", action="count", default=0, help="more logging (repeatable)")
    parser.add_argument("-L", metavar="LOGFILE", help="log to this file")


def run_daemon(
    name: str, args: argparse.Namespace, make: Callable[[], Callable[[], Coroutine[Any, Any, None]]]
) -> int:
    """Start a daemon: logging, ``make()`` (which reads the configuration and returns the
    daemon's serve coroutine function), detaching unless -D, then its event loop. A
    configuration or system error before it serves ends it with a ``NAME: fatal:`` line
    and exit status 1, as Slurm's daemons do."""
    setup_logging(args.v, args.L)
    try:
        serve = make()
    except (PlurmError, OSError) as error:
        print(f"{name}: fatal: {error}", file=sys.stderr)
        return 1
    if not args.D:
        daemonize()
    try:
        asyncio.run(serve())
    except OSError as error:
        logging.getLogger(f"plurm.live.{name}").critical("%s: %s", name, error)
        print(f"{name}: fatal: {error}", file=sys.stderr)
        return 1
    return 0
