"""Live mode under faults: daemons killed with SIGKILL lose no job and run none twice, and bad
input on the network gets a clear error while the daemons keep running."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import grp
import http.client
import json
import os
import pwd
import signal
import socket
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from plurm import conf
from plurm.commands.dispatch import run_command
from plurm.controller import RequestError
from plurm.gather.procfs import start_time
from plurm.live.client import RpcClient, invocation
from plurm.live.codec import (
    CodecError,
    job_from_dict,
    job_to_dict,
    request_from_dict,
    request_to_dict,
)
from plurm.live.ctld import ControllerDaemon
from plurm.live.noded import LaunchFieldError, NodeDaemon
from plurm.live.rpc import (
    CREDENTIAL_HEADER,
    MAX_BODY,
    PROTOCOL,
    PROTOCOL_HEADER,
    Caller,
    RpcError,
    decode,
)
from plurm.live.settings import LiveSettings
from plurm.live.updates import partition_changes
from plurm.model.job import JobRequest, JobState
from tests.live.conftest import LiveCluster, make_cluster

live = pytest.mark.live


def _kill9(cluster: LiveCluster, daemon: str) -> int:
    """SIGKILL the daemon its pid file names (checked by start time); its pid."""
    pid_text, start_text = (cluster.root / "state" / f"{daemon}.pid").read_text().split()
    pid = int(pid_text)
    assert start_time(pid) == int(start_text), f"{daemon} is not running"
    os.kill(pid, signal.SIGKILL)
    # the test process started it (through local.up): reap it, so that it is gone
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    return pid


def _submit(cluster: LiveCluster, client: RpcClient, *argv: str) -> int:
    """sbatch's code, run in this process against the live controller (sixty sbatch
    processes would spend most of the test starting Python)."""
    result = run_command(["sbatch", "--parsable", *argv], client, cluster.root, invocation())
    assert result.status == 0, result.stderr
    return int(result.stdout.strip())


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return not state[state.rindex(")") + 2 :].startswith("Z")


# ---------------------------------------------------------------------------- plurmctld


@live
def test_a_killed_plurmctld_loses_no_job_and_runs_none_twice(tmp_path: Path) -> None:
    cluster = make_cluster(
        tmp_path, nodes=4, cpus=4, extra="SelectType=select/cons_res\nSelectTypeParameters=CR_CPU"
    )
    ran = tmp_path / "ran"
    (tmp_path / "out").mkdir()
    try:
        cluster.up()
        client = RpcClient(conf.load(str(cluster.conf)))
        ids = [
            _submit(
                cluster,
                client,
                "-o",
                "out/%j.out",
                "--wrap",
                f"echo $SLURM_JOB_ID >> {ran}; sleep 1",
            )
            for _ in range(60)
        ]
        assert ids == list(range(ids[0], ids[0] + 60))
        # some have ended, some run, most wait
        cluster.wait_for(lambda: ran.exists() and len(ran.read_text().split()) >= 20)
        _kill9(cluster, "plurmctld")
        started = cluster.run("plurm", "cluster", "up", check=False)
        assert started.returncode == 0, started.stderr
        assert "plurmctld" in started.stdout
        assert "plurmd" not in started.stdout  # the nodes' daemons ran on

        def sacct() -> list[str]:
            return cluster.run(
                "sacct", "-X", "-P", "-n", "-o", "JobID,State", "-j", ",".join(map(str, ids))
            ).stdout.splitlines()

        cluster.wait_for(
            lambda: sum(line.endswith("|COMPLETED") for line in sacct()) == 60,
            timeout=60,
            what="every job COMPLETED",
        )
        assert sorted(sacct()) == sorted(f"{job_id}|COMPLETED" for job_id in ids)
        assert sorted(map(int, ran.read_text().split())) == ids  # each ran exactly once
        after = _submit(cluster, client, "--wrap", "true")
        assert after == ids[-1] + 1
    finally:
        cluster.down()


# ---------------------------------------------------------------------------- plurmd


@live
def test_a_killed_plurmd_downs_its_node_and_its_restart_kills_the_orphans(
    tmp_path: Path,
) -> None:
    cluster = make_cluster(
        tmp_path,
        nodes=2,
        cpus=2,
        slurmd_timeout=6,
        extra="ReturnToService=2\nMessageTimeout=2\nSelectType=select/cons_res\nSelectTypeParameters=CR_CPU",
    )
    script = "sleep 300 & echo $$ $! > pids-$SLURM_JOB_ID-${SLURM_RESTART_COUNT:-0}; wait"

    def pids(job_id: int, attempt: int) -> list[int]:
        path = tmp_path / f"pids-{job_id}-{attempt}"
        words = path.read_text().split() if path.exists() else []
        return [int(word) for word in words] if len(words) == 2 else []

    def node(name: str) -> str:
        lines = cluster.run("sinfo", "-h", "-N", "-o", "%N %t %E").stdout.splitlines()
        return next(line for line in lines if line.startswith(f"{name} "))

    try:
        cluster.up()
        requeued = cluster.sbatch("-w", "n1", "-o", "/dev/null", "--wrap", script)
        failed = cluster.sbatch("-w", "n1", "-o", "/dev/null", "--no-requeue", "--wrap", script)
        cluster.wait_for(lambda: bool(pids(requeued, 0) and pids(failed, 0)), what="both jobs")
        orphans = pids(requeued, 0) + pids(failed, 0)
        _kill9(cluster, "plurmd-n1")
        cluster.wait_for(
            lambda: node("n1") == "n1 down* Not responding", timeout=30, what="n1 down*"
        )
        cluster.wait_for(lambda: cluster.state(failed) == "NODE_FAIL", what="NODE_FAIL")
        assert cluster.state(requeued) == "PENDING"  # requeued; it waits for n1 (-w n1)
        assert node("n2") == "n2 idle none"
        assert all(_alive(pid) for pid in orphans)  # nothing killed them yet
        started = cluster.run("plurm", "cluster", "up")
        assert started.stdout.startswith("started: plurmd-n1\n")
        assert not [pid for pid in orphans if _alive(pid)]
        # ReturnToService=2: n1 serves again; the requeued job waits out its BeginTime
        cluster.wait_for(lambda: node("n1") == "n1 idle none", what="n1 idle")
        show = cluster.run("scontrol", "show", "job", str(requeued)).stdout
        assert "JobState=PENDING Reason=BeginTime" in show
        assert " Restarts=1 " in show
        sacct = cluster.run(
            "sacct", "-X", "-P", "-n", "-o", "JobID,State,ExitCode", "-j", str(failed)
        ).stdout
        assert sacct == f"{failed}|NODE_FAIL|0:0\n"
    finally:
        cluster.down()


# ---------------------------------------------------------------------------- bad input


@pytest.fixture(scope="module")
def steady(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveCluster, int]]:
    """A two-node cluster shared by the bad-input tests, with a job that runs throughout:
    each test checks that the daemons still run and the job is still there."""
    cluster = make_cluster(tmp_path_factory.mktemp("bad"), nodes=2, cpus=2)
    try:
        cluster.up()
        job_id = cluster.sbatch("-w", "n1", "-o", "/dev/null", "--wrap", "sleep 300")
        cluster.wait_for(lambda: cluster.state(job_id) == "RUNNING", what="RUNNING")
        yield cluster, job_id
    finally:
        cluster.down()


@pytest.fixture
def bad(steady: tuple[LiveCluster, int]) -> Iterator[LiveCluster]:
    """The shared cluster; after the test, its daemons still run and lost nothing."""
    cluster, job_id = steady
    state = cluster.root / "state"
    pids = {
        name: (state / f"{name}.pid").read_text()
        for name in ("plurmctld", "plurmd-n1", "plurmd-n2")
    }
    yield cluster
    for name, text in pids.items():
        pid, start = map(int, text.split())
        assert start_time(pid) == start and _alive(pid), f"{name} died"
    jobs = RpcClient(conf.load(str(cluster.conf))).view().cluster.jobs
    assert jobs[job_id].state is JobState.RUNNING


def _settings(cluster: LiveCluster) -> LiveSettings:
    return LiveSettings.from_config(conf.load(str(cluster.conf)))


def _raw(port: int, data: bytes) -> bytes:
    """Send ``data`` on a plain TCP connection; what comes back before the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(data)
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _post(
    url: str,
    method: str,
    body: bytes,
    *,
    credential: str | None = "sign",
    protocol: str | None = str(PROTOCOL),
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """POST ``body`` to ``method`` with the headers given (a real credential by default);
    the status and the decoded answer."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=20)
    sent = {"Content-Type": "application/json", **(headers or {})}
    if protocol is not None:
        sent[PROTOCOL_HEADER] = protocol
    if credential == "sign":
        sent[CREDENTIAL_HEADER] = base64.b64encode(f"{os.getuid()}:{os.getgid()}".encode()).decode()
    elif credential is not None:
        sent[CREDENTIAL_HEADER] = credential
    try:
        connection.request("POST", f"/rpc/{method}", body=body, headers=sent)
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    try:
        return response.status, json.loads(data)
    except ValueError:
        return response.status, data


def _refusal(answer: Any) -> tuple[str, str]:
    assert isinstance(answer, dict) and set(answer) == {"error"}, answer
    return answer["error"]["kind"], answer["error"]["message"]


@live
def test_garbage_bytes_get_a_bad_request_and_the_daemons_run_on(bad: LiveCluster) -> None:
    settings = _settings(bad)
    for port in (settings.ctld_port, settings.nodes["n1"].port):
        answer = _raw(port, b"\x00\xff\x13garbage\r\n\r\n" * 10)
        assert answer.startswith(b"HTTP/1.0 400 Bad Request\r\n"), answer
        assert answer.endswith(
            b"\r\n\r\nInvalid method encountered:\n\n  b'\\x00\\xff\\x13garbage'\n    ^"
        )


@live
def test_a_body_over_the_limit_is_refused(bad: LiveCluster) -> None:
    url = _settings(bad).ctld_url
    # said in advance by its Content-Length
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=20)
    try:
        connection.putrequest("POST", "/rpc/submit")
        connection.putheader(PROTOCOL_HEADER, str(PROTOCOL))
        connection.putheader("Content-Length", str(MAX_BODY + 1))
        connection.endheaders()
        response = connection.getresponse()
        status, answer = response.status, json.loads(response.read())
    finally:
        connection.close()
    assert status == 413
    assert _refusal(answer) == (
        "bad_request",
        f"message exceeds the limit of {MAX_BODY} bytes",
    )
    # found while reading a body sent in chunks
    status, answer = _post(url, "submit", iter([b" " * (1 << 20)] * 9))
    assert status == 413
    assert _refusal(answer) == ("bad_request", f"message exceeds the limit of {MAX_BODY} bytes")


@live
def test_invalid_json_is_refused(bad: LiveCluster) -> None:
    url = _settings(bad).ctld_url
    for body, message in [
        (b"{not json", "message is not valid JSON: Expecting property name enclosed in double"),
        (b"\xff\xfe{}", "message is not UTF-8"),
        (b"[1, 2]", "message is not a JSON object"),
        (b'{"a": NaN}', "message is not valid JSON: NaN is not a JSON number"),
        (b"[" * 100_000 + b"]" * 100_000, "message nests too deeply"),
    ]:
        status, answer = _post(url, "submit", body)
        assert status == 400
        kind, text = _refusal(answer)
        assert (kind, text[: len(message)]) == ("bad_request", message)


@live
def test_a_submission_of_the_wrong_shape_is_refused(bad: LiveCluster) -> None:
    url = _settings(bad).ctld_url
    for message, text in [
        ({}, "bad job request: invalid request: expected an object, not null @ request"),
        (
            {"request": {"min_nodes": "2"}},
            "bad job request: invalid request: expected an integer, not a string"
            " @ request.min_nodes",
        ),
        (
            {"request": {"script": "#!/bin/sh\n", "cpus_per_task": True}},
            "bad job request: invalid request: expected an integer, not a boolean"
            " @ request.cpus_per_task",
        ),
        (
            {"request": {"script": "#!/bin/sh\n", "bogus": 1}},
            "bad job request: invalid request: unknown field",
        ),
        (
            {"request": {"script": "#!/bin/sh\n", "nice": -(1 << 63)}},
            "bad job request: nice: not from -2147483645 to 2147483645",
        ),
        (
            {"request": {"script": "#!/bin/sh\n", "work_dir": "/tmp\0"}},
            "bad job request: work_dir: contains a NUL character",
        ),
    ]:
        status, answer = _post(url, "submit", json.dumps(message).encode())
        assert status == 400
        kind, said = _refusal(answer)
        assert (kind, said[: len(text)]) == ("bad_request", text)
    for method, message, text in [
        ("cancel", {"job_id": "1"}, "job_id is not an integer"),
        ("signal", {"job_id": 1, "signal": 9}, "signal is not a name"),
        ("update_nodes", {"names": "n1"}, "names is not a list of node names"),
        ("update_partition", {"name": "debug", "changes": []}, "changes: not an object"),
        ("acct", {"query": 5}, "bad accounting query: "),
        ("job_ended", {"node": "n9"}, "no node 'n9' in the configuration"),
        ("job_ended", {"node": "n1", "job_id": 1}, "job_id, attempt, exit_code and signal"),
        ("register", {"node": "n1", "cpus": -1}, "cpus: not a count"),
        ("register", {"node": 5}, "node is not a node name"),
        (
            "job_ended",
            {"node": "n1", "job_id": 1, "attempt": 0, "exit_code": 1 << 64, "signal": 0},
            "exit_code: not from 0 to 255",
        ),
    ]:
        status, answer = _post(url, method, json.dumps(message).encode())
        assert status in (400, 404)
        kind, said = _refusal(answer)
        assert said.startswith(text), (method, said)


@live
def test_a_missing_or_forged_credential_is_refused(bad: LiveCluster) -> None:
    settings = _settings(bad)
    for url in (settings.ctld_url, settings.nodes["n1"].url):
        for credential, reason in [
            (None, "Protocol authentication error: no credential"),
            ("not base64!", "Protocol authentication error: malformed credential"),
            (base64.b64encode(b"root").decode(), "Protocol authentication error"),
            (base64.b64encode(b"99999999999999999999:0").decode(), "Protocol authentication error"),
            ("A" * 5000, "Protocol authentication error: credential too long"),
        ]:
            status, answer = _post(url, "ping", b"{}", credential=credential)
            assert (status, _refusal(answer)) == (401, ("auth", reason))
        # a header over aiohttp's limit: refused before it reaches Plurm
        status, answer = _post(url, "ping", b"{}", credential="A" * 9000)
        assert status == 400
        assert answer.startswith(b"Got more than 8190 bytes when reading")


@live
def test_auth_none_says_once_that_it_checks_nothing(bad: LiveCluster) -> None:
    for daemon in ("plurmctld", "plurmd-n1"):
        log = (bad.root / "state" / f"{daemon}.log").read_text()
        assert log.count("auth/none: credentials are not checked") == 1, daemon
        assert "for trusted single-user setups only: use auth/munge" in log


@live
def test_a_wrong_protocol_version_and_an_unknown_method_are_refused(bad: LiveCluster) -> None:
    settings = _settings(bad)
    for url in (settings.ctld_url, settings.nodes["n1"].url):
        for protocol in (None, "0", "2", "1.0", "x" * 100):
            status, answer = _post(url, "ping", b"{}", protocol=protocol)
            assert status == 400
            kind, text = _refusal(answer)
            assert kind == "protocol"
            assert text.startswith("Protocol version has changed, re-link your code")
        status, answer = _post(url, "frobnicate", b"{}")
        assert (status, _refusal(answer)) == (404, ("not_found", "unknown method 'frobnicate'"))


@live
def test_an_unknown_job_id_gets_slurms_words(bad: LiveCluster) -> None:
    show = bad.run("scontrol", "show", "job", "999999", check=False)
    assert (show.returncode, show.stderr) == (
        1,
        "slurm_load_jobs error: Invalid job id specified\n",
    )
    cancel = bad.run("scancel", "999999", check=False)
    assert (cancel.returncode, cancel.stdout, cancel.stderr) == (0, "", "")
    cancel = bad.run("scancel", "-v", "999999", check=False)
    assert cancel.stderr.endswith(
        "scancel: error: Kill job error on job id 999999: Invalid job id specified\n"
    )


@live
def test_a_script_that_cannot_run_fails(bad: LiveCluster) -> None:
    script = bad.root / "bad-interpreter.sh"
    script.write_text("#!/nonexistent/interpreter\necho never\n")
    job_id = bad.sbatch("-w", "n2", "-o", "bad-%j.out", str(script))
    bad.wait_for(lambda: bad.state(job_id) == "FAILED", what="FAILED")
    sacct = bad.run("sacct", "-X", "-P", "-n", "-o", "State,ExitCode", "-j", str(job_id))
    # the exec's errno (ENOENT) is the exit code, and the reason is in the job's output
    assert sacct.stdout == "FAILED|2:0\n"
    said = (bad.root / f"bad-{job_id}.out").read_text()
    assert said.endswith(": No such file or directory\n") and "execve(): " in said


@live
def test_an_output_file_that_cannot_be_written_fails_the_job(bad: LiveCluster) -> None:
    job_id = bad.sbatch("-w", "n2", "-o", "/proc/forbidden/x.out", "--wrap", "true")
    bad.wait_for(lambda: bad.state(job_id) == "FAILED", what="FAILED")
    sacct = bad.run("sacct", "-X", "-P", "-n", "-o", "State,ExitCode", "-j", str(job_id))
    state, code = sacct.stdout.strip().split("|")
    assert state == "FAILED" and code != "0:0"


@live
def test_plurmd_refuses_a_malformed_launch(bad: LiveCluster) -> None:
    settings = _settings(bad)
    url = settings.nodes["n2"].url
    # a launch as plurmctld sends it, but for a job id that does not exist
    launch: dict[str, Any] = {
        "job_id": 7,
        "attempt": 0,
        "name": "x",
        "user": "root",
        "uid": os.getuid(),
        "gid": os.getgid(),
        "group": "root",
        "script": "#!/bin/sh\ntouch never\n",
        "args": [],
        "work_dir": str(bad.root),
        "stdout": "/dev/null",
        "stderr": None,
        "open_mode": "truncate",
        "environment": [],
        "partition": "debug",
        "account": None,
        "qos": None,
        "nodes": ["n2"],
        "cpus_on_node": 1,
        "ntasks": None,
        "cpus_per_task": 1,
        "mem_per_node": None,
        "submit_host": "localhost",
        "cluster_name": "live",
        "restart_count": 0,
        "time_limit": None,
    }
    for message, text in [
        ({}, "bad launch message: job_id: missing"),
        ({"job_id": "7", "attempt": 0}, "bad launch message: job_id: not an integer from 0"),
        ({"job_id": 7, "attempt": 0}, "bad launch message: name: missing"),
        (dict(launch, nodes="n2"), "bad launch message: nodes: not a list of strings"),
        (dict(launch, work_dir="/tmp\0/x"), "bad launch message: work_dir: not a string"),
        (dict(launch, uid=1 << 40), "bad launch message: uid: not an integer from 0 to"),
        (dict(launch, environment=[1]), "bad launch message: environment: not a string"),
        ({"job_id": 7, "attempt": -1}, "bad launch message: attempt: not an integer from 0"),
    ]:
        status, answer = _post(url, "launch", json.dumps(message).encode())
        assert status == 400
        kind, said = _refusal(answer)
        assert (kind, said[: len(text)]) == ("bad_request", text)
    for method in ("kill", "signal", "suspend", "resume"):
        status, answer = _post(url, method, b'{"job_id": 7}')
        assert (status, _refusal(answer)) == (400, ("bad_request", "attempt is not an integer"))
    assert not (bad.root / "never").exists()  # nothing was started


# ---------------------------------------------------------------------------- fuzz

#: Any JSON value (integers past 64 bits included; no NaN: decode refuses it).
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(1 << 70), max_value=1 << 70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=6,
)
_INTS = (
    st.integers(min_value=-2, max_value=40)
    | st.sampled_from([255, 256, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, (1 << 63) - 1, 1 << 63])
    | st.sampled_from([-(1 << 31), -(1 << 63), -(1 << 62)])
    | st.integers(min_value=-(1 << 64), max_value=1 << 64)
)
_WORDS = st.sampled_from(["n1", "n2", "n9", "debug", "", "UP", "DRAIN", "KILL", "#!/bin/sh\n"])
_TEXT = _WORDS | st.text(max_size=16)
_NODES = st.sampled_from(["n1", "n2"]) | _TEXT


#: What a thin sbatch sends: options, their values and scripts, well formed or not.
_SBATCH_WORDS = st.sampled_from(
    [
        "--wrap", "true", "--parsable", "-p", "debug", "-N", "2", "-n", "0", "-t", "1:00",
        "--array=1-3%1", "--dependency=afterok:1", "--hold", "--test-only", "--wait",
        "--signal=B:USR1@10", "--export=NONE", "-o", "/no/such/dir/out", "--comment=x",
        "/tmp/job.sh", "job.sh", "-", "--gres=gpu:1", "--nice=-5", "--begin=now+60",
    ]
) | _TEXT  # fmt: skip
_BASE64 = st.binary(max_size=48).map(lambda data: base64.b64encode(data).decode()) | st.just(
    base64.b64encode(b"#!/bin/sh\n#SBATCH -t 5\n#SBATCH --bogus\ntrue\n").decode()
)


def _typed(kind: str) -> st.SearchStrategy[Any]:
    """Values of a field's declared type (from attrs' string annotation), extremes
    included."""
    optional = kind.endswith(" | None")
    base = kind.removesuffix(" | None")
    strategy: st.SearchStrategy[Any] = {
        "int": _INTS,
        "float": st.floats(allow_nan=False, allow_infinity=False) | _INTS,
        "str": _TEXT,
        "bool": st.booleans(),
        "tuple[str, ...]": st.lists(_TEXT, max_size=3),
    }.get(base, JSON)
    return st.none() | strategy if optional else strategy


_REQUEST_FIELDS = {field.name: str(field.type) for field in attrs.fields(JobRequest)}
#: Submissions whose fields are each of their type, any value.
TYPED_REQUESTS = st.fixed_dictionaries(
    {}, optional={name: _typed(kind) for name, kind in _REQUEST_FIELDS.items()}
)
#: Submissions: the fields of a JobRequest, each of its type (some of any type at all).
REQUESTS = TYPED_REQUESTS | st.fixed_dictionaries(
    {}, optional={name: _typed(kind) | JSON for name, kind in _REQUEST_FIELDS.items()}
)

#: Each method of plurmctld with the fields its handler reads.
_FIELDS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "submit": {"request": REQUESTS},
    "cancel": {"job_id": _INTS},
    "suspend": {"job_id": _INTS},
    "resume": {"job_id": _INTS},
    "requeue": {"job_id": _INTS},
    "signal": {"job_id": _INTS, "signal": _TEXT},
    "update_partition": {
        "name": _TEXT,
        "changes": st.dictionaries(
            st.sampled_from(["state", "max_time", "priority_tier", "grace_time", "oversubscribe"])
            | st.text(max_size=8),
            _TEXT | _INTS | st.none(),
            max_size=3,
        ),
    },
    "update_nodes": {
        "names": st.lists(_TEXT, max_size=3),
        "state": st.none() | _TEXT,
        "reason": st.none() | _TEXT,
    },
    "register": {
        "node": _NODES,
        "cpus": _INTS,
        "real_memory": _INTS,
        "jobs": st.lists(st.lists(_INTS, min_size=2, max_size=2), max_size=3),
        "ended": st.lists(st.lists(_INTS, min_size=4, max_size=4), max_size=3),
    },
    "heartbeat": {"node": _NODES},
    "job_ended": {
        "node": _NODES,
        "job_id": _INTS,
        "attempt": _INTS,
        "exit_code": _INTS,
        "signal": _INTS,
    },
    "acct": {"query": st.dictionaries(st.text(max_size=8), JSON, max_size=3)},
    "command": {
        # mostly the one command the controller runs; some others, refused
        "command": st.just("sbatch") | st.just("sbatch") | st.sampled_from(["squeue", ""]) | _TEXT,
        "argv": st.lists(_SBATCH_WORDS, max_size=8),
        "environ": st.dictionaries(
            st.sampled_from(["SBATCH_PARTITION", "SLURM_CONF", "PATH", "HOME"]) | _TEXT,
            _TEXT,
            max_size=3,
        ),
        "files": st.dictionaries(
            st.sampled_from(["/tmp/job.sh", "job.sh", ""]) | _TEXT,
            st.none() | _BASE64 | _TEXT,
            max_size=2,
        ),
        "cwd": st.sampled_from(["/tmp", "/", "relative", "/no/such/dir"]) | _TEXT,
        "host": _TEXT,
        "stdin": _BASE64 | _TEXT,
    },
    "view": {},
    "ping": {},
}
MESSAGES = st.sampled_from(sorted(_FIELDS)).flatmap(
    lambda method: st.tuples(
        st.just(method),
        # every field, of its type; or some fields, of any type
        st.fixed_dictionaries(_FIELDS[method])
        | st.fixed_dictionaries(
            {}, optional={key: value | JSON for key, value in _FIELDS[method].items()}
        ),
    )
)
_REFUSALS = (RpcError, CodecError, RequestError)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=64) | JSON.map(lambda value: json.dumps(value).encode()))
def test_decode_gives_an_object_or_an_rpc_error(body: bytes) -> None:
    try:
        value = decode(body)
    except RpcError:
        return
    assert isinstance(value, dict)


@settings(max_examples=300, deadline=None)
@given(JSON | REQUESTS)
def test_request_from_dict_gives_a_request_or_a_codec_error(data: Any) -> None:
    try:
        request = request_from_dict(data)
    except CodecError:
        return
    assert request_from_dict(request_to_dict(request)) == request


@settings(max_examples=300, deadline=None)
@given(JSON | _FIELDS["update_partition"]["changes"])
def test_partition_changes_gives_changes_or_an_rpc_error(data: Any) -> None:
    try:
        changes = partition_changes(data)
    except RpcError:
        return
    assert set(changes) <= set(data)


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Offline]:
    """plurmctld's handlers on a loop of their own, without a server (its nodes' ports are
    closed: every message to a node fails, as to a node that is down)."""
    root = tmp_path_factory.mktemp("offline")
    cluster = make_cluster(root, nodes=2, cpus=2, extra="MinJobAge=2")
    loop = asyncio.new_event_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda loop, context: errors.append(context))
    daemon = ControllerDaemon(cluster.conf)
    daemon.start(loop)
    node = NodeDaemon(cluster.conf, "n1")
    try:
        yield _Offline(daemon, node, loop, errors)
    finally:
        loop.run_until_complete(daemon.rpc.close())
        daemon.store.close()
        loop.close()


@attrs.frozen
class _Offline:
    daemon: ControllerDaemon
    node: NodeDaemon
    loop: asyncio.AbstractEventLoop
    errors: list[dict[str, Any]]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(MESSAGES, min_size=1, max_size=6), st.sampled_from([0, os.getuid(), 4321]))
def test_plurmctlds_handlers_answer_or_refuse_and_lose_nothing(
    offline: _Offline, messages: list[tuple[str, dict[str, Any]]], uid: int
) -> None:
    daemon, loop = offline.daemon, offline.loop
    handlers = daemon.handlers()
    for method, message in messages:
        try:
            answer = loop.run_until_complete(handlers[method](Caller(uid, uid), message))
        except _REFUSALS as error:
            event(f"{method}: {type(error).__name__} {str(error)[:40]}")
            continue
        event(f"{method}: answered")
        json.dumps(answer, allow_nan=False)  # an answer is JSON
    # the timers due (scheduling passes, launches that fail) run without an error
    loop.run_until_complete(asyncio.sleep(0.001))
    assert offline.errors == []
    # what was committed reads back: a restarted plurmctld gets every job
    saved = {job.job_id: job for job in daemon.store.load_jobs()}
    daemon.commit(everything=True)
    assert set(saved) <= set(daemon.controller.cluster.jobs)
    assert {job.job_id for job in daemon.store.load_jobs()} == set(daemon.controller.cluster.jobs)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.fixed_dictionaries(
        {
            "command": st.just("sbatch"),
            "argv": st.lists(_SBATCH_WORDS, max_size=8),
            "environ": _FIELDS["command"]["environ"],
            "cwd": st.sampled_from(["/tmp", "/"]),
        },
        optional={key: _FIELDS["command"][key] for key in ("files", "host", "stdin")},
    )
    | st.fixed_dictionaries(_FIELDS["command"])
    | st.fixed_dictionaries(
        {}, optional={key: value | JSON for key, value in _FIELDS["command"].items()}
    ),
    st.sampled_from([0, os.getuid(), 4321]),
)
@example({"command": "sbatch", "argv": ["--wrap", "true"], "environ": {}, "cwd": "/tmp"}, 0)
@example(
    {
        "command": "sbatch",
        "argv": ["-t", "1:00", "/tmp/job.sh"],
        "environ": {"SBATCH_PARTITION": "debug"},
        "cwd": "/tmp",
        "files": {"/tmp/job.sh": base64.b64encode(b"#!/bin/sh\n#SBATCH -N 1\ntrue\n").decode()},
    },
    os.getuid(),
)
def test_a_thin_command_of_any_shape_is_answered_or_refused(
    offline: _Offline, message: dict[str, Any], uid: int
) -> None:
    """The thin sbatch's ``command`` RPC: an answer of the documented shapes (the command's
    output, or what it needs from the client), or a refusal; nothing else, and the daemon's
    jobs still read back from its store."""
    daemon, loop = offline.daemon, offline.loop
    command = daemon.handlers()["command"]
    try:
        answer = loop.run_until_complete(command(Caller(uid, uid), message))
    except _REFUSALS as error:
        event(f"refused: {str(error)[:40]}")
        return
    json.dumps(answer, allow_nan=False)
    if "need" in answer:
        event(f"needs {answer['need']}")
        assert answer["need"] in ("local", "stdin", "file")
        assert answer["need"] != "file" or isinstance(answer["path"], str)
    else:
        event(f"ran: status {answer['status']}")
        assert set(answer) == {"status", "stdout", "stderr"}
        assert isinstance(answer["status"], int)
        assert answer["status"] == 0 or answer["stderr"]  # a failure says why
    loop.run_until_complete(asyncio.sleep(0.001))
    assert offline.errors == []
    daemon.commit(everything=True)
    assert {job.job_id for job in daemon.store.load_jobs()} == set(daemon.controller.cluster.jobs)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(TYPED_REQUESTS)
@example({"nice": -(1 << 63)})  # a priority past 64 bits: the saved job did not read back
@example({"cpus_per_task": 0})
def test_a_submission_of_any_values_is_refused_or_saved_to_read_back(
    offline: _Offline, request: dict[str, Any]
) -> None:
    daemon, loop = offline.daemon, offline.loop
    submit = daemon.handlers()["submit"]
    try:
        answer = loop.run_until_complete(submit(Caller(0, 0), {"request": request}))
    except _REFUSALS:
        return
    job = daemon.controller.cluster.jobs[answer["job_id"]]
    assert job_from_dict(json.loads(json.dumps(job_to_dict(job)))) == job
    loop.run_until_complete(asyncio.sleep(0.001))
    assert offline.errors == []


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            key: JSON | _INTS | _TEXT | st.lists(_TEXT, max_size=3)
            for key in [
                "job_id",
                "attempt",
                "name",
                "user",
                "uid",
                "gid",
                "group",
                "script",
                "args",
                "work_dir",
                "stdout",
                "stderr",
                "open_mode",
                "environment",
                "partition",
                "account",
                "qos",
                "nodes",
                "cpus_on_node",
                "ntasks",
                "cpus_per_task",
                "mem_per_node",
                "submit_host",
                "cluster_name",
                "restart_count",
                "time_limit",
            ]
        },
    )
)
def test_plurmds_launch_check_gives_a_launch_or_names_the_bad_field(
    offline: _Offline, message: dict[str, Any]
) -> None:
    try:
        spec, attempt = offline.node._spec(message)
    except LaunchFieldError:
        return
    assert spec.job_id == message["job_id"] and attempt == message["attempt"]


def _launch_message(node: NodeDaemon, work_dir: Path, job_id: int, attempt: int) -> dict[str, Any]:
    user = pwd.getpwuid(os.getuid()).pw_name
    group = grp.getgrgid(os.getgid()).gr_name
    return {
        "job_id": job_id,
        "attempt": attempt,
        "name": "wrap",
        "user": user,
        "uid": os.getuid(),
        "gid": os.getgid(),
        "group": group,
        "script": "#!/bin/sh\nsleep 60\n",
        "args": [],
        "work_dir": str(work_dir),
        "stdout": str(work_dir / f"launching-{job_id}.out"),
        "open_mode": "truncate",
        "environment": ["PATH=/usr/bin:/bin"],
        "partition": "debug",
        "nodes": [node.name],
        "cpus_on_node": 1,
        "cpus_per_task": 1,
        "submit_host": "localhost",
        "cluster_name": "c",
        "restart_count": attempt,
        **dict.fromkeys(
            ["account", "qos", "ntasks", "mem_per_node", "time_limit", "stderr"]
            + [f"array_{key}" for key in ("job_id", "task_id", "task_count")]
            + [f"array_task_{key}" for key in ("min", "max", "step")]
        ),
    }


def test_a_launch_in_progress_is_reported_by_a_registration_and_killed_if_disowned(
    offline: _Offline, tmp_path: Path
) -> None:
    """A registration made while a launch is in progress (plurmctld restarted meanwhile)
    reports the job as running, so that the controller does not take it for lost and run it
    again; and if the controller disowns it, the job is killed as soon as it has started."""
    node, loop = offline.node, offline.loop
    message = _launch_message(node, tmp_path, 9001, 2)
    launch = loop.create_task(node._launch(Caller(0, 0), message))
    while node.launching.get(9001) != 2 and not launch.done():
        loop.run_until_complete(asyncio.sleep(0))  # until it waits for the exec
    assert [9001, 2] in node.reported_jobs()
    # a second copy of the same launch (a retry) is a duplicate, not a second run
    assert loop.run_until_complete(node._launch(Caller(0, 0), message)) == {"duplicate": True}
    node._kill_orphan(9001, 2)  # the registration's answer: not the controller's
    assert loop.run_until_complete(launch) == {}
    _, job = node.jobs[9001]
    try:
        end = loop.run_until_complete(asyncio.wait_for(job.wait(), 30))
        assert end.signal in (signal.SIGTERM, signal.SIGKILL)  # killed, not run to its end
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(job.sid, signal.SIGKILL)
    assert 9001 not in node.launching
