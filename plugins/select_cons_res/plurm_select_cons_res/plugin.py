"""The select hooks of cons_res/cons_tres: the plugin object and its accounting."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Hashable, Sequence
from typing import NamedTuple

import attrs

from plurm import HOOK_API_VERSION, hookimpl
from plurm.conf.values import PreemptBase
from plurm.model.bitmap import NodeBitmap
from plurm.model.cluster import Cluster
from plurm.model.gres import GresAsk, GresHeld, node_counts
from plurm.model.job import Job, JobRequest, JobState
from plurm.model.select import Candidate, SelectMode, SelectResult, SelectStatus
from plurm.registry import PluginContext
from plurm_select_cons_res.free_cores import FreeCores, first_on_free_cores, on_free_cores
from plurm_select_cons_res.gres import GresState, GresTester
from plurm_select_cons_res.layout import Layout, Resource, Unit, layout_of
from plurm_select_cons_res.needs import MemoryKind, Needs, Sharing, needs_of, row_count
from plurm_select_cons_res.preempt import preempt_by_removal, preempt_by_suspension
from plurm_select_cons_res.steps import Placement, Tester
from plurm_select_cons_res.usage import Usage, View, nodes_key

__all__ = ["ConsResSelect"]

#: How many idle-cluster answers select_job_test remembers before it starts afresh.
_IDLE_MEMO_SIZE = 1 << 14
#: Partition objects whose needs by shape are kept (a reconfiguration makes new ones).
_NEEDS_MEMO_PARTITIONS = 256
#: No idle test remembered (None is a remembered answer: never).
_UNKNOWN = Placement({}, {}, {})
#: The most (node, cores) pairs whose units are kept for select_job_resources.
_UNITS_MEMO_SIZE = 1 << 14
# Enum members read once: on Python 3.11 a member read through its enum class goes through
# the class's __getattr__ hook, and these are read at every test and start.
_RUN_NOW = SelectMode.RUN_NOW
_SUCCESS = SelectStatus.SUCCESS
_ONE_ROW = Sharing.ONE_ROW
#: Marks a preemption search's key among the refusals (``_preempt``).
_PREEMPTING = "preempting"


class _Partitions(NamedTuple):
    """What the plugin works out from the partitions and the configuration (see
    ``_of_partitions``)."""

    #: (configuration, preemption traits, partitions): what the rest was worked out from.
    key: tuple[object, ...]
    #: Rows per partition.
    rows: dict[str, int]
    #: ``_plain``.
    plain: bool
    #: Whether every partition has one row (no OverSubscribe=FORCE:n or YES:n with n over
    #: 1, no extra row for a QOS that suspends).
    one_row: bool
    #: Per partition, made when first asked: the partitions whose jobs keep their cores
    #: from its jobs under gang scheduling (``_kept_beside``).
    beside: dict[str, frozenset[str]]


class _Tested(NamedTuple):
    """The last placement a RUN_NOW test found for a job, for ``select_job_begin`` (a named
    tuple: one is made at every successful test)."""

    nodes: tuple[str, ...]
    version: int
    placement: Placement


class ConsResSelect:
    """The select/cons_res (and select/cons_tres) plugin; one instance per controller."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.log = logging.getLogger(context.logger_name)
        self.resource = Resource.of(context.config)
        self.layouts: dict[str, Layout] = {}
        self.usage = Usage()
        #: Bumped on every change of ``usage``: a remembered placement is only good as long
        #: as the usage it was found on.
        self.version = 0
        #: A cache of test results (not state: the same test gives the same answer).
        self.tested: dict[int, _Tested] = {}
        #: The usage's jobs in rows as FreeCores sees them, for the common case's tests;
        #: and an idle cluster's, for the idle test.
        self.free_cores = FreeCores((), {}, {})
        self.idle_cores = FreeCores((), {}, {})
        #: The idle test's answers (the nodes of the placement, or None): they depend only on
        #: the needs, the nodes and the unit (node layouts never change), and passes ask the
        #: same again and again. Only the nodes are kept: a wide job's placement holds its
        #: cores on every node, and the memo holds thousands of answers.
        self.idle_tests: dict[tuple[Needs, object, Unit], tuple[str, ...] | None] = {}
        # Functions of the partitions as they are and of one job's request, remembered:
        # the rows and plainness for the partition objects they were computed from, and
        # the last job's needs (select_job_begin asks for the job select_job_test just did).
        self._by_partitions: _Partitions | None = None
        self._last_needs: tuple[int, object, object, object, Needs | None] | None = None
        #: Per node set and search (``_preempt``), the candidates of the last one that
        #: found nothing: valid while its key is among the view's refusals.
        self._searched: dict[tuple[Hashable, Hashable], tuple[tuple[int, PreemptBase], ...]] = {}
        #: Needs by request shape, per partition object (see ``_needs``).
        self._needs_by_shape: dict[
            int, tuple[object, object, dict[tuple[object, ...], Needs | None]]
        ] = {}
        #: Each node's (node, core) pairs for the cores a job holds there: the same cores
        #: recur on a node job after job, and a union of ready sets reuses their hashes.
        self._node_units: dict[tuple[str, frozenset[int]], frozenset[tuple[str, int]]] = {}
        #: The GPUs (generic resources) jobs hold; None on a cluster without any.
        self.gres = GresState(context.config.gres) if context.config.gres.counts else None
        #: The bitmap of the nodes with generic resources, for the GresState it was made of.
        self._gres_nodes: tuple[GresState, int] | None = None
        #: For GRES jobs, by (share per node, nodes): the nodes with that share configured;
        #: and by needs, share, binding, those nodes and unit: the idle test's answer.
        self.gres_configured: dict[tuple[tuple[GresAsk, ...], object], list[str]] = {}
        self.gres_idle_tests: dict[tuple[object, ...], tuple[str, ...] | None] = {}
        #: Test every step against the whole usage, as the first versions did (the
        #: reference the tests compare the node-by-node tests with); no memo of GRES tests.
        self.reference = False
        #: (version, GresState, nodes where a job holding units is not in ``usage``).
        self._gres_absent: tuple[int, GresState, set[str]] | None = None

    # ----------------------------------------------------------------------------- helpers

    def _rows(self, cluster: Cluster) -> dict[str, int]:
        return self._of_partitions(cluster).rows

    def _of_partitions(self, cluster: Cluster) -> _Partitions:
        """What the rows and tiers of the partitions give, kept while the partition objects
        and the configuration stay the same (an update makes a new object). The partitions
        are compared as a copy of the dict: equal dicts of the same objects compare in C,
        each value by identity first."""
        known = self._by_partitions
        if known is not None:
            config, traits, partitions = known.key
            if (
                config is cluster.config
                and traits is cluster.preempt_traits
                and partitions == cluster.partitions
            ):
                return known
        extra = cluster.preempt_traits.suspend_in_partition
        rows = {name: row_count(part, extra) for name, part in cluster.partitions.items()}
        plain = not cluster.config.gang_scheduling and all(
            row_count(part, False) == 1 for part in cluster.partitions.values()
        )
        key = (cluster.config, cluster.preempt_traits, dict(cluster.partitions))
        one_row = all(count == 1 for count in rows.values())
        self._by_partitions = known = _Partitions(key, rows, plain, one_row, {})
        return known

    def _kept_beside(self, facts: _Partitions, cluster: Cluster, partition: str) -> frozenset[str]:
        """The partitions whose jobs keep their cores from a job of ``partition`` under
        gang scheduling, in every step of ``steps.Tester`` past the first: its own (a row
        per partition) and, when the policy chooses victims by partition, those of a higher
        tier or with PreemptMode=OFF. (``facts``: ``_of_partitions``, which the caller
        has.)"""
        known = facts.beside
        beside = known.get(partition)
        if beside is None:
            kept = {partition}
            if cluster.preempt_traits.by_partition:
                tier = cluster.partition(partition).priority_tier
                for name, other in cluster.partitions.items():
                    mode = other.preempt_mode or cluster.config.preempt_mode
                    if other.priority_tier > tier or mode.base is PreemptBase.OFF:
                        kept.add(name)
            beside = known[partition] = frozenset(kept)
        return beside

    def _tester(self, cluster: Cluster) -> Tester:
        rows = self._rows(cluster)
        return Tester(
            cluster,
            self.layouts,
            self.resource,
            lambda p: rows.get(p, 1),
            self._exempt(cluster),
            self.reference,
        )

    def _exempt(self, cluster: Cluster) -> frozenset[int]:
        """Running jobs still inside their PreemptExemptTime: under gang scheduling no job
        may be placed on their cores."""
        config = cluster.config
        if not config.gang_scheduling:
            return frozenset()
        # No job is exempt when neither the cluster nor any QOS sets a time: no need to
        # ask about every running job.
        if not config.preempt_exempt_time and not any(
            qos.preempt_exempt_time for qos in config.qos
        ):
            return frozenset()
        exempt = set()
        for job in cluster.jobs_in(JobState.RUNNING):
            seconds = cluster.preempt_exempt_time(job)
            if seconds and job.start_time is not None and job.start_time + seconds > cluster.now:
                exempt.add(job.job_id)
        return frozenset(exempt)

    def _needs(self, job: Job, cluster: Cluster) -> Needs | None:
        part = cluster.partition(job.partition)
        last = self._last_needs
        if (
            last is not None
            and last[0] == job.job_id
            and last[1] is job.request
            and last[2] is part
            and last[3] is cluster.config
        ):
            return last[4]
        request = job.request
        # Needs depend on the partition, the configuration and these fields of the request
        # alone (see needs_of), and trace jobs repeat a few shapes: one Needs per shape
        # also keeps the idle tests' memo keys the same object.
        shape = (
            request.ntasks,
            request.min_nodes,
            request.max_nodes,
            request.cpus_per_task,
            request.mem_per_node,
            request.mem_per_cpu,
            request.nodelist,
            request.exclusive,
            request.contiguous,
            request.oversubscribe,
            request.ntasks_per_node,
        )
        known = self._needs_by_shape.get(id(part))
        if known is None or known[0] is not part or known[1] is not cluster.config:
            if len(self._needs_by_shape) >= _NEEDS_MEMO_PARTITIONS:
                self._needs_by_shape.clear()
            # (the entry holds the partition, so no other object takes its id meanwhile)
            known = self._needs_by_shape[id(part)] = (part, cluster.config, {})
        shapes = known[2]
        try:
            needs = shapes[shape]
        except TypeError:  # a request built with a list (the API allows it): not kept
            needs = needs_of(job, part, cluster.config, self.resource.memory)
        except KeyError:  # a shape not seen yet in this partition: rare
            if len(shapes) >= _IDLE_MEMO_SIZE:
                shapes.clear()
            needs = shapes[shape] = needs_of(job, part, cluster.config, self.resource.memory)
        self._last_needs = (job.job_id, request, part, cluster.config, needs)
        return needs

    def _changed(self) -> None:
        self.version += 1
        self.tested.clear()

    # ----------------------------------------------------------------------------- state

    @hookimpl
    def select_node_init(self, cluster: Cluster) -> bool:
        self.layouts = {
            name: layout_of(cluster.node(name), self.resource.unit)
            for name in cluster.config.node_names
        }
        self.usage = Usage()
        self.free_cores = FreeCores(cluster.config.node_names, cluster.node_index, self.layouts)
        self.idle_cores = FreeCores(cluster.config.node_names, cluster.node_index, self.layouts)
        self.idle_tests.clear()
        self.gres = GresState(cluster.config.gres) if cluster.config.gres.counts else None
        self.gres_configured.clear()
        self.gres_idle_tests.clear()
        self._changed()
        return True

    @hookimpl
    def select_reconfigure(self, cluster: Cluster) -> bool:
        self.usage.reshape(self._rows(cluster))
        self._changed()
        return True

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
            return self._gres_job_test(job, nodes, mode, candidates, cluster)
        if mode is _RUN_NOW and not candidates and self.gres is not None:
            bare = self._without_gres(nodes, cluster)
            if bare is not None:
                # Slurm 22.05 tries a job that asks for no generic resources on the nodes
                # without any first, and on all of them only if it does not fit there
                # (tests/data/gres/gpu-cpu-only-*)
                first = self.select_job_test(job, bare, mode, (), cluster)
                if first.status is _SUCCESS:
                    return first
        needs = self._needs(job, cluster)
        if needs is None:
            return SelectResult.never()
        unit = self.resource.for_partition(cluster.partition(job.partition))
        mask = _mask_in_table_order(nodes, cluster)
        common = mask is not None and on_free_cores(needs, unit)
        # the nodes as a bitmap when this RUN_NOW test goes on FreeCores, else None
        free_mask = mask if common and mode is _RUN_NOW and self._plain(cluster) else None
        placed: Placement | None = None
        placed_first = free_mask is not None and self.free_cores.one_layout
        if placed_first and free_mask is not None:
            # On nodes of one layout, a job placed on the cores free now is placed on an
            # idle cluster too (every node there has at least the slots it has now, and
            # the fewest nodes that hold the job are all it takes): no idle test first.
            placed = self.free_cores.place(needs, free_mask, unit)
            if placed is not None:
                return self._success(job, placed)
        idle = self._idle_test(needs, nodes, job.partition, unit, mask, cluster)
        if idle is None:
            return SelectResult.never()
        if mode is not _RUN_NOW:
            return SelectResult(_SUCCESS, idle)
        if free_mask is not None:
            if not placed_first:  # (else it was placed above: None)
                placed = self.free_cores.place(needs, free_mask, unit)
        else:
            placed = self._test_now(needs, nodes, job.partition, unit, mask, cluster)
        if placed is not None:
            return self._success(job, placed)
        if not candidates:
            return SelectResult.busy()
        return self._preempt(job, self._tester(cluster), needs, nodes, candidates, cluster)

    def _test_now(
        self,
        needs: Needs,
        nodes: Sequence[str],
        partition: str,
        unit: Unit,
        mask: int | None,
        cluster: Cluster,
    ) -> Placement | None:
        """A RUN_NOW test against the usage off FreeCores's plain case: ``steps.Tester``.

        Under gang scheduling with a row per partition, for a job that does not want whole
        nodes, counts no memory and asks for no node by name (``first_on_free_cores``), on
        nodes in table order (``mask``), Tester's step 1 is ``FreeCores.place``
        (``FreeCores.gang_step_one``), which places the job without the view of the
        usage. When it finds no room and every job on the nodes is of the job's partition
        or of one whose jobs keep their cores from it (``_kept_beside``), every later step
        of Tester blocks the very cores step 1 did, refused as step 1 was: no room either.
        Otherwise Tester goes on from step 2."""
        if (
            mask is None
            or self.reference
            or not cluster.config.gang_scheduling
            or not first_on_free_cores(needs, unit)
            or not (facts := self._of_partitions(cluster)).one_row
            or not self.free_cores.gang_step_one(mask)
        ):
            return self._tester(cluster).test(needs, nodes, partition, self.usage)
        placed = self.free_cores.place(needs, mask, unit)
        if placed is not None:
            return placed
        if self.free_cores.holds_only(mask, self._kept_beside(facts, cluster, partition)):
            return None
        tester = self._tester(cluster)
        return tester.test(needs, nodes, partition, self.usage, free_failed=True)

    def _without_gres(self, nodes: Sequence[str], cluster: Cluster) -> NodeBitmap | None:
        """Those of ``nodes`` without generic resources, when some of them have some and
        some have none (else None)."""
        state = self.gres
        assert state is not None
        known = self._gres_nodes
        if known is None or known[0] is not state:
            index = cluster.node_index
            with_gres = 0
            for name, counts in state.counts.items():
                if name in index and any(count.count for count in counts):
                    with_gres |= 1 << index[name]
            known = self._gres_nodes = (state, with_gres)
        mask = _mask_in_table_order(nodes, cluster)
        if mask is None:
            mask = cluster.mask_of(nodes)
        bare = mask & ~known[1]
        if bare == mask or not bare:
            return None
        return cluster.bitmap(bare)

    def _preempt(
        self,
        job: Job,
        tester: Tester,
        needs: Needs,
        nodes: Sequence[str],
        candidates: Sequence[Candidate],
        cluster: Cluster,
    ) -> SelectResult:
        """A RUN_NOW test that found no room: the placement after preempting some of
        ``candidates`` (suspension in place first, where the partition's mode allows it).

        A search that found none is remembered with the refusals of the nodes' view
        (``Usage.refusals``), keyed by what else it reads: the job's needs and partition,
        the exempt jobs, the policy's traits and every candidate's id and mode, in order
        (not for a job asking for GPUs, whose tests read the GPUs held too). A job that
        must preempt is tested at every pass while it waits, and its search walks every
        candidate whenever removing them is not enough. The candidates are compared one by
        one with those of the search remembered (they may be its first ones), reading no
        more of them than a search would (it would fail on the same ones first)."""
        if not candidates:
            return SelectResult.busy()
        refused: set[Hashable] | None = None
        key: Hashable = None
        if not self.reference and type(tester) is Tester:  # (GPUs are not in the view)
            key = nodes_key(nodes)
            self.usage.view_on(nodes, key)
            refused = self.usage.refusals(key)
        if refused is not None:
            exempt = tester.exempt
            head = (
                _PREEMPTING,
                needs,
                job.partition,
                exempt if isinstance(exempt, frozenset) else frozenset(exempt),
                cluster.preempt_traits,
            )
            searched = self._searched.get((key, head))
            if (
                searched is not None
                and (head, searched) in refused
                and _searched_before(candidates, searched)
            ):
                return SelectResult.busy()
        if (
            cluster.preempt_traits.suspend_in_partition
            and candidates[0].mode is PreemptBase.SUSPEND
        ):
            placed = preempt_by_suspension(
                tester, needs, nodes, job.partition, self.usage, candidates
            )
            if placed is not None:
                return self._success(job, placed)
        preemption = preempt_by_removal(
            tester,
            needs,
            nodes,
            job.partition,
            self.usage,
            candidates,
            cluster.config.preempt_parameters,
            suspend_releases=cluster.preempt_traits.suspend_releases,
        )
        if preemption is None:
            if refused is not None:
                # (a search that found nothing has read every candidate)
                searched = tuple((candidate.job_id, candidate.mode) for candidate in candidates)
                if len(self._searched) >= _IDLE_MEMO_SIZE:
                    self._searched.clear()
                self._searched[key, head] = searched
                refused.add((head, searched))
            return SelectResult.busy()
        return self._success(job, preemption.placement, preemption.victims)

    def _gres_need(self, job: Job, nodes: int | None = None) -> tuple[GresAsk, ...]:
        """Each node's share of the job's GRES, on ``nodes`` nodes (its -N by default)."""
        request = job.request
        assert request.gres_request is not None
        return request.gres_request.node_share(
            request.min_nodes if nodes is None else nodes, request.tasks, request.ntasks_per_node
        )

    def _gres_job_test(
        self,
        job: Job,
        nodes: Sequence[str],
        mode: SelectMode,
        candidates: Sequence[Candidate],
        cluster: Cluster,
    ) -> SelectResult:
        """The test of a job that asks for generic resources: only nodes with its share
        of them free, tested through :class:`GresTester` (in the preemption loop too).
        A job with ``--gpus-per-task`` or ``--gpus`` may take more nodes than its -N, the
        fewest that hold its GPUs (:func:`~plurm.model.gres.node_counts`)."""
        request = job.request
        assert request.gres_request is not None
        counts = node_counts(
            request.gres_request,
            request.min_nodes,
            request.max_nodes,
            request.tasks,
            request.ntasks_per_node,
            ntasks=request.ntasks,
        )
        if len(counts) > 1 and counts[-1] > len(nodes):  # (no more nodes than are offered)
            counts = range(counts[0], max(counts[0], len(nodes)) + 1)
        if len(counts) == 1:
            return self._gres_test_on(job, job, nodes, mode, candidates, cluster)
        outcome = SelectResult.never()
        # (copies of the job with -N count, tested; the job itself is never changed); a count
        # whose nodes' share is the previous count's needs more of the same nodes: left out
        shapes = []
        last: tuple[GresAsk, ...] = ()
        for count in counts:
            share = self._gres_need(job, count)
            if share != last:
                shapes.append(attrs.evolve(job, request=attrs.evolve(request, min_nodes=count)))
                last = share
        # on free resources at any node count first, then by preempting
        for victims in ((), candidates) if candidates else ((),):
            for wide in shapes:
                result = self._gres_test_on(job, wide, nodes, mode, victims, cluster)
                if result.status is SelectStatus.SUCCESS:
                    return result
                if result.status is not SelectStatus.NEVER:
                    outcome = result
        return outcome

    def _gres_test_on(
        self,
        job: Job,
        shaped: Job,
        nodes: Sequence[str],
        mode: SelectMode,
        candidates: Sequence[Candidate],
        cluster: Cluster,
    ) -> SelectResult:
        """:meth:`_gres_job_test` for ``job`` shaped as ``shaped`` (its node count)."""
        needs = self._needs(shaped, cluster)
        state = self.gres
        if needs is None or state is None:
            return SelectResult.never()
        request = shaped.request
        assert request.gres_request is not None
        if request.gres_request.per_task and needs.ntasks_per_node is None:
            # a node runs no more tasks than the per-task units it is given (its share)
            share = -(-needs.tasks // max(1, request.min_nodes))
            needs = attrs.evolve(needs, ntasks_per_node=share)
        need = self._gres_need(shaped)
        needs = _per_gpu(needs, request, need, max(1, request.min_nodes))
        if needs is None:
            return SelectResult.never()
        binding = request.gres_request.enforce_binding
        on = nodes_key(nodes)
        configured = self._gres_configured(state, need, nodes, on)
        if len(configured) < max(1, request.min_nodes):
            return SelectResult.never()
        tester = GresTester(self._tester(cluster), state, need, binding, reference=self.reference)
        if not self.reference:
            known = self._gres_absent
            if known is None or known[0] != self.version or known[1] is not state:
                known = self._gres_absent = (self.version, state, state.absent_from(self.usage))
            tester.knows_absent(self.usage, known[2])
        unit = self.resource.for_partition(cluster.partition(job.partition))
        # (``configured`` follows from the share and the nodes)
        key = (needs, need, binding, on, unit)
        idle = self.gres_idle_tests.get(key, _UNKNOWN)
        if idle is _UNKNOWN or self.reference:
            placed_idle = tester.test(needs, configured, job.partition, Usage())
            idle = None if placed_idle is None else placed_idle.nodes
            if len(self.gres_idle_tests) >= _IDLE_MEMO_SIZE:
                self.gres_idle_tests.clear()
            self.gres_idle_tests[key] = idle
        if idle is None:
            return SelectResult.never()
        if mode is not _RUN_NOW:
            return SelectResult(_SUCCESS, idle)
        placed = tester.test(needs, configured, job.partition, self.usage)
        if placed is not None:
            return self._success(job, placed)
        return self._preempt(job, tester, needs, configured, candidates, cluster)  # type: ignore[arg-type]

    def _gres_configured(
        self, state: GresState, need: tuple[GresAsk, ...], nodes: Sequence[str], key: object
    ) -> list[str]:
        """The nodes of ``nodes`` with ``need`` configured (free on an idle cluster),
        remembered: a configured list is the same object again, which GresTester's and
        the idle tests' memos use."""
        known = self.gres_configured.get((need, key))
        if known is None or self.reference:
            known = [n for n in nodes if state.choose(n, need, None, idle=True) is not None]
            if len(self.gres_configured) >= _IDLE_MEMO_SIZE:
                self.gres_configured.clear()
            self.gres_configured[need, key] = known
        return known

    def _plain(self, cluster: Cluster) -> bool:
        """Whether tests against the usage may take FreeCores's common case: without gang
        scheduling and with one row per partition, a job that wants its cores to itself
        only ever goes on free cores (steps 2 to 4 never run, no node is left out for
        another partition's rows)."""
        return self._of_partitions(cluster).plain

    def _idle_test(
        self,
        needs: Needs,
        nodes: Sequence[str],
        partition: str,
        unit: Unit,
        mask: int | None,
        cluster: Cluster,
    ) -> tuple[str, ...] | None:
        """The nodes of the job's placement on an idle cluster (None: it could never run on
        ``nodes``), remembered. ``mask``: the nodes as a bitmap when they are in table order
        (then the key: the names of a mask in table order are one tuple), else None.

        On an idle cluster nothing blocks a core and no node is left out, so every step of
        ``steps.Tester`` past the first blocks what the first did: a job of
        ``first_on_free_cores`` (one that shares included) is placed by FreeCores's step 1
        alone, on the idle cluster's FreeCores."""
        key = (needs, tuple(nodes) if mask is None else mask, unit)
        known = self.idle_tests.get(key, _UNKNOWN)
        if known is not _UNKNOWN:
            return known
        if len(self.idle_tests) >= _IDLE_MEMO_SIZE:
            self.idle_tests.clear()
        if mask is not None and first_on_free_cores(needs, unit):
            placed = self.idle_cores.place(needs, mask, unit)
        else:
            placed = self._tester(cluster).test(needs, nodes, partition, Usage())
        nodes_placed = self.idle_tests[key] = None if placed is None else placed.nodes
        return nodes_placed

    def _success(self, job: Job, placed: Placement, victims: tuple[int, ...] = ()) -> SelectResult:
        nodes = placed.nodes
        if not victims:
            self.tested[job.job_id] = _Tested(nodes, self.version, placed)
        return SelectResult(_SUCCESS, nodes, victims)

    # ----------------------------------------------------------------------------- lifecycle

    def _placement_for(self, job: Job, cluster: Cluster) -> Placement:
        """The placement behind ``job.nodes``: the remembered test if the usage has not
        changed since, else a new test on exactly those nodes, else (the core started the
        job where this plugin would not) one CPU per task on the lowest cores."""
        remembered = self.tested.get(job.job_id)
        if (
            remembered is not None
            and remembered.version == self.version
            and remembered.nodes == tuple(job.nodes)
        ):
            return remembered.placement
        needs = self._needs(job, cluster)
        if needs is not None and job.request.gres_request is not None:
            nodes = len(job.nodes)
            needs = _per_gpu(needs, job.request, self._gres_need(job, nodes), nodes)
        if needs is not None:
            placed = self._tester(cluster).test(needs, job.nodes, job.partition, self.usage)
            if placed is not None and placed.nodes == tuple(job.nodes):
                return placed
        self.log.warning("job %s: started on %s without a placement", job.job_id, job.nodes)
        per_node = max(1, job.request.cpus // max(1, len(job.nodes)))
        cores = {}
        cpus = {}
        for name in job.nodes:
            layout = self.layouts[name]
            count = min(layout.cores, -(-per_node // layout.cpus_per_core))
            if self.resource.unit is Unit.NONE:
                count = 0
            cores[name] = frozenset(range(count))
            cpus[name] = layout.cpus_of(count) if count else min(layout.cpus, per_node)
        return Placement(cores, cpus, dict.fromkeys(job.nodes, 0))

    @hookimpl
    def select_job_begin(self, job: Job, cluster: Cluster) -> bool:
        placed = self._placement_for(job, cluster)
        needs = self._needs(job, cluster)
        sharing = needs.sharing if needs is not None else _ONE_ROW
        allocation = placed.allocation(job.job_id, job.partition, sharing)
        self.usage.remove(job.job_id)
        if job.request.gres_request is not None and self.gres is not None:
            self._gres_begin(job, placed)
        self.usage.add(allocation, self._rows(cluster).get(job.partition, 1))
        self.free_cores.hold(allocation)
        self._changed()
        return True

    def _gres_begin(self, job: Job, placed: Placement) -> None:
        """Give the job its units on each node: bound to its cores where they can be (only
        there with enforce-binding), else the lowest free ones."""
        state = self.gres
        assert state is not None and job.request.gres_request is not None
        need = self._gres_need(job, len(placed.cores))
        binding = job.request.gres_request.enforce_binding
        held: dict[str, dict[tuple[str, str | None], tuple[int, ...]]] = {}
        if job.gres_alloc and {u.node for u in job.gres_alloc} == set(placed.cores):
            # recovered (a restarted controller): the units it was given, as they were,
            # unless another job holds one of them now
            for unit in job.gres_alloc:
                held.setdefault(unit.node, {})[(unit.name, unit.type)] = unit.indexes
            if not any(
                set(indexes) & state.used(node, self.usage).get(key, set())
                for node, keys in held.items()
                for key, indexes in keys.items()
            ):
                state.hold(job.job_id, held)
                return
            held = {}
        for node, cores in placed.cores.items():
            chosen = state.choose(node, need, self.usage, cores)
            if chosen is None and not binding:
                chosen = state.choose(node, need, self.usage)
            if chosen is None:  # the core started it where its units are not free
                self.log.warning("job %s: GRES not free on node=%s", job.job_id, node)
                continue
            held[node] = chosen
        state.hold(job.job_id, held)

    @hookimpl
    def select_job_gres(self, job: Job, cluster: Cluster) -> tuple[GresHeld, ...]:
        if self.gres is None:
            return ()
        held = self.gres.held.get(job.job_id, {})
        return tuple(
            GresHeld(node, name, gtype, indexes)
            for node in cluster.in_table_order(held)
            for (name, gtype), indexes in held[node].items()
        )

    @hookimpl
    def select_job_resources(self, job: Job, cluster: Cluster) -> frozenset[tuple[str, int]]:
        allocation = self.usage.allocations.get(job.job_id)
        if allocation is None:
            return frozenset()
        return frozenset().union(*map(self._units_on, allocation.cores.items()))

    def _units_on(self, held: tuple[str, frozenset[int]]) -> frozenset[tuple[str, int]]:
        """The (node, core) pairs of ``held``'s cores on its node, remembered."""
        units = self._node_units.get(held)
        if units is None:
            if len(self._node_units) >= _UNITS_MEMO_SIZE:
                self._node_units.clear()
            name, cores = held
            units = self._node_units[held] = frozenset(zip(itertools.repeat(name), cores))
        return units

    @hookimpl
    def select_job_fini(self, job: Job, cluster: Cluster) -> bool:
        self.usage.remove(job.job_id)
        if self.gres is not None:
            self.gres.release(job.job_id)
        self.free_cores.release(job.job_id)
        self._changed()
        return True

    @hookimpl
    def select_job_resized(self, job: Job, nodes: Sequence[str], cluster: Cluster) -> bool:
        """A completing job gave up some of its nodes: its cores, CPUs and memory there are
        free; it keeps its place in its row with the rest."""
        allocation = self.usage.allocations.get(job.job_id)
        if allocation is None:
            return True
        gone = set(nodes)
        if self.gres is not None:
            self.gres.release(job.job_id, gone)
        kept = attrs.evolve(
            allocation,
            cores={n: c for n, c in allocation.cores.items() if n not in gone},
            cpus={n: c for n, c in allocation.cpus.items() if n not in gone},
            memory={n: m for n, m in allocation.memory.items() if n not in gone},
            runs=(),
        )
        self.usage.replace(kept)
        if self.usage.in_rows(job.job_id):
            self.free_cores.hold(kept)
        self._changed()
        return True

    @hookimpl
    def select_job_suspend(self, job: Job, indefinite: bool, cluster: Cluster) -> bool:
        # A gang suspension keeps the job in its row (it still counts against
        # OverSubscribe); an admin suspension frees its cores, not its memory.
        if indefinite and job.job_id in self.usage.allocations:
            self.usage.unplace(job.job_id)
            self.free_cores.release(job.job_id)
            self._changed()
        return True

    @hookimpl
    def select_job_resume(self, job: Job, indefinite: bool, cluster: Cluster) -> bool:
        if (
            indefinite
            and job.job_id in self.usage.allocations
            and not self.usage.in_rows(job.job_id)
        ):
            self.usage.place(job.job_id, self._rows(cluster).get(job.partition, 1))
            self.free_cores.hold(self.usage.allocations[job.job_id])
            self._changed()
        return True

    @hookimpl
    def select_job_resumable(self, job: Job, cluster: Cluster) -> bool:
        """A job out of its row (an admin or releasing suspension) may go back when one of
        its partition's rows has none of its cores taken and no job of another partition
        holds any of them."""
        usage = self.usage
        allocation = usage.allocations.get(job.job_id)
        if allocation is None or usage.in_rows(job.job_id):
            return allocation is not None
        rows = usage.rows.get(job.partition, [])
        count = self._rows(cluster).get(job.partition, 1)
        overlaps = allocation.overlaps
        row_free = len(rows) < count or any(
            not any(overlaps(usage.allocations[other].cores) for other in row) for row in rows
        )
        if not row_free:
            return False
        return not any(
            part != job.partition and overlaps(other.cores) for part, _, other in usage.row_jobs()
        )

    @hookimpl
    def select_node_alloc(self, cluster: Cluster) -> dict[str, int]:
        """CPUs of the cores held on each node by jobs in rows (running or gang-suspended);
        with CR_Memory, the CPUs the jobs asked for, up to the node's."""
        alloc: dict[str, int] = {}
        if self.resource.unit is Unit.NONE:
            for allocation in self.usage.allocations.values():
                if not self.usage.in_rows(allocation.job_id):
                    continue
                for name, cpus in allocation.cpus.items():
                    alloc[name] = min(self.layouts[name].cpus, alloc.get(name, 0) + cpus)
            return alloc
        if not self.reference:
            # FreeCores keeps each node's held cores as jobs sit in rows and leave them
            return dict(self.free_cores.held_cpus())
        held: dict[str, set[int]] = {}
        for _, _, allocation in self.usage.row_jobs():
            for name, cores in allocation.cores.items():
                held.setdefault(name, set()).update(cores)
        return {
            name: self.layouts[name].cpus_of(len(cores)) for name, cores in held.items() if cores
        }

    @hookimpl
    def select_partly_free(self, cluster: Cluster) -> int | None:
        """The nodes where jobs in rows hold cores and leave CPUs free, as FreeCores keeps
        them (node table order is the cluster's bitmaps' order); None with CR_Memory or as
        the reference, whose core works them out from ``select_node_alloc``."""
        if self.resource.unit is Unit.NONE or self.reference:
            return None
        return self.free_cores.partly

    @hookimpl
    def select_answers_by_nodes(self, cluster: Cluster) -> bool:
        """True, but under gang scheduling with a PreemptExemptTime (the cluster's or a
        QOS's): a running job's cores are then closed to other jobs until its exempt time
        is over, an answer that changes with the clock (see ``_exempt``)."""
        config = cluster.config
        return not (
            config.gang_scheduling
            and (config.preempt_exempt_time or any(qos.preempt_exempt_time for qos in config.qos))
        )

    @hookimpl
    def select_node_alloc_mem(self, cluster: Cluster) -> dict[str, int] | None:
        """The memory of every job holding resources (suspended ones keep theirs), summed
        per node, when SelectTypeParameters counts memory; else None (AllocMem shows 0)."""
        if not self.resource.memory:
            return None
        return {n: m for n, m in View.of(self.usage).memory.items() if m}


def _searched_before(
    candidates: Sequence[Candidate], searched: tuple[tuple[int, PreemptBase], ...]
) -> bool:
    """Whether ``candidates`` are ``searched`` (ids and modes, in order) or the first of
    them, read one by one up to the first that differs: a search of them removes the
    candidates in the order of one that found nothing, and stops no later."""
    count = len(searched)
    for index, candidate in enumerate(candidates):
        if index >= count or (candidate.job_id, candidate.mode) != searched[index]:
            return False
    return True


def _per_gpu(
    needs: Needs, request: JobRequest, share: Sequence[GresAsk], nodes: int
) -> Needs | None:
    """``needs`` on ``nodes`` nodes with ``--cpus-per-gpu`` and ``--mem-per-gpu`` applied to
    the GPUs each node gives (``share``): a node's tasks get at least cpus-per-gpu times its
    GPUs between them (the CPUs per task raised, rounded up), and when memory is counted
    each node gives mem-per-gpu times its GPUs (None: beyond MaxMemPerNode)."""
    gres = request.gres_request
    if gres is None or (gres.cpus_per_gpu is None and gres.mem_per_gpu is None):
        return needs
    gpus = sum(ask.count for ask in share if ask.name == "gpu")
    if not gpus:
        return needs
    changes: dict[str, object] = {}
    if gres.cpus_per_gpu is not None:
        on_node = (
            request.ntasks_per_node
            if request.ntasks_per_node is not None
            else -(-needs.tasks // max(1, nodes))
        )
        per_task = -(-gres.cpus_per_gpu * gpus // max(1, on_node))
        if per_task > needs.cpus_per_task:
            changes["cpus_per_task"] = per_task
    if (
        gres.mem_per_gpu is not None
        and needs.memory_kind is not MemoryKind.NONE
        and request.mem_per_node is None
        and request.mem_per_cpu is None
    ):
        amount = gres.mem_per_gpu * gpus
        if needs.max_memory is not None and amount > needs.max_memory:
            return None
        changes["memory_kind"] = MemoryKind.PER_NODE
        changes["memory"] = amount
    return attrs.evolve(needs, **changes) if changes else needs


def _mask_in_table_order(nodes: Sequence[str], cluster: Cluster) -> int | None:
    """``nodes`` as a node bitmap if they are known nodes in node-table order (FreeCores
    walks bitmaps in table order, the general code walks ``nodes`` as given), else None."""
    if type(nodes) is NodeBitmap or isinstance(nodes, NodeBitmap):  # (the ABC check is slow)
        return nodes.mask
    index = cluster.node_index
    mask = 0
    last = -1
    for name in nodes:
        position = index.get(name, -1)
        if position <= last:
            return None
        mask |= 1 << position
        last = position
    return mask
