"""plurmctld forgets jobs finished more than MinJobAge ago, as slurmctld purges its job
records: gone from memory, from the state store and from the commands, while their
accounting records stay for sacct; MinJobAge=0 keeps every job."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from plurm.live.ctld import ControllerDaemon
from plurm.live.rpc import Caller
from plurm.model.job import JobState
from tests.live.conftest import make_cluster

pytestmark = pytest.mark.live

SCRIPT = "#!/bin/sh\ntrue\n"


def _daemon(root: Path, age: int) -> tuple[ControllerDaemon, asyncio.AbstractEventLoop]:
    cluster = make_cluster(root, nodes=1, cpus=1, extra=f"MinJobAge={age}")
    loop = asyncio.new_event_loop()
    daemon = ControllerDaemon(cluster.conf)
    daemon.start(loop)
    return daemon, loop


def _stop(daemon: ControllerDaemon, loop: asyncio.AbstractEventLoop) -> None:
    loop.run_until_complete(daemon.rpc.close())
    daemon.store.close()
    loop.close()


def _call(
    daemon: ControllerDaemon, loop: asyncio.AbstractEventLoop, method: str, **fields: Any
) -> Any:
    return loop.run_until_complete(daemon.handlers()[method](Caller(0, 0), fields))


def _ended_and_held(daemon: ControllerDaemon, loop: asyncio.AbstractEventLoop) -> tuple[int, int]:
    """A job cancelled while it waited (ended now), and one held (it never ends)."""
    ended = _call(daemon, loop, "submit", request={"script": SCRIPT, "hold": True})["job_id"]
    held = _call(daemon, loop, "submit", request={"script": SCRIPT, "hold": True})["job_id"]
    _call(daemon, loop, "cancel", job_id=ended)
    assert daemon.controller.cluster.jobs[ended].state is JobState.CANCELLED
    return ended, held


def test_a_job_past_min_job_age_is_purged_and_its_accounting_stays(tmp_path: Path) -> None:
    daemon, loop = _daemon(tmp_path, 1)
    try:
        ended, held = _ended_and_held(daemon, loop)
        assert daemon.purge() == []  # not yet a second old
        assert ended in {job.job_id for job in daemon.visible_jobs()}
        time.sleep(1.2)
        assert ended not in {job.job_id for job in daemon.visible_jobs()}
        assert daemon.purge() == [ended]
        assert set(daemon.controller.cluster.jobs) == {held}
        assert [job.job_id for job in daemon.store.load_jobs()] == [held]
        records = _call(daemon, loop, "acct", query={})["records"]
        assert {record["job_id"]: record["state"] for record in records}[ended] == "CANCELLED"
    finally:
        _stop(daemon, loop)
    # a restarted plurmctld has only the job it kept, and gives new ids past the purged one
    daemon, loop = _daemon(tmp_path, 1)
    try:
        assert set(daemon.controller.cluster.jobs) == {held}
        fresh = _call(daemon, loop, "submit", request={"script": SCRIPT, "hold": True})
        assert fresh["job_id"] > held
    finally:
        _stop(daemon, loop)


def test_min_job_age_0_keeps_every_job(tmp_path: Path) -> None:
    daemon, loop = _daemon(tmp_path, 0)
    try:
        ended, held = _ended_and_held(daemon, loop)
        time.sleep(1.2)
        assert daemon.purge() == []
        assert {ended, held} <= {job.job_id for job in daemon.visible_jobs()}
    finally:
        _stop(daemon, loop)
