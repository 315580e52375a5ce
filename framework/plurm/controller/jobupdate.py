"""scontrol update JobId=N key=value...: the changes a job's owner or an administrator may make
to a job, with Slurm 22.05's rules and refusals.

Every change is checked before any is made: a refused update changes nothing. Who may do
what (``by_uid`` 0 is an administrator: root or the daemon's own user):

* anyone but the job's owner and an administrator is refused ("Invalid user id");
* a finished job takes no change ("Job has already finished");
* the time limit: an administrator may set any; the owner may lower it, and raise a
  pending job's within its partition's MaxTime ("Access/permission denied" otherwise). A
  running job's limit takes effect at once: its limit timer, its --signal warning and the
  end backfill plans with are worked out again;
* the priority: an administrator only (the owner is told to change the nice value
  instead); a nice value below 0: an administrator only;
* partition, QOS, account, task count and begin time: while the job is pending ("Job is
  no longer pending execution" otherwise); the node count too ("Requested operation not
  supported on this system": Plurm does not resize running jobs); a nice value given for
  a job that no longer pends is taken and ignored, as 22.05 does;
* name, comment and requeue flag: at any time.

(All observed on Slurm 22.05.8: tests/data/oracle/jobcmds.)

Part of :class:`~plurm.controller.controller.Controller` (see :mod:`.base`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import attrs

from plurm.controller.accounting import Refused, charge
from plurm.controller.base import _PENDING, _RUNNING, ControllerBase, RequestError
from plurm.model.job import Job, JobState, PendingReason

__all__ = ["JOB_UPDATE_FIELDS", "JobUpdateMixin"]

logger = logging.getLogger(__name__)

#: The fields an update may change, as :meth:`JobUpdateMixin.update_job` takes them.
JOB_UPDATE_FIELDS = frozenset(
    {
        "time_limit",
        "partition",
        "nice",
        "priority",
        "qos",
        "account",
        "name",
        "min_nodes",
        "max_nodes",
        "ntasks",
        "begin_time",
        "requeue",
        "comment",
    }
)
#: Fields only a pending job takes.
_PENDING_ONLY = frozenset(
    {"partition", "nice", "qos", "account", "min_nodes", "max_nodes", "ntasks", "begin_time"}
)

_NOT_PENDING = "Job is no longer pending execution"
_DENIED = "Access/permission denied"


class JobUpdateMixin(ControllerBase):
    """The controller's job updates."""

    def update_job(self, job_id: int, changes: Mapping[str, Any], *, by_uid: int) -> None:
        """Apply ``changes`` (fields of :data:`JOB_UPDATE_FIELDS`) to a job, on behalf of
        ``by_uid``; a RequestError with Slurm's text if any is refused (nothing changes)."""
        self._tick()
        job = self.job(job_id)
        unknown = set(changes) - JOB_UPDATE_FIELDS
        if unknown:
            raise RequestError(f"Invalid job update: {', '.join(sorted(unknown))}")
        admin = by_uid == 0
        if not admin and job.request.uid != by_uid:
            raise RequestError("Invalid user id")
        if job.state.finished:
            raise RequestError("Job has already finished")
        pending = job.state is _PENDING
        changes = dict(changes)
        if not pending and ("min_nodes" in changes or "max_nodes" in changes):
            raise RequestError("Requested operation not supported on this system")
        if "nice" in changes and changes["nice"] < 0 and not admin:
            raise RequestError(_DENIED)
        if not pending:
            changes.pop("nice", None)  # taken, and ignored, as 22.05 does
        if not pending and _PENDING_ONLY & set(changes):
            raise RequestError(_NOT_PENDING)
        request = job.request
        new: dict[str, Any] = {}
        if "time_limit" in changes:
            limit = changes["time_limit"]
            if job.state is JobState.COMPLETING:
                raise RequestError("Job has already finished")
            if not admin and not _lower(limit, job.time_limit):
                # the owner may raise a pending job's limit within its partition's MaxTime
                max_time = self.cluster.partition(job.partition).max_time
                if not pending or not _within(limit, max_time):
                    raise RequestError(_DENIED)
            new["time_limit"] = limit
        if "priority" in changes and not admin:
            raise RequestError("Changes to job priority are not persistent, change nice instead")
        if "partition" in changes:
            name = changes["partition"]
            if name not in self.cluster.partitions:
                raise RequestError("Invalid partition name specified")
            new["partitions"] = (name,)
        if "min_nodes" in changes and changes["min_nodes"] > len(self.cluster.node_index):
            raise RequestError("Node count specification invalid")
        for field in ("nice", "name", "ntasks", "begin_time", "comment", "requeue"):
            if field in changes:
                new[field] = changes[field]
        if "min_nodes" in changes:
            new["min_nodes"] = changes["min_nodes"]
            new["max_nodes"] = changes.get("max_nodes", changes["min_nodes"])
        if "qos" in changes:
            new["qos"] = changes["qos"]
        if "account" in changes:
            new["account"] = changes["account"]
        updated = attrs.evolve(request, **new)
        charged = None
        if "qos" in changes or "account" in changes:
            try:
                charged = charge(self.config, updated)
            except Refused as refusal:
                raise RequestError(refusal.message) from None
        self._apply_update(job, updated, changes, charged)
        logger.info("job_id=%d updated by uid=%d: %s", job_id, by_uid, sorted(changes))

    def _apply_update(
        self, job: Job, updated: Any, changes: Mapping[str, Any], charged: Any
    ) -> None:
        old_nice = job.request.nice
        job.request = updated
        if "requeue" in changes:
            job.requeue = changes["requeue"]
        if "priority" in changes:
            job.priority = changes["priority"]
            self._fixed_priority.add(job.job_id)
        elif "nice" in changes:
            job.priority = max(1, job.priority + old_nice - updated.nice)
        if charged is not None:
            job.account, job.qos = charged.account, charged.qos
        if "partition" in changes:
            job.partition = changes["partition"]
        if "time_limit" in changes:
            self._set_time_limit(job, changes["time_limit"])
        if job.state is not _PENDING:
            return
        if {"partition", "min_nodes", "ntasks"} & set(changes):
            part = self.cluster.partition(job.partition)
            job.wanted_nodes = self._wanted_nodes(updated, part)
        if "begin_time" in changes:
            begin = changes["begin_time"]
            if begin > self.now:
                job.eligible_time = begin
                job.reason = PendingReason.BEGIN_TIME
                self._pass_after(begin)
            else:
                job.eligible_time = self.now
                if job.reason is PendingReason.BEGIN_TIME:
                    job.reason = PendingReason.NONE
        self._file(job)
        self._request_pass()

    def _set_time_limit(self, job: Job, limit: int | None) -> None:
        """A new time limit. A running job's kept end moves with it and its limit timer
        (with its --signal warning) is armed again; a suspended job's is armed when it
        resumes, a pending job's when it starts."""
        job.time_limit = limit
        if job.state is not _RUNNING:
            return
        kept = self._running_ends.get(job.job_id)
        if kept is not None:
            self._running_ends[job.job_id] = (job, self._limit_end(job), kept[2])
        ending = self._ending.get(job.job_id)
        self._arm_limit(job, ending.grace_end if ending is not None else None)


def _within(new: int | None, most: int | None) -> bool:
    """Whether time limit ``new`` is at most ``most`` (None: unlimited)."""
    return most is None or (new is not None and new <= most)


def _lower(new: int | None, current: int | None) -> bool:
    """Whether time limit ``new`` is below ``current`` (None: unlimited)."""
    if new is None:
        return False
    return current is None or new < current
