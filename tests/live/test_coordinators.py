"""Account coordinators in plurmctld's handlers, without a network: accounts.conf names a
coordinator of an account; they act on the jobs charged to it and its sub-accounts as the
owner may (cancel, hold, release, requeue, update), never suspend them, see them under
PrivateData=jobs, and nothing more. The users are this machine's own system users (their
uids and names from its user database), so the rules run on real uids as in a live
cluster; tests/live/test_security.py does the same with real commands and real users."""

from __future__ import annotations

import asyncio
import pwd
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from plurm.controller import RequestError
from plurm.live.codec import request_to_dict
from plurm.live.ctld import ControllerDaemon
from plurm.live.rpc import Caller
from plurm.model.job import JobRequest, PendingReason
from tests.live.conftest import make_cluster


def _user(name: str) -> Caller:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        pytest.skip(f"this machine has no user {name}")
    return Caller(entry.pw_uid, entry.pw_gid)


@attrs.frozen
class Offline:
    daemon: ControllerDaemon
    loop: asyncio.AbstractEventLoop
    coordinator: Caller  # "daemon": coordinates lab (and so lab_sub)
    member: Caller  # "bin": jobs in lab_sub and other
    outsider: Caller  # "sys": in other only

    def call(self, caller: Caller, method: str, **message: Any) -> Any:
        return self.loop.run_until_complete(self.daemon.handlers()[method](caller, message))

    def submit(self, caller: Caller, account: str | None = None) -> int:
        request = JobRequest(
            script="#!/bin/sh\ntrue\n",
            account=account,
            time_limit=10,
            begin_time=self.daemon.controller.now + 86400,  # pends throughout
        )
        answer = self.call(caller, "submit", request=request_to_dict(request))
        return int(answer["job_id"])


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Offline]:
    coordinator, member, outsider = _user("daemon"), _user("bin"), _user("sys")
    root: Path = tmp_path_factory.mktemp("coordinators")
    cluster = make_cluster(
        root,
        nodes=1,
        cpus=1,
        extra="AccountingStorageType=accounting_storage/slurmdbd\nPrivateData=jobs\n",
    )
    (root / "accounts.conf").write_text(
        "Account=lab Coordinators=daemon\n"
        "Account=lab_sub Parent=lab\n"
        "Account=other\n"
        "User=daemon Account=lab\n"
        "User=bin Account=lab_sub,other\n"
        "User=sys Account=other\n"
    )
    loop = asyncio.new_event_loop()
    daemon = ControllerDaemon(cluster.conf)
    daemon.start(loop)
    try:
        yield Offline(daemon, loop, coordinator, member, outsider)
    finally:
        loop.run_until_complete(daemon.rpc.close())
        daemon.store.close()
        loop.close()


def test_a_coordinator_acts_on_its_accounts_jobs_as_their_owner(offline: Offline) -> None:
    job_id = offline.submit(offline.member)  # charged to lab_sub, a sub-account of lab
    job = offline.daemon.controller.job(job_id)
    assert job.account == "lab_sub"
    boss = offline.coordinator
    offline.call(boss, "update_job", job_id=job_id, changes={"time_limit": 5})
    assert job.time_limit == 5
    offline.call(boss, "hold", job_id=job_id)
    assert job.reason is PendingReason.JOB_HELD_USER  # a user's hold: not an operator's
    offline.call(boss, "release", job_id=job_id)
    assert not job.held
    # no more than the owner may: a priority is an operator's; suspend is an operator's
    with pytest.raises(RequestError, match=r"^Changes to job priority are not persistent"):
        offline.call(boss, "update_job", job_id=job_id, changes={"priority": 5})
    with pytest.raises(RequestError, match=r"^Access/permission denied$"):
        offline.call(boss, "suspend", job_id=job_id)
    offline.call(boss, "cancel", job_id=job_id)
    assert job.state.finished


def test_a_coordinator_may_not_touch_jobs_of_other_accounts(offline: Offline) -> None:
    job_id = offline.submit(offline.member, account="other")
    boss = offline.coordinator
    for method in ("cancel", "hold", "release", "requeue"):
        with pytest.raises(RequestError, match=r"^Access/permission denied$"):
            offline.call(boss, method, job_id=job_id)
    with pytest.raises(RequestError, match=r"^Invalid user id$"):
        offline.call(boss, "update_job", job_id=job_id, changes={"time_limit": 5})
    # nor may a member of the coordinated account act on the coordinator's jobs
    own = offline.submit(boss)
    with pytest.raises(RequestError, match=r"^Access/permission denied$"):
        offline.call(offline.member, "cancel", job_id=own)
    assert not offline.daemon.controller.job(job_id).state.finished
    assert not offline.daemon.controller.job(own).state.finished


def test_private_data_shows_a_coordinator_its_accounts_jobs(offline: Offline) -> None:
    in_lab = offline.submit(offline.member)
    elsewhere = offline.submit(offline.member, account="other")
    outsiders = offline.submit(offline.outsider)

    def seen(caller: Caller) -> set[int]:
        shown = {job.job_id for job in offline.daemon.jobs_for(caller.uid)}
        return shown & {in_lab, elsewhere, outsiders}

    assert seen(offline.coordinator) == {in_lab}
    assert seen(offline.member) == {in_lab, elsewhere}
    assert seen(offline.outsider) == {outsiders}
    assert seen(Caller(0, 0)) == {in_lab, elsewhere, outsiders}
