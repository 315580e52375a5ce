"""sched/backfill: Slurm's default scheduler. The main scheduler's queue order, plus a
periodic pass that starts lower-priority jobs early when that delays no job ahead of them.

Each pass walks the pending jobs in queue order, at most ``bf_max_job_test`` of them. For
each it looks for the earliest time, within ``bf_window`` minutes, at which enough of its
nodes are free: free of running jobs (which end at their time limit, rounded up to
``bf_resolution`` seconds) and of the reservations made earlier in the pass. A job that fits
now starts; one that fits later reserves its nodes from that time until its time limit, so no
job after it may use them then. A job without a time limit reserves its nodes for ever.
This is conservative backfill over the window, as Slurm's plugin does; like Slurm, nodes are
the unit of the plan (a node running anything counts as busy until that job's end).

A job with no opening now on free nodes may still start now beside running jobs, when the
view has ``test_now`` and ``partly_free`` (select/cons_res, cons_tres: nodes holding jobs
with CPUs free): select tests it on the nodes, free or so held, that no earlier job of the
pass reserved within its run (one reserved from the very end of its run counts: Slurm
rounds a reservation's start down where this plan rounds ends up), with their current use,
as Slurm's backfill tests each job; a start so made is tried before preemption. The core
places the job among those nodes as they are when it starts, after the starts before it.
Under select/linear, and on one-CPU nodes, no node is partly free: nothing changes there.

``bf_job_part_count_reserve=N`` limits the reservations to the first N jobs of each partition
that cannot start now (Slurm's option: the jobs after them start only if they delay none of
those N). With N=1 on one partition this is EASY backfilling: only the queue's first blocked
job is protected.

With preemption enabled (the view has ``preempt_test``), a job that cannot start now on free
nodes may start by preempting, on nodes no earlier job of the pass reserved for its run, as
Slurm's backfill does through WILL_RUN with the preemptable jobs; its nodes are then reserved
whole, Slurm's documented limit. Known gap: reservations are planned on free nodes only, so a
job that could start later by preempting reserves nothing for that start.

Only starts now come out of a pass, so it plans only as far as the last job that could
start now (or, with preemption, has any preemption candidate): the jobs after it would only
reserve. When no job could, the pass builds no plan at all. That last job comes down as the
pass goes: a start takes nodes free now, and a reservation takes them from its start on,
so a job whose free nodes are too few once the reservations starting within its run are
taken out can no longer start now. Jobs whose node sets share no
node, directly or through other jobs', never touch each other's plans, so that limit is
taken per connected component of the node sets: a site's partitions that share no node plan
apart, and one busy partition far down the queue no longer makes every partition plan its
jobs down to it.

The plan is a profile: a list of segments, each a start time and the set of nodes free from
then until the next segment, with node sets as integer bitmasks (bit i is the i-th node of
the node table) so that intersections and counts cost next to nothing.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Sequence

import attrs

from plurm._markers import hookimpl
from plurm.builtin.backfill_profile import Profile
from plurm.builtin.sched_builtin import BuiltinScheduler
from plurm.conf.model import SlurmConfig
from plurm.model.backfill import BackfillStart, BackfillView
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState
from plurm.model.select import SelectStatus
from plurm.registry import PluginContext

__all__ = ["BackfillScheduler"]


def _covered(sizes: list[tuple[int, float]] | None, least: int, duration: float) -> bool:
    """Whether ``sizes`` (node counts and durations that found no opening) hold one of at
    most ``least`` nodes for at most ``duration``: a size that large finds none either."""
    if sizes:
        for n, d in sizes:  # (a loop: a generator in any() costs more on short lists)
            if n <= least and d <= duration:
                return True
    return False


def _noted(
    sizes: list[tuple[int, float]] | None, least: int, duration: float
) -> list[tuple[int, float]]:
    """``sizes`` with (``least``, ``duration``) added, less the sizes it covers (so that the
    list stays short)."""
    kept = [(n, d) for n, d in sizes or () if n < least or d < duration]
    return [*kept, (least, duration)]


def _covered_on(
    sizes: list[tuple[int, int, int]] | None, nodes: int, least: int, cpus: int
) -> bool:
    """Whether ``sizes`` (node sets, node counts and CPU counts that found no room) hold one
    on at least ``nodes`` for at most ``least`` nodes and ``cpus`` CPUs: a request that large
    on those nodes finds none either."""
    if sizes:
        for on, n, c in sizes:
            if n <= least and c <= cpus and not nodes & ~on:
                return True
    return False


def _noted_on(
    sizes: list[tuple[int, int, int]] | None, nodes: int, least: int, cpus: int
) -> list[tuple[int, int, int]]:
    """``sizes`` with (``nodes``, ``least``, ``cpus``) added, less the sizes it covers (so
    that the list stays short)."""
    kept = [(on, n, c) for on, n, c in sizes or () if n < least or c < cpus or on & ~nodes]
    return [*kept, (nodes, least, cpus)]


#: The request fields :func:`_plain` reads, those that size the job (its node and CPU counts),
#: and those that do not bear on where it fits (its partition and excluded nodes are in
#: the memo's key). A test holds every field of JobRequest to be in one of them, so that a
#: field added later is classed before the memo can skip a job it matters to.
_PLAIN_TERMS = frozenset(
    {
        "mem_per_cpu",
        "mem_per_node",
        "gres",
        "gres_request",
        "nodelist",
        "exclusive",
        "contiguous",
        "oversubscribe",
        "ntasks_per_node",
        "max_nodes",
    }
)
_SIZE_TERMS = frozenset({"min_nodes", "ntasks", "cpus_per_task"})
_NOT_PLACEMENT = frozenset(
    {
        "name", "user", "uid", "group", "gid", "partitions", "qos", "account", "time_limit",
        "begin_time", "requeue", "exclude", "sim_runtime", "sim_wall_clock", "ignore_sigterm",
        "runs_steps", "nice", "sim_exit_code", "sim_mem_per_cpu", "command", "wrapped",
        "work_dir", "stdout", "stderr", "open_mode", "script", "script_args", "environment",
        "submit_host", "comment", "wckey", "warn_signal", "warn_time", "warn_batch_only",
        "array_tasks", "array_throttle", "dependency", "hold",
    }
)  # fmt: skip


def _plain(request: JobRequest) -> bool:
    """Whether a request asks only for nodes and CPUs (no memory, GRES, node list, task
    layout or sharing terms): whether it fits on nodes as they are then only gets harder as
    its node and CPU counts grow, for the same CPUs per task."""
    return not (
        request.mem_per_cpu
        or request.mem_per_node
        or request.gres
        or request.gres_request is not None
        or request.nodelist
        or request.exclusive
        or request.contiguous
        or request.oversubscribe
        or request.ntasks_per_node is not None
        or request.max_nodes is not None
    )


def _components(masks: Iterable[int]) -> list[int]:
    """The node sets of the connected components of ``masks`` (two masks are connected when
    they share a node): jobs of different components never compete for a node."""
    groups: list[int] = []
    for mask in dict.fromkeys(masks):
        if not mask:
            continue  # no node: in no component
        merged = mask
        apart = []
        for group in groups:
            if group & merged:
                merged |= group
            else:
                apart.append(group)
        groups = [*apart, merged]
    # a merge may have joined groups checked before it: merge until nothing is shared
    joined = True
    while joined:
        joined = False
        for index, group in enumerate(groups):
            for other in range(index + 1, len(groups)):
                if group & groups[other]:
                    groups[index] |= groups.pop(other)
                    joined = True
                    break
            if joined:
                break
    return groups


#: What a job's plan is worked out of (its request, time limit and partition), then the key
#: of its usable nodes (partition, excluded nodes), and its least node count and duration.
_Size = tuple[JobRequest, int | None, str, tuple[str, tuple[str, ...]], int, float]

#: How many more jobs than a pass read the memos by job id may hold before they are pruned.
_MEMO_SLACK = 256

# Enum members read once: on Python 3.11 a member read through its enum class goes through
# the class's __getattr__ hook, pass after pass.
#: The states of the jobs that hold nodes.
_HELD_STATES = (JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING)
_SUCCESS = SelectStatus.SUCCESS


@attrs.define
class _Kept:
    """What one pass leaves the next, under one configuration: each holds only while what
    it was worked out from is the same object."""

    config: SlurmConfig
    #: The most CPUs of any node (node sizes never change at run time).
    widest: int
    #: bf_resolution and bf_max_job_test as a pass uses them (at least 1 s, at least 0 jobs).
    resolution: int
    max_job_test: int
    #: The sizes of the jobs recent passes read, by job id.
    sizes: dict[int, _Size] = attrs.Factory(dict)
    #: One key object per usable-nodes key, so that a pass can tell two jobs' keys the same
    #: by identity (hashing a tuple costs more).
    usable_keys: dict[tuple[str, tuple[str, ...]], tuple[str, tuple[str, ...]]] = attrs.Factory(
        dict
    )
    #: The last pass's partitions with their jobs' node sets, and the components and each
    #: partition's component worked out of them: the next pass mostly has the same.
    components: tuple[tuple[tuple[str, int], ...], list[int], dict[str, int]] | None = None


class BackfillScheduler(BuiltinScheduler):
    """The builtin queue order with conservative backfill over a window."""

    def __init__(self, context: PluginContext) -> None:
        super().__init__(context)
        self._kept: _Kept | None = None

    def _kept_for(self, cluster: Cluster) -> _Kept:
        """What the last pass kept, if it ran under the same configuration (the same node
        table and node sizes), else a fresh start."""
        kept = self._kept
        if kept is None or kept.config is not cluster.config:
            names = cluster.config.node_names
            widest = max((cluster.node(name).cpus for name in names), default=1)
            params = cluster.config.scheduler_parameters
            kept = self._kept = _Kept(
                cluster.config, widest, max(1, params.bf_resolution), max(0, params.bf_max_job_test)
            )
        return kept

    @hookimpl
    def sched_backfill_interval(self, cluster: Cluster) -> int:
        return max(1, cluster.config.scheduler_parameters.bf_interval)

    @hookimpl
    def sched_backfill(
        self, jobs: Sequence[Job], view: BackfillView, cluster: Cluster
    ) -> list[BackfillStart]:
        params = cluster.config.scheduler_parameters
        now = view.now
        horizon = now + params.bf_window * 60
        memo = self._kept_for(cluster)
        resolution = memo.resolution
        names = cluster.config.node_names

        if horizon <= now:
            return []  # an empty window: nothing is planned, nothing starts

        # Each node is busy until the latest end of the jobs on it, kept at bf_resolution
        # (see Profile.of_held).
        mask_of, ceil, inf = cluster.mask_of, math.ceil, math.inf
        held_ends: Iterable[tuple[Job, float | None, int]]
        if view.held_ends is not None:
            held_ends = view.held_ends()  # (the core keeps running jobs' ends and bitmaps)
        else:
            expected_end = view.expected_end
            held_ends = (
                (job, expected_end(job), mask_of(job.held_nodes))
                for state in _HELD_STATES
                for job in cluster.jobs_unordered(state)
            )
        profile, claimed = Profile.of_held(now, resolution, held_ends, len(names))
        free_now = profile.free_now()  # a job can start now only on these
        # The nodes holding jobs with CPUs still free, where a job may start beside them
        # (select/cons_res, cons_tres; never under select/linear, whose nodes are whole,
        # nor on one-CPU nodes, which a job holds whole), those of jobs without an end too.
        test_now = view.test_now
        partly = 0
        if test_now is not None and view.partly_free is not None and claimed and memo.widest > 1:
            partly = view.partly_free()
        if not free_now and not partly and view.preempt_test is None:
            # No node is free now, none has room beside its jobs and no job may preempt:
            # nothing can start now (a pending job needs at least one node: submission
            # refuses a node count of 0), and only starts now come out of a pass, so the
            # queue need not even be read. The plan's own cut (lasts, limit below) would say
            # the same after reading it.
            return []
        starts: list[BackfillStart] = []
        widest, sizes, usable_keys = memo.widest, memo.sizes, memo.usable_keys
        usable_masks: dict[tuple[str, tuple[str, ...]], int] = {}
        # the last job's usable-nodes key, its usable nodes and how many of them are free now
        last_key: object = None
        usable = free_usable = 0
        free_counts: dict[tuple[str, tuple[str, ...]], int] = {}
        # each partition's last job with enough of its nodes free now (see lasts below)
        fits: dict[str, int] = {}
        spans: dict[str, int] = {}
        plans: list[tuple[Job, int, int, float]] = []
        parts: list[str] = []  # each planned job's partition
        # With preemption, the partitions whose jobs cannot preempt at all (the core answers
        # per partition): their jobs are not asked one by one. The positions of the others'
        # jobs, and whether the last key read is one of theirs (never without preemption:
        # nothing reads the positions then):
        preempting_on = view.preempt_test is not None
        may_preempt_in = view.may_preempt_in if preempting_on else None
        barred: set[str] = set()
        open_positions: list[int] = []
        key_open = False
        for job in jobs[: memo.max_job_test]:
            size = sizes.get(job.job_id)
            if (
                size is None
                or size[0] is not job.request
                or size[1] != job.time_limit
                or size[2] != job.partition
            ):
                request, minutes = job.request, job.time_limit
                key = (job.partition, request.exclude)  # what usable_nodes depends on
                # at least its node count, and as many nodes as its CPUs fill on the widest
                # node, for its time limit
                size = sizes[job.job_id] = (
                    request,
                    minutes,
                    job.partition,
                    usable_keys.setdefault(key, key) if len(usable_keys) < _MEMO_SLACK else key,
                    max(request.min_nodes, ceil(request.cpus / widest)),
                    inf if minutes is None else minutes * 60,
                )
            _, _, partition, key, least, duration = size
            if key is not last_key:
                usable = usable_masks.get(key, -1)
                if usable < 0:
                    usable = usable_masks[key] = mask_of(view.usable_nodes(job))
                    free_counts[key] = (free_now & usable).bit_count()
                    if may_preempt_in is not None and not may_preempt_in(partition):
                        barred.add(partition)
                free_usable = free_counts[key]
                key_open = preempting_on and partition not in barred
                last_key = key
            if free_usable >= least or (partly and usable & partly):
                fits[partition] = len(plans)
            if key_open:
                open_positions.append(len(plans))
            parts.append(partition)
            plans.append((job, usable, least, duration))
        if len(sizes) > len(plans) + _MEMO_SLACK:  # only the jobs this pass read
            memo.sizes = {job.job_id: sizes[job.job_id] for job, _, _, _ in plans}
        for (partition, _), usable in usable_masks.items():  # (in the order jobs came)
            spans[partition] = spans.get(partition, 0) | usable
        # Only starts now come out of the pass. A job can start now only if enough of its
        # nodes are free now, and reservations only ever take nodes away; so the jobs after
        # the last one that could start now with the nodes free so far need no planning:
        # they would only reserve, and reservations die with the pass. A reservation
        # touches only jobs whose nodes it shares, directly or through other jobs': that
        # holds within each connected component of the jobs' node sets (partitions that
        # share no node plan apart), so each component has its own last job to plan. The
        # jobs of one partition also share bf_job_part_count_reserve's count, so each
        # partition counts as the union of its jobs' node sets (-x may split them).
        members: list[Sequence[int]]
        if len(spans) == 1:  # one partition: one group (or none, with no usable node)
            groups = [*spans.values(), 0] if any(spans.values()) else [0]
            group_of = [0] * len(plans)
            members = [range(len(plans)), ()][: len(groups)]
            # (its last job with enough of its nodes free now: the loop above noted it)
            lasts = [max(fits.values(), default=-1), -1][: len(groups)]
        else:
            shape = tuple(spans.items())
            known = memo.components
            if known is not None and known[0] == shape:
                groups = [*known[1]]
                group_of_partition = known[2]
            else:
                groups = _components(spans.values())
                group_of_partition = {
                    name: next((i for i, group in enumerate(groups) if group & span), len(groups))
                    for name, span in spans.items()
                }
                memo.components = (shape, [*groups], group_of_partition)
            groups.append(0)  # partitions without a usable node: they plan nothing, alone
            group_of = list(map(group_of_partition.__getitem__, parts))
            grouped: list[list[int]] = [[] for _ in groups]
            for position, group in enumerate(group_of):
                grouped[group].append(position)
            members = [*grouped]
            # each group's last job with enough of its nodes free now (the loop above noted
            # each partition's)
            lasts = [-1] * len(groups)
            for name, position in fits.items():
                if position > lasts[group_of_partition[name]]:
                    lasts[group_of_partition[name]] = position
        # With preemption, a job may also start by preempting; the jobs after the last one
        # that has any candidate at all, and after the last that could start on free nodes,
        # would only reserve too.
        may_preempt = view.may_preempt
        # may_preempt's answers for this pass: nothing starts or ends within it, so a job's
        # answer holds for the whole pass.
        preemptors: dict[int, bool] = {}

        def has_candidates(job: Job) -> bool:
            known = preemptors.get(job.job_id)
            if known is None:
                known = preemptors[job.job_id] = job.partition not in barred and (
                    may_preempt is None or may_preempt(job)
                )
            return known

        last_preemptors = [-1] * len(groups)  # (read only with preemption)
        if open_positions:  # (only with preemption)
            # each group's last job that has a candidate, read from the end among the jobs
            # of partitions not barred, until every group with such jobs has its answer
            unanswered = len({group_of[position] for position in open_positions})
            for position in reversed(open_positions):
                group = group_of[position]
                if last_preemptors[group] >= 0:
                    continue
                job = plans[position][0]
                answer = preemptors.get(job.job_id)  # (has_candidates, inlined)
                if answer is None:
                    answer = preemptors[job.job_id] = may_preempt is None or may_preempt(job)
                if answer:
                    last_preemptors[group] = position
                    unanswered -= 1
                    if not unanswered:
                        break
        # beyond the last job to plan in any component, nothing is left to plan
        limit = max(lasts)  # (groups has at least one member: lasts is never empty)
        if view.preempt_test is not None:
            limit = max(limit, *last_preemptors)
        if limit < 0:
            return starts  # no job could start now: the plan would only hold reservations
        openings, test_only, bitmap = profile.openings, view.test_only, cluster.bitmap
        success = _SUCCESS
        # (least, duration) pairs that found no opening at all among the usable nodes: a job
        # needing at least as many nodes for at least as long finds none either, now or
        # after later reservations (they only take nodes away), and is passed over.
        hopeless: dict[int, list[tuple[int, float]]] = {}
        # The same for the searches that looked at openings now only: a job that may only
        # start now and needs at least as many nodes for at least as long finds none now
        # either. (With EASY, every job after the first blocked one searches now only.)
        closed_now: dict[int, list[tuple[int, float]]] = {}
        preempt_test = view.preempt_test
        # Nodes reserved in this pass, with their start: a preemptor may not take them.
        reserved: list[tuple[float, int]] = []
        # The fewest nodes that failed to preempt, per node set, partition and QOS: a later
        # job of the same kind (no higher priority) needing as many fails too.
        cannot_preempt: dict[tuple[int, str, str | None], int] = {}

        # The union of the reservations starting within each duration, with how many of
        # them it covers: reservations are only ever appended, so it grows in place.
        within: dict[float, tuple[int, int]] = {}

        # Every reservation of the pass so far: how many, their union and their latest
        # start. A run that reaches past every start meets all of them (most runs beside
        # running jobs do), with no walk of its own.
        ever_seen, ever_union, ever_latest = 0, 0, -inf

        def reserved_ever() -> tuple[int, float]:
            """The union of the pass's reservations, and their latest start."""
            nonlocal ever_seen, ever_union, ever_latest
            for index in range(ever_seen, len(reserved)):
                start, mask = reserved[index]
                ever_union |= mask
                if start > ever_latest:
                    ever_latest = start
            ever_seen = len(reserved)
            return ever_union, ever_latest

        def reserved_within(duration: float) -> int:
            """The nodes reserved in this pass from before ``now + duration``."""
            limit = now + duration
            union, latest = reserved_ever()
            if latest < limit:
                return union
            seen, blocked = within.get(duration, (0, 0))
            for index in range(seen, len(reserved)):
                start, mask = reserved[index]
                if start < limit:
                    blocked |= mask
            within[duration] = (len(reserved), blocked)
            return blocked

        # The same, for reservations from ``now + duration`` as well (see sharing).
        until: dict[float, tuple[int, int]] = {}

        def reserved_until(duration: float) -> int:
            """The nodes reserved in this pass from ``now + duration`` or before."""
            limit = now + duration
            union, latest = reserved_ever()
            if latest <= limit:
                return union
            seen, blocked = until.get(duration, (0, 0))
            for index in range(seen, len(reserved)):
                start, mask = reserved[index]
                if start <= limit:
                    blocked |= mask
            until[duration] = (len(reserved), blocked)
            return blocked

        def still_startable(group: int, position: int) -> int:
            """The group's last job after ``position`` that can still start now, after a
            start or a reservation: a job starts now only on nodes free now that no
            reservation of the pass takes within its run; free nodes only go and
            reservations only accumulate, so a job found unable to stays unable for the rest
            of the pass, and the search goes back from the last answer (-1: none is left)."""
            last = lasts[group]
            if last <= position:
                return last
            positions = members[group]
            index = bisect.bisect_left(positions, last)
            # per node set (the jobs of a key share one int: by its id), how many of its
            # nodes are free now, and how many of those no reservation of the pass takes
            # (-1: not counted yet); the jobs walked over mostly share a few node sets
            counts: dict[int, list[int]] = {}
            # (no reservation is made during the walk: all of them, and the latest start)
            union, latest = reserved_ever()
            while index >= 0:
                at = positions[index]
                if at <= position:
                    break
                _, usable, least, duration = plans[at]
                known = counts.get(id(usable))
                if known is None:
                    known = counts[id(usable)] = [(free_now & usable).bit_count(), -1]
                have = known[0]
                # (all the reservations first: they take at least as many, and their union
                # is one int; those starting within the run only when that says no, and
                # only when some reservation starts after the run's end: else they are all)
                if have >= least:
                    clear = known[1]
                    if clear < 0:
                        clear = known[1] = have - (free_now & usable & union).bit_count()
                    if clear >= least or (
                        latest >= now + duration
                        and have - (free_now & usable & reserved_within(duration)).bit_count()
                        >= least
                    ):
                        return at
                if partly and usable & partly & ~reserved_until(duration):
                    return at  # it may start beside running jobs
                index -= 1
            return -1

        # The nodes holding jobs that starts of this pass share: a preemptor leaves them.
        shared = 0
        # The (node set, node count, CPU count) of plain requests (see _plain) that found no
        # room on the nodes as they are, per partition and CPUs per task: a plain job of the
        # same kind needing at least as many nodes and CPUs on the same nodes or fewer finds
        # none either (select's state does not change within a pass, and a plain request
        # that fits on some nodes fits on any nodes that include them).
        cannot_share: dict[tuple[str, int], list[tuple[int, int, int]]] = {}

        def sharing(job: Job, usable: int, least: int, duration: float) -> bool:
            """A job with no opening now on free nodes may start now beside running jobs,
            on the nodes (free, or holding jobs with CPUs free) no earlier job of the pass
            reserved within its run, as Slurm's backfill tests each job under select/cons_res
            and cons_tres: select says whether the nodes as they are have room. Its nodes are
            taken from the plan for its run; the core places it among the nodes it may use
            (those with running jobs, and the free ones select chose) as they are when it
            starts, after the starts before it.

            A reservation that starts as the job ends counts too: Slurm plans the higher
            job from the true end of the jobs it waits for, its reservation's start rounded
            down to bf_resolution, where this plan rounds those ends up; one planned here to
            start as the job ends starts before it in Slurm's plan."""
            if not partly & usable:
                return False
            nodes = usable & ~reserved_until(duration)
            if not nodes & partly or nodes.bit_count() < job.request.min_nodes:
                return False
            request = job.request
            kind = (job.partition, request.cpus_per_task) if _plain(request) else None
            if kind is not None and _covered_on(
                cannot_share.get(kind), nodes, request.min_nodes, request.cpus
            ):
                return False
            assert test_now is not None  # (partly is 0 without it)
            result = test_now(job, bitmap(nodes))
            if result.status is not success:
                if kind is not None:
                    cannot_share[kind] = _noted_on(
                        cannot_share.get(kind), nodes, request.min_nodes, request.cpus
                    )
                return False
            mask = cluster.mask_of(result.nodes)
            profile.reserve(now, now + duration, mask)
            nonlocal free_now, shared
            free_now = profile.free_now()
            if mask & ~partly:
                reserved.append((now, mask & ~partly))  # free nodes, taken whole
            shared |= mask & partly
            allowed = bitmap((nodes & partly) | mask).names
            starts.append(BackfillStart(job.job_id, result.nodes, allowed=allowed))
            return True

        def preempting(job: Job, usable: int, least: int, duration: float) -> bool:
            """A job that cannot start now on free nodes may start by preempting, on nodes no
            earlier job of the pass reserved for its run. As Slurm documents for its
            backfill, the preemptor's nodes are then reserved whole for it."""
            if preempt_test is None or not has_candidates(job):
                return False  # (a job with no candidate at all is busy wherever it looks)
            nodes = usable & ~reserved_within(duration) & ~shared
            if not nodes:
                return False
            kind = (nodes, job.partition, job.qos)  # the QOS it was given (preempt/qos)
            if least >= cannot_preempt.get(kind, math.inf):
                return False
            result = preempt_test(job, bitmap(nodes))
            if result.status is not success or not result.victims:
                if result.status is not success:
                    cannot_preempt[kind] = min(least, cannot_preempt.get(kind, least))
                return False
            mask = cluster.mask_of(result.nodes)
            profile.reserve(now, now + duration, mask)
            nonlocal free_now
            free_now = profile.free_now()
            reserved.append((now, mask))
            starts.append(
                BackfillStart(job.job_id, result.nodes, preempts=True, allowed=bitmap(nodes).names)
            )
            return True

        reserve_limit = params.bf_job_part_count_reserve
        just_after = math.nextafter(now, math.inf)  # a horizon that admits only starts now
        reservations: dict[str, int] = {}  # per partition, with a reserve limit
        # bf_job_part_count_reserve: past that many reservations in its partition, a job
        # that cannot start now reserves nothing. Without preemption such a job can only
        # start now: only openings now matter, and finding none says nothing about later
        # ones (no hopeless size is noted, only a size closed now). These partitions:
        now_only_partitions: set[str] = set()
        # The positions that may need planning: each group's jobs up to its last that could
        # start now or preempt, in queue order (a group's limits only come down in the pass,
        # so the test below still passes over those they leave behind; with one group this
        # is the queue itself).
        bounds = lasts if preempt_test is None else list(map(max, lasts, last_preemptors))
        chosen = [
            positions[: bisect.bisect_right(positions, bound)]
            for positions, bound in zip(members, bounds, strict=True)
            if bound >= 0
        ]
        visits = chosen[0] if len(chosen) == 1 else sorted(itertools.chain.from_iterable(chosen))
        for position in visits:
            if position > limit:
                break
            job, usable, least, duration = plans[position]
            # With preemption, later jobs may start by preempting, and must then respect the
            # reservations of the jobs before them: every job up to the last that may
            # preempt is planned.
            group = group_of[position]
            if position > lasts[group] and (
                preempt_test is None or position > last_preemptors[group]
            ):
                continue
            now_only = job.partition in now_only_partitions
            if now_only and (free_now & usable).bit_count() < least:
                # Too few of its nodes are free now: no opening now. The view its search
                # would have built is built all the same: a view built now and kept up to
                # date by later reservations keeps their segment splits, where one built
                # later is merged, and a job that select refuses an opening then tries the
                # next one of another list. (Checked before the hopeless sizes: a node set
                # with hopeless sizes has its view already, and the job is passed over
                # either way.) It may still start beside running jobs.
                profile.build_view(usable)
                if partly:
                    sharing(job, usable, least, duration)
                continue
            if hopeless and _covered(hopeless.get(usable), least, duration):
                if not (partly and sharing(job, usable, least, duration)):
                    preempting(job, usable, least, duration)
                continue
            if now_only:
                made = reserve_limit
                may_reserve = False
                if _covered(closed_now.get(usable), least, duration):
                    profile.build_view(usable)  # (built in turn all the same, as above)
                    if partly:
                        sharing(job, usable, least, duration)
                    continue
            else:
                made = reservations.get(job.partition, 0)
                may_reserve = not reserve_limit or made < reserve_limit
            opened = False
            for start, free in openings(
                usable, least, duration, just_after if now_only else horizon
            ):
                opened = True
                # a bitmap: select reads it as names, or as the bitmap if it knows how
                result = test_only(job, bitmap(free))
                if result.status is not success:
                    continue  # select wants more than a node count (CPUs, memory...)
                if start != now and partly and sharing(job, usable, least, duration):
                    break
                if (
                    start != now
                    and preempt_test is not None
                    and has_candidates(job)  # (preempting's own first test, without a call)
                    and preempting(job, usable, least, duration)
                ):
                    break
                if start != now and reserve_limit:
                    if not may_reserve:
                        break
                    reservations[job.partition] = made + 1
                    if made + 1 >= reserve_limit and preempt_test is None:
                        now_only_partitions.add(job.partition)
                mask = cluster.mask_of(result.nodes)
                profile.reserve(start, start + duration, mask)
                reserved.append((start, mask))
                if start == now:
                    starts.append(BackfillStart(job.job_id, result.nodes))
                    free_now = profile.free_now()
                lasts[group] = still_startable(group, position)
                if preempt_test is None:
                    limit = max(lasts)  # (lasts only come down: free nodes only go)
                break
            else:
                if opened and partly:  # select took none of its openings on free nodes
                    sharing(job, usable, least, duration)
            if not opened:
                noted = closed_now if now_only else hopeless
                noted[usable] = _noted(noted.get(usable), least, duration)
                if not (partly and sharing(job, usable, least, duration)):
                    preempting(job, usable, least, duration)
        return starts
