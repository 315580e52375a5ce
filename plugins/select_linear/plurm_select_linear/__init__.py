"""select/linear: whole nodes, as Slurm's select/linear allocates them.

* A job gets whole nodes. OverSubscribe lets several jobs share a node: ``FORCE:n`` always,
  ``YES:n`` when the job asks ``--oversubscribe``; jobs are counted per node **across all
  partitions** (unlike cons_res, which counts per partition).
* Placement walks the usable nodes in node-table order: a contiguous block when the job asks
  ``--contiguous``, else Slurm's best fit over runs of consecutive nodes (the smallest run that
  is enough, else the largest runs first). The core's weight gate decides which nodes are in
  the pool; placement ignores weight, as real Slurm's linear does.
* ``CR_Memory`` makes memory a consumable resource.
* Preemption simulates the removal of candidates in order (CANCEL/REQUEUE free the node,
  SUSPEND only stops counting as running) until the job fits, then reorders once (the job that
  made it fit first) and keeps the candidates on the chosen nodes as victims. A walk that
  cannot succeed is not made: when the nodes usable now and every candidate's nodes are too
  few for the job, and when the same walk (job, nodes, candidates) failed since the node use
  last changed. Neither check reads a candidate the walk would not have read.
"""

from __future__ import annotations

import bisect
import itertools
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeGuard

import attrs

from plurm import HOOK_API_VERSION, hookimpl
from plurm.conf.model import PartitionSpec
from plurm.conf.values import OverSubscribeKind, PreemptBase
from plurm.model.bitmap import NodeBitmap
from plurm.model.cluster import Cluster
from plurm.model.gres import GresHeld, node_fits
from plurm.model.job import Job, JobRequest
from plurm.model.runs import best_run, best_span, consecutive_runs, set_bit_spans
from plurm.model.select import Candidate, Candidates, SelectMode, SelectResult, SelectStatus
from plurm.registry import PluginContext

__all__ = ["LinearSelect"]

#: No limit on suspended jobs in the last counting round.
_UNLIMITED = 1 << 30
#: How many placements the bitmap path remembers before it starts afresh.
_MEMO_SIZE = 1 << 14

# Enum members for the hot paths: on Python 3.11 a member read through its enum class goes
# through the class's __getattr__ hook (some ten times the cost of reading a global).
_TEST_ONLY = SelectMode.TEST_ONLY
_RUN_NOW = SelectMode.RUN_NOW
_SUCCESS = SelectStatus.SUCCESS
_SUSPEND = PreemptBase.SUSPEND
_EXCLUSIVE = OverSubscribeKind.EXCLUSIVE
_FORCE = OverSubscribeKind.FORCE
_YES = OverSubscribeKind.YES

# Answers without nodes, shared: results are frozen, and building one costs far more than
# reading it (a frozen attrs class sets each field through object.__setattr__).
_NEVER_RESULT = SelectResult.never()
_BUSY_RESULT = SelectResult.busy()


@attrs.define
class _NodeUse:
    """What is allocated on one node."""

    memory: int = 0
    exclusive: int = 0
    running: int = 0
    total: int = 0  # running and suspended


class _Idle(dict[str, "_NodeUse"]):
    """Node use as if every node were idle, for "could it ever run" tests."""

    def __missing__(self, name: str) -> _NodeUse:
        return _IDLE


_IDLE = _NodeUse()
#: Node use as if every node were idle (read only: nothing is ever stored in it).
_IDLE_USE = _Idle()


class _Scratch(dict[str, "_NodeUse"]):
    """A private copy of node use for a dry run: reads fall through to the real counts,
    and a node's counts are copied the first time the dry run changes them (a deep copy of
    every node, per preemption test, costs a step per node of the cluster)."""

    def __init__(self, base: Mapping[str, _NodeUse]) -> None:
        super().__init__()
        self.base = base

    def __missing__(self, name: str) -> _NodeUse:
        return self.base[name]

    def writable(self, name: str) -> _NodeUse:
        node = self.get(name)
        if node is None:
            real = self.base[name]
            node = self[name] = _NodeUse(real.memory, real.exclusive, real.running, real.total)
        return node


@attrs.frozen
class _Allocation:
    nodes: tuple[str, ...]
    memory: int
    exclusive: bool
    #: ``nodes`` as a bitmap of the node table.
    mask: int


def _max_share(part: PartitionSpec, job: Job) -> tuple[int, bool]:
    """Jobs per node this job may share with, and whether it wants nodes to itself."""
    over = part.oversubscribe
    kind = over.kind
    if job.request.exclusive or kind is _EXCLUSIVE:
        return 1, True
    if kind is _FORCE:
        return over.count, False
    if kind is _YES and job.request.oversubscribe:
        return over.count, False
    return 1, False


