"""Every daemon port of a cluster under AuthType=auth/munge (its own munged), fuzzed with
hypothesis: garbage bytes, malformed HTTP, oversized bodies, messages of the right shape
with bad fields signed by a real (unprivileged) user, REST requests with bad and good
tokens, and forged, altered and replayed MUNGE credentials. Every answer is a refusal or
an answer, never a server error; after each test plurmctld and every plurmd still run (the
same processes), the job that runs throughout still runs, no daemon logged a traceback;
and at the end a real sbatch and squeue work.

One cluster for the module and a bounded number of examples per test: the whole module
takes well under a minute."""

from __future__ import annotations

import base64
import json
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plurm import conf
from plurm.gather.procfs import start_time
from plurm.live.rpc import CREDENTIAL_HEADER, MAX_BODY, PROTOCOL, PROTOCOL_HEADER, Signer
from plurm.live.settings import LiveSettings
from plurm.manager import Plugins
from tests.live.conftest import LiveCluster, make_cluster
from tests.live.test_faults import JSON, MESSAGES
from tests.support.munge import munged

SIGNER = Path(__file__).parent.parent / "support" / "munge_signer.py"
DAEMONS = ("plurmctld", "plurmd-n1", "plurmd-n2")

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        os.geteuid() != 0, reason="runs munged and signs as another user: root only"
    ),
]


@attrs.frozen
class Guarded:
    cluster: LiveCluster
    ports: tuple[int, ...]  # plurmctld's (RPC and REST), then each plurmd's
    job_id: int  # runs throughout
    root: Signer
    user: subprocess.Popen[str]  # signs as ``nobody``
    user_name: str
    token: str  # a REST token for ``nobody``

    def sign_as_user(self, body: bytes) -> str:
        assert self.user.stdin is not None and self.user.stdout is not None
        self.user.stdin.write(base64.b64encode(body).decode() + "\n")
        self.user.stdin.flush()
        answer = self.user.stdout.readline().strip()
        assert answer and not answer.startswith("ERROR"), answer
        return answer


@pytest.fixture(scope="module")
def guarded() -> Iterator[Guarded]:
    nobody = pwd.getpwnam("nobody")
    with munged() as daemon:
        root = Path(tempfile.mkdtemp(prefix="plurm-fuzz-"))
        key = root / "jwt_hs256.key"
        key.write_bytes(secrets.token_bytes(32))
        key.chmod(0o600)
        cluster = make_cluster(
            root,
            nodes=2,
            cpus=2,
            extra=(
                "AuthType=auth/munge\n"
                f"AuthInfo=socket={daemon.socket}\n"
                "AuthAltTypes=auth/jwt\n"
                f"AuthAltParameters=jwt_key={key}\n"
            ),
        )
        signer = subprocess.Popen(
            [
                sys.executable,
                str(SIGNER),
                str(nobody.pw_uid),
                str(nobody.pw_gid),
                str(cluster.conf),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=cluster.env,
        )
        try:
            cluster.up()
            config = conf.load(str(cluster.conf))
            settings_ = LiveSettings.from_config(config)
            ports = (settings_.ctld_port, *(settings_.nodes[n].port for n in ("n1", "n2")))
            job_id = cluster.sbatch("-w", "n1", "-o", "/dev/null", "--wrap", "sleep 300")
            cluster.wait_for(lambda: cluster.state(job_id) == "RUNNING", what="RUNNING")
            token = cluster.run("scontrol", "token", "username=nobody").stdout.strip()
            yield Guarded(
                cluster,
                ports,
                job_id,
                Signer(Plugins.load(config, roles=("auth",))),
                signer,
                nobody.pw_name,
                token.removeprefix("SLURM_JWT="),
            )
        finally:
            assert signer.stdin is not None
            signer.stdin.close()
            signer.wait(timeout=30)
            cluster.down()
            shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def fuzzed(guarded: Guarded) -> Iterator[Guarded]:
    """The shared cluster; after the test the same daemons run, the job runs on and no
    daemon logged a traceback."""
    state = guarded.cluster.root / "state"
    pids = {name: (state / f"{name}.pid").read_text() for name in DAEMONS}
    yield guarded
    for name, text in pids.items():
        pid, start = map(int, text.split())
        assert start_time(pid) == start, f"{name} died"
    assert guarded.cluster.state(guarded.job_id) == "RUNNING"
    for name in DAEMONS:
        log = (state / f"{name}.log").read_text()
        assert "Traceback" not in log and "Error handling request" not in log, name


_FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _exchange(port: int, data: bytes, *, half_close: bool = True) -> bytes:
    """Send ``data`` (and end the sending side: a request cut short is answered or
    dropped, not waited for); everything the daemon answers until it closes (a daemon
    that hangs fails the test at the timeout). A whole request is sent without the
    half-close: aiohttp drops a request whose client has gone."""
    with socket.create_connection(("127.0.0.1", port), timeout=15) as connection:
        connection.sendall(data)
        if half_close:
            connection.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


_STATUS = re.compile(rb"HTTP/1\.[01] (\d{3}) ")


def _statuses(answer: bytes) -> list[int]:
    return [int(code) for code in _STATUS.findall(answer)]


def _request(
    verb: str, path: str, headers: dict[str, str], body: bytes, length: int | None = None
) -> bytes:
    lines = [f"{verb} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{key}: {value}" for key, value in headers.items()]
    lines.append(f"Content-Length: {len(body) if length is None else length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape") + body


def _post(port: int, method: str, body: bytes, credential: str | None) -> tuple[int, Any]:
    headers = {PROTOCOL_HEADER: str(PROTOCOL), "Content-Type": "application/json"}
    if credential is not None:
        headers[CREDENTIAL_HEADER] = credential
    answer = _exchange(port, _request("POST", f"/rpc/{method}", headers, body), half_close=False)
    head, _, data = answer.partition(b"\r\n\r\n")
    return _statuses(head)[0], json.loads(data)


_PATHS = st.sampled_from(
    [
        *(f"/rpc/{m}" for m in ("ping", "submit", "cancel", "view", "register", "launch", "kill")),
        "/rpc/",
        "/rpc/%00",
        "/",
        "/../../etc/passwd",
        "/slurm/v0.0.38/ping",
        "/slurm/v0.0.38/jobs",
        "/slurm/v0.0.38/job/1",
        "/slurm/v0.0.38/job/submit",
        "/slurm/v0.0.99/jobs",
    ]
) | st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=40).map(
    lambda text: "/" + text
)
_HEADER_VALUES = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60
) | st.sampled_from(["", "1", "0", "-1", "99999999999999999999", "MUNGE:" + "A" * 40])
_HEADERS = st.dictionaries(
    st.sampled_from(
        [
            PROTOCOL_HEADER,
            CREDENTIAL_HEADER,
            "X-SLURM-USER-NAME",
            "X-SLURM-USER-TOKEN",
            "Content-Type",
            "Transfer-Encoding",
            "Expect",
        ]
    ),
    _HEADER_VALUES,
    max_size=4,
)
_BODIES = (
    st.binary(max_size=256)
    | JSON.map(lambda value: json.dumps(value).encode())
    | st.sampled_from([b"", b"{", b"[" * 5000, b"\xff\xfe", b'{"a": NaN}'])
)


