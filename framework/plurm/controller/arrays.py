"""Job arrays (sbatch --array): one record for the tasks not started yet, split as they go.

As in Slurm 22.05, an array is submitted as one job whose id is the array's id, holding every
task in ``array_pending``. When the scheduler starts it, that record becomes the first
pending task (it keeps its job id: the first task started has the array's id) and a copy
with the next free job id holds the remaining tasks (:meth:`~ArraysMixin._split_task`); the
last task left is the record itself. So tasks get their job ids as they start. A pass
that starts a task goes on with the array's remaining record at once, as Slurm's does.
With a ``%K`` throttle, the remaining record waits (JobArrayTaskLimit) while K tasks run.

Cancelling an array's id cancels every record of it; cancelling one pending task splits it
off first, so that it ends CANCELLED as a record of its own.

Part of :class:`~plurm.controller.controller.Controller` (see :mod:`.base`).
"""

from __future__ import annotations

import attrs

from plurm.controller.base import _PENDING, ControllerBase, RequestError
from plurm.model.job import Job, JobRequest, JobState, PendingReason

__all__ = ["ArraysMixin"]


class ArraysMixin(ControllerBase):
    """The controller's job arrays."""

    def _check_array(self, request: JobRequest) -> None:
        """Refuse task ids at or above MaxArraySize, as Slurm does at submission."""
        tasks = request.array_tasks
        if tasks and (tasks[-1] >= self.config.max_array_size or request.array_throttle < 0):
            raise RequestError("Invalid job array specification")

    def _new_array(self, job: Job) -> None:
        """A new job submitted with --array: the array's record of every task."""
        job.array_job_id = job.job_id
        job.array_pending = job.request.array_tasks
        self._arrays[job.job_id] = {job.job_id: job}
        if job.request.array_throttle:
            self._waiting[job.job_id] = job  # reviewed at each pass (the throttle)

    def _array_members(self, array_job_id: int) -> list[Job]:
        """Every record of the array (none if it is not an array's id)."""
        members = self._arrays.get(array_job_id)
        return list(members.values()) if members else []

    def _array_task(self, array_job_id: int, task: int) -> Job | None:
        """The record of one task: its own, or the record of the tasks not started yet."""
        for member in self._arrays.get(array_job_id, {}).values():
            if member.array_task_id == task or task in member.array_pending:
                return member
        return None

    def _at_throttle(self, job: Job) -> bool:
        """Whether the array of ``job`` runs as many tasks as its throttle allows."""
        throttle = job.request.array_throttle
        if not throttle or job.array_job_id is None:
            return False
        running = 0
        for member in self._arrays.get(job.array_job_id, {}).values():
            if member.state is JobState.RUNNING or member.state is JobState.SUSPENDED:
                running += 1
        return running >= throttle

    def _split_task(self, job: Job, task: int | None = None) -> Job | None:
        """Make the array record ``job`` the record of one of its tasks (``task``, default
        the first); the others go to a new record with the next job id, which is returned
        (None when ``job`` held the last task)."""
        tasks = job.array_pending
        chosen = tasks[0] if task is None else task
        rest_tasks = tuple(t for t in tasks if t != chosen)
        rest = None
        if rest_tasks:
            rest = attrs.evolve(job, job_id=self._next_id, array_pending=rest_tasks)
            self._next_id += 1
            self.cluster.add_job(rest)
            self._arrays.setdefault(rest.array_job_id or job.job_id, {})[rest.job_id] = rest
            if job.job_id in self._waiting or rest.request.array_throttle:
                self._waiting[rest.job_id] = rest
            self._file(rest)
            self._request_pass()
        job.array_task_id = chosen
        job.array_pending = ()
        self._waiting.pop(job.job_id, None)
        return rest

    def _next_task(self, rest: Job | None) -> Job | None:
        """The array record a pass may try right after one of its tasks started: the rest,
        unless it waits (throttle, hold) or is not pending."""
        if rest is None or rest.state is not _PENDING or rest.held:
            return None
        if rest.job_id in self._waiting:
            if self._at_throttle(rest):
                rest.reason = PendingReason.JOB_ARRAY_TASK_LIMIT
                return None
            if rest.dependencies:
                return None
            del self._waiting[rest.job_id]
        return rest

    def _cancel_targets(self, job_id: int, task: int | None) -> list[Job]:
        """The records scancel acts on: one task (split off its array's record if it has
        not started), every record of an array given its id, or the job."""
        if task is not None:
            job = self._array_task(job_id, task)
            if job is None:
                raise RequestError("Invalid job id specified")
            if job.array_pending:
                if len(job.array_pending) > 1:
                    self._split_task(job, task)
                else:
                    job.array_task_id, job.array_pending = task, ()
            return [job]
        job = self.job(job_id)
        if job.array_job_id == job_id:
            return self._array_members(job_id)
        return [job]
