"""Jobs kept out of the queue: held jobs (sbatch -H, scontrol hold), jobs waiting on their
--dependency, and job arrays at their ``%K`` throttle.

Such a job stays PENDING but is never filed in the queue (:meth:`_refused` says so, with the
job's reason: JobHeldUser or JobHeldAdmin, Dependency or DependencyNeverSatisfied,
JobArrayTaskLimit); the controller keeps them in ``_waiting`` and reviews them at the start
of every pass (:meth:`~WaitingMixin._review_waiting`), as Slurm tests a job's dependencies
each time its scheduler looks at the queue. A job whose wait is over is filed anew. A pass
without waiting jobs pays for one test of an empty dict.

Dependencies follow Slurm 22.05: each item is unfulfilled, fulfilled or failed, and keeps
its state once settled; items joined by ``,`` must all be fulfilled, items joined by ``?``
need one. A dependency that can never be satisfied leaves the job pending with reason
DependencyNeverSatisfied (22.05's default, without ``kill_invalid_depend``). A dependency on
an array's id is on all of its tasks (shown ``afterok:12_*``).

Part of :class:`~plurm.controller.controller.Controller` (see :mod:`.base`).
"""

from __future__ import annotations

import re

import attrs

from plurm.controller.base import _PENDING, ControllerBase, RequestError
from plurm.model.job import Dependency, Job, JobState, PendingReason

__all__ = ["DEPENDENCY_PROBLEM", "WaitingMixin"]

#: Slurm's refusal of a --dependency it cannot read or whose job it does not know.
DEPENDENCY_PROBLEM = "Job dependency problem"

_KINDS = frozenset({"after", "afterany", "afterok", "afternotok"})
_TARGET = re.compile(r"([0-9]{1,10})(?:_([0-9]{1,10}|\*))?", re.ASCII)
#: The finished states in which a job "completed" for afterok (COMPLETED only).
_HELD_REASONS = frozenset({PendingReason.JOB_HELD_USER, PendingReason.JOB_HELD_ADMIN})


