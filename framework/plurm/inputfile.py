"""Reading the files Plurm is pointed at, and checking where it will write, safely.

Every input file (slurm.conf and its Includes, qos.conf, accounts.conf, SWF traces, TOML
mappings and comparisons, session files, sbatch scripts) is read through :func:`read_input`:

* only a regular file is read: a FIFO would block for ever and ``/dev/zero`` never ends, so
  the file is opened without blocking and refused unless ``fstat`` says it is regular;
* at most ``limit`` bytes are read (the caps are in ``docs/limits.md``);
* a gzip stream inflates in chunks and stops at its own cap (:func:`gunzip`), so a small
  file that would inflate to gigabytes is refused, not held in memory;
* bytes that are not UTF-8 are read as Latin-1 (:func:`decode`): Slurm reads bytes, and every
  byte survives to be reported where it stands.

Output directories are checked before any work starts (:func:`check_output_dir`), so that an
``--out`` that names a file (or lies under one) fails at once rather than after a long replay.
"""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path

from plurm.errors import InputFileError

__all__ = [
    "MAX_CONF_BYTES",
    "MAX_SCRIPT_BYTES",
    "MAX_SESSION_BYTES",
    "MAX_TOML_BYTES",
    "MAX_TRACE_BYTES",
    "InputFileError",
    "check_output_dir",
    "decode",
    "gunzip",
    "read_input",
    "read_text",
]

MiB = 1 << 20

#: slurm.conf, each Include, qos.conf and accounts.conf (a 100,000-node file is a few MiB).
MAX_CONF_BYTES = 64 * MiB
#: A session file.
MAX_SESSION_BYTES = 16 * MiB
#: An sbatch script (Slurm's default max_script_size is 4 MiB too).
MAX_SCRIPT_BYTES = 4 * MiB
#: A TOML mapping or comparison file.
MAX_TOML_BYTES = 1 * MiB
#: An SWF trace as read from disk, and again once inflated.
MAX_TRACE_BYTES = 2048 * MiB

_CHUNK = 1 * MiB
_GZIP_WBITS = 16 + zlib.MAX_WBITS


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is not a regular file (a directory)"
    if stat.S_ISFIFO(mode):
        return "is not a regular file (a FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is not a regular file (a device)"
    if stat.S_ISSOCK(mode):
        return "is not a regular file (a socket)"
    return "is not a regular file"


def read_input(path: str | os.PathLike[str], *, limit: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    Raises :class:`InputFileError` (an ``OSError``) for anything but a regular file and for a
    file larger than ``limit``, and ``OSError`` when the file cannot be opened.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(os.fspath(path), flags)  # never blocks, even on a FIFO
    with os.fdopen(descriptor, "rb", buffering=0) as stream:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise InputFileError(_describe(mode))
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = stream.read(min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise InputFileError(f"is larger than the cap of {limit} bytes")
    return b"".join(chunks)


def gunzip(data: bytes, *, limit: int) -> bytes:
    """``data`` (one or more gzip members) inflated, at most ``limit`` bytes.

    Raises :class:`InputFileError` when the output would pass ``limit``, and ``zlib.error``
    or ``EOFError`` for a corrupt or cut stream, as :func:`gzip.decompress` does.
    """
    out: list[bytes] = []
    total = 0
    rest = data
    while rest:
        inflater = zlib.decompressobj(_GZIP_WBITS)
        pending = rest
        while True:
            piece = inflater.decompress(pending, min(_CHUNK, limit + 1 - total))
            total += len(piece)
            if total > limit:
                raise InputFileError(f"inflates past the cap of {limit} bytes")
            out.append(piece)
            pending = inflater.unconsumed_tail
            if inflater.eof:
                break
            if not pending and not piece:
                raise EOFError("Compressed file ended before the end-of-stream marker was reached")
        rest = inflater.unused_data
        if rest and not rest.strip(b"\0"):
            break  # trailing zero padding, which gzip tolerates
    return b"".join(out)


def decode(data: bytes) -> str:
    """UTF-8, else Latin-1: every byte survives, as it does for Slurm's byte-oriented readers."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_text(path: str | os.PathLike[str], *, limit: int) -> str:
    """:func:`read_input` and :func:`decode`."""
    return decode(read_input(path, limit=limit))


def check_output_dir(path: str | os.PathLike[str]) -> Path:
    """Make sure ``path`` is, or could be made, a writable directory; create nothing.

    Raises :class:`InputFileError` naming the problem (a file in the way, no permission).
    """
    directory = Path(path)
    probe = directory
    while not probe.exists():  # the nearest existing ancestor must be a writable directory
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise InputFileError(f"{directory}: {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputFileError(f"{directory}: {probe} is not writable")
    return directory
