"""Acceptance: a live cluster with AuthType=auth/munge (its own munged) and two real Unix
users the test makes. Jobs run as their submitter; the other user's scancel, scontrol
suspend|update|requeue fail with Slurm's text and leave the job as it was, the owner's
succeed; RootOnly refuses a user's sbatch -p; forged, altered and replayed credentials sent
to plurmctld's port are refused while it keeps serving; ``scontrol token`` gives a JWT the
REST API accepts and that a wrong key or another user's name does not pass. With accounting
(accounts.conf), alice coordinates the account ``lab``: she may act on bob's jobs charged
to its sub-account ``lab_sub`` as bob may, not on his jobs of the account ``other``."""

from __future__ import annotations

import base64
import http.client
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from plurm import conf
from plurm.live.rpc import CREDENTIAL_HEADER, PROTOCOL, PROTOCOL_HEADER, Signer, encode
from plurm.live.settings import LiveSettings
from plurm.manager import Plugins
from tests.live.conftest import LiveCluster, make_cluster
from tests.support.munge import Munged, munged

AS_USER = Path(__file__).parent.parent / "support" / "as_user.py"

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(os.geteuid() != 0, reason="makes Unix users and runs munged: root only"),
]


@attrs.frozen
class User:
    name: str
    uid: int
    gid: int
    home: Path


@attrs.frozen
class Setup:
    cluster: LiveCluster
    munge: Munged
    alice: User
    bob: User
    jwt_key: Path

    def run_as(self, user: User, *argv: str) -> subprocess.CompletedProcess[str]:
        # The commands start as root and drop to the user before they do anything (the
        # test's Python may sit where other users cannot read it): tests/support/as_user.py.
        command = [sys.executable, str(AS_USER), str(user.uid), str(user.gid), *argv]
        return subprocess.run(
            command,
            env=self.cluster.env,
            cwd=user.home,
            text=True,
            capture_output=True,
            timeout=60,
        )


def _make_user(base: Path) -> User:
    name = "plurm" + secrets.token_hex(3)
    home = base / name
    subprocess.run(
        ["useradd", "-m", "-d", str(home), "-s", "/bin/sh", "-U", name],
        check=True,
        capture_output=True,
        timeout=60,
    )
    entry = pwd.getpwnam(name)
    return User(name, entry.pw_uid, entry.pw_gid, home)


