"""auth/munge against a real munged (its own key and socket): the ids come from MUNGE, an
altered body, a replayed or expired credential and one made with another key are refused
with Slurm's words in the log, and a missing daemon is an error after bounded retries."""

from __future__ import annotations

import base64
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plurm import conf
from plurm.errors import AuthError
from plurm.live.rpc import RpcError, Signer
from plurm.manager import Plugins
from tests.support.munge import Munged, munged

CONF = """\
ClusterName=c
SlurmctldHost=localhost
AuthType=auth/munge
AuthInfo={auth_info}
NodeName=n1 CPUs=1
PartitionName=p Nodes=n1
"""


def load(tmp_path: Path, auth_info: str) -> Plugins:
    path = tmp_path / "slurm.conf"
    path.write_text(CONF.format(auth_info=auth_info))
    return Plugins.load(conf.load(str(path)), roles=("auth",))


@pytest.fixture(scope="module")
def daemon() -> Iterator[Munged]:
    with munged() as running:
        yield running


@pytest.fixture
def plugins(daemon: Munged, tmp_path: Path) -> Plugins:
    return load(tmp_path, f"socket={daemon.socket}")


def test_credential_carries_the_ids_munged_verified(plugins: Plugins) -> None:
    body = b'{"job_id":1}'
    # The uid and gid asked for are ignored: munged takes the caller's from the socket.
    credential = plugins.auth_create(12345, 54321, body)
    assert credential.startswith(b"MUNGE:")
    assert plugins.auth_verify(credential, body)
    assert plugins.auth_get_ids(credential) == (os.getuid(), os.getgid())


def test_altered_body_is_refused(plugins: Plugins, caplog: pytest.LogCaptureFixture) -> None:
    credential = plugins.auth_create(0, 0, b'{"job_id":1}')
    with caplog.at_level(logging.ERROR):
        assert not plugins.auth_verify(credential, b'{"job_id":2}')
    assert "does not cover this message" in caplog.text
    assert plugins.auth_get_ids(credential) is None


def test_replayed_credential_is_refused(plugins: Plugins, caplog: pytest.LogCaptureFixture) -> None:
    body = b"{}"
    credential = plugins.auth_create(0, 0, body)
    assert plugins.auth_verify(credential, body)
    with caplog.at_level(logging.ERROR):
        assert not plugins.auth_verify(credential, body)
    assert "auth/munge: _decode_cred: Munge decode failed: Replayed credential" in caplog.text


def test_garbage_credential_is_refused(plugins: Plugins, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        assert not plugins.auth_verify(b"MUNGE:AAAAnotacredential:", b"{}")
    assert "Munge decode failed" in caplog.text


def test_expired_credential_is_refused(
    daemon: Munged, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plugins = load(tmp_path, f"socket={daemon.socket},ttl=1")
    credential = plugins.auth_create(0, 0, b"{}")
    time.sleep(2.2)  # past the credential's one-second time-to-live (and munged's skew)
    with caplog.at_level(logging.ERROR):
        assert not plugins.auth_verify(credential, b"{}")
    assert "Munge decode failed: Expired credential" in caplog.text


def test_credential_of_another_key_is_refused(
    plugins: Plugins, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with munged() as foreign:
        other = load(tmp_path, f"socket={foreign.socket}")
        credential = other.auth_create(0, 0, b"{}")
        assert other.auth_verify(other.auth_create(0, 0, b"{}"), b"{}")
    with caplog.at_level(logging.ERROR):
        assert not plugins.auth_verify(credential, b"{}")
    assert "Munge decode failed: Invalid credential" in caplog.text


def test_signer_refuses_what_munge_refuses(plugins: Plugins) -> None:
    signer = Signer(plugins)
    header = signer.sign(b"{}")
    assert signer.verify(header, b"{}").uid == os.getuid()
    with pytest.raises(RpcError, match="Protocol authentication error") as refused:
        signer.verify(header, b"{}")  # the same credential again: a replay
    assert refused.value.kind == "auth"
    forged = base64.b64encode(b"MUNGE:forged:").decode()
    with pytest.raises(RpcError, match="Protocol authentication error"):
        signer.verify(forged, b"{}")


def test_missing_daemon_is_a_clear_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    socket = tmp_path / "no-munged.socket"
    plugins = load(tmp_path, f"socket={socket}")
    started = time.monotonic()
    with caplog.at_level(logging.ERROR), pytest.raises(AuthError) as error:
        plugins.auth_create(0, 0, b"{}")
    assert time.monotonic() - started < 10
    message = str(error.value)
    assert message.startswith("auth/munge: Munge encode failed: Failed to access")
    assert str(socket) in message and "No such file or directory" in message
    assert "(retrying ...)" in caplog.text
    # Signer turns it into the command's error, not a traceback.
    with pytest.raises(RpcError, match="Munge encode failed") as refused:
        Signer(plugins).sign(b"{}")
    assert refused.value.kind == "auth"


def test_dead_daemon_is_a_clear_error(tmp_path: Path) -> None:
    with munged() as running:
        plugins = load(tmp_path, f"socket={running.socket}")
        running.stop()
        started = time.monotonic()
        with pytest.raises(AuthError, match="Munge encode failed"):
            plugins.auth_create(0, 0, b"{}")
        assert time.monotonic() - started < 30


def test_bad_auth_info_is_a_clear_error(tmp_path: Path) -> None:
    from plurm.registry import PluginLoadError

    with pytest.raises((AuthError, PluginLoadError), match="ttl"):
        load(tmp_path, "ttl=soon")
