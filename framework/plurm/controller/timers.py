"""The controller's timers: when passes run (event-triggered, periodic, at a time), the
time-limit check and the --signal warning before it, gang scheduling's time slice and the
backfill pass's period.

Part of :class:`~plurm.controller.controller.Controller` (see :mod:`.base`).
"""

from __future__ import annotations

import math

from plurm.controller.base import _PENDING, _RUNNING, ControllerBase, _Ending
from plurm.model.job import Job, JobState

__all__ = ["TIME_LIMIT_CHECK", "TimersMixin"]

#: Period of Slurm's time-limit check, which also ends a GraceTime whose preemptor went away.
TIME_LIMIT_CHECK = 30

#: The states of the jobs that hold resources (Cluster.allocated).
_ALLOCATED = (JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING)


class TimersMixin(ControllerBase):
    """The controller's timers."""

    def _periodic_pass(self) -> None:
        """The whole-queue pass at the next ``sched_interval`` tick after now, for the jobs
        an event pass left beyond its depth."""
        interval = max(1, self.config.scheduler_parameters.sched_interval)
        self._pass_after(math.floor(self.now / interval) * interval + interval)

    def _pass_after(self, when: float) -> None:
        """A scheduling pass at the first periodic pass at or after ``when``, as Slurm's
        main scheduler notices time-driven eligibility only on its periodic run, which
        tests the whole queue."""
        interval = max(1, self.config.scheduler_parameters.sched_interval)
        self._pass_at_time(math.ceil(when / interval) * interval, full=True)

    def _request_pass(self) -> None:
        """An event-triggered pass. Slurm batches these (batch jobs may wait up to
        batch_sched_delay); observed on 22.05, a job starts about a second after sbatch.
        Plurm runs the pass at the next whole second, once for all events before it; with
        ``SchedulerPassOn=event`` (plurm.conf) it runs at once instead."""
        if self.config.scheduler_pass_on == "event":
            self._event_pass()
        else:
            self._pass_at_time(math.floor(self.now) + 1)

    def _event_pass(self) -> None:
        """A pass now, after the callback at hand: one for all the events handled before it
        runs (the events of one simulated instant, or of one turn of the live loop, whose
        clock moves between two events)."""
        if self._event_pass_armed:
            return
        self._event_pass_armed = True

        def run() -> None:
            self._event_pass_armed = False
            self._tick()
            if not self._pending.kept or self.cluster.jobs_unordered(_PENDING):
                self.schedule(full=False)

        self.timer.call_at(self.now, run)

    def _pass_at_time(self, at: float, *, full: bool = False) -> None:
        if at in self._pass_at:
            self._pass_at[at] = self._pass_at[at] or full
            return
        self._pass_at[at] = full

        def run() -> None:
            full = self._pass_at.pop(at, False)
            self._tick()
            # A pass without a pending job changes nothing (half of a light trace's passes
            # follow a job's end with no job waiting); without a kept queue it still asks
            # sched_queue_order, which is called at the start of every pass. Jobs suspended
            # by a releasing preemption may resume at any pass.
            if not self._pending.kept or self.cluster.jobs_unordered(_PENDING) or self._parked:
                self.schedule(full=full)

        self.timer.call_at(max(at, self.now), run)

    def _arm_limit(self, job: Job, grace_end: float | None = None) -> None:
        """End the job at the first time-limit check after its limit, or its preemption
        grace, runs out (Slurm's end_time = min(end_time, now + grace))."""
        if job.start_time is None or (job.time_limit is None and grace_end is None):
            return
        self._cancel_limit(job.job_id)
        now = self.now
        due = math.inf if grace_end is None else grace_end
        if job.time_limit is not None:
            # The limit counts run time only: time spent suspended does not use it up.
            due = min(due, now + max(0.0, job.time_limit * 60 - job.run_time(now)))
        # the check runs every 30 s since slurmctld started
        at = self._epoch + math.ceil((due - self._epoch) / TIME_LIMIT_CHECK) * TIME_LIMIT_CHECK
        ends = self.executor.ends_by(job)
        if ends is not None and ends < max(at, now):
            # It ends by itself before the check: its end would cancel the check unrun (a
            # suspension cancels it too, and the resume arms it anew). A simulated trace's
            # jobs mostly end before their limits; arming no timer for them spares the clock
            # an event and a cancelled entry per job, and moves no other event.
            self._arm_warning(job)
            return

        def run() -> None:
            self._limit_timers.pop(job.job_id, None)
            self._tick()
            if not job.state.holds_resources:
                return
            ending = self._ending.get(job.job_id)
            if ending is not None:  # grace is over and no preemptor came back to end it
                if not ending.killed:
                    self._kill(job, ending)
            else:
                self._kill(job, _Ending(JobState.TIMEOUT))

        self._limit_timers[job.job_id] = self.timer.call_at(max(at, now), run)
        self._arm_warning(job)

    def _arm_warning(self, job: Job) -> None:
        """sbatch --signal: send the job its signal at the first time-limit check at which
        its limit is ``warn_time`` seconds away or less, once per run (Slurm checks with
        the time limits, so the signal may come up to a check period early)."""
        request = job.request
        if request.warn_signal is None or job.time_limit is None or job.start_time is None:
            return
        if self._warned.get(job.job_id) == job.restarts:
            return
        now = self.now
        left = job.time_limit * 60 - job.run_time(now)
        due = now + max(0.0, left - request.warn_time)
        at = self._epoch + math.ceil((due - self._epoch) / TIME_LIMIT_CHECK) * TIME_LIMIT_CHECK

        def run() -> None:
            self._warn_timers.pop(job.job_id, None)
            self._tick()
            if job.state is not _RUNNING or self._warned.get(job.job_id) == job.restarts:
                return
            self._warned[job.job_id] = job.restarts
            assert request.warn_signal is not None
            batch = request.warn_batch_only
            self.executor.signal(job, request.warn_signal, steps_only=not batch, batch_only=batch)

        self._warn_timers[job.job_id] = self.timer.call_at(max(at, now), run)

    def _cancel_limit(self, job_id: int) -> None:
        handle = self._limit_timers.pop(job_id, None)
        if handle is not None:
            self.timer.cancel(handle)
        warning = self._warn_timers.pop(job_id, None)
        if warning is not None:
            self.timer.cancel(warning)

    def _arm_timeslice(self) -> None:
        if self._slice_interval is None or self._slice_timer is not None:
            return

        def run() -> None:
            self._slice_timer = None
            self._tick()
            self._gang_scan()
            # (no job holds resources: asked per state, as allocated() would sort them all)
            if not any(map(self.cluster.jobs_unordered, _ALLOCATED)):
                return
            self._apply(self.plugins.sched_gang_timeslice(self.cluster))
            self._arm_timeslice()

        # Slurm's timeslicer thread ticks every SchedulerTimeSlice since slurmctld started.
        self._slice_timer = self.timer.call_at(self._next_tick(self._slice_interval), run)

    def _gang_scan(self) -> None:
        """Gang scheduling catches up with the job list, as Slurm's does when its time
        slicer ticks and when partitions change: it lets go of the jobs that no longer run
        (COMPLETING: their processes are being killed) and takes in the jobs scontrol
        resumed that still run (one suspended or ended since is known to it as such)."""
        if not self._gang:
            return
        for job in self.cluster.jobs_in(JobState.COMPLETING):
            self._apply(self.plugins.sched_gang_job_fini(job, self.cluster))
        unseen, self._resumed_unseen = self._resumed_unseen, set()
        for job_id in sorted(unseen):
            job = self.cluster.job(job_id)
            if job.state is _RUNNING and job_id not in self._ending:
                self._apply(self.plugins.sched_gang_job_start(job, self.cluster))

    def _next_tick(self, interval: float, after: float | None = None) -> float:
        """The first tick of a periodic slurmctld thread (ticking every ``interval`` since
        the controller started) strictly after ``after`` (default: now)."""
        since = (self.now if after is None else after) - self._epoch
        return self._epoch + (math.floor(since / interval) + 1) * interval

    def _arm_backfill(self) -> None:
        """The next backfill pass, on the sched plugin's period (none if it does not
        backfill). Passes run only while jobs wait, so an idle simulation ends."""
        interval = self._backfill_interval
        if interval is None or self._backfill_timer is not None:
            return

        def run() -> None:
            self._backfill_timer = None
            self.backfill()

        self._backfill_timer = self.timer.call_at(self._next_tick(interval), run)