def _remove_user(user: User) -> None:
    subprocess.run(["userdel", "-r", "-f", user.name], capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def setup() -> Iterator[Setup]:
    base = Path(tempfile.mkdtemp(prefix="plurm-security-"))
    base.chmod(0o755)
    users: list[User] = []
    try:
        with munged() as daemon:
            users = [_make_user(base), _make_user(base)]
            root = base / "cluster"
            root.mkdir()
            root.chmod(0o755)
            key = root / "jwt_hs256.key"
            key.write_bytes(secrets.token_bytes(32))
            key.chmod(0o600)
            cluster = make_cluster(
                root,
                extra=(
                    "AuthType=auth/munge\n"
                    f"AuthInfo=socket={daemon.socket}\n"
                    "AuthAltTypes=auth/jwt\n"
                    f"AuthAltParameters=jwt_key={key}\n"
                    "AccountingStorageType=accounting_storage/slurmdbd\n"
                ),
                partitions=(
                    "PartitionName=debug Nodes=n[1-4] Default=YES State=UP\n"
                    "PartitionName=admin Nodes=n[1-4] RootOnly=YES State=UP"
                ),
            )
            (root / "slurm.conf").chmod(0o644)
            alice, bob = users
            (root / "accounts.conf").write_text(
                f"Account=lab Coordinators={alice.name}\n"
                "Account=lab_sub Parent=lab\n"
                "Account=other\n"
                f"User={alice.name} Account=lab\n"
                f"User={bob.name} Account=lab_sub,other\n"
            )
            (root / "accounts.conf").chmod(0o644)
            try:
                cluster.up()
                yield Setup(cluster, daemon, users[0], users[1], key)
            finally:
                cluster.down()
    finally:
        for user in users:
            _remove_user(user)
        shutil.rmtree(base, ignore_errors=True)


def _pids_of(uid: int, marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()
        if marker in cmdline and int(uids[1]) == uid and int(uids[2]) == uid:
            found.append(int(entry.name))
    return found


def _submit(setup: Setup, user: User, seconds: str, *options: str) -> int:
    done = setup.run_as(
        user, "sbatch", "--parsable", "-t", "10", *options, f"--wrap=sleep {seconds}"
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


def test_jobs_run_as_their_submitter_and_users_are_kept_apart(setup: Setup) -> None:
    cluster, alice, bob = setup.cluster, setup.alice, setup.bob
    job = _submit(setup, alice, "301")
    cluster.wait_for(lambda: cluster.state(job) == "RUNNING", what="alice's job runs")
    cluster.wait_for(lambda: bool(_pids_of(alice.uid, "sleep 301")), what="its process")
    assert not _pids_of(0, "sleep 301")
    assert "UserId=" + alice.name in cluster.run("scontrol", "show", "job", str(job)).stdout

    refused = setup.run_as(bob, "scancel", str(job))
    assert refused.returncode == 1
    assert refused.stderr == (
        f"scancel: error: Kill job error on job id {job}: Access/permission denied\n"
    )
    for verb, text in (
        (["suspend"], "Access/permission denied"),
        (["requeue"], "Access/permission denied"),
        (["update", f"JobId={job}", "TimeLimit=5"], "Invalid user id"),
    ):
        argv = [*verb, str(job)] if len(verb) == 1 else verb
        done = setup.run_as(bob, "scontrol", *argv)
        assert done.returncode == 1, (verb, done)
        assert done.stderr == f"{text} for job {job}\n", verb
    # suspend is for operators, even on one's own job
    own = setup.run_as(alice, "scontrol", "suspend", str(job))
    assert own.stderr == f"Access/permission denied for job {job}\n"
    shown = cluster.run("scontrol", "show", "job", str(job)).stdout
    assert "JobState=RUNNING" in shown and "TimeLimit=00:10:00" in shown
    assert _pids_of(alice.uid, "sleep 301")

    assert setup.run_as(alice, "scontrol", "update", f"JobId={job}", "TimeLimit=5").returncode == 0
    assert "TimeLimit=00:05:00" in cluster.run("scontrol", "show", "job", str(job)).stdout
    assert setup.run_as(alice, "scancel", str(job)).returncode == 0
    cluster.wait_for(lambda: cluster.state(job) == "CANCELLED", what="alice's cancel")


def test_root_may_act_on_a_users_job(setup: Setup) -> None:
    cluster = setup.cluster
    job = _submit(setup, setup.bob, "302")
    cluster.wait_for(lambda: cluster.state(job) == "RUNNING", what="bob's job runs")
    cluster.run("scontrol", "suspend", str(job))
    cluster.wait_for(lambda: cluster.state(job) == "SUSPENDED", what="root's suspend")
    cluster.run("scontrol", "resume", str(job))
    cluster.run("scancel", str(job))
    cluster.wait_for(lambda: cluster.state(job) == "CANCELLED", what="root's cancel")


def test_a_coordinator_acts_on_its_accounts_jobs_as_their_owner(setup: Setup) -> None:
    cluster, alice, bob = setup.cluster, setup.alice, setup.bob
    job = _submit(setup, bob, "303")  # charged to lab_sub, bob's default account
    cluster.wait_for(lambda: cluster.state(job) == "RUNNING", what="bob's job runs")
    assert "Account=lab_sub " in cluster.run("scontrol", "show", "job", str(job)).stdout
    waiting = _submit(setup, bob, "304", "--begin=now+3600")
    elsewhere = _submit(setup, bob, "305", "-A", "other", "--begin=now+3600")

    # as the owner may: lower a limit, hold and release, requeue, cancel
    done = setup.run_as(alice, "scontrol", "update", f"JobId={job}", "TimeLimit=5")
    assert done.returncode == 0, done.stderr
    assert "TimeLimit=00:05:00" in cluster.run("scontrol", "show", "job", str(job)).stdout
    assert setup.run_as(alice, "scontrol", "hold", str(waiting)).returncode == 0
    shown = cluster.run("scontrol", "show", "job", str(waiting)).stdout
    assert "Priority=0 " in shown and "Reason=JobHeldUser" in shown  # not an admin's hold
    assert setup.run_as(alice, "scontrol", "release", str(waiting)).returncode == 0
    shown = cluster.run("scontrol", "show", "job", str(waiting)).stdout
    assert "Priority=0 " not in shown and "JobHeld" not in shown
    # but no more than the owner: raising a running job's limit and suspending are refused
    raised = setup.run_as(alice, "scontrol", "update", f"JobId={job}", "TimeLimit=50")
    assert (raised.returncode, raised.stderr) == (1, f"Access/permission denied for job {job}\n")
    suspended = setup.run_as(alice, "scontrol", "suspend", str(job))
    assert suspended.stderr == f"Access/permission denied for job {job}\n"
    assert cluster.state(job) == "RUNNING"
    assert setup.run_as(alice, "scontrol", "requeue", str(job)).returncode == 0
    cluster.wait_for(
        lambda: " Restarts=1 " in cluster.run("scontrol", "show", "job", str(job)).stdout,
        what="the coordinator's requeue",
    )
    for target in (job, waiting):
        assert setup.run_as(alice, "scancel", str(target)).returncode == 0
        cluster.wait_for(lambda t=target: cluster.state(t) == "CANCELLED", what="her cancel")

    # bob's job of another account is not hers to touch; hers are not bob's
    refused = setup.run_as(alice, "scancel", str(elsewhere))
    assert refused.stderr == (
        f"scancel: error: Kill job error on job id {elsewhere}: Access/permission denied\n"
    )
    update = setup.run_as(alice, "scontrol", "update", f"JobId={elsewhere}", "TimeLimit=5")
    assert update.stderr == f"Invalid user id for job {elsewhere}\n"
    own = _submit(setup, alice, "306", "--begin=now+3600")
    assert setup.run_as(bob, "scancel", str(own)).returncode == 1
    assert cluster.state(elsewhere) == "PENDING" and cluster.state(own) == "PENDING"
    cluster.run("scancel", str(elsewhere), str(own))


def test_root_only_partition_refuses_a_user(setup: Setup) -> None:
    done = setup.run_as(setup.alice, "sbatch", "-p", "admin", "--wrap=true")
    assert done.returncode == 1
    assert done.stderr == "sbatch: error: Batch job submission failed: Access/permission denied\n"
    assert setup.cluster.sbatch("-p", "admin", "-t", "1", "--wrap=true") > 0


def _post(setup: Setup, method: str, body: bytes, credential: str) -> tuple[int, bytes]:
    settings = LiveSettings.from_config(conf.load(str(setup.cluster.conf)))
    connection = http.client.HTTPConnection("127.0.0.1", settings.ctld_port, timeout=10)
    try:
        connection.request(
            "POST",
            f"/rpc/{method}",
            body=body,
            headers={PROTOCOL_HEADER: str(PROTOCOL), CREDENTIAL_HEADER: credential},
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_forged_altered_and_replayed_credentials_are_refused(setup: Setup) -> None:
    signer = Signer(Plugins.load(conf.load(str(setup.cluster.conf)), roles=("auth",)))
    body = encode({})
    forged = base64.b64encode(b"MUNGE:AwQFAAD0forgedcredential:").decode()
    status, answer = _post(setup, "view", body, forged)
    assert status == 401 and b"Protocol authentication error" in answer

    credential = signer.sign(encode({"job_id": 1}))
    status, answer = _post(setup, "cancel", encode({"job_id": 2}), credential)
    assert status == 401 and b"Protocol authentication error" in answer

    credential = signer.sign(body)
    assert _post(setup, "ping", body, credential)[0] == 200
    status, answer = _post(setup, "ping", body, credential)
    assert status == 401 and b"Protocol authentication error" in answer

    log = (setup.cluster.root / "state" / "plurmctld.log").read_text()
    assert "Munge decode failed: Replayed credential" in log
    # still serving
    assert setup.cluster.run("squeue").returncode == 0


def _rest(setup: Setup, user: str, token: str) -> int:
    settings = LiveSettings.from_config(conf.load(str(setup.cluster.conf)))
    connection = http.client.HTTPConnection("127.0.0.1", settings.ctld_port, timeout=10)
    try:
        connection.request(
            "GET",
            "/slurm/v0.0.38/jobs",
            headers={"X-SLURM-USER-NAME": user, "X-SLURM-USER-TOKEN": token},
        )
        response = connection.getresponse()
        json.loads(response.read())
        return response.status
    finally:
        connection.close()


def test_scontrol_token_gives_a_jwt_the_rest_api_accepts(setup: Setup) -> None:
    import jwt

    alice, bob = setup.alice, setup.bob
    done = setup.run_as(alice, "scontrol", "token", "lifespan=120")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("SLURM_JWT=")
    token = done.stdout.strip().removeprefix("SLURM_JWT=")
    claims = jwt.decode(token, setup.jwt_key.read_bytes(), algorithms=["HS256"])
    assert claims["sun"] == alice.name and claims["exp"] - claims["iat"] == 120
    assert _rest(setup, alice.name, token) == 200
    assert _rest(setup, bob.name, token) == 401  # alice's token does not speak for bob

    wrong = jwt.encode(dict(claims), secrets.token_bytes(32), algorithm="HS256")
    assert _rest(setup, alice.name, wrong) == 401
    expired = jwt.encode(
        {**claims, "exp": claims["iat"] - 10}, setup.jwt_key.read_bytes(), algorithm="HS256"
    )
    assert _rest(setup, alice.name, expired) == 401

    other = setup.run_as(bob, "scontrol", "token", f"username={alice.name}")
    assert other.returncode == 1
    assert other.stderr == "Unable to fetch token: Invalid user id\n"
    # root may ask for anyone's, and its own token may act for anyone
    for_bob = setup.cluster.run("scontrol", "token", f"username={bob.name}").stdout
    assert _rest(setup, bob.name, for_bob.strip().removeprefix("SLURM_JWT=")) == 200
    default = jwt.decode(
        setup.cluster.run("scontrol", "token").stdout.strip().removeprefix("SLURM_JWT="),
        setup.jwt_key.read_bytes(),
        algorithms=["HS256"],
    )
    assert default["exp"] - default["iat"] == 1800 and default["sun"] == "root"
