"""The controller's state file on a real SQLite file: round trips, kill -9, readers."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import attrs
import pytest

from plurm.live.codec import CodecError
from plurm.live.store import StateStore, StoreError
from plurm.model.acct import AcctQuery, JobRecord, JobSelector, StepRecord
from plurm.model.job import Job, JobRequest, JobState


def _job(job_id: int, **changes: object) -> Job:
    job = Job(job_id, JobRequest(name=f"j{job_id}", partitions=("debug",)), 1.0, "debug")
    return attrs.evolve(job, **changes)


def _record(job_id: int, **changes: object) -> JobRecord:
    base = JobRecord(
        job_id=job_id,
        name=f"j{job_id}",
        user="alice",
        uid=1000,
        group="users",
        gid=100,
        account="acct",
        partition="debug",
        qos="normal",
        state="COMPLETED",
        submit=0.0,
        eligible=0.0,
        start=1.0,
        end=10.0,
        nodes=("n1",),
        alloc_cpus=1,
    )
    return attrs.evolve(base, **changes)


def test_jobs_round_trip_and_upsert(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    jobs = [_job(1), _job(2, state=JobState.RUNNING, nodes=("n1",), start_time=3.0)]
    with StateStore(path) as store:
        store.save_jobs(jobs, next_job_id=3)
        store.save_jobs([_job(2, state=JobState.COMPLETED, end_time=9.0)])
        store.save_value("partition:debug", {"State": "DOWN"})
    with StateStore(path) as store:
        loaded = store.load_jobs()
        assert [job.job_id for job in loaded] == [1, 2]
        assert loaded[0] == jobs[0]
        assert loaded[1].state is JobState.COMPLETED and loaded[1].end_time == 9.0
        assert store.next_job_id() == 3
        assert store.load_value("partition:debug") == {"State": "DOWN"}
        assert store.load_value("missing", 7) == 7
        store.delete_jobs([1])
        store.delete_value("partition:debug")
        assert [job.job_id for job in store.load_jobs()] == [2]
        assert store.load_value("partition:debug") is None


def test_a_jobs_preemption_counts_survive_a_reload(tmp_path: Path) -> None:
    """The counts policies read (LSF's MAX_JOB_PREEMPT, PBS's max_preempt_attempts) are
    the job's own and go through the codec into the file and back."""
    path = tmp_path / "state.db"
    job = _job(7, state=JobState.SUSPENDED, nodes=("n1",), preemptions=3, preempt_attempts=0)
    waiting = _job(8, preempt_attempts=2)
    with StateStore(path) as store:
        store.save_jobs([job, waiting], next_job_id=9)
    with sqlite3.connect(path) as raw:  # really in the file, as the codec wrote it
        text = " ".join(row[0] for row in raw.execute("SELECT data FROM jobs"))
    assert '"preemptions":3' in text and '"preempt_attempts":2' in text
    with StateStore(path, readonly=True) as store:
        loaded = {job.job_id: job for job in store.load_jobs()}
    assert loaded[7].preemptions == 3 and loaded[7].preempt_attempts == 0
    assert loaded[8].preemptions == 0 and loaded[8].preempt_attempts == 2
    assert loaded[7] == job and loaded[8] == waiting


def test_wal_and_full_sync(tmp_path: Path) -> None:
    with StateStore(tmp_path / "s.db") as store:
        assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_a_transaction_is_all_or_nothing(tmp_path: Path) -> None:
    with StateStore(tmp_path / "s.db") as store:
        store.save_jobs([_job(1)], next_job_id=2)
        with pytest.raises(RuntimeError), store.transaction():
            store.save_jobs([_job(2)], next_job_id=3)
            raise RuntimeError("the controller failed mid-event")
        assert [job.job_id for job in store.load_jobs()] == [1]
        assert store.next_job_id() == 2


def test_a_corrupt_row_is_a_codec_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with StateStore(path) as store:
        store.save_jobs([_job(1)])
        store._db.execute("UPDATE jobs SET data = '{\"job_id\": true}'")
        with pytest.raises(CodecError, match=r"job\.job_id"):
            store.load_jobs()