def _on_bitmaps(nodes: Sequence[str], job: Job, share: int, memory: int) -> TypeGuard[NodeBitmap]:
    """Whether the bitmap paths serve: no sharing, memory not counted, no required nodes,
    and ``nodes`` a NodeBitmap (in table order)."""
    return share == 1 and not memory and not job.request.nodelist and isinstance(nodes, NodeBitmap)


#: What a failed preemption walk depended on besides the node use: the job's request, its
#: partition and the configuration (the objects), and its candidates (see _walked).
_FailedWalk = tuple[JobRequest, PartitionSpec | None, object, tuple[tuple[int, PreemptBase], ...]]


def _walked(candidates: Candidates) -> tuple[tuple[int, PreemptBase], ...]:
    """What the walk reads of every candidate: its job and its mode, in order."""
    return tuple([(candidate.job_id, candidate.mode) for candidate in candidates])


def _same_walk(candidates: Candidates, walked: tuple[tuple[int, PreemptBase], ...]) -> bool:
    """Whether ``candidates`` are those of ``walked``, read no further than a walk that
    differs from it would go: up to the first difference (the walk up to there fails as
    the recorded one did, at every step)."""
    count = 0
    for candidate in candidates:
        if count == len(walked) or walked[count] != (candidate.job_id, candidate.mode):
            return False
        count += 1
    return count == len(walked)


class _Pool(Protocol):
    """The nodes a preemptor could use, as the preemption walk removes candidates."""

    def removed(self, allocation: _Allocation) -> tuple[int, int]:
        """After ``allocation`` left the scratch counts: how many nodes are usable, and how
        many of them are the allocation's."""

    def place(self) -> tuple[str, ...] | None:
        """The job's nodes among the usable ones, if they are enough."""


class _NamePool:
    """The general case: usable nodes counted anew by name after each removal."""

    def __init__(
        self,
        select: LinearSelect,
        job: Job,
        nodes: Sequence[str],
        use: _Scratch,
        share: int,
        memory: int,
        exclusive: bool,
        cluster: Cluster,
    ) -> None:
        self.select, self.job, self.nodes, self.use = select, job, nodes, use
        self.share, self.memory, self.exclusive, self.cluster = share, memory, exclusive, cluster
        self.usable: list[str] = []

    def removed(self, allocation: _Allocation) -> tuple[int, int]:
        self.usable = self.select._usable(
            self.nodes, self.use, self.share - 1, _UNLIMITED, self.memory, self.exclusive,
            self.cluster,
        )  # fmt: skip
        return len(self.usable), len(set(self.usable).intersection(allocation.nodes))

    def place(self) -> tuple[str, ...] | None:
        return self.select._place(self.job, self.usable, self.cluster)


class _BitmapPool:
    """The case _run_now_bitmap covers (no sharing, no memory counted, no required nodes,
    nodes in table order), on bitmaps: a removal changes the bits of the removed job's own
    nodes only, where the general pool counts every node of the partition again. Usable
    are the nodes where nothing runs (an exclusive job: where nothing is at all), as in
    the general code's last round; placement is _place_bitmap's, set for set."""

    def __init__(
        self, select: LinearSelect, job: Job, nodes: int, use: _Scratch, exclusive: bool
    ) -> None:
        self.select, self.job, self.nodes, self.use = select, job, nodes, use
        self.exclusive = exclusive
        self.free, self.unrun = select.free, select.unrun
        self.usable = 0

    def removed_alone(self, allocation: _Allocation, mode: PreemptBase) -> tuple[int, int]:
        """:meth:`removed` for a candidate alone on each of its nodes (none of them in
        ``LinearSelect.shared``), by its bitmap: no other job counts there, so no other
        candidate touches them and no later removal reads their scratch counts. Requeued or
        cancelled, it leaves its nodes with no job; suspended, it leaves them with no
        running job, unless it holds them exclusively (a suspended job already is not
        running there)."""
        mask = allocation.mask
        if mode is not _SUSPEND:
            self.free |= mask
            self.unrun |= mask
        elif not allocation.exclusive:
            self.unrun |= mask
        self.usable = usable = self.nodes & (self.free if self.exclusive else self.unrun)
        return usable.bit_count(), (usable & mask).bit_count()

    def removed(self, allocation: _Allocation) -> tuple[int, int]:
        free, unrun, use, index = self.free, self.unrun, self.use, self.select.index
        mask = 0
        for name in allocation.nodes:  # what LinearSelect._mark does, on the scratch counts
            node = use[name]
            bit = 1 << index[name]
            mask |= bit
            free = free & ~bit if node.total else free | bit
            unrun = unrun & ~bit if node.running or node.exclusive else unrun | bit
        self.free, self.unrun = free, unrun
        self.usable = usable = self.nodes & (free if self.exclusive else unrun)
        return usable.bit_count(), (usable & mask).bit_count()

    def place(self) -> tuple[str, ...] | None:
        return self.select._place_bitmap(self.job, self.usable)


