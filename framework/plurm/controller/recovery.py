"""A controller that takes back a cluster's jobs after a restart, and jobs a node lost.

``plurmctld`` saves every job as it changes (:mod:`plurm.live.store`); a controller that
starts again on the same state (without ``-c``) gets them back through :meth:`restore`
before any event: pending jobs are filed in the queue, and the jobs that hold resources are
given back to the select plugin (and gang scheduling) as they were, without launching
anything: their processes ran on through the restart, and their nodes' daemons report them
when they register. A node whose daemon registers without a job the controller believes
it runs has lost it (:meth:`job_lost`): the job is requeued or ends NODE_FAIL, as for a
node failure.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

from plurm.controller.base import ControllerBase, _Ending
from plurm.model.job import Job, JobState, PendingReason

__all__ = ["RecoveryMixin"]


def _ending_of(job: Job) -> _Ending:
    """Why a COMPLETING job was being killed, as its saved fields tell (the reason itself
    is not saved): to be requeued (after the delay its policy gave), at its time limit,
    preempted, else cancelled."""
    if job.requeued:
        return _Ending(JobState.PENDING, requeue=True, killed=True, delay=job.requeue_delay)
    if job.reason is PendingReason.TIME_LIMIT:
        return _Ending(JobState.TIMEOUT, killed=True)
    if job.preempt_time is not None:
        return _Ending(JobState.PREEMPTED, killed=True)
    return _Ending(JobState.CANCELLED, killed=True)


class RecoveryMixin(ControllerBase):
    """:meth:`restore` and :meth:`job_lost` (live mode)."""

    @property
    def next_job_id(self) -> int:
        """The id the next submitted job gets."""
        return self._next_id

    def restore(self, jobs: Iterable[Job], next_job_id: int | None = None) -> None:
        """Take back ``jobs`` as a controller of this cluster saved them, and go on giving
        ids from ``next_job_id`` (never one already given)."""
        self._tick()
        cluster = self.cluster
        plugins = self.plugins
        restored = sorted(jobs, key=operator.attrgetter("job_id"))
        for job in restored:
            cluster.add_job(job)
            if job.array_job_id is not None:
                self._arrays.setdefault(job.array_job_id, {})[job.job_id] = job
            if job.state is JobState.PENDING and (
                job.held or job.dependencies or (job.array_pending and job.request.array_throttle)
            ):
                self._waiting[job.job_id] = job  # reviewed at the first pass
        for job in restored:
            state = job.state
            if state is JobState.PENDING:
                self._file(job)
                if job.eligible_time > self.now:
                    self._pass_after(job.eligible_time)
            elif state.holds_resources:
                plugins.select_job_begin(job, cluster)
                if state is JobState.RUNNING:
                    self._running_ends[job.job_id] = (
                        job,
                        self._limit_end(job),
                        cluster.mask_of(job.held_nodes),
                    )
                    self._arm_limit(job)
                elif state is JobState.SUSPENDED:
                    plugins.select_job_suspend(
                        job, job.admin_suspended or job.preempt_suspended, cluster
                    )
                else:  # COMPLETING: it holds only the nodes its teardown has not freed
                    self._ending[job.job_id] = _ending_of(job)
                    held = set(job.held_nodes)
                    released = tuple(name for name in job.nodes if name not in held)
                    if released:
                        plugins.select_job_resized(job, released, cluster)
        if self._gang:
            for job in sorted(
                (j for j in restored if j.state is JobState.RUNNING),
                key=lambda j: (j.start_time or 0.0, j.job_id),
            ):
                job.units = plugins.select_job_resources(job, cluster)
                self._apply(plugins.sched_gang_job_start(job, cluster))
            self._arm_timeslice()
        elif self._priority_period is not None:  # the priority plugin charges the units
            for job in restored:
                if job.state is JobState.RUNNING:
                    job.units = plugins.select_job_resources(job, cluster)
        ids = [job.job_id + 1 for job in restored]
        self._next_id = max([self._next_id, next_job_id or 0, *ids])
        if restored:
            plugins.priority_jobs_recovered(restored, cluster)
            self._arm_priority_recalc()
        # the victim pool and the kept queue are built from the jobs as they are now
        self._check_preemption()
        self._request_pass()

    def job_lost(self, job_id: int) -> None:
        """The node a job ran on no longer has it (its daemon restarted without it): the
        job is requeued, or ends NODE_FAIL, as when its node fails."""
        self._tick()
        job = self.cluster.job(job_id)
        if not job.state.holds_resources:
            return
        self._node_failed(job)
        self._request_pass()
