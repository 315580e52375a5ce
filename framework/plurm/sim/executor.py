"""An executor that runs nothing: jobs take their simulated run time, suspension pauses it,
and every signal is recorded.

A job's run time is ``JobRequest.sim_runtime`` (from ``--sim-runtime``, ``--wrap='sleep N'``
or its time limit, as the sbatch command decides); None runs until killed.
"""

from __future__ import annotations

from collections.abc import Callable

from plurm.model.job import Job, JobState
from plurm.sim.engine import SimClock, SimTimer

SIGKILL = 9
SIGTERM = 15

__all__ = ["SimExecutor"]


class SimExecutor:
    """Implements :class:`plurm.controller.runtime.Executor` on a :class:`SimClock`."""

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self.on_end: Callable[[int, int, int], None] = lambda job_id, code, signal: None
        self._remaining: dict[int, float | None] = {}
        self._since: dict[int, float] = {}
        self._timers: dict[int, SimTimer] = {}
        #: Every signal each job received: (time, signal name).
        self.signals: dict[int, list[tuple[float, str]]] = {}

    def _record(self, job: Job, signal: str) -> None:
        self.signals.setdefault(job.job_id, []).append((self.clock.now(), signal))

    def _arm(self, job: Job) -> None:
        remaining = self._remaining.get(job.job_id)
        self._since[job.job_id] = self.clock.now()
        if remaining is None:
            return
        job_id = job.job_id
        code = job.request.sim_exit_code
        self._timers[job_id] = self.clock.call_at(
            self.clock.now() + remaining, lambda: self._ended(job_id, code)
        )

    def _disarm(self, job: Job) -> None:
        timer = self._timers.pop(job.job_id, None)
        if timer is not None:
            self.clock.cancel(timer)
        remaining = self._remaining.get(job.job_id)
        if remaining is not None:
            ran = self.clock.now() - self._since.get(job.job_id, self.clock.now())
            self._remaining[job.job_id] = max(0.0, remaining - ran)

    def _ended(self, job_id: int, code: int, signal: int = 0) -> None:
        self._timers.pop(job_id, None)
        self._remaining.pop(job_id, None)
        self.on_end(job_id, code, signal)

    def start(self, job: Job) -> None:
        self._remaining[job.job_id] = job.request.sim_runtime
        self._arm(job)

    def suspend(self, job: Job) -> None:
        self._record(job, "STOP")
        self._disarm(job)

    def resume(self, job: Job) -> None:
        self._record(job, "CONT")
        self._arm(job)

    def signal(self, job: Job, signal: str) -> None:
        """Record the signal; SIGKILL ends the job, so does SIGTERM unless it traps it."""
        self._record(job, signal)
        number = {"KILL": SIGKILL, "TERM": SIGTERM}.get(signal)
        if number is None or (number == SIGTERM and job.request.ignore_sigterm):
            return
        self._disarm(job)
        job_id = job.job_id
        self._remaining[job_id] = 0.0
        self.clock.call_at(self.clock.now(), lambda: self._ended(job_id, 0, number))

    def kill(self, job: Job, kill_wait: int) -> None:
        """A job dies at SIGTERM, as a shell script running ``sleep`` does, unless it
        ignores SIGTERM; then SIGKILL ends it ``kill_wait`` seconds later."""
        self._disarm(job)
        job_id = job.job_id
        self._remaining[job_id] = 0.0
        if job.state is JobState.SUSPENDED:
            self._record(job, "KILL")
            self.clock.call_at(self.clock.now(), lambda: self._ended(job_id, 0, SIGKILL))
            return
        self._record(job, "CONT")
        self._record(job, "TERM")
        if not job.request.ignore_sigterm:
            self.clock.call_at(self.clock.now(), lambda: self._ended(job_id, 0, SIGTERM))
            return

        def sigkill() -> None:
            self._record(job, "KILL")
            self._ended(job_id, 0, SIGKILL)

        self._timers[job_id] = self.clock.call_at(self.clock.now() + kill_wait, sigkill)
