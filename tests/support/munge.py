"""A private MUNGE daemon for the tests: its own key and socket in a temporary folder, started
as root and stopped by pid. Debian's ``munge`` and ``libmunge2`` are installed first where
they are missing (the tests run as root in CI); a test that cannot have them is skipped
with the reason."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs
import pytest

MUNGED = "/usr/sbin/munged"
MUNGEKEY = "/usr/sbin/mungekey"


def _installed() -> bool:
    return os.path.exists(MUNGED) and os.path.exists(MUNGEKEY) and _library()


def _library() -> bool:
    import ctypes

    try:
        ctypes.CDLL("libmunge.so.2")
    except OSError:
        return False
    return True


def ensure_munge() -> None:
    """Install munge and libmunge2 with apt-get if they are missing (as root only);
    pytest.skip with the reason when that cannot be done."""
    if _installed():
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("MUNGE is not installed and cannot be (needs root and apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y", "-q", "munge", "libmunge2"],
    ):
        subprocess.run(command, env=env, capture_output=True, timeout=600, check=False)
    if not _installed():
        pytest.skip("apt-get could not install munge and libmunge2")


@attrs.frozen
class Munged:
    """A running munged: its socket, key and pid."""

    folder: Path
    socket: Path
    key: Path
    pid: int

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except OSError:
            return False
        return True

    def stop(self) -> None:
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.alive():
            time.sleep(0.05)
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)


def make_key(path: Path) -> None:
    subprocess.run(
        [MUNGEKEY, "--create", f"--keyfile={path}", "--force"],
        check=True,
        capture_output=True,
        timeout=30,
    )


def start_munged(folder: Path, key: Path | None = None) -> Munged:
    """Start munged with its files in ``folder`` (made world-searchable: other users'
    commands must reach the socket); a new key unless ``key`` is given."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    if key is None:
        key = folder / "munge.key"
        make_key(key)
    socket = folder / "munge.socket"
    pidfile = folder / "munged.pid"
    args = [
        MUNGED,
        f"--socket={socket}",
        f"--key-file={key}",
        f"--pid-file={pidfile}",
        f"--log-file={folder / 'munged.log'}",
        f"--seed-file={folder / 'munged.seed'}",
        "--force",
    ]
    result = subprocess.run(args, capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise RuntimeError(f"munged failed to start: {result.stderr.strip()}")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (pidfile.exists() and socket.exists()):
        time.sleep(0.02)
    pid = int(pidfile.read_text().split()[0])
    return Munged(folder, socket, key, pid)


@contextmanager
def munged(key: Path | None = None) -> Iterator[Munged]:
    """A munged for the duration of the block (in a fresh folder under /tmp)."""
    ensure_munge()
    if os.geteuid() != 0:
        pytest.skip("the tests' munged runs as root")
    folder = Path(tempfile.mkdtemp(prefix="plurm-munge-"))
    daemon = start_munged(folder, key)
    try:
        yield daemon
    finally:
        daemon.stop()
        shutil.rmtree(folder, ignore_errors=True)
