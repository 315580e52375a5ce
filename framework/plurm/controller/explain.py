"""``scontrol explain``'s answers: why a pending job waits, what became of every candidate
of a job's last preemption decision, and who preempted a victim.

The core keeps, per preemptor, a :class:`PreemptDecision` of its last decision that took
victims (select's victims, those left after the trim, those finally taken): a few tuples per
decision, in a store of at most :data:`MAX_DECISIONS` entries (the oldest dropped first).
Why the other jobs were no candidates is worked out only when someone asks
(:meth:`ExplainMixin.explain`), from the policy's answers then and the decision's time
(an exemption's end is fixed by the victim's start, so it is exact; a policy's or guard's
answer is today's). A victim carries its preemptor on itself (``Job.preempted_by``).

Part of :class:`~plurm.controller.controller.Controller` (see :mod:`.base`).
"""

from __future__ import annotations

from typing import Any

import attrs

from plurm.conf.values import PreemptBase
from plurm.controller.base import _HOLDING, ControllerBase, RequestError
from plurm.model.job import Job, JobState, PendingReason

__all__ = ["MAX_DECISIONS", "ExplainMixin", "PreemptDecision"]

#: The reasons for which the jobs holding a pending job's nodes are in its way.
_CROWDED = frozenset({PendingReason.RESOURCES, PendingReason.PRIORITY})

#: The most preemption decisions kept (one per preemptor, the oldest dropped first).
MAX_DECISIONS = 10_000


@attrs.frozen
class PreemptDecision:
    """One preemption decision of ``preemptor`` at ``time``: select's victims in its order
    (``offered``), those left after the core's trim (``trimmed``) and those taken after the
    victim search (``taken``)."""

    preemptor: int
    time: float
    offered: tuple[int, ...]
    trimmed: tuple[int, ...]
    taken: tuple[int, ...]


def _end(job: Job) -> float | None:
    if job.start_time is None or job.time_limit is None:
        return None
    return job.start_time + job.time_limit * 60


class ExplainMixin(ControllerBase):
    """The controller's explanations."""

    _decisions: dict[int, PreemptDecision]

    def _record_decision(self, decision: PreemptDecision) -> None:
        """Keep ``decision`` as its preemptor's last one (store bounded)."""
        store = self._decisions
        store.pop(decision.preemptor, None)
        store[decision.preemptor] = decision
        if len(store) > MAX_DECISIONS:
            del store[next(iter(store))]

    def explain(self, job_id: int) -> dict[str, Any]:
        """``scontrol explain``'s facts on job ``job_id`` as plain data (times in seconds);
        RequestError "Invalid job id specified" for a job the controller does not know."""
        job = self.cluster.jobs.get(job_id)
        if job is None:
            raise RequestError("Invalid job id specified")
        answer: dict[str, Any] = {
            "job_id": job_id,
            "state": job.state.name,
            "reason": job.reason.value,
            "expected_start": None,
            "in_the_way": [],
            "preemption": None,
            "preempted_by": None,
        }
        if job.state is JobState.PENDING:
            answer["expected_start"] = self.expected_starts().get(job_id)
            if job.reason in _CROWDED:
                answer["in_the_way"] = self._in_the_way(job)
        decision = self._decisions.get(job_id)
        if decision is not None:
            answer["preemption"] = {
                "time": decision.time,
                "candidates": self._candidate_statuses(job, decision),
            }
        if job.preempted_by is not None:
            # (a suspension by gang scheduling after the preemptor's start leaves Slurm's
            # PreemptTime as it was: its time is the suspension's)
            times = [t for t in (job.preempt_time, job.suspend_time) if t is not None]
            answer["preempted_by"] = {"job_id": job.preempted_by, "time": max(times, default=None)}
        return answer

    def _in_the_way(self, job: Job) -> list[dict[str, Any]]:
        """The jobs holding nodes of ``job``'s partition, the first to end first."""
        cluster = self.cluster
        part = cluster.mask_of(cluster.partition(job.partition).nodes)
        holders = [
            other
            for other in cluster.jobs_in(*_HOLDING)
            if other.job_id != job.job_id and part & cluster.mask_of(other.nodes)
        ]
        holders.sort(key=lambda o: (_end(o) is None, _end(o) or 0.0, o.job_id))
        return [
            {"job_id": o.job_id, "state": o.state.name, "nodes": list(o.nodes), "end": _end(o)}
            for o in holders
        ]

    def _candidate_statuses(self, job: Job, decision: PreemptDecision) -> list[dict[str, Any]]:
        """Every job of the decision and every job holding nodes now, with what became of it
        as a candidate of ``job``'s preemption."""
        cluster = self.cluster
        ids = dict.fromkeys(decision.offered)
        for other in cluster.jobs_in(*_HOLDING):
            if other.job_id != job.job_id:
                ids.setdefault(other.job_id)
        taken, trimmed, offered = set(decision.taken), set(decision.trimmed), decision.offered
        rows = []
        for victim_id in ids:
            if victim_id in taken:
                row: dict[str, Any] = {"status": "taken"}
            elif victim_id in offered and victim_id not in trimmed:
                row = {"status": "not_needed_after_trim"}
            elif victim_id in offered:
                row = {"status": "not_chosen_by_search"}
            else:
                victim = cluster.jobs.get(victim_id)
                row = (
                    {"status": "gone"}
                    if victim is None
                    else self._why_not(job, victim, decision.time)
                )
            rows.append({"job_id": victim_id, **row})
        return rows

    def _why_not(self, job: Job, victim: Job, when: float) -> dict[str, Any]:
        """Why ``victim``, which select did not take, was not taken for ``job`` at ``when``:
        its status, with the exemption's end or the vetoing guards where they apply."""
        cluster, plugins = self.cluster, self.plugins
        names = self._victim_partitions(job.partition)
        part = cluster.mask_of(cluster.partition(job.partition).nodes)
        if not part & cluster.mask_of(victim.nodes):
            return {"status": "other_nodes"}
        exempt = cluster.preempt_exempt_time(victim)
        if exempt and victim.start_time is not None and victim.start_time + exempt > when:
            return {"status": "exempt", "until": victim.start_time + exempt}
        # PreemptMode OFF first: a policy's own answer may already count it (partition_prio
        # says not preemptable), and OFF is the more telling reason.
        if self._ladder:
            off = self._rung(victim) is None
        else:
            off = plugins.preempt_mode(victim, cluster).base is PreemptBase.OFF
        if off:
            return {"status": "mode_off"}
        if victim.partition not in names:  # (a partition the policy never preempts from)
            return {"status": "not_preemptable"}
        if not plugins.preempt_policy_preemptable(job, victim, cluster):
            return {"status": "not_preemptable"}
        vetoes = plugins.preempt_vetoes(job, victim, cluster)
        if vetoes:
            return {"status": "guard_veto", "guards": list(vetoes)}
        if victim.start_time is not None and victim.start_time > when:
            return {"status": "later"}
        return {"status": "not_needed"}
