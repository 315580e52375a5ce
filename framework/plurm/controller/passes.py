"""The scheduling passes: the main scheduler's pass (:meth:`~PassesMixin.schedule`, the hook
sequence in :mod:`plurm.controller.controller`'s docstring), the backfill pass, how they read
the queue, and how a job is tried: its usable nodes, Slurm's weight gate, the reasons of the
jobs a pass refuses or skips, and the ends backfill plans with.

Part of :class:`~plurm.controller.controller.Controller` (see :mod:`.base`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from typing import Any

from plurm.controller.base import (
    _BUSY_STATUS,
    _COMPLETING,
    _NEVER,
    _NODES_RESERVED,
    _PENDING,
    _PRIORITY,
    _RESOURCES,
    _RUN_NOW,
    _RUNNING,
    _SUCCESS,
    _SUSPENDED,
    _TEST_ONLY,
    ControllerBase,
)
from plurm.controller.explain import PreemptDecision
from plurm.controller.queue import ReadAsNeeded
from plurm.model.backfill import BackfillView
from plurm.model.bitmap import NodeBitmap
from plurm.model.job import Job, JobState, PendingReason
from plurm.model.select import SelectResult, SelectStatus

__all__ = ["PassesMixin"]

#: select's busy answer, shared (results are frozen): a weight gate with no pool answers it.
_BUSY = SelectResult.busy()


class PassesMixin(ControllerBase):
    """The controller's scheduling passes: :meth:`schedule` and :meth:`backfill`."""

    # ----------------------------------------------------------------------------- the pass

    def schedule(self, *, full: bool = True) -> None:
        """One scheduling pass over the eligible pending jobs (the hook sequence above).

        An event-triggered pass (``full`` False) tests at most ``default_queue_depth`` + 1
        jobs, as Slurm's does (every job it reaches counts, blocked partition or not); the
        jobs after them keep their reasons, and a periodic pass, which tests the whole
        queue, is armed for the next ``sched_interval`` tick.

        A whole-queue pass over the kept queue reads only the jobs of partitions not
        blocked yet: the jobs of a blocked partition after the job it waits for would all
        get Priority, which most of them have already (see :meth:`_settle_skipped`)."""
        self._tick()
        if self._limits is not None:
            self._limits.forget_usage()
        if self._waiting:
            self._review_waiting()
        if self._parked:
            self._resume_parked()  # before any job may take what they hold
        blocked: set[str] = set()
        # As in Slurm, once a job must wait, its partition's nodes are withheld from every
        # job after it in this pass, whatever their partition.
        withheld = 0  # node bitmap
        left = False
        depth = -1 if full else self.config.scheduler_parameters.default_queue_depth
        tested = 0
        queue, waiting = self._queue_and_partitions()
        skipping = depth < 0 and self._pending.kept
        # where each partition got blocked: the place in the queue of the job it waits for
        blocked_at: dict[str, tuple[Any, int]] = {}
        if skipping:
            queue = self._pending.ordered_except(blocked)
        for job in queue:
            if job.state is not _PENDING:
                continue
            if depth >= 0:
                if tested > depth:  # Slurm's "already tested N jobs, breaking out"
                    left = True
                    self._periodic_pass()
                    break
                tested += 1
            if job.request.nodelist and self._required_unavailable(job):
                left = True  # it waits for its nodes and holds up no other job
                continue
            if job.partition in blocked:
                job.reason = _PRIORITY  # behind the job its partition waits for
                left = True
                continue
            if self._limits is not None and self._over_limits(job):
                left = True  # it waits for its association and holds up no other job
                continue
            outcome = self._try_start(job, withheld | self._parked_reserved_for(job))
            if outcome is _SUCCESS and self._last_split is not None:
                self._start_more_tasks(withheld)
            if outcome is not _SUCCESS:
                blocked.add(job.partition)
                if skipping:
                    where = self._pending.where(job.job_id)
                    assert where is not None  # (read from the kept queue: filed)
                    blocked_at.setdefault(job.partition, where[0])
                if waiting <= blocked:
                    # every partition of the queue is blocked: no later job is tried (an
                    # event pass still counts the jobs it reaches up to its depth)
                    if self._wait_behind(queue, None if depth < 0 else depth + 1 - tested):
                        self._periodic_pass()
                    left = True  # (this job waits)
                    break
            if outcome is _BUSY_STATUS:  # not for a job that can never run here
                withheld |= self.cluster.mask_of(self.cluster.partition(job.partition).nodes)
            left = left or job.state is _PENDING
        if skipping:
            # (a blocked partition's head is pending: ``left`` holds whether jobs were skipped)
            self._settle_skipped(blocked_at)
        if left:
            self._arm_backfill()

    def _start_more_tasks(self, withheld: int) -> None:
        """After a pass started a task of an array: start the array's next tasks at once,
        as Slurm's scheduler does, while they may run. A task that must wait keeps the
        reason its trial gave it; the array's record is filed at the next read."""
        while self._last_split is not None:
            rest = self._next_task(self._last_split)
            self._last_split = None
            if rest is None or self._try_start(rest, withheld) is not _SUCCESS:
                return

    def _settle_skipped(self, blocked_at: Mapping[str, tuple[Any, int]]) -> None:
        """After a whole-queue pass that read only the jobs of partitions not blocked yet:
        give the jobs it skipped the reasons the loop would have.

        A skipped job is a filed job of a blocked partition after the job it waits for
        (``blocked_at``: its place). The loop would give it Priority, or ReqNodeNotAvail if
        it requires nodes out of service. Only the jobs filed or tried since a pass last
        gave them Priority (``_unsettled``) and those requiring nodes may show anything
        else, so only they are looked at."""
        where = self._pending.where

        def skipped(job_id: int) -> bool:
            filed = where(job_id)
            if filed is None:
                return False  # not in the queue now (not eligible yet): the loop did not see it
            place, partition = filed
            return partition in blocked_at and place > blocked_at[partition]

        unsettled = self._unsettled
        pinned = [(job_id, job) for job_id, job in self._pinned.items() if job_id not in unsettled]
        for job_id, job in [*unsettled.items(), *pinned]:
            if job.state is not JobState.PENDING:  # (it left the queue mid-pass)
                unsettled.pop(job_id, None)  # back in the queue later, it is filed anew
                continue
            if not skipped(job_id) or (job.request.nodelist and self._required_unavailable(job)):
                continue
            job.reason = _PRIORITY
            unsettled.pop(job_id, None)

    def _queue_and_partitions(self) -> tuple[Iterator[Job], Set[str]]:
        """The queue (:meth:`_queue`), and the partitions its jobs wait in."""
        queue = self._queue()
        if self._pending.kept:
            return iter(queue), self._pending.partitions()
        jobs = list(queue)
        return iter(jobs), {job.partition for job in jobs}

    def _wait_behind(self, rest: Iterable[Job], count: int | None) -> bool:
        """The rest of a pass once every partition is blocked: each pending job waits
        behind the job its partition is blocked by (Priority), or for its required nodes,
        as the pass's loop would give them, without its per-job tests. An event pass
        reaches only ``count`` more pending jobs (None: all of them); whether pending jobs
        are left beyond them."""
        priority = _PRIORITY
        pending = _PENDING
        for job in rest:
            if job.state is not pending:
                continue
            if count is not None:
                if count <= 0:
                    return True  # Slurm's "already tested N jobs, breaking out"
                count -= 1
            if not (job.request.nodelist and self._required_unavailable(job)):
                job.reason = priority
        return False

    # ----------------------------------------------------------------------------- backfill

    def backfill(self) -> None:
        """One backfill pass: the sched plugin picks the pending jobs that may start now
        without delaying those ahead; each starts if select still grants its nodes."""
        self._tick()
        if self._limits is not None:
            self._limits.forget_usage()
        if self._waiting:
            self._review_waiting()
        queue = self._queue()
        if self._limits is not None:  # a job its association's limits hold is not planned
            queue = (
                job for job in queue if job.state is not _PENDING or not self._over_limits(job)
            )
        if self._pending.kept and not self._pinned:
            # the kept queue gives pending jobs only, and none of them requires nodes
            jobs = ReadAsNeeded(queue)
        else:
            jobs = ReadAsNeeded(
                job
                for job in queue
                if job.state is _PENDING
                and not (job.request.nodelist and self._required_unavailable(job))
            )
        view = BackfillView(
            now=self.now,
            usable_nodes=self._usable_nodes,
            test_only=self.plugins.select_test_only_for(self.cluster),
            expected_end=self._expected_end,
            held_ends=self._held_ends,
            test_now=self._test_now,
            partly_free=self._partly_free,
            preempt_test=self._preempt_test if self._preemption else None,
            may_preempt=self._may_preempt if self._preemption else None,
            may_preempt_in=self._may_preempt_in if self._preemption else None,
        )
        starts = self.plugins.sched_backfill(jobs, view, self.cluster)
        self._note_required_unavailable()  # as if the plugin had read every job
        for start in starts:
            job = self.cluster.job(start.job_id)
            if job.state is not _PENDING or (self._limits is not None and self._over_limits(job)):
                continue
            if start.preempts:
                # As Slurm's backfill does, a job that starts by preempting goes through the
                # main scheduler's path: its victims are signalled, and it waits for them.
                # It keeps to the nodes the pass left it (``allowed``), if the plugin says:
                # every other node is withheld (the bitmap's complement, as an int).
                allowed = start.allowed
                self._try_start(job, 0 if allowed is None else ~self.cluster.mask_of(allowed))
                continue
            nodes = start.nodes if start.allowed is None else start.allowed
            result = self.plugins.select_job_test(job, nodes, _RUN_NOW, (), self.cluster)
            if result.status is _SUCCESS:
                self._start(job, result.nodes)
        self._last_split = None  # (an array's rest is tried at the next pass)

    def _test_now(self, job: Job, nodes: Sequence[str]) -> SelectResult:
        """Backfill's question for a start beside running jobs: could ``job`` start now on
        ``nodes`` as they are, and where (a dry run: select changes nothing). A BUSY answer
        is kept while nothing changes on those nodes, as the pass's (see busy.py)."""
        if not self._answers_by_nodes():
            return self.plugins.select_job_test(job, nodes, _RUN_NOW, (), self.cluster)
        mask = nodes.mask if type(nodes) is NodeBitmap else self.cluster.mask_of(nodes)
        key = (job.request, job.partition, mask, self.config)
        kept = self._busy_now.answer(job.job_id, key, mask)
        if kept is not None:
            return kept
        result = self.plugins.select_job_test(job, nodes, _RUN_NOW, (), self.cluster)
        if result.status is _BUSY_STATUS:
            pending = len(self.cluster.jobs_unordered(_PENDING))
            self._busy_now.keep(job.job_id, key, result, pending)
        else:
            self._busy_now.forget(job.job_id)
        return result

    def _partly_free(self) -> int:
        """The bitmap of the nodes holding jobs that still have CPUs free (select's count)."""
        kept = self.plugins.select_partly_free(self.cluster)
        if kept is not None:
            return kept
        config = self.cluster.config
        known = self._node_cpus
        if known is None or known[0] is not config:
            known = self._node_cpus = (
                config,
                {name: config.node(name).cpus for name in config.node_names},
            )
        full = known[1]
        alloc = self.plugins.select_node_alloc(self.cluster)
        return self.cluster.mask_of([name for name, cpus in alloc.items() if 0 < cpus < full[name]])

    def _note_required_unavailable(self) -> None:
        """Give every queued job whose required nodes (-w) are out of service its
        ReqNodeNotAvail reason, as a backfill pass that reads the whole queue would (the
        plugin reads only as far as it needs). Only jobs with required nodes are looked at."""
        now, ending = self.now, self._ending
        for job_id, job in self._pinned.items():
            if job.eligible_time <= now and job_id not in ending and not self._refused(job):
                self._required_unavailable(job)

    # ----------------------------------------------------------------------------- the queue

    def _queue(self) -> Iterable[Job]:
        """The eligible pending jobs that their partition does not refuse, in the sched
        plugin's order: read from the kept queue when the plugin gave a sort key (which
        asks about refusal as it files a job: the answer holds until the job or the
        partitions change), else ordered by the plugin now. A refused job shows its reason
        (PartitionConfig, ...) from the first pass after it became eligible on, as it does
        in Slurm from its submission."""
        now = self.now
        ending = self._ending
        if self._pending.kept:
            # (a job being ended holds its nodes, so is never pending: none is in the queue)
            return self._pending.ordered(now)
        pending = [
            job
            for job in self.cluster.jobs_in(JobState.PENDING)
            if job.eligible_time <= now and job.job_id not in ending and not self._refused(job)
        ]
        for job in pending:
            if job.reason is PendingReason.BEGIN_TIME:
                job.reason = PendingReason.NONE
        return self.plugins.sched_queue_order(pending, self._preempts(), self.cluster)

    def _refused(self, job: Job) -> bool:
        """Whether the job's partition refuses it for now, or it waits outside the queue
        (held, on dependencies, at its array's throttle); if so, its reason says why.

        The answer depends only on the partition and the request, so it is kept per job
        until either is replaced (a partition update makes a new partition object)."""
        if self._waiting and job.job_id in self._waiting:
            return True  # held, waiting on dependencies or its array's throttle (.dependencies)
        part = self.cluster.partitions[job.partition]
        known = self._refusals.get(job.job_id)
        if known is not None and known[0] is part and known[1] is job.request:
            reason = known[2]
        else:
            reason = None
            if part.state != "UP":
                reason = PendingReason.PARTITION_DOWN
            elif self._beyond_node_limits(job.request, job.partition):
                reason = PendingReason.PARTITION_CONFIG
            elif self._beyond_time_limit(job.request, job.partition):
                reason = PendingReason.PARTITION_TIME_LIMIT
            self._refusals[job.job_id] = (part, job.request, reason)
        if reason is None:
            return False
        job.reason = reason
        return True

    def _over_limits(self, job: Job) -> bool:
        """Whether its association's limits hold the job now (:mod:`.limits`); if so, its
        reason says which."""
        assert self._limits is not None
        if not self._limits.hold(job, self.cluster):
            return False
        if self._pending.kept:
            self._unsettled[job.job_id] = job  # (as :meth:`_try_start` notes the jobs it tries)
        return True

    def _required_unavailable(self, job: Job) -> bool:
        """Whether nodes the job requires (-w) are down, drained or not responding; if so,
        its reason is ReqNodeNotAvail with those nodes, as Slurm 22.05 shows it
        (tests/data/oracle/cli/trials/reqnode.out, ping.out). Such a job does not block
        the jobs after it: they get their own reasons."""
        required = job.request.nodelist
        if not required or not self.cluster.mask_of(required) & self.cluster.out_of_service:
            return False
        available = self.cluster.node_available
        missing = tuple(name for name in required if not available(name))
        job.reason = PendingReason.REQ_NODE_NOT_AVAIL
        job.unavailable_nodes = self.cluster.in_table_order(missing)
        return True

    # ----------------------------------------------------------------------------- ends

    def _expected_end(self, job: Job) -> float | None:
        """When a running job reaches its time limit (run time only counts)."""
        limit = job.time_limit
        if limit is None:
            return None
        now = self.cluster.now  # the pass set it (_tick)
        if job.state is _RUNNING and job.start_time is not None:
            # Job.run_time's sum for a running job, inlined: backfill asks it of every
            # running job each pass (and max(0.0, x) written out, as a builtin call costs)
            resumed = job.suspend_time if job.suspend_time is not None else job.start_time
            since = now - resumed
            ran = job.pre_suspend_time + (since if since > 0.0 else 0.0)
        else:
            ran = job.run_time(now)
        left = limit * 60 - ran
        return now + (left if left > 0.0 else 0.0)

    @staticmethod
    def _limit_end(job: Job) -> float | None:
        """When a job that runs from now on reaches its time limit: :meth:`_expected_end`
        while that is later than now, worked out without the clock."""
        limit = job.time_limit
        if limit is None:
            return None
        resumed = job.suspend_time if job.suspend_time is not None else job.start_time
        assert resumed is not None  # (a running job has started)
        return resumed + (limit * 60 - job.pre_suspend_time)

    def _held_ends(self) -> Iterator[tuple[Job, float | None, int]]:
        """Backfill's question: every job holding nodes with its :meth:`_expected_end`
        (except that a running job's end may come before now, standing for now) and the
        bitmap of the nodes it holds. Running jobs' come from ``_running_ends`` as they are
        (chained, not yielded one by one); those of the few suspended and completing jobs,
        whose ends move with the clock and whose nodes go as they complete, are worked
        out."""
        return itertools.chain(self._running_ends.values(), self._moving_ends())

    def _moving_ends(self) -> Iterator[tuple[Job, float | None, int]]:
        expected_end, mask_of = self._expected_end, self.cluster.mask_of
        for state in (_SUSPENDED, _COMPLETING):
            for job in self.cluster.jobs_unordered(state):
                yield job, expected_end(job), mask_of(job.held_nodes)

    # ----------------------------------------------------------------------------- one job

    def _usable_nodes(self, job: Job) -> NodeBitmap:
        """The nodes of the job's partition that are up and not excluded, as a bitmap (which
        reads as their names in node-table order). Every pass asks for every job, so the
        answer is kept until the partition or the nodes out of service change."""
        cluster = self.cluster
        part = cluster.partition(job.partition)
        key = (job.partition, job.request.exclude)
        known = self._usable.get(key)
        out = cluster.out_of_service
        if known is not None and known[0] is part and known[1] == out:
            return known[2]
        mask = cluster.mask_of(part.nodes) & ~cluster.mask_of(job.request.exclude) & ~out
        usable = cluster.bitmap(mask)
        self._usable[key] = (part, out, usable)
        return usable

    def _try_start(self, job: Job, withheld: int = 0) -> SelectStatus:
        """Test, preempt or start one job on its usable nodes outside ``withheld`` (a bitmap,
        or the complement of the nodes allowed: a negative int reads the same way): SUCCESS
        when it started, BUSY when it must wait for resources (or victims), NEVER
        when no partition of it could ever run it as things are.

        A job submitted to several partitions is tried in each, highest PriorityTier first
        (then in the order given), and runs in the first that takes it.
        """
        if self._pending.kept:
            self._unsettled[job.job_id] = job  # its reason is set here, or it starts
        kept = self._busy_key(job, withheld)
        if kept is not None:
            key, nodes = kept
            if self._busy.answer(job.job_id, key, nodes) is not None:
                job.reason = _RESOURCES  # (what _try_partitions gives a BUSY job)
                return _BUSY_STATUS
        outcome = self._try_partitions(job, withheld)
        if kept is not None:
            if outcome is _BUSY_STATUS:
                pending = len(self.cluster.jobs_unordered(_PENDING))
                self._busy.keep(job.job_id, kept[0], outcome, pending)
            else:
                self._busy.forget(job.job_id)
        return outcome

    def _answers_by_nodes(self) -> bool:
        """Whether select answers tests without candidates from the job and its nodes
        alone (``select_answers_by_nodes``), asked once per configuration: then BUSY
        answers are kept while nothing changes on their nodes (see busy.py)."""
        config = self.config
        known = self._busy_kept
        if known is None or known[0] is not config:
            known = self._busy_kept = (config, self.plugins.select_answers_by_nodes(self.cluster))
        return known[1]

    def _busy_key(self, job: Job, withheld: int) -> tuple[tuple[object, ...], int] | None:
        """What a BUSY answer of :meth:`_try_partitions` for ``job`` is kept under (its
        request, usable nodes, the nodes withheld from them and the configuration; a
        partition update is a change on every node), with its usable nodes: None when it
        may not be kept. It may be when select answers from the nodes alone, the job tries
        one partition, and no partition may hold its victims (a candidate's preemptability
        may change with the clock)."""
        if not self._answers_by_nodes():
            return None
        request = job.request
        if request.partitions and request.partitions != (job.partition,):
            return None
        if self._walk_candidates and self._victim_partitions(job.partition):
            return None
        usable = self._usable_nodes(job)
        nodes = usable.mask
        return (request, usable, withheld & nodes, self.config), nodes

    def _try_partitions(self, job: Job, withheld: int) -> SelectStatus:
        """:meth:`_try_start`'s test, preemption or start, in each partition in turn."""
        reason = _RESOURCES
        outcome = _NEVER
        was = job.partition
        for partition in self._partitions_to_try(job):
            job.partition = partition
            usable = self._usable_nodes(job)
            if len(usable) < job.request.min_nodes:
                # Too few of its partition's nodes are in service for its node count: Slurm
                # 22.05 says so with this text, not Resources (trials/ping.out, -N 4).
                reason = _NODES_RESERVED
                continue
            if withheld & usable.mask:
                usable = self.cluster.bitmap(usable.mask & ~withheld)
                test = self.plugins.select_job_test(job, usable, _TEST_ONLY, (), self.cluster)
                if test.status is not _SUCCESS:
                    reason = _NODES_RESERVED
                    continue
            result = self._test_by_weight(job, usable)
            if result.status is _SUCCESS and self._choose_stacked and result.nodes:
                # (placed on top of others, gang scheduling would suspend them)
                result = self._chosen(job, usable, result)
            elif result.status is not _SUCCESS and self._walk_candidates:
                candidates = self._candidates(job)
                if candidates:
                    job.preempt_attempts += 1
                    result = self.plugins.select_job_test(
                        job, usable, _RUN_NOW, candidates, self.cluster
                    )
                    offered = trimmed = result.victims
                    if self._trim and result.victims:
                        result = self._trimmed(job, usable, result, candidates)
                        trimmed = result.victims
                    if self._choose and result.victims:
                        result = self._chosen(job, usable, result)
                    if result.victims:
                        decision = PreemptDecision(
                            job.job_id, self.now, offered, trimmed, result.victims
                        )
                        self._record_decision(decision)
            if result.status is not _SUCCESS:
                if result.status is _BUSY_STATUS:
                    outcome = _BUSY_STATUS
                continue
            if self._preempt(job, result):
                job.reason = _RESOURCES
                if job.partition != was:
                    self._file(job)  # it waits in this partition now
                return _BUSY_STATUS
            self._start(job, result.nodes)
            return _SUCCESS
        job.partition = self._partitions_to_try(job)[0]
        if job.partition != was:
            self._file(job)  # its key may depend on its partition
        job.reason = reason
        return outcome

    def _partitions_to_try(self, job: Job) -> list[str]:
        names = job.request.partitions or (job.partition,)
        if len(names) == 1:
            return [names[0]]  # what the sort below gives one name, up or not
        order = {name: index for index, name in enumerate(names)}
        return sorted(
            (name for name in names if self.cluster.partition(name).state == "UP"),
            key=lambda name: (-self.cluster.partition(name).priority_tier, order[name]),
        ) or [job.partition]

    def _test_by_weight(self, job: Job, usable: NodeBitmap) -> SelectResult:
        """Slurm's weight gate: add whole weight tiers, lightest first; select places the
        job anywhere in the pool so far (node-table order), not by weight."""
        result = _BUSY
        for pool in self._weight_pools(usable):
            result = self.plugins.select_job_test(job, pool, _RUN_NOW, (), self.cluster)
            if result.status is _SUCCESS:
                return result
        return result

    def _weight_pools(self, usable: NodeBitmap) -> tuple[NodeBitmap, ...]:
        """The weight gate's growing pools of ``usable``: the lightest tier, then it and the
        next one, ... (node weights never change, so the pools of a node set are kept)."""
        pools = self._pools.get(usable.mask)
        if pools is None:
            tiers: dict[int, int] = {}
            index = self.cluster.node_index
            for name in usable:
                weight = self.cluster.node(name).weight
                tiers[weight] = tiers.get(weight, 0) | 1 << index[name]
            if len(tiers) == 1:
                pools = (usable,)
            else:
                grown = 0
                found = []
                for weight in sorted(tiers):
                    grown |= tiers[weight]
                    found.append(self.cluster.bitmap(grown))
                pools = tuple(found)
            self._pools[usable.mask] = pools
        return pools
