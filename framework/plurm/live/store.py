"""The controller's durable state and its accounting store, on SQLite.

One file holds what slurmctld keeps in its StateSaveLocation (the jobs, the next job id,
other controller state as keyed JSON values) and what slurmdbd keeps for sacct (job and
step records). The controller owns one :class:`StateStore`, used from one thread (its event
loop); readers such as sacct open their own read-only connection (``readonly=True``), which
WAL mode lets run while the controller writes, each seeing the last committed state.

Durability: each call is one transaction, committed before it returns, so the controller
can print a job id, or act on a state change, only once it is on disk. The journal is
WAL and ``synchronous=FULL``:

* WAL with ``synchronous=NORMAL`` already survives a crash of the process (kill -9): a
  commit has written its frames to the WAL file, which the operating system keeps. It does
  not survive a power loss or a kernel crash, which may lose the last commits, because the
  WAL is only synced at checkpoints.
* Losing a commit the controller acted on is worse than the cost of one fsync per
  transaction: sbatch has printed the lost job's id, whose number the next job would then
  reuse (two different jobs under one id in accounting), or a node's processes were
  started for a job the restarted controller believes pending. FULL syncs the WAL at
  every commit, so whatever a call has returned is durable. The controller groups the
  changes of one event into one transaction (:meth:`StateStore.transaction`), which keeps
  the fsyncs to one per event.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from plurm.errors import PlurmError
from plurm.live.codec import (
    FORMAT_VERSION,
    job_from_dict,
    job_to_dict,
    record_from_dict,
    record_to_dict,
    step_from_dict,
    step_to_dict,
)
from plurm.model.acct import AcctQuery, JobRecord, StepRecord
from plurm.model.job import Job
from plurm.model.usage import step_usage, with_usage

__all__ = ["CONTROLLER_STARTS", "StateStore", "StoreError"]

#: The value (:meth:`StateStore.load_value`) listing the times plurmctld started, on the
#: controller's clock, oldest first: its periodic passes tick in phase with the last one.
CONTROLLER_STARTS = "controller_starts"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (job_id INTEGER PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS acct_jobs (
    job_id INTEGER PRIMARY KEY,
    array_job_id INTEGER,
    name TEXT NOT NULL,
    user TEXT NOT NULL,
    uid INTEGER NOT NULL,
    partition TEXT NOT NULL,
    eligible REAL,
    end_time REAL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS acct_jobs_array ON acct_jobs (array_job_id);
CREATE TABLE IF NOT EXISTS acct_steps (
    job_id INTEGER NOT NULL,
    step TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (job_id, step)
);
"""


class StoreError(PlurmError):
    """The state file cannot be used: written by a newer Plurm, or not a state file."""


def _dumps(value: object) -> str:
    return json.dumps(value, allow_nan=False, separators=(",", ":"), sort_keys=True)


