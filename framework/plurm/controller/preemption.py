"""Preemption: whether any job may preempt, the candidates of a preemptor (walked, or read
from the victim pool, :mod:`.victims`; each with the first rung of its ladder that applies,
then filtered and ordered by the policy), backfill's preemption questions, the trim of
victims not needed after all, and the carrying out of select's victims (Slurm's back-off,
GraceTime, cancel, requeue or checkpoint; suspension without gang scheduling, and the
resumption of those jobs once their resources are free).

Part of :class:`~plurm.controller.controller.Controller` (see :mod:`.base`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence

import attrs

from plurm.conf.values import PreemptBase
from plurm.controller.base import _HOLDING, ControllerBase, _Ending
from plurm.controller.lifecycle import REQUEUE_DELAY
from plurm.controller.victim_search import choose_victims
from plurm.controller.victims import VictimPool
from plurm.model.bitmap import NodeBitmap
from plurm.model.job import Job, JobState, PreemptsByTier, never_preempts
from plurm.model.select import (
    METHOD_MODES,
    Candidate,
    Candidates,
    PreemptMethod,
    SelectMode,
    SelectResult,
    SelectStatus,
)

#: A victim's rung: what select simulates, and the method carried out (None: its mode).
_Rung = tuple[PreemptBase, PreemptMethod | None]

__all__ = ["PreemptionMixin"]

logger = logging.getLogger(__name__)


class PreemptionMixin(ControllerBase):
    """The controller's preemption."""

    # ----------------------------------------------------------------------------- helpers

    def _check_preemption(self) -> None:
        """Ask the preempt plugin what it says of itself (``cluster.preempt_traits``, which
        select plugins read) and whether any job may ever preempt another. If not, passes
        skip the candidate walk over every running job, unless an exemption time is set
        (the walk also arms a pass at each exemption's end), and order the queue without
        asking about each pair."""
        config = self.config
        exempt = config.preempt_exempt_time or any(q.preempt_exempt_time for q in config.qos)
        self.cluster.preempt_traits = self.plugins.preempt_traits(self.cluster)
        self._preemption = self.plugins.preempt_enabled(self.cluster)
        self._walk_candidates = self._preemption or bool(exempt)
        self._exemptions = bool(exempt)  # else no candidate needs its exemption looked up
        self._by_tier = self._preemption and self.plugins.preempt_by_tier(self.cluster)
        plugins = self.plugins
        self._ladder = plugins.implements("preempt_methods")
        self._filter = plugins.implements("preempt_candidates")
        self._trim = self._preemption and plugins.preempt_trim_victims(self.cluster)
        self._choose = self._preemption and plugins.implements("preempt_victim_cost")
        self._choose_stacked = self._choose and self.config.gang_scheduling
        self._releases = self.cluster.preempt_traits.suspend_releases
        self._reserve_parked = self._releases and self.cluster.preempt_traits.suspended_reserve
        self._parked = {
            job.job_id: job
            for job in self.cluster.jobs_unordered(JobState.SUSPENDED)
            if job.preempt_suspended
        }
        # Without exemptions every candidate walk may stop early (an exempt victim arms a
        # pass, which a walk must not skip); ladders and the policy's filter see every
        # candidate.
        self._keep_victims = (
            self._preemption
            and not self._exemptions
            and not self._ladder
            and not self._filter
            and self.plugins.preempt_victims_fixed(self.cluster)
        )
        #: The running and suspended jobs in victim order (see VictimPool), filed from now
        #: on so that no decision pays for filing them all.
        self._victims: VictimPool | None = self._victim_pool() if self._keep_victims else None
        #: _victim_partitions' answers, per preemptor partition.
        self._victim_parts: dict[str, tuple[str, ...]] = {}
        # The queue order may have changed with the partitions or the preempts relation.
        key = self.plugins.sched_queue_key(self._preempts(), self.cluster)
        pending = self.cluster.jobs_unordered(JobState.PENDING)
        self._pending.reset(key, pending, lambda job: not self._refused(job))
        self._unsettled = {job.job_id: job for job in pending} if key is not None else {}

    def _preempts(self) -> Callable[[Job, Job], bool]:
        """The "may preempt" relation sched_queue_order and sched_queue_key get."""
        if not self._preemption:
            return never_preempts
        preempts = self.plugins.preempt_check_for(self.cluster)
        return PreemptsByTier(preempts) if self._by_tier else preempts

    # ----------------------------------------------------------------------------- backfill

    def _preempt_test(self, job: Job, nodes: Sequence[str]) -> SelectResult:
        """Backfill's question: could ``job`` start now on ``nodes`` by preempting? A dry
        run with the job's candidates; nothing changes."""
        candidates = self._candidates(job)
        if not candidates:
            return SelectResult.busy()
        return self.plugins.select_job_test(
            job, nodes, SelectMode.RUN_NOW, candidates, self.cluster
        )

    def _may_preempt_in(self, partition: str) -> bool:
        """Backfill's question per partition: may any of its jobs have a preemption
        candidate, that is, may some partition hold their victims? (No means
        :meth:`_may_preempt` says no for each.)"""
        return bool(self._victim_partitions(partition))

    def _may_preempt(self, job: Job) -> bool:
        """Backfill's cheap question: has ``job`` any preemption candidate now?"""
        if not self._victim_parts.get(job.partition, True):
            # no partition may hold its victims (asked of every job it plans, each pass)
            return False
        return bool(self._candidates(job))

    # ----------------------------------------------------------------------------- candidates

    def _candidates(self, preemptor: Job) -> Sequence[Candidate]:
        """The jobs ``preemptor`` may preempt, most desirable victim first: read from the
        victim pool as select goes when the preempt plugin's answers are fixed, else
        walked and sorted in full."""
        cluster = self.cluster
        names = self._victim_partitions(preemptor.partition)
        if not names:
            return ()
        mask_of = cluster.mask_of  # bitmaps: a partition may hold thousands of nodes
        part_nodes = mask_of(cluster.partition(preemptor.partition).nodes)
        pool = self._victims
        if pool is not None:
            may_preempt = self.plugins.preempt_candidate_questions(cluster)[0]
            return Candidates(
                pool.candidates(preemptor, names, part_nodes, may_preempt),
                nodes_bound=lambda: pool.nodes_of(names),
            )
        exemptions = self._exemptions
        ladder = self._ladder
        candidates: list[Candidate] = []
        preemptable, mode_of, priority_of = self.plugins.preempt_candidate_questions(cluster)
        groups = cluster.jobs_by_partition(JobState.RUNNING, JobState.SUSPENDED)
        victims = [victim for name in names for victim in groups.get(name, ())]
        for victim in victims:
            # A victim in its GraceTime stays a candidate: the preemptor's retries end it.
            if not part_nodes & mask_of(victim.nodes):
                continue
            exempt = exemptions and cluster.preempt_exempt_time(victim)
            if exempt and victim.start_time is not None and victim.start_time + exempt > self.now:
                # Slurm notices the exemption's end on its next periodic pass.
                self._pass_after(victim.start_time + exempt)
                continue
            if not preemptable(preemptor, victim):
                continue
            if ladder:
                rung = self._rung(victim)
                if rung is None:
                    continue
                mode, method = rung
            else:
                mode, method = mode_of(victim).base, None
                if mode is PreemptBase.OFF:
                    continue
            candidates.append(Candidate(victim, mode, priority_of(victim), method))
        if self.config.preempt_parameters.youngest_first:
            candidates.sort(key=lambda c: (-(c.job.start_time or 0.0), c.job_id))
        else:
            candidates.sort(key=lambda c: (c.priority, c.job_id))
        if self._filter and candidates:
            return self.plugins.preempt_candidates(preemptor, candidates, cluster)
        return candidates

    def _rung(self, job: Job) -> _Rung | None:
        """The first method of ``job``'s ladder that applies to it (a running job may be
        suspended; a requeueable one checkpointed or requeued; any cancelled), or its
        ``preempt_mode`` when the policy gives it no ladder; None: no candidate."""
        ladder = self.plugins.preempt_methods(job, self.cluster)
        if ladder is None:
            mode = self.plugins.preempt_mode(job, self.cluster).base
            return None if mode is PreemptBase.OFF else (mode, None)
        for method in ladder:
            if method is PreemptMethod.SUSPEND:
                applies = job.state is JobState.RUNNING
            elif method is PreemptMethod.CANCEL:
                applies = True
            else:
                applies = job.requeue
            if applies:
                return METHOD_MODES[method], method
        return None

    def _victim_pool(self) -> VictimPool:
        """The victim pool, filed with every job now holding its nodes."""
        _, mode_of, priority_of = self.plugins.preempt_candidate_questions(self.cluster)
        youngest_first = self.config.preempt_parameters.youngest_first
        pool = VictimPool(mode_of, priority_of, self.cluster.mask_of, youngest_first=youngest_first)
        for job in self.cluster.jobs_in(*_HOLDING):
            pool.add(job)
        return pool

    def _victim_partitions(self, name: str) -> tuple[str, ...]:
        """The partitions whose jobs may be victims of a job of partition ``name``: those
        sharing a node with it (a job runs within its partition's nodes) and, under
        ``preempt_by_tier``, of a lower tier. Kept until a partition changes (which calls
        _check_preemption)."""
        known = self._victim_parts.get(name)
        if known is not None:
            return known
        partitions = self.cluster.partitions
        mask_of = self.cluster.mask_of
        part = partitions[name]
        part_nodes = mask_of(part.nodes)
        tier = part.priority_tier if self._by_tier else math.inf
        names = tuple(
            other.name
            for other in partitions.values()
            if other.priority_tier < tier and part_nodes & mask_of(other.nodes)
        )
        self._victim_parts[name] = names
        return names

    # ----------------------------------------------------------------------------- actions

    def _preempt(self, preemptor: Job, result: SelectResult) -> bool:
        """Carry out the victims of ``result``; True when the preemptor must wait for them.

        Slurm's back-off: a preemptor that signalled victims less than KillWait +
        MessageTimeout seconds ago signals no new ones; it waits for the first ones to go.
        """
        since = self._preempting.get(preemptor.job_id)
        backoff = self.config.kill_wait + self.config.message_timeout
        may_signal = since is None or self.now - since >= backoff
        waiting = False
        counts = {v: self.cluster.job(v).preemptions for v in result.victims}
        for victim_id in result.victims:
            victim = self.cluster.job(victim_id)
            method = None
            if self._ladder:
                rung = self._rung(victim)
                if rung is None:
                    continue  # (no method applies any more: it is left alone)
                mode, method = rung
            else:
                mode = self.plugins.preempt_mode(victim, self.cluster).base
            if mode is PreemptBase.SUSPEND and self._releases:
                if victim.state is JobState.RUNNING and victim_id not in self._ending:
                    self._park(victim)
                continue  # its resources are the preemptor's now
            if mode is PreemptBase.SUSPEND and self.config.gang_scheduling:
                victim.preempt_time = self.now  # gang suspends it under the preemptor's shadow
                victim.preemptions += 1
                continue
            waiting = True
            if not may_signal:
                continue
            ending = self._ending.get(victim.job_id)
            if ending is None:
                self._preempt_victim(victim, mode, checkpoint=method is PreemptMethod.CHECKPOINT)
            elif (
                not ending.killed and ending.grace_end is not None and ending.grace_end <= self.now
            ):
                # A retry ends the grace of every victim whose GraceTime has run out.
                self._kill(victim, ending)
        for victim_id, count in counts.items():
            victim = self.cluster.job(victim_id)
            if victim.preemptions != count:  # (preempted now, not a retry)
                victim.preempted_by = preemptor.job_id
        if waiting and may_signal:
            self._preempting[preemptor.job_id] = self.now
        if waiting and any(not e.killed for e in map(self._ending.get, result.victims) if e):
            # Slurm's periodic pass retries the preemptor; Plurm runs only the pass it needs.
            self._pass_after(self._preempting[preemptor.job_id] + backoff)
        return waiting

    def _preempt_victim(self, victim: Job, mode: PreemptBase, *, checkpoint: bool = False) -> None:
        """Cancel or requeue a victim, after its GraceTime if it has one.

        With grace, Slurm sends SIGCONT and SIGTERM to the job's steps (not its batch
        script) and lets the job run. The preemptor retries every KillWait + MessageTimeout
        seconds while it waits; the first retry that finds the grace over kills the victim
        (observed on 22.05: GraceTime 10 -> killed after 15 s, 23 and 30 -> 30 s, 40 -> 45 s).
        Slurm also cuts the job's end time to the grace's end, so the time-limit check kills
        it if no preemptor comes back.
        """
        ending = self._preempt_ending(victim, mode)
        ending.checkpoint = checkpoint and ending.requeue
        victim.preempt_time = self.now
        victim.preemptions += 1
        grace = self.plugins.preempt_grace_time(victim, self.cluster)
        if grace <= 0:
            self._kill(victim, ending)
            return
        ending.grace_end = self.now + grace
        self._ending[victim.job_id] = ending
        self.executor.signal(victim, "CONT", steps_only=True)
        self.executor.signal(victim, "TERM", steps_only=True)
        self._arm_limit(victim, grace_end=ending.grace_end)

    def _preempt_ending(self, job: Job, mode: PreemptBase) -> _Ending:
        """REQUEUE needs a requeueable job (--requeue or JobRequeue=1); else it cancels. A
        requeued victim waits the delay its policy gives (``preempt_requeue_delay``)."""
        if mode is PreemptBase.REQUEUE and job.requeue:
            delay = self.plugins.preempt_requeue_delay(job, self.cluster, REQUEUE_DELAY)
            return _Ending(JobState.PENDING, requeue=True, delay=delay)
        return _Ending(JobState.PREEMPTED)

    def _park(self, victim: Job) -> None:
        """Suspend a victim for a policy whose suspension releases its resources: select
        frees them as for an admin suspension (the job keeps its priority), and the job is
        resumed once they are free again (:meth:`_resume_parked`)."""
        victim.preempt_time = self.now
        victim.preemptions += 1
        victim.preempt_suspended = True
        self._suspend(victim, indefinite=True)
        self._parked[victim.job_id] = victim

    def _resume_parked(self) -> None:
        """Resume each job suspended by a releasing preemption whose resources select says
        are free again, earliest suspended first (each resumption takes resources the
        next one may have wanted)."""
        parked = self._parked
        for job in sorted(parked.values(), key=lambda j: (j.preempt_time or 0.0, j.job_id)):
            if (
                job.state is not JobState.SUSPENDED
                or not job.preempt_suspended
                or job.admin_suspended
                or job.job_id in self._ending
            ):
                del parked[job.job_id]  # ended, resumed or taken over by an admin since
                continue
            if self.plugins.select_job_resumable(job, self.cluster):
                del parked[job.job_id]
                job.preempt_suspended = False
                self._resume(job, indefinite=True)

    def _parked_reserved_for(self, job: Job) -> int:
        """The nodes (a bitmap) that jobs suspended by a releasing preemption keep from
        ``job`` while they wait to resume, when the policy says they keep a reservation
        (``preempt_suspended_reserve``): those of each such job that the policy does not
        queue ``job`` ahead of. 0 otherwise."""
        if not self._reserve_parked or not self._parked:
            return 0
        cluster = self.cluster
        ahead = self.plugins.preempt_job_preempt_check
        mask = 0
        for parked in self._parked.values():
            if (
                parked.state is JobState.SUSPENDED
                and parked.preempt_suspended
                and not ahead(job, parked, cluster)
            ):
                mask |= cluster.mask_of(parked.nodes)
        return mask

    def _trimmed(
        self, job: Job, nodes: NodeBitmap, result: SelectResult, candidates: Sequence[Candidate]
    ) -> SelectResult:
        """Select's answer without the victims the job does not need after all: each victim
        in turn, the last chosen first, is left out of a dry run with the others as the
        only candidates; if the job still fits on victims among them, it is dropped."""
        if len(result.victims) < 2:
            return result  # (one victim was needed: the job did not fit without any)
        chosen = set(result.victims)
        by_id = {c.job_id: c for c in candidates if c.job_id in chosen}
        for victim_id in reversed(result.victims):
            if victim_id not in result.victims:
                continue
            rest = [by_id[v] for v in result.victims if v != victim_id and v in by_id]
            trial = self.plugins.select_job_test(job, nodes, SelectMode.RUN_NOW, rest, self.cluster)
            if trial.status is SelectStatus.SUCCESS and set(trial.victims) <= {
                c.job_id for c in rest
            }:
                result = trial
        return result

    def _chosen(self, job: Job, nodes: NodeBitmap, result: SelectResult) -> SelectResult:
        """Select's answer for the cheapest set of victims the search finds under the
        objective of ``preempt_victim_cost`` (see :mod:`.victim_search`); select's own
        answer when no plugin gives costs. The candidates are read afresh (select may
        have handed on those it was given). A victim already being ended (a preemptor's
        retry during its GraceTime) costs nothing more, so a retry keeps its victims."""
        plugins, cluster = self.plugins, self.cluster
        candidates = self._candidates(job)
        if not candidates or plugins.preempt_victim_cost(job, candidates[0], cluster) is None:
            return result

        ending = self._ending

        def cost_of(candidate: Candidate) -> float:
            if candidate.job_id in ending:
                return 0.0  # (being ended already, in its GraceTime: its loss is counted)
            return plugins.preempt_victim_cost(job, candidate, cluster) or 0.0

        def dry_run(members: Sequence[Candidate]) -> SelectResult:
            return plugins.select_job_test(job, nodes, SelectMode.RUN_NOW, members, cluster)

        test: Callable[[Sequence[Candidate]], SelectResult] = dry_run
        original = result
        if not result.victims:
            # Placed on top of running jobs for gang scheduling to suspend: their victims
            # are the candidates on its nodes, and each set is tried on the idle nodes and
            # those only its members hold.
            stacked = self._stacked(job, nodes, result, candidates)
            if stacked is None:
                return result
            result, test = stacked
        choice = choose_victims(result, candidates, cost_of, test)
        if original is not result:
            # (gang scheduling suspends the jobs under it, as under Slurm's placement)
            if choice.cost >= choice.slurm_cost:
                return original
            return attrs.evolve(choice.result, victims=())
        if choice.result is not result:
            logger.debug(
                "victims job_id=%s slurm=%s chosen=%s cost=%s slurm_cost=%s exact=%s tests=%s",
                job.job_id,
                list(result.victims),
                list(choice.result.victims),
                choice.cost,
                choice.slurm_cost,
                choice.exact,
                choice.tests,
            )
        return choice.result

    def _stacked(
        self, job: Job, nodes: NodeBitmap, result: SelectResult, candidates: Sequence[Candidate]
    ) -> tuple[SelectResult, Callable[[Sequence[Candidate]], SelectResult]] | None:
        """For a job select placed on top of others (gang scheduling suspends them): its
        answer with the candidates on its nodes as victims, and a dry run of a set of
        candidates on the nodes where nothing else runs (None: it displaces no candidate)."""
        cluster, plugins = self.cluster, self.plugins
        holders: dict[str, list[int]] = {}
        for other in cluster.jobs_in(*_HOLDING):
            if other.job_id != job.job_id and nodes.mask & cluster.mask_of(other.nodes):
                for name in other.nodes:
                    holders.setdefault(name, []).append(other.job_id)
        placed = set(result.nodes)
        displaced = {i for name in placed for i in holders.get(name, ())}
        if not displaced:
            return None
        victims = tuple(c.job_id for c in candidates if c.job_id in displaced)
        if not victims or len(victims) != len(displaced):
            return None  # (it shares its nodes with jobs it may not preempt: gang's affair)
        idle = nodes.mask & ~cluster.mask_of(holders)
        index = cluster.node_index

        def test(members: Sequence[Candidate]) -> SelectResult:
            ids = {c.job_id for c in members}
            free = idle
            for candidate in members:
                for name in candidate.job.nodes:
                    if name in holders and all(i in ids for i in holders[name]):
                        free |= 1 << index[name]
            answer = plugins.select_job_test(
                job, cluster.bitmap(free & nodes.mask), SelectMode.RUN_NOW, (), cluster
            )
            on = set(answer.nodes)
            taken = tuple(c.job_id for c in members if on.intersection(c.job.nodes))
            return attrs.evolve(answer, victims=taken)

        return attrs.evolve(result, victims=victims), test