class WaitingMixin(ControllerBase):
    """Holds, dependencies and the review of the jobs kept out of the queue."""

    # ----------------------------------------------------------------------------- submission

    def _parse_dependency(self, text: str) -> tuple[Dependency, ...]:
        """The items of a --dependency, each checked against the jobs known now."""
        if "," in text and "?" in text:
            raise RequestError(DEPENDENCY_PROBLEM)
        any_of = "?" in text
        items: list[Dependency] = []
        for word in text.split("?" if any_of else ","):
            word = word.strip()
            if word == "singleton":
                items.append(Dependency("singleton", any=any_of))
                continue
            kind, colon, rest = word.partition(":")
            if kind not in _KINDS or not colon or not rest:
                raise RequestError(DEPENDENCY_PROBLEM)
            for target in rest.split(":"):
                match = _TARGET.fullmatch(target)
                if match is None:
                    raise RequestError(DEPENDENCY_PROBLEM)
                items.append(self._dependency_on(kind, match, any_of))
        return tuple(items)

    def _dependency_on(self, kind: str, match: re.Match[str], any_of: bool) -> Dependency:
        job_id = int(match.group(1))
        task_text = match.group(2)
        job = self.cluster.jobs.get(job_id)
        if task_text is None:
            if job is None:
                raise RequestError(DEPENDENCY_PROBLEM)
            whole = job.array_job_id == job_id  # an array's id: all of its tasks
            return Dependency(kind, job_id, whole_array=whole, any=any_of)
        members = self._array_members(job_id)
        if not members:
            raise RequestError(DEPENDENCY_PROBLEM)
        if task_text == "*":
            return Dependency(kind, job_id, whole_array=True, any=any_of)
        task = int(task_text)
        if self._array_task(job_id, task) is None:
            raise RequestError(DEPENDENCY_PROBLEM)
        return Dependency(kind, job_id, task=task, any=any_of)

    def _wait_at_submission(self, job: Job) -> None:
        """A new job held (sbatch -H) or with dependencies waits outside the queue."""
        request = job.request
        if request.hold:
            job.priority = 0
            job.reason = PendingReason.JOB_HELD_USER
            self._waiting[job.job_id] = job
        if job.dependencies:
            self._waiting[job.job_id] = job
            if not job.held:
                self._still_waits(job)

    # ----------------------------------------------------------------------------- holds

    def hold(self, job_id: int, *, admin: bool = True) -> None:
        """scontrol hold (``admin``: by an administrator, JobHeldAdmin) or uhold
        (JobHeldUser): the pending job (every pending record of an array, given its id)
        gets priority 0 and waits until released."""
        self._tick()
        jobs = [job for job in self._targets(job_id) if job.state is _PENDING]
        if not jobs:
            raise RequestError("Job is no longer pending execution")
        for job in jobs:
            job.priority = 0
            job.reason = PendingReason.JOB_HELD_ADMIN if admin else PendingReason.JOB_HELD_USER
            self._waiting[job.job_id] = job
            self._file(job)

    def release(self, job_id: int, *, admin: bool = True) -> None:
        """scontrol release: a held job gets a priority again (as a new submission would)
        and may run once nothing else holds it back. Only an administrator releases an
        administrator's hold."""
        self._tick()
        jobs = [job for job in self._targets(job_id) if job.state is _PENDING]
        if not jobs:
            raise RequestError("Job is no longer pending execution")
        for job in jobs:
            if not job.held:
                continue
            if job.reason is PendingReason.JOB_HELD_ADMIN and not admin:
                raise RequestError("Access/permission denied")
            job.priority = self._new_priority(job)
            job.reason = PendingReason.NONE
            self._file(job)
        self._request_pass()

    def _targets(self, job_id: int) -> list[Job]:
        """The records a command on ``job_id`` acts on: every record of the array when it
        is an array's id, else the job."""
        job = self.job(job_id)
        if job.array_job_id == job_id:
            return self._array_members(job_id)
        return [job]

    # ----------------------------------------------------------------------------- review

    def _review_waiting(self) -> None:
        """Before a pass: the waiting jobs whose wait is over go back to the queue."""
        for job_id, job in list(self._waiting.items()):
            if job.state is not _PENDING:
                del self._waiting[job_id]
                continue
            if job.held or self._still_waits(job):
                continue
            del self._waiting[job_id]
            if job.reason in _HELD_REASONS or job.reason is PendingReason.DEPENDENCY:
                job.reason = PendingReason.NONE
            if job.eligible_time < self.now and job.request.dependency is not None:
                job.eligible_time = self.now  # eligible from when its dependencies were met
            self._file(job)

    def _still_waits(self, job: Job) -> bool:
        """Whether the (unheld) job still waits on its dependencies or its array's
        throttle; if so, its reason says which."""
        if job.dependencies:
            verdict = self._dependencies_met(job)
            if verdict is None:
                job.reason = PendingReason.DEPENDENCY
                return True
            if not verdict:
                job.reason = PendingReason.DEPENDENCY_NEVER_SATISFIED
                return True
            job.dependencies = ()
        if job.array_pending and self._at_throttle(job):
            job.reason = PendingReason.JOB_ARRAY_TASK_LIMIT
            return True
        return False

    def _dependencies_met(self, job: Job) -> bool | None:
        """Test the job's unsettled items: True when its dependencies are satisfied, False
        when they never can be, None while they may still be."""
        items = tuple(
            item if item.state != "unfulfilled" else self._test_item(job, item)
            for item in job.dependencies
        )
        job.dependencies = items
        states = [item.state for item in items]
        if any(item.any for item in items):
            if "fulfilled" in states:
                return True
            return None if "unfulfilled" in states else False
        if "failed" in states:
            return False
        return None if "unfulfilled" in states else True

    def _test_item(self, job: Job, item: Dependency) -> Dependency:
        """One unfulfilled item tested against the jobs as they are now."""
        if item.kind == "singleton":
            if self._singleton_blocked(job):
                return item
            return attrs.evolve(item, state="fulfilled")
        if item.whole_array:
            members = self._array_members(item.job_id)
        else:
            target = (
                self.cluster.jobs.get(item.job_id)
                if item.task is None
                else self._array_task(item.job_id, item.task)
            )
            members = [] if target is None else [target]
        if not members:
            return attrs.evolve(item, state="fulfilled")  # the job is gone: lifted
        # (a COMPLETING job's final state is not known yet: it still counts as running)
        finished = all(member.state.finished for member in members)
        pending = any(member.state is _PENDING for member in members)
        succeeded = all(member.state is JobState.COMPLETED for member in members)
        kind = item.kind
        state = item.state
        if kind == "after":
            state = "unfulfilled" if pending else "fulfilled"
        elif not finished:
            state = "unfulfilled"
        elif kind == "afterany":
            state = "fulfilled"
        elif kind == "afterok":
            state = "fulfilled" if succeeded else "failed"
        elif kind == "afternotok":
            state = "failed" if succeeded else "fulfilled"
        return item if state == item.state else attrs.evolve(item, state=state)

    def _singleton_blocked(self, job: Job) -> bool:
        """singleton: another job of the same name and user runs, is suspended, or was
        submitted before it and still waits."""
        request = job.request
        for other in self.cluster.jobs.values():
            if other is job or other.request.uid != request.uid or other.name != job.name:
                continue
            state = other.state
            if state is JobState.RUNNING or state is JobState.SUSPENDED:
                return True
            if state is _PENDING and other.job_id < job.job_id:
                return True
        return False