class StateStore:
    """The controller's state file. ``readonly`` opens it for reading only (sacct)."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._depth = 0
        try:
            if readonly:
                uri = f"{self.path.resolve().as_uri()}?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, isolation_level=None)
            else:
                self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout = 5000")
            if not readonly:
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = FULL")
                with self.transaction():
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            self._db.execute(statement)
                    self._check_version(write=True)
            else:
                self._check_version(write=False)
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: {error}") from None

    # ----------------------------------------------------------------------------- plumbing

    def _check_version(self, *, write: bool) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone()
        if row is None:
            if write:
                self._db.execute(
                    "INSERT INTO meta VALUES ('format_version', ?)", (str(FORMAT_VERSION),)
                )
            return
        if int(row[0]) > FORMAT_VERSION:
            raise StoreError(
                f"{self.path}: written by a newer Plurm (format {row[0]}, "
                f"this one reads up to {FORMAT_VERSION})"
            )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Group calls into one transaction, committed when the outermost block ends (or
        rolled back if it raises). Every method runs in one of its own otherwise."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._db.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self._db.execute("ROLLBACK")
            raise
        self._depth = 0
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> StateStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------- jobs

    def save_jobs(self, jobs: Iterable[Job], *, next_job_id: int | None = None) -> None:
        """Insert or replace ``jobs`` (and set the next job id with them), at once."""
        with self.transaction():
            self._db.executemany(
                "INSERT OR REPLACE INTO jobs (job_id, data) VALUES (?, ?)",
                ((job.job_id, _dumps(job_to_dict(job))) for job in jobs),
            )
            if next_job_id is not None:
                self.set_next_job_id(next_job_id)

    def load_jobs(self) -> list[Job]:
        """Every saved job, in job-id order (a CodecError if a row is corrupt)."""
        rows = self._db.execute("SELECT data FROM jobs ORDER BY job_id").fetchall()
        return [job_from_dict(json.loads(data)) for (data,) in rows]

    def delete_jobs(self, job_ids: Iterable[int]) -> None:
        """Forget jobs (purged after MinJobAge: when is the caller's policy)."""
        with self.transaction():
            self._db.executemany("DELETE FROM jobs WHERE job_id = ?", ((i,) for i in job_ids))

    def next_job_id(self) -> int | None:
        """The id the next job gets, None if never set."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'next_job_id'").fetchone()
        return None if row is None else int(row[0])

    def set_next_job_id(self, job_id: int) -> None:
        with self.transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('next_job_id', ?)",
                (str(job_id),),
            )

    # ----------------------------------------------------------------------------- values

    def save_value(self, key: str, value: Any) -> None:
        """Keep any JSON-able ``value`` under ``key`` (partition updates, node conditions)."""
        with self.transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", (key, _dumps(value))
            )

    def load_value(self, key: str, default: Any = None) -> Any:
        row = self._db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def delete_value(self, key: str) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM kv WHERE key = ?", (key,))

    # ----------------------------------------------------------------------------- accounting

    def record_job(self, record: JobRecord) -> None:
        """Insert or replace a job's record; its ``steps`` too, if it has any (steps
        recorded before and not among them are kept)."""
        with self.transaction():
            body = record_to_dict(record)
            del body["steps"]
            self._db.execute(
                "INSERT OR REPLACE INTO acct_jobs (job_id, array_job_id, name, user, uid,"
                " partition, eligible, end_time, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.job_id,
                    record.array_job_id,
                    record.name,
                    record.user,
                    record.uid,
                    record.partition,
                    record.eligible,
                    record.end,
                    _dumps(body),
                ),
            )
            for step in record.steps:
                self.record_step(step)

    def record_step(self, step: StepRecord) -> None:
        """Insert or replace a step. A step without usage figures keeps those recorded
        before (the batch step is rewritten from the job at every change; its figures come
        from the node at the job's end)."""
        with self.transaction():
            if step.max_rss is None and step.total_cpu is None:
                row = self._db.execute(
                    "SELECT data FROM acct_steps WHERE job_id = ? AND step = ?",
                    (step.job_id, step.step_key),
                ).fetchone()
                if row is not None:
                    usage = step_usage(step_from_dict(json.loads(row[0])))
                    if usage is not None:
                        step = with_usage(step, usage)
            self._db.execute(
                "INSERT OR REPLACE INTO acct_steps (job_id, step, data) VALUES (?, ?, ?)",
                (step.job_id, step.step_key, _dumps(step_to_dict(step))),
            )

    def steps(self, job_id: int) -> list[StepRecord]:
        """The steps recorded for job ``job_id`` (batch, extern, then by number)."""
        rows = self._db.execute("SELECT data FROM acct_steps WHERE job_id = ?", (job_id,))
        return sorted((step_from_dict(json.loads(text)) for (text,) in rows), key=_step_order)

    def delete_steps(self, job_id: int, *, numbered_only: bool = False) -> None:
        """Forget a job's steps (only those srun started, with ``numbered_only``)."""
        with self.transaction():
            sql = "DELETE FROM acct_steps WHERE job_id = ?"
            if numbered_only:
                sql += " AND step NOT IN ('batch', 'extern')"
            self._db.execute(sql, (job_id,))

    def query(self, query: AcctQuery) -> list[JobRecord]:
        """The records ``query`` selects, each with its steps (batch, extern, then by
        number), in job-id order."""
        where: list[str] = []
        params: list[Any] = []
        if query.jobs is not None:
            ids = sorted({selector.job_id for selector in query.jobs})
            marks = ",".join("?" * len(ids))
            where.append(f"(job_id IN ({marks}) OR array_job_id IN ({marks}))")
            params += ids + ids
        if query.partitions is not None:
            names = sorted(query.partitions)
            where.append(f"partition IN ({','.join('?' * len(names))})")
            params += names
        if query.start is not None:
            where.append("(end_time IS NULL OR end_time >= ?)")
            params.append(query.start)
        sql = "SELECT job_id, data FROM acct_jobs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return self._records(sql, params, query.matches)

    def all_records(self) -> list[JobRecord]:
        """Every job record, with its steps, in job-id order (held jobs never eligible
        too, which a sacct query without job ids leaves out): a trace export's input."""
        return self._records("SELECT job_id, data FROM acct_jobs", [], lambda record: True)

    def _records(
        self, sql: str, params: list[Any], keep: Callable[[JobRecord], bool]
    ) -> list[JobRecord]:
        sql += " ORDER BY job_id"
        records = []
        for job_id, data in self._db.execute(sql, params).fetchall():
            body = json.loads(data)
            body["steps"] = []
            record = record_from_dict(body)
            if not keep(record):
                continue
            steps = [
                step_from_dict(json.loads(text))
                for (text,) in self._db.execute(
                    "SELECT data FROM acct_steps WHERE job_id = ?", (job_id,)
                )
            ]
            steps.sort(key=_step_order)
            records.append(_with_steps(record, steps))
        return records


def _step_order(step: StepRecord) -> tuple[int, int]:
    if step.step == "batch":
        return (0, 0)
    if step.step == "extern":
        return (1, 0)
    return (2, step.step if isinstance(step.step, int) else 0)


def _with_steps(record: JobRecord, steps: list[StepRecord]) -> JobRecord:
    return attrs.evolve(record, steps=tuple(steps))
