"""SchedulerPassOn=event (plurm.conf) live: a waiting job starts when the job before it
ends, not at plurmctld's next whole-second tick."""

from __future__ import annotations

import json
import sqlite3
from itertools import pairwise
from pathlib import Path

import pytest

from tests.live.conftest import make_cluster

pytestmark = pytest.mark.live


def _records(root: Path) -> dict[int, dict[str, float | str | None]]:
    """The accounting records plurmctld committed, by job id."""
    uri = f"{(root / 'state' / 'plurmctld.sqlite').as_uri()}?mode=ro"
    with sqlite3.connect(uri, uri=True) as db:
        rows = db.execute("SELECT job_id, data FROM acct_jobs").fetchall()
    return {job_id: json.loads(data) for job_id, data in rows}


def test_a_waiting_job_starts_at_the_end_of_the_one_before(tmp_path: Path) -> None:
    cluster = make_cluster(tmp_path, nodes=1, cpus=1)
    (tmp_path / "plurm.conf").write_text("SchedulerPassOn=event\n")
    cluster.up()
    try:
        # one CPU: the four tasks run one after the other, each started by the previous
        # one's end
        array = cluster.sbatch("--array=1-4", "--wrap", "sleep 0.3")

        def done() -> bool:
            records = [r for r in _records(tmp_path).values() if r.get("end") is not None]
            return len(records) == 4

        cluster.wait_for(done, timeout=60, what="the four tasks end")
        records = sorted(_records(tmp_path).values(), key=lambda r: float(r["start"] or 0))
        assert {r["state"] for r in records} == {"COMPLETED"}, (array, records)
        gaps = [
            float(after["start"] or 0) - float(before["end"] or 0)
            for before, after in pairwise(records)
        ]
        # At the tick each gap would be up to a second (the rest of the second the end fell
        # in); the event pass answers the end report in the same turn of the loop or the
        # next. 0.25 s leaves room for a busy machine; three gaps under it at the tick would
        # be a 1-in-64 chance.
        assert all(0 <= gap < 0.25 for gap in gaps), gaps
    finally:
        cluster.down()