@_FUZZ
@given(
    port=st.integers(0, 2),
    data=st.binary(max_size=2048)
    | st.tuples(
        st.sampled_from([b"GET / HTTP/1.1\r\n", b"POST /rpc/ping HTTP/1.1\r\n", b"\x16\x03\x01"]),
        st.binary(max_size=512),
    ).map(b"".join),
)
def test_garbage_bytes_on_every_port(fuzzed: Guarded, port: int, data: bytes) -> None:
    answer = _exchange(fuzzed.ports[port], data)
    assert answer == b"" or answer.startswith(b"HTTP/1."), answer[:80]
    assert all(400 <= status < 500 for status in _statuses(answer)), answer[:200]


@_FUZZ
@given(
    port=st.integers(0, 2),
    verb=st.sampled_from(["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "BREW", "get"]),
    path=_PATHS,
    headers=_HEADERS,
    body=_BODIES,
    length=st.none() | st.sampled_from([0, 1, 10, MAX_BODY + 1, 1 << 40]),
)
def test_malformed_http_with_bad_credentials_is_refused(
    fuzzed: Guarded,
    port: int,
    verb: str,
    path: str,
    headers: dict[str, str],
    body: bytes,
    length: int | None,
) -> None:
    request = _request(verb, path, headers, body, length)
    whole = length is None or length <= len(body)
    answer = _exchange(fuzzed.ports[port], request, half_close=not whole)
    statuses = _statuses(answer)
    # nothing here carries a credential or a token that passes: refusals only
    assert all(400 <= status < 500 for status in statuses), answer[:300]


@_FUZZ
@given(port=st.integers(0, 2), message=MESSAGES)
def test_messages_of_a_user_with_bad_fields_are_refused_or_answered(
    fuzzed: Guarded, port: int, message: tuple[str, dict[str, Any]]
) -> None:
    method, fields = message
    if port > 0:  # a node daemon's methods, with the same fields
        method = {"submit": "launch", "cancel": "kill"}.get(method, method)
    body = json.dumps(fields).encode()
    status, answer = _post(fuzzed.ports[port], method, body, fuzzed.sign_as_user(body))
    assert status in (200, 400, 403, 404), (status, answer)
    assert set(answer) in ({"result"}, {"error"}), answer
    if port > 0 and method != "ping":  # a node daemon takes orders from plurmctld's only
        assert "error" in answer, answer
    admin = ("shutdown", "update_nodes", "update_partition", "register", "job_ended")
    if port == 0 and method in admin:
        assert answer == {"error": {"kind": "request", "message": "Access/permission denied"}}


_REST_PATHS = st.sampled_from(
    ["/slurm/v0.0.38/job/submit", "/slurm/v0.0.38/jobs", "/slurm/v0.0.38/job/1"]
)
_REST_JOBS = st.fixed_dictionaries(
    {},
    optional={
        "script": st.text(max_size=20) | JSON,
        "job": st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "partition",
                    "nodes",
                    "time_limit",
                    "environment",
                    "current_working_directory",
                ]
            )
            | st.text(max_size=8),
            JSON,
            max_size=4,
        )
        | JSON,
    },
)