class LinearSelect:
    """The select/linear plugin. One instance per controller holds the node accounting."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.log = logging.getLogger(context.logger_name)
        base = context.config.select_type_parameters.base
        self.track_memory = base is not None and base.memory
        self.use: dict[str, _NodeUse] = {}
        self.jobs: dict[int, _Allocation] = {}
        self.suspended: set[int] = set()
        self.cpus: dict[str, int] = {}
        # The same accounting as bitmaps over the node table, for the fast path of
        # _run_now: nodes with no job at all, and nodes where no job runs or holds them
        # exclusively (suspended jobs only). Kept in step with ``use`` by _mark.
        self.names: tuple[str, ...] = ()
        #: Each node's place in the node table: its bit is ``1 << index[name]``.
        self.index: Mapping[str, int] = {}
        self.free = 0
        self.unrun = 0
        #: Nodes with two jobs or more (running or suspended): a preemption walk removes a
        #: candidate alone on its nodes by its bitmap, without counting node by node.
        self.shared = 0
        self.cpu_list: list[int] = []
        #: The most CPUs of any node.
        self.widest = 1
        #: Whether every node has as many CPUs as every other (see _keep_over_start).
        self.uniform = True
        #: cpu_before[i]: the CPUs of the nodes before node i in the table.
        self.cpu_before: list[int] = [0]
        #: _place_bitmap's answers: (nodes, min, max, tasks, CPUs per task, contiguous) ->
        #: nodes or None. (The request's CPU count is read from the last three: the
        #: properties that work it out cost two calls.)
        self.placed: dict[
            tuple[int, int, int | None, int | None, int, bool], tuple[str, ...] | None
        ] = {}
        #: The successful answers given, by the id of their node tuple (which the answer
        #: holds, so that no other tuple can have that id while the entry lasts): the
        #: placement memo hands out the same tuples again and again. Emptied when large.
        self.successes: dict[int, SelectResult] = {}
        #: Preemption walks that found no room since a node was last given back, by job and
        #: nodes: what else they depend on (see _preempt).
        self.failed_walks: dict[tuple[int, object], _FailedWalk] = {}
        #: RUN_NOW tests without candidates that found the job busy on the bitmap path
        #: since a node was last given back, by job and nodes: what else they depend on (the
        #: job's request, its partition and the configuration, the objects). The main
        #: scheduler tests the job at the head of the queue after every event, and only an
        #: end, a suspension or a resize can make room for it.
        self.busy_tests: dict[tuple[int, int], tuple[JobRequest, PartitionSpec, object]] = {}

    # ----------------------------------------------------------------------------- state

    @hookimpl
    def select_node_init(self, cluster: Cluster) -> bool:
        self.use = {name: _NodeUse() for name in cluster.config.node_names}
        # Node sizes never change at run time; placement reads them in its inner loops.
        self.cpus = {name: cluster.node(name).cpus for name in cluster.config.node_names}
        self.names = cluster.config.node_names
        self.index = cluster.node_index
        self.free = self.unrun = (1 << len(self.names)) - 1
        self.shared = 0
        self.cpu_list = [self.cpus[name] for name in self.names]
        self.widest = max(self.cpu_list, default=1)
        self.uniform = len(set(self.cpu_list)) <= 1
        self.cpu_before = [0]
        for cpus in self.cpu_list:
            self.cpu_before.append(self.cpu_before[-1] + cpus)
        self.placed.clear()
        self.successes.clear()
        self._use_changed()
        self.jobs.clear()
        self.suspended.clear()
        return True

    def _use_changed(self) -> None:
        """Forget the answers that held only while no node was given back (an end, a
        suspension, a resize; a start keeps most of them, see _keep_over_start)."""
        self.failed_walks.clear()
        self.busy_tests.clear()

    def _keep_over_start(self) -> None:
        """At a start, keep the busy tests and failed walks that still hold. A start only
        takes nodes, so a placement that failed fails on fewer nodes too, except one that
        can fail by reaching its node limit (--nodes=min-max): the best fit takes runs from
        their start, and on nodes of several sizes small nodes taken first can use up the
        limit (4+1 CPUs on two nodes of 1, 4, 4 miss 8 CPUs that the two 4s give once the
        1 is taken). Those answers are forgotten when node sizes differ."""
        if self.uniform:
            return
        self.failed_walks = {k: v for k, v in self.failed_walks.items() if v[0].max_nodes is None}
        self.busy_tests = {k: v for k, v in self.busy_tests.items() if v[0].max_nodes is None}

    def _mark(self, names: Iterable[str]) -> None:
        """Bring the bitmaps of ``names`` in line with their counters in ``use``."""
        self._use_changed()  # each change but a start comes here (or to _use_changed)
        for name in names:
            node = self.use[name]
            bit = 1 << self.index[name]
            if node.total:
                self.free &= ~bit
            else:
                self.free |= bit
            if node.running or node.exclusive:
                self.unrun &= ~bit
            else:
                self.unrun |= bit
            if node.total > 1:
                self.shared |= bit
            else:
                self.shared &= ~bit

    @hookimpl
    def select_reconfigure(self, cluster: Cluster) -> bool:
        return True

    def _memory(self, job: Job, cluster: Cluster) -> int:
        """MiB per node the job uses, when memory is tracked (0: not tracked or not asked)."""
        if not self.track_memory:
            return 0
        request = job.request
        part = cluster.partition(job.partition)
        per_cpu = request.mem_per_cpu
        if request.mem_per_node is not None:
            return request.mem_per_node
        if per_cpu is None:
            per_node = part.def_mem_per_node or cluster.config.def_mem_per_node
            if per_node is not None:
                return per_node
            per_cpu = part.def_mem_per_cpu or cluster.config.def_mem_per_cpu
        if per_cpu is None:
            return 0
        nodes = max(1, request.min_nodes)
        return per_cpu * -(-request.cpus // nodes)

    # ----------------------------------------------------------------------------- counting

    def _usable(
        self,
        nodes: Iterable[str],
        use: Mapping[str, _NodeUse],
        max_running: int,
        max_total: int,
        memory: int,
        exclusive: bool,
        cluster: Cluster,
    ) -> list[str]:
        usable = []
        for name in nodes:
            node = use[name]
            if node.exclusive or node.running > max_running or node.total > max_total:
                continue
            if exclusive and node.total:
                continue
            if memory and node.memory + memory > cluster.node(name).real_memory:
                continue
            usable.append(name)
        return usable

    def _place(self, job: Job, usable: Sequence[str], cluster: Cluster) -> tuple[str, ...] | None:
        """Contiguous or best-fit choice of whole nodes among ``usable`` (table order)."""
        request = job.request
        index = cluster.node_index
        required = [name for name in usable if name in request.nodelist]
        if len(required) < len(set(request.nodelist)):
            return None
        max_nodes = request.max_nodes if request.max_nodes is not None else len(usable)
        max_nodes = max(max_nodes, request.min_nodes)
        chosen = list(required)
        need_nodes = request.min_nodes - len(chosen)
        cpus_of = self.cpus
        need_cpus = request.cpus - sum(cpus_of[name] for name in chosen)
        if need_nodes <= 0 and need_cpus <= 0:
            return tuple(chosen)
        runs = consecutive_runs((name for name in usable if name not in chosen), index)
        while runs and (need_nodes > 0 or need_cpus > 0) and len(chosen) < max_nodes:
            best, best_enough = best_run(runs, cpus_of, need_cpus, need_nodes)
            if request.contiguous and not best_enough:
                return None
            runs.remove(best)
            for name in best:
                if (need_nodes <= 0 and need_cpus <= 0) or len(chosen) >= max_nodes:
                    break
                chosen.append(name)
                need_nodes -= 1
                need_cpus -= cpus_of[name]
        if need_nodes > 0 or need_cpus > 0:
            return None
        return tuple(sorted(chosen, key=index.__getitem__))

    def _run_now(
        self,
        job: Job,
        nodes: Sequence[str],
        use: Mapping[str, _NodeUse],
        cluster: Cluster,
    ) -> tuple[str, ...] | None:
        """Slurm's rounds: allow 0, 1, ... running jobs per node up to the share limit,
        first with few suspended jobs, the last round with any number."""
        share, exclusive = _max_share(cluster.partition(job.partition), job)
        memory = self._memory(job, cluster) if self.track_memory else 0
        if _on_bitmaps(nodes, job, share, memory):
            if use is _IDLE_USE:  # (_run_now_bitmap's first case, without the call)
                return self._place_bitmap(job, nodes.mask)
            return self._run_now_bitmap(job, nodes.mask, isinstance(use, _Idle), exclusive)
        for max_running in range(share):
            last = max_running == share - 1
            for suspended in (0, _UNLIMITED if last else 4):
                usable = self._usable(
                    nodes, use, max_running, max_running + suspended, memory, exclusive, cluster
                )
                if len(usable) < job.request.min_nodes:
                    continue
                if max_running:
                    mate = self._job_mate(job, usable, cluster)
                    if mate is not None:
                        return mate
                chosen = self._place(job, usable, cluster)
                if chosen is not None:
                    return chosen
        return None

    def _run_now_bitmap(
        self, job: Job, nodes: int, idle: bool, exclusive: bool
    ) -> tuple[str, ...] | None:
        """_run_now on bitmaps, for the common case: no sharing (one round, allowing no
        running job per node: first no suspended one either, then any number), memory not
        counted, no required nodes, and ``nodes`` in table order (a NodeBitmap). The rounds
        and the placement are the same as the general code's, set for set."""
        if idle:
            return self._place_bitmap(job, nodes)
        least = job.request.min_nodes
        first = nodes & self.free
        if first.bit_count() >= least:
            chosen = self._place_bitmap(job, first)
            if chosen is not None:
                return chosen
        # the last round: any number of suspended jobs (an exclusive job still wants
        # nodes with no job at all)
        second = nodes & (self.free if exclusive else self.unrun)
        if second == first or second.bit_count() < least:
            return None  # the same pool places the same way
        return self._place_bitmap(job, second)

    def _place_bitmap(self, job: Job, usable: int) -> tuple[str, ...] | None:
        """_place (best fit over runs of consecutive nodes) on a bitmap, without required
        nodes: runs are the runs of set bits.

        The choice depends only on the node set and the request's size and contiguity
        (node sizes never change), and passes ask the same questions again and again (the
        queue's head on the same idle nodes, backfill on the same openings), so answers
        are remembered; the memo is emptied when it grows large."""
        request = job.request
        key = (
            usable,
            request.min_nodes,
            request.max_nodes,
            request.ntasks,
            request.cpus_per_task,
            request.contiguous,
        )
        memo = self.placed
        if key in memo:
            return memo[key]
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        chosen = memo[key] = self._place_runs(request, usable)
        return chosen

    def _place_runs(self, request: JobRequest, usable: int) -> tuple[str, ...] | None:
        max_nodes = request.max_nodes if request.max_nodes is not None else usable.bit_count()
        max_nodes = max(max_nodes, request.min_nodes)
        need_nodes = request.min_nodes
        need_cpus = request.cpus
        if need_nodes <= 0 and need_cpus <= 0:
            return ()
        before = self.cpu_before
        runs = set_bit_spans(usable)
        taken: list[tuple[int, int]] = []  # ranges of node indexes, first to last + 1
        count = 0
        totals = [before[end] - before[start] for start, end in runs]  # CPUs per run
        while runs and (need_nodes > 0 or need_cpus > 0) and count < max_nodes:
            best, best_enough = best_span(runs, totals, need_cpus, need_nodes)
            if request.contiguous and not best_enough:
                return None
            start, end = runs.pop(best)
            del totals[best]
            # Take nodes from the start of the run until both needs are met, the run ends
            # or max_nodes is reached: the fewest that give need_cpus (a search on the
            # running CPU totals) and at least need_nodes.
            by_cpus = bisect.bisect_left(before, before[start] + need_cpus, start, end + 1)
            take = min(max(need_nodes, by_cpus - start, 0), end - start, max_nodes - count)
            taken.append((start, start + take))
            count += take
            need_nodes -= take
            need_cpus -= before[start + take] - before[start]
        if need_nodes > 0 or need_cpus > 0:
            return None
        names = self.names
        taken.sort()
        if len(taken) == 1:
            return names[taken[0][0] : taken[0][1]]
        return tuple(itertools.chain.from_iterable(names[first:last] for first, last in taken))

    def _job_mate(
        self, job: Job, usable: Sequence[str], cluster: Cluster
    ) -> tuple[str, ...] | None:
        """When sharing: exactly the nodes of a running job of the same size in the partition."""
        allowed = set(usable)
        for other in cluster.allocated():
            if other.job_id in self.suspended or other.partition != job.partition:
                continue
            if len(other.nodes) == job.request.min_nodes and allowed.issuperset(other.nodes):
                return other.nodes
        return None

    # ----------------------------------------------------------------------------- job_test

    @hookimpl
    def select_job_test(
        self,
        job: Job,
        nodes: Sequence[str],
        mode: SelectMode,
        candidates: Sequence[Candidate],
        cluster: Cluster,
    ) -> SelectResult:
        if job.request.gres_request is not None:
            # whole nodes: a node serves if its GRES hold the job's share of them, and the
            # job then has all of them, as Slurm's select/linear gives it
            need = job.request.gres_request.node_share(
                job.request.min_nodes, job.request.tasks, job.request.ntasks_per_node
            )
            counts = cluster.config.gres.counts
            nodes = tuple(n for n in nodes if node_fits(need, counts.get(n, ())))
        busy_key = None
        if mode is _RUN_NOW and type(nodes) is NodeBitmap:
            busy_key = (job.job_id, nodes.mask)
            known = self.busy_tests.get(busy_key)
            if (
                known is not None
                and known[0] is job.request
                and known[1] is cluster.partitions.get(job.partition)
                and known[2] is cluster.config
                and not candidates
            ):
                return _BUSY_RESULT  # as found before, with nothing it depends on changed
        if mode is not _TEST_ONLY:
            chosen = self._run_now(job, nodes, self.use, cluster)
            if chosen is not None:
                return self._success(chosen)
        # TEST_ONLY, or busy now: could it run here at all, with these nodes idle?
        idle = self._run_now(job, nodes, _IDLE_USE, cluster)
        if idle is None:
            return _NEVER_RESULT
        if mode is _TEST_ONLY:
            return self._success(idle)
        if not candidates:
            if busy_key is not None:
                self._note_busy(busy_key, job, nodes, cluster)
            return _BUSY_RESULT
        return self._preempt(job, nodes, candidates, cluster)

    def _note_busy(
        self, key: tuple[int, int], job: Job, nodes: Sequence[str], cluster: Cluster
    ) -> None:
        """Remember a busy answer found on the bitmap path: there it depends only on the
        node use (the free and unrun bitmaps) and on the request, partition and
        configuration. (The general path also reads the cluster's running jobs, for a job
        mate, which a kill changes before select hears of it.)"""
        part = cluster.partitions.get(job.partition)
        if part is None:
            return
        share, _ = _max_share(part, job)
        memory = self._memory(job, cluster) if self.track_memory else 0
        if _on_bitmaps(nodes, job, share, memory):
            if len(self.busy_tests) >= _MEMO_SIZE:
                self.busy_tests.clear()
            self.busy_tests[key] = (job.request, part, cluster.config)

    def _success(self, nodes: tuple[str, ...]) -> SelectResult:
        """SelectResult(SUCCESS, nodes), one object per node tuple while the memo holds it."""
        known = self.successes.get(id(nodes))
        if known is not None:
            return known
        if len(self.successes) >= _MEMO_SIZE:
            self.successes.clear()
        result = self.successes[id(nodes)] = SelectResult(_SUCCESS, nodes)
        return result

    def _preempt(
        self, job: Job, nodes: Sequence[str], candidates: Sequence[Candidate], cluster: Cluster
    ) -> SelectResult:
        order = Candidates.of(candidates)  # read only as far as the walk goes
        # (first the test that may need to read no candidate at all)
        if self._cannot_fit(job, nodes, order, cluster):
            return _BUSY_RESULT
        # A walk that failed fails again while the node use, the job, its nodes and its
        # candidates (ids and modes, in order) are the same: each event pass asks again
        # for the job at the head of the queue, and backfill asks after it.
        key = (job.job_id, nodes.mask if type(nodes) is NodeBitmap else tuple(nodes))
        part, config = cluster.partitions.get(job.partition), cluster.config
        failed = self.failed_walks.get(key)
        if (
            failed is not None
            and failed[0] is job.request
            and failed[1] is part
            and failed[2] is config
            and _same_walk(order, failed[3])
        ):
            return _BUSY_RESULT
        first = self._remove_until_fit(job, nodes, order, cluster)
        if first is None:
            # (a failed walk read every candidate)
            self.failed_walks[key] = (job.request, part, config, _walked(order))
            return _BUSY_RESULT
        chosen, used, overlap = first
        tested = order.read()
        if len(tested) > 1:
            # Reorder once: the candidate that made the job fit first, then the earlier ones
            # by how many usable nodes they freed, the untested ones last (unread: with one
            # tested, the walk again would repeat the first).
            decisive = used[-1].job_id
            weight = {c.job_id: overlap.get(c.job_id, 0) for c in used}
            weight[decisive] = 9999
            order = order.reordered(sorted(tested, key=lambda c: -weight.get(c.job_id, 0)))
            second = self._remove_until_fit(job, nodes, order, cluster)
            if second is not None:
                chosen, used, overlap = second
        picked = set(chosen)
        victims = tuple(
            c.job_id for c in used if overlap.get(c.job_id, 0) and picked.intersection(c.job.nodes)
        )
        return SelectResult(_SUCCESS, chosen, victims)

    def _nodes_needed(self, request: JobRequest) -> int:
        """The fewest nodes any placement of ``request`` takes: its node count, and as many
        as its CPUs fill on the widest node."""
        return max(request.min_nodes, -(-request.cpus // self.widest))

    def _cannot_fit(
        self, job: Job, nodes: Sequence[str], order: Candidates, cluster: Cluster
    ) -> bool:
        """Whether the walk is sure to fail, on the bitmap path: it fails when the job does
        not fit with every candidate removed (its last step), and a placement needs at least
        the job's node count, and its CPUs, among the usable nodes. Those are at most the
        nodes usable now and every candidate's nodes (removals only ever free nodes)."""
        share, exclusive = _max_share(cluster.partition(job.partition), job)
        if not _on_bitmaps(nodes, job, share, self._memory(job, cluster)):
            return False
        request = job.request
        need = self._nodes_needed(request)
        within = nodes.mask
        # the walk's usable nodes: where nothing runs; for an exclusive job, where nothing is
        # at all (a suspended candidate still holds its nodes)
        usable = within & (self.free if exclusive else self.unrun)
        if usable.bit_count() >= need:
            return False
        bound = order.nodes_bound()
        if bound is not None and (usable | within & bound).bit_count() < need:
            return True  # not even every node a candidate may have: none need be read
        for candidate in order:
            # read no further than the walk would: it cannot fit before this bound does
            allocation = self.jobs.get(candidate.job_id)
            if allocation is None or (exclusive and candidate.mode is _SUSPEND):
                continue
            usable |= within & allocation.mask
            if usable.bit_count() >= need:
                return False
        return True

    def _remove_until_fit(
        self, job: Job, nodes: Sequence[str], order: Sequence[Candidate], cluster: Cluster
    ) -> tuple[tuple[str, ...], list[Candidate], dict[int, int]] | None:
        """Remove candidates in order from a scratch copy of node use until the job can be
        placed: its nodes, the candidates removed, and how many usable nodes each freed."""
        use = _Scratch(self.use)
        share, exclusive = _max_share(cluster.partition(job.partition), job)
        memory = self._memory(job, cluster)
        bitmaps: _BitmapPool | None = None
        if _on_bitmaps(nodes, job, share, memory):
            bitmaps = _BitmapPool(self, job, nodes.mask, use, exclusive)
            pool: _Pool = bitmaps
        else:
            pool = _NamePool(self, job, nodes, use, share, memory, exclusive, cluster)
        shared = self.shared
        used: list[Candidate] = []
        overlap: dict[int, int] = {}
        # A placement takes usable nodes only, at least _nodes_needed of them (a job sized by
        # tasks, -n 256 on one-CPU nodes, needs 256): with fewer, it is not tried.
        need = self._nodes_needed(job.request)
        for candidate in order:
            allocation = self.jobs.get(candidate.job_id)
            if allocation is None:
                continue
            used.append(candidate)
            if bitmaps is not None and not allocation.mask & shared:
                usable, overlap[candidate.job_id] = bitmaps.removed_alone(
                    allocation, candidate.mode
                )
            else:
                self._remove(use, candidate.job_id, allocation, candidate.mode)
                usable, overlap[candidate.job_id] = pool.removed(allocation)
            if usable < need:
                continue
            chosen = pool.place()
            if chosen is not None:
                return chosen, used, overlap
        return None

    def _remove(
        self, use: _Scratch, job_id: int, allocation: _Allocation, mode: PreemptBase
    ) -> None:
        running = job_id not in self.suspended
        for name in allocation.nodes:
            node = use.writable(name)
            if mode is _SUSPEND:
                if running:
                    node.running -= 1
                continue
            node.total -= 1
            node.running -= 1 if running else 0
            node.memory -= allocation.memory
            node.exclusive -= 1 if allocation.exclusive else 0

    # ----------------------------------------------------------------------------- lifecycle

    @hookimpl
    def select_answers_by_nodes(self, cluster: Cluster) -> bool:
        """True: a test reads the nodes it is given, what the jobs there hold and the
        configuration (a sharing job's mate is a job on those nodes), never the time."""
        return True

    @hookimpl
    def select_job_begin(self, job: Job, cluster: Cluster) -> bool:
        _, exclusive = _max_share(cluster.partition(job.partition), job)
        nodes = tuple(job.nodes)
        allocation = _Allocation(
            nodes, self._memory(job, cluster), exclusive, cluster.mask_of(nodes)
        )
        self.jobs[job.job_id] = allocation
        self.suspended.discard(job.job_id)
        for name in allocation.nodes:
            node = self.use[name]
            node.running += 1
            node.total += 1
            node.memory += allocation.memory
            node.exclusive += 1 if exclusive else 0
        # what _mark would find: each of its nodes now runs a job, so is neither free nor
        # without a running job. The busy tests and failed walks mostly still hold: what
        # found no room, even with every candidate removed, finds none on fewer nodes (a
        # walk with the new job among its candidates reads other candidates, and is
        # walked afresh); see _keep_over_start for the exception.
        self._keep_over_start()
        self.shared |= allocation.mask & ~self.free  # (its nodes that had a job already)
        self.free &= ~allocation.mask
        self.unrun &= ~allocation.mask
        return True

    @hookimpl
    def select_job_gres(self, job: Job, cluster: Cluster) -> tuple[GresHeld, ...]:
        """Whole nodes: every unit of each of the job's nodes, as select/linear gives."""
        held: list[GresHeld] = []
        counts = cluster.config.gres.counts
        for node in job.nodes:
            first: dict[str, int] = {}
            for count in counts.get(node, ()):
                start = first.get(count.name, 0)
                first[count.name] = start + count.count
                indexes = tuple(range(start, start + count.count))
                held.append(GresHeld(node, count.name, count.type, indexes))
        return tuple(held)

    @hookimpl
    def select_job_fini(self, job: Job, cluster: Cluster) -> bool:
        allocation = self.jobs.pop(job.job_id, None)
        if allocation is None:
            return True
        running = job.job_id not in self.suspended
        self.suspended.discard(job.job_id)
        # _mark's work in the same loop: the nodes left without any job, and those left
        # without a running or exclusive one, by bitmap
        index = self.index
        emptied = idle = alone = 0  # (alone: the nodes left with one job)
        for name in allocation.nodes:
            node = self.use[name]
            node.total -= 1
            node.running -= 1 if running else 0
            node.memory -= allocation.memory
            node.exclusive -= 1 if allocation.exclusive else 0
            if not node.total:
                emptied |= 1 << index[name]
            elif node.total == 1:
                alone |= 1 << index[name]
            if not (node.running or node.exclusive):
                idle |= 1 << index[name]
        self._use_changed()
        mask = allocation.mask
        self.free = (self.free & ~mask) | emptied
        self.unrun = (self.unrun & ~mask) | idle
        self.shared &= ~(emptied | alone)
        return True

    @hookimpl
    def select_job_resized(self, job: Job, nodes: Sequence[str], cluster: Cluster) -> bool:
        """A completing job gave up some of its nodes: it no longer counts there."""
        allocation = self.jobs.get(job.job_id)
        if allocation is None:
            return True
        gone = [name for name in allocation.nodes if name in nodes]
        running = job.job_id not in self.suspended
        for name in gone:
            node = self.use[name]
            node.total -= 1
            node.running -= 1 if running else 0
            node.memory -= allocation.memory
            node.exclusive -= 1 if allocation.exclusive else 0
        kept = tuple(name for name in allocation.nodes if name not in nodes)
        self.jobs[job.job_id] = attrs.evolve(allocation, nodes=kept, mask=cluster.mask_of(kept))
        self._mark(gone)
        return True

    @hookimpl
    def select_job_suspend(self, job: Job, indefinite: bool, cluster: Cluster) -> bool:
        # A gang suspension keeps the job's place: as in Slurm's linear plugin, only an
        # admin (indefinite) suspension frees it for other jobs to run.
        allocation = self.jobs.get(job.job_id)
        if indefinite and allocation is not None and job.job_id not in self.suspended:
            self.suspended.add(job.job_id)
            for name in allocation.nodes:
                self.use[name].running -= 1
            self._mark(allocation.nodes)
        return True

    @hookimpl
    def select_job_resume(self, job: Job, indefinite: bool, cluster: Cluster) -> bool:
        allocation = self.jobs.get(job.job_id)
        if indefinite and allocation is not None and job.job_id in self.suspended:
            self.suspended.discard(job.job_id)
            for name in allocation.nodes:
                self.use[name].running += 1
            self._mark(allocation.nodes)
        return True

    @hookimpl
    def select_job_resumable(self, job: Job, cluster: Cluster) -> bool:
        """An admin- or release-suspended job may run again when each of its nodes runs
        fewer jobs than its OverSubscribe allows (none, for a job that wants its nodes to
        itself) and no job that runs there holds it exclusively."""
        allocation = self.jobs.get(job.job_id)
        if allocation is None or job.job_id not in self.suspended:
            return allocation is not None
        part = cluster.partitions.get(job.partition)
        share, exclusive = _max_share(part, job) if part is not None else (1, True)
        for name in allocation.nodes:
            node = self.use[name]
            if node.running >= (1 if exclusive else share):
                return False
            if node.exclusive - (1 if allocation.exclusive else 0) > 0 and node.running:
                return False
        return True

    @hookimpl
    def select_node_alloc(self, cluster: Cluster) -> dict[str, int]:
        """Whole nodes: a node with any job on it has all its CPUs allocated."""
        return {name: cluster.node(name).cpus for name, node in self.use.items() if node.total > 0}