def test_a_newer_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    StateStore(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '999' WHERE key = 'format_version'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer Plurm"):
        StateStore(path)


def test_a_missing_file_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        StateStore(tmp_path / "none.db", readonly=True)


_CHILD = textwrap.dedent(
    """
    import os, sys, time
    from plurm.live.store import StateStore
    from plurm.model.job import Job, JobRequest
    store = StateStore(sys.argv[1])
    for job_id in range(1, 51):
        store.save_jobs([Job(job_id, JobRequest(), 0.0, "debug")], next_job_id=job_id + 1)
        print(job_id, flush=True)  # as sbatch prints the id: only once it is committed
    store.save_value("done", True)
    print("saved", flush=True)
    time.sleep(60)
    """
)


def test_everything_committed_survives_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    printed = []
    for line in child.stdout:
        printed.append(line.strip())
        if line.strip() == "saved":
            break
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL
    with StateStore(path) as store:
        ids = [job.job_id for job in store.load_jobs()]
        assert ids == list(range(1, 51))
        assert store.next_job_id() == 51
        assert store.load_value("done") is True


def test_a_reader_reads_while_the_writer_writes(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    writer = StateStore(path)
    writer.record_job(_record(1))
    reader = StateStore(path, readonly=True)
    assert [r.job_id for r in reader.query(AcctQuery())] == [1]
    with writer.transaction():
        writer.record_job(_record(2))
        # uncommitted: the reader still sees the last commit, and is not blocked
        assert [r.job_id for r in reader.query(AcctQuery())] == [1]
    assert [r.job_id for r in reader.query(AcctQuery())] == [1, 2]
    with pytest.raises(sqlite3.OperationalError):
        reader._db.execute("DELETE FROM acct_jobs")
    reader.close()
    writer.close()


def test_a_reader_in_another_process_during_writes(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    writer = StateStore(path)
    writer.record_job(_record(1))
    script = textwrap.dedent(
        """
        import sys
        from plurm.live.store import StateStore
        from plurm.model.acct import AcctQuery
        counts = []
        for _ in range(30):
            with StateStore(sys.argv[1], readonly=True) as store:
                counts.append(len(store.query(AcctQuery())))
        assert counts == sorted(counts), counts
        print(counts[0], counts[-1])
        """
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE, text=True
    )
    job_id = 2
    while reader.poll() is None and job_id < 2000:
        writer.record_job(_record(job_id))
        job_id += 1
        time.sleep(0.001)
    out, _ = reader.communicate(timeout=60)
    assert reader.returncode == 0
    first, last = map(int, out.split())
    assert 1 <= first <= last
    writer.close()


def test_records_and_steps_are_upserted_and_queried(tmp_path: Path) -> None:
    with StateStore(tmp_path / "s.db") as store:
        store.record_job(_record(1, state="RUNNING", end=None))
        store.record_step(StepRecord(1, "batch", "batch", "RUNNING", start=1.0))
        store.record_step(StepRecord(1, 0, "hostname", "COMPLETED", start=2.0, end=3.0))
        store.record_job(_record(1, state="COMPLETED", end=10.0))
        store.record_step(StepRecord(1, "batch", "batch", "COMPLETED", start=1.0, end=10.0))
        store.record_job(_record(2, user="bob", uid=1001, partition="gpu", end=50.0))
        store.record_job(_record(7, array_job_id=5, array_task_id=2))
        store.record_job(
            _record(5, array_job_id=5, state="PENDING", array_tasks="3-4", start=None, end=None)
        )
        [one] = store.query(AcctQuery(jobs=(JobSelector(1),)))
        assert one.state == "COMPLETED"
        assert [(s.step, s.state) for s in one.steps] == [
            ("batch", "COMPLETED"),
            (0, "COMPLETED"),
        ]
        assert [r.job_id for r in store.query(AcctQuery(users=frozenset({"bob"})))] == [2]
        assert [r.job_id for r in store.query(AcctQuery(uids=frozenset({1000})))] == [1, 5, 7]
        assert [r.job_id for r in store.query(AcctQuery(partitions=frozenset({"gpu"})))] == [2]
        assert [r.job_id for r in store.query(AcctQuery(jobs=(JobSelector(5),)))] == [5, 7]
        assert [r.job_id for r in store.query(AcctQuery(jobs=(JobSelector(5, 2),)))] == [7]
        assert [r.job_id for r in store.query(AcctQuery(jobs=(JobSelector(5, 4),)))] == [5]
        assert [r.job_id for r in store.query(AcctQuery(start=20.0))] == [2, 5]
        finished = AcctQuery(start=0.0, end=100.0, states=frozenset({"COMPLETED"}))
        assert [r.job_id for r in store.query(finished)] == [1, 2, 7]