@_FUZZ
@given(
    path=_REST_PATHS,
    verb=st.sampled_from(["GET", "POST", "DELETE"]),
    token=st.sampled_from(["good", "forged", "other user", "none"]),
    body=_REST_JOBS.map(lambda value: json.dumps(value).encode()) | _BODIES,
)
def test_rest_requests_with_bad_fields_or_tokens(
    fuzzed: Guarded, path: str, verb: str, token: str, body: bytes
) -> None:
    headers = {"Content-Type": "application/json", "X-SLURM-USER-NAME": fuzzed.user_name}
    if token == "good":
        headers["X-SLURM-USER-TOKEN"] = fuzzed.token
    elif token == "forged":
        head, claims, _ = fuzzed.token.split(".")
        headers["X-SLURM-USER-TOKEN"] = (
            f"{head}.{claims}.{base64.urlsafe_b64encode(b'x' * 32).decode()}"
        )
    elif token == "other user":
        headers["X-SLURM-USER-TOKEN"] = fuzzed.token
        headers["X-SLURM-USER-NAME"] = "root"
    answer = _exchange(fuzzed.ports[0], _request(verb, path, headers, body), half_close=False)
    status = _statuses(answer)[0]
    if status in (404, 405):  # no such route, or not with that verb: aiohttp's own answer
        return
    data = json.loads(answer.partition(b"\r\n\r\n")[2])
    if token != "good":
        assert status == 401, answer[:300]
    else:
        # slurmrestd answers a refused submission 500 with its errors; never a crash
        assert status in (200, 500), answer[:300]
        assert isinstance(data, dict) and (status == 200 or data.get("errors")), data


@_FUZZ
@given(
    port=st.integers(0, 2),
    body=JSON.map(lambda value: json.dumps(value).encode()),
    other=JSON.map(lambda value: json.dumps(value).encode()),
    how=st.sampled_from(["replayed", "altered body", "flipped byte", "truncated", "forged"]),
    where=st.integers(0, 1 << 16),
)
def test_forged_altered_and_replayed_credentials_are_refused(
    fuzzed: Guarded, port: int, body: bytes, other: bytes, how: str, where: int
) -> None:
    target = fuzzed.ports[port]
    credential = fuzzed.root.sign(body)
    raw = base64.b64decode(credential)
    sent = body
    if how == "replayed":
        body = b"{}"
        credential = fuzzed.root.sign(body)
        assert _post(target, "ping", body, credential)[0] == 200
        sent = body
    elif how == "altered body":
        sent = other if other != body else body + b" "
    elif how == "flipped byte":
        spot = where % len(raw)
        credential = base64.b64encode(
            raw[:spot] + bytes([raw[spot] ^ (1 + where % 255)]) + raw[spot + 1 :]
        ).decode()
    elif how == "truncated":
        credential = base64.b64encode(raw[: where % len(raw)]).decode()
    else:
        credential = base64.b64encode(b"MUNGE:" + secrets.token_bytes(where % 200 + 1)).decode()
    # root's credential, spoiled: refused before any handler runs
    method = "ping" if how == "replayed" else "kill" if port else "cancel"
    status, answer = _post(target, method, sent, credential)
    assert (status, answer["error"]["kind"]) == (401, "auth"), (how, answer)


def test_the_daemons_serve_after_the_fuzz(fuzzed: Guarded) -> None:
    cluster = fuzzed.cluster
    log = (cluster.root / "state" / "plurmctld.log").read_text()
    assert "Munge decode failed: Replayed credential" in log  # refusals were logged
    job_id = cluster.sbatch("-w", "n2", "-o", "/dev/null", "--wrap", "true")
    cluster.wait_for(lambda: cluster.state(job_id) == "COMPLETED", what="a new job's end")
    queue = cluster.run("squeue", "-h", "-o", "%i %T", "-j", str(fuzzed.job_id)).stdout
    assert queue == f"{fuzzed.job_id} RUNNING\n"
    assert cluster.run("sinfo", "-h", "-o", "%D %t").returncode == 0
