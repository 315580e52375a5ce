"""plurmctld's job steps: ``step_start`` and ``step_end`` from srun, kept in accounting.

A step gets the job's next step number (0, 1, ... for each run of the job: a requeued job
numbers its steps from 0 again, and the steps of its earlier run are dropped from
accounting, as sacct without ``--duplicates`` shows only the last run). The number is kept
in the state store with the run it belongs to, so that a restarted controller goes on
counting. Each step is a :class:`~plurm.model.acct.StepRecord`, RUNNING from its start;
its end (what srun reports) makes it COMPLETED, FAILED (a task exited non-zero) or
CANCELLED (a task was killed by a signal), as slurmdbd records a step's end. A step still
RUNNING when its job ends (an srun killed with SIGKILL reports nothing) is CANCELLED at the
job's end, as slurmctld ends a finished job's steps.

Steps do not hold CPUs of their own here: a step may use any CPUs of its job, so two steps
may run at once on the same CPUs (Slurm 22.05 would make the second wait).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import attrs

from plurm.conf.model import SlurmConfig
from plurm.controller import RequestError
from plurm.live.steps import StepError, step_layout
from plurm.live.store import StateStore
from plurm.model.acct import StepRecord
from plurm.model.job import Job, JobState
from plurm.model.usage import OOM_SIGNAL, StepUsage, with_usage

__all__ = ["StepBook", "job_cpus"]

logger = logging.getLogger(__name__)

#: The states in which a job's steps may run.
_ALIVE = frozenset({JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING})
#: Longest step name kept (Slurm's job names are bounded too).
_MAX_NAME = 1024


def job_cpus(job: Job, config: SlurmConfig) -> list[int]:
    """The CPUs ``job`` holds on each of its nodes, in node order."""
    if job.units is not None:
        return [sum(1 for node, _ in job.units if node == name) for name in job.nodes]
    return [config.node(name).cpus for name in job.nodes]


def _count(message: dict[str, Any], key: str, *, default: int | None = None) -> int | None:
    value = message.get(key)
    if value is None:
        return default
    if type(value) is not int or not 1 <= value <= 1_000_000:
        raise RequestError(f"Invalid {key.replace('_', '-')} specification")
    return value


class StepBook:
    """The steps of the controller's jobs, in its state store."""

    def __init__(self, store: StateStore, config: SlurmConfig) -> None:
        self.store = store
        self.config = config

    def _key(self, job_id: int) -> str:
        return f"step_counter:{job_id}"

    def start(self, job: Job, message: dict[str, Any], now: float) -> dict[str, Any]:
        """Create the next step of a running ``job``; its id, nodes and tasks per node."""
        if job.state is not JobState.RUNNING:
            raise RequestError(
                "Job is pending execution"
                if job.state is JobState.PENDING
                else "Job/step already completing or completed"
            )
        name = message.get("name")
        if not isinstance(name, str) or not name or len(name) > _MAX_NAME:
            raise RequestError("Invalid job name specified")
        cpus_per_task = _count(message, "cpus_per_task", default=1)
        assert cpus_per_task is not None
        cpus = job_cpus(job, self.config)
        try:
            layout = step_layout(
                job.nodes,
                cpus,
                ntasks=_count(message, "ntasks"),
                nodes=_count(message, "nodes"),
                ntasks_per_node=_count(message, "ntasks_per_node"),
                cpus_per_task=cpus_per_task,
            )
        except StepError as error:
            raise RequestError(str(error)) from None
        attempt, number = self.store.load_value(self._key(job.job_id), [job.restarts, 0])
        with self.store.transaction():
            if attempt != job.restarts:
                # a new run of a requeued job: its earlier run's steps go
                self.store.delete_steps(job.job_id, numbered_only=True)
                number = 0
            self.store.save_value(self._key(job.job_id), [job.restarts, number + 1])
            self.store.record_step(
                StepRecord(
                    job_id=job.job_id,
                    step=number,
                    name=name,
                    state="RUNNING",
                    start=now,
                    nodes=layout.nodes,
                    ntasks=layout.ntasks,
                    alloc_cpus=layout.ntasks * cpus_per_task,
                )
            )
        logger.info(
            "step started job_id=%d step=%d tasks=%d nodes=%s",
            job.job_id,
            number,
            layout.ntasks,
            ",".join(layout.nodes),
        )
        return {
            "step_id": number,
            "nodes": list(layout.nodes),
            "tasks": list(layout.tasks),
            "job_nodes": list(job.nodes),
            "job_cpus": cpus,
        }

    def end(self, job: Job, step_id: int, code: int, signal: int, now: float) -> bool:
        """Record the end srun reports; False when the step is not running (already
        ended, or not a step of this run)."""
        step = self._step(job.job_id, step_id)
        if step is None or step.state != "RUNNING":
            return False
        state = "CANCELLED" if signal else "FAILED" if code else "COMPLETED"
        self.store.record_step(
            attrs.evolve(step, state=state, exit_code=code, exit_signal=signal, end=now)
        )
        logger.info(
            "step ended job_id=%d step=%d state=%s exit=%d:%d",
            job.job_id,
            step_id,
            state,
            code,
            signal,
        )
        return True

    def settle(self, jobs: Iterable[Job], now: float) -> None:
        """End, as CANCELLED at the job's end, the steps still running of jobs that no
        longer run (finished, or requeued)."""
        for job in jobs:
            if job.state in _ALIVE or (job.start_time is None and not job.restarts):
                continue
            end = job.end_time if job.end_time is not None else now
            for step in self.store.steps(job.job_id):
                if step.state == "RUNNING" and isinstance(step.step, int):
                    self.store.record_step(
                        attrs.evolve(step, state="CANCELLED", exit_signal=9, end=end)
                    )
                    logger.info("step settled job_id=%d step=%d", job.job_id, step.step)

    def record_usage(self, job: Job, usage: dict[str, StepUsage]) -> None:
        """Keep what the job's steps used (the batch host's report at the job's end); a
        batch step not recorded yet gets a record of its own, completed at the next
        commit."""
        for key, figures in usage.items():
            step = self._step_named(job.job_id, key)
            if step is None and key == "batch":
                step = StepRecord(job_id=job.job_id, step="batch", name="batch", state="RUNNING")
            if step is not None:
                self.store.record_step(with_usage(step, figures))

    def out_of_memory(self, job: Job, key: str, usage: dict[str, StepUsage], now: float) -> bool:
        """A step was ended for its memory: it ends OUT_OF_MEMORY (``0:125``), with the
        figures that ended it; False when it is not a step of the job that runs (or that
        srun reported killed by SIGKILL: srun's word may come before the node's)."""
        step = self._step_named(job.job_id, key)
        if step is None or key == "batch":
            return False
        killed = step.state == "CANCELLED" and step.exit_signal == 9
        if step.state != "RUNNING" and not killed:
            return False
        if key in usage:
            step = with_usage(step, usage[key])
        end = step.end if killed else now
        self.store.record_step(
            attrs.evolve(step, state="OUT_OF_MEMORY", exit_code=0, exit_signal=OOM_SIGNAL, end=end)
        )
        logger.info("step ended job_id=%d step=%s state=OUT_OF_MEMORY", job.job_id, key)
        return True

    def _step_named(self, job_id: int, key: str) -> StepRecord | None:
        for step in self.store.steps(job_id):
            if step.step_key == key:
                return step
        return None

    def _step(self, job_id: int, step_id: int) -> StepRecord | None:
        for step in self.store.steps(job_id):
            if step.step == step_id:
                return step
        return None
