"""The typed facade over pluggy: one method per hook, so the core never calls ``pm.hook.*``.

:meth:`Plugins.load` reads the plugin type strings from the configuration, loads each through
the :class:`~plurm.registry.Registry`, registers it, runs pluggy's ``check_pending`` and then
checks Slurm's rule that a single-valued type has exactly one implementation: every exclusive
(``firstresult``) hook a role needs must be implemented by exactly one loaded plugin.

Set ``PLURM_TRACE_HOOKS=1`` to log every hook call (pluggy's hook-call monitoring).
"""

from __future__ import annotations

import difflib
import functools
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pluggy
from pluggy._callers import _multicall
from pluggy._hooks import varnames

from plurm._markers import NAME
from plurm.conf.model import NO_EFFECT_KEYS, SlurmConfig
from plurm.conf.values import SLURM_PREEMPT_TYPES, PreemptBase, PreemptMode
from plurm.errors import ConfError, raise_collected
from plurm.hookspecs import SPEC_MODULES
from plurm.model.changes import ChangeLog
from plurm.model.select import (
    Candidate,
    GangDecision,
    PreemptMethod,
    SelectMode,
    SelectResult,
)
from plurm.model.traits import PreemptTraits
from plurm.model.usage import StepUsage
from plurm.params import check_options
from plurm.registry import LoadedPlugin, PluginConflictError, PluginLoadError, Registry

if TYPE_CHECKING:  # (a command that loads only its auth plugin imports no cluster model)
    from plurm.model.backfill import BackfillStart, BackfillView
    from plurm.model.cluster import Cluster
    from plurm.model.gres import GresHeld
    from plurm.model.job import Job, JobRequest, JobState
    from plurm.model.priority import PriorityFactors, PriorityWeights, ShareRow

__all__ = ["DAEMON_ROLES", "SIMULATOR_ROLES", "Plugins"]

logger = logging.getLogger(__name__)

#: Plugin types the simulator loads (it sends no messages, so it needs no auth): the
#: policies, and Slurm's plugins that have no effect here (they only say so).
SIMULATOR_ROLES = (
    "select",
    "preempt",
    "sched",
    "jobacct_gather",
    "priority",
    *NO_EFFECT_KEYS.values(),
)
#: Plugin types the live daemons load.
DAEMON_ROLES = (*SIMULATOR_ROLES, "auth")

# Exclusive hooks each role must have exactly one implementation of.
_REQUIRED = {
    "select": ("select_job_test", "select_job_begin", "select_job_fini"),
    "preempt": ("preempt_preemptable", "preempt_mode", "preempt_priority"),
    "sched": ("sched_queue_order",),
    "jobacct_gather": (),
    "priority": ("priority_job_set",),
    "auth": ("auth_create", "auth_verify", "auth_get_ids"),
    **{prefix: () for prefix in NO_EFFECT_KEYS.values()},
}


class _Hook:
    """One hook, called with its spec's arguments in the spec's order; the result is what
    pluggy's call would return.

    Fast path: when at most one plugin implements the hook, as a plain function (not a
    wrapper) taking exactly the spec's arguments in order, and no hook-call monitoring is on
    (``PLURM_TRACE_HOOKS``, the testing HookRecorder), the implementation is called directly.
    pluggy's own call (argument check, copying the implementation list, the ``_multicall``
    loop) costs a few microseconds, and a trace replay calls hooks such as
    ``select_job_test`` millions of times. Every call checks that the implementations are
    still the ones the fast path was built for, so registering or unregistering a plugin
    later, or turning monitoring on, goes back through pluggy.
    """

    __slots__ = ("_argnames", "_caller", "_direct", "_firstresult", "_impls", "_manager")

    def __init__(self, manager: pluggy.PluginManager, name: str) -> None:
        self._manager = manager
        self._caller: pluggy.HookCaller = getattr(manager.hook, name)
        spec = self._caller.spec
        self._argnames = tuple(spec.argnames) if spec is not None else ()
        self._firstresult = bool(spec is not None and spec.opts.get("firstresult"))
        self._impls: list[Any] | None = None
        self._direct: Callable[..., Any] | None = None

    def _refresh(self) -> None:
        impls = self._caller._hookimpls
        self._impls = list(impls)
        self._direct = None
        if not impls:
            self._direct = _nothing
        elif len(impls) == 1:
            impl = impls[0]
            plain = not (impl.wrapper or impl.hookwrapper or impl.kwargnames)
            if plain and tuple(impl.argnames) == self._argnames:
                self._direct = impl.function

    def direct(self) -> Callable[..., Any] | None:
        """The single plain implementation of this exclusive hook, to call for a stretch of
        work in which no plugin is registered and monitoring stays off; None when pluggy
        must dispatch."""
        if self._caller._hookimpls != self._impls:
            self._refresh()
        if not self._firstresult or self._manager._inner_hookexec is not _multicall:
            return None
        return self._direct

    def unanswered(self) -> bool:
        """Whether a call would do nothing: no plugin implements the hook and no monitoring
        would see the call."""
        if self._caller._hookimpls != self._impls:
            self._refresh()
        return self._direct is _nothing and self._manager._inner_hookexec is _multicall

    def __call__(self, *args: Any) -> Any:
        if self._caller._hookimpls != self._impls:
            self._refresh()
        direct = self._direct
        if direct is None or self._manager._inner_hookexec is not _multicall:
            return self._caller(**dict(zip(self._argnames, args, strict=True)))
        result = direct(*args)
        if self._firstresult:
            return result
        return [] if result is None else [result]


#: Gang scheduling's answer when it wants nothing done (a frozen value, so shared).
_NO_GANG_DECISION = GangDecision()


def _select_result(result: object) -> SelectResult:
    """select_job_test's answer, checked: a plugin must answer a SelectResult."""
    if not isinstance(result, SelectResult):
        raise PluginLoadError(f"select_job_test returned {result!r}, not a SelectResult")
    return result


def _preempt_mode(answer: object) -> PreemptMode:
    """preempt_mode's answer, or the default mode when no plugin gave one."""
    return answer if isinstance(answer, PreemptMode) else PreemptMode()


def _mismatch(manager: pluggy.PluginManager, plugin: LoadedPlugin) -> str | None:
    """Which hook implementation of ``plugin`` asks for arguments its spec does not give,
    told with both argument lists (pluggy refuses it at registration)."""
    obj = plugin.plugin
    for attr in dir(obj):
        method = getattr(obj, attr, None)
        if not callable(method) or getattr(method, f"{NAME}_impl", None) is None:
            continue
        caller = getattr(manager.hook, attr, None)
        spec = caller.spec if isinstance(caller, pluggy.HookCaller) else None
        if spec is None:
            continue
        args = varnames(method)[0]
        extra = [arg for arg in args if arg not in spec.argnames]
        if extra:
            return (
                f"{plugin.type_string} ({plugin.distribution}): {attr}({', '.join(args)}) "
                f"asks for {', '.join(extra)}, which the hook does not give; {attr} receives "
                f"({', '.join(spec.argnames)}), any of them, by these names"
            )
    return None


def _nothing(*args: Any) -> None:
    """No implementation: a firstresult hook answers None, others an empty list."""
    return None


class Plugins:
    """The loaded plugins of one controller, behind typed methods."""

    def __init__(self, manager: pluggy.PluginManager, loaded: Sequence[LoadedPlugin] = ()) -> None:
        self.manager = manager
        self.loaded = tuple(loaded)
        self._hook = manager.hook
        self._hooks: dict[str, _Hook] = {}
        #: The nodes of every change the select plugin is told of, whoever tells it (see
        #: plurm.model.changes): a BUSY answer on nodes none touched since still holds.
        self.select_changes = ChangeLog()

    # ----------------------------------------------------------------------------- loading

    @staticmethod
    def new_manager() -> pluggy.PluginManager:
        manager = pluggy.PluginManager(NAME)
        for module in SPEC_MODULES:
            manager.add_hookspecs(module)
        if os.environ.get("PLURM_TRACE_HOOKS"):
            manager.trace.root.setwriter(logger.debug)
            manager.enable_tracing()
        return manager

    @classmethod
    def load(
        cls,
        config: SlurmConfig,
        *,
        registry: Registry | None = None,
        roles: Iterable[str] = SIMULATOR_ROLES,
        extra: Iterable[object] = (),
    ) -> Plugins:
        """Load the plugins ``config`` names for ``roles``; ``extra`` objects (observers,
        test doubles) are registered after them."""
        registry = registry or Registry()
        roles = tuple(roles)
        manager = cls.new_manager()
        loaded = []
        types = config.plugin_types()
        for role in roles:
            for type_string in types[role]:
                if manager.has_plugin(type_string):
                    raise PluginConflictError(
                        f"{type_string} is named twice (PreemptType and PreemptGuards?)"
                    )
                plugin = registry.load(type_string, config)
                try:
                    manager.register(plugin.plugin, name=type_string)
                except pluggy.PluginValidationError as error:
                    raise PluginLoadError(_mismatch(manager, plugin) or str(error)) from None
                loaded.append(plugin)
        for index, obj in enumerate(extra):
            manager.register(obj, name=f"extra-{index}")
        plugins = cls(manager, loaded)
        plugins.check(roles)
        raise_collected(check_options(config, {p.type_string: p.options for p in loaded}))
        if "preempt" in roles:
            plugins._check_preempt_mode(config)
        return plugins

    def _check_preempt_mode(self, config: SlurmConfig) -> None:
        """PreemptMode against a PreemptType the configuration parser does not judge (not
        one of Slurm's): the policy's ``preempt_check_mode``, else Slurm's rule that
        SUSPEND needs GANG."""
        if config.preempt_type in SLURM_PREEMPT_TYPES:
            return
        mode = config.preempt_mode
        if self.implements("preempt_check_mode"):
            message = self._fast("preempt_check_mode")(mode, config)
        elif mode.base is PreemptBase.SUSPEND and not mode.gang:
            message = "PreemptMode=SUSPEND requires GANG too"
        else:
            message = None
        if message:
            raise ConfError(f"PreemptType={config.preempt_type}, PreemptMode: {message}")

    def check(self, roles: Iterable[str]) -> None:
        """No implementation of a hook that does not exist (pluggy's check_pending, with
        the plugin's type string and the nearest hook), then exactly one implementation of
        each exclusive hook."""
        specs = sorted(
            name
            for name, caller in vars(self._hook).items()
            if isinstance(caller, pluggy.HookCaller) and caller.spec is not None
        )
        for name, caller in vars(self._hook).items():
            if not isinstance(caller, pluggy.HookCaller) or caller.spec is not None:
                continue
            for impl in caller.get_hookimpls():
                if impl.optionalhook:
                    continue
                owner = self.manager.get_name(impl.plugin)
                near = difflib.get_close_matches(name, specs, n=1, cutoff=0.6)
                hint = f"; did you mean {near[0]}?" if near else ""
                raise PluginLoadError(
                    f"{owner} ({self._distribution(owner)}): {name} is not a Plurm hook{hint}"
                )
        try:
            self.manager.check_pending()
        except pluggy.PluginValidationError as error:
            raise PluginLoadError(str(error)) from error
        for role in roles:
            for name in _REQUIRED[role]:
                implementations = getattr(self._hook, name).get_hookimpls()
                owners = [self.manager.get_name(impl.plugin) for impl in implementations]
                if len(owners) != 1:
                    found = ", ".join(str(owner) for owner in owners) or "none"
                    raise PluginConflictError(
                        f"{name} needs exactly one implementation among the loaded {role} "
                        f"plugins; found {found}"
                    )
        for caller in self._hook.__dict__.values():
            if not isinstance(caller, pluggy.HookCaller) or caller.spec is None:
                continue
            if caller.spec.opts.get("firstresult") and len(caller.get_hookimpls()) > 1:
                names = ", ".join(
                    str(self.manager.get_name(impl.plugin)) for impl in caller.get_hookimpls()
                )
                raise PluginConflictError(
                    f"{caller.name} is exclusive but implemented by several plugins: {names}"
                )

    def _distribution(self, type_string: object) -> str:
        return next(
            (p.distribution for p in self.loaded if p.type_string == type_string), "given directly"
        )

    def type_strings(self) -> tuple[str, ...]:
        """The type strings loaded, in loading order."""
        return tuple(plugin.type_string for plugin in self.loaded)

    def implements(self, hook: str) -> bool:
        """Whether any loaded plugin implements ``hook``."""
        return bool(getattr(self._hook, hook).get_hookimpls())

    def _fast(self, name: str) -> _Hook:
        """Hook ``name`` as a :class:`_Hook` (positional arguments, direct call when it can)."""
        hook = self._hooks.get(name)
        if hook is None:
            hook = self._hooks[name] = _Hook(self.manager, name)
        return hook

    # ----------------------------------------------------------------------------- select

    def select_node_init(self, cluster: Cluster) -> None:
        self._fast("select_node_init")(cluster)

    def select_reconfigure(self, cluster: Cluster) -> None:
        self._fast("select_reconfigure")(cluster)
        self.select_changes.changed(-1)  # (it may read any partition's settings)

    def select_job_test(
        self,
        job: Job,
        nodes: Sequence[str],
        mode: SelectMode,
        candidates: Sequence[Candidate],
        cluster: Cluster,
    ) -> SelectResult:
        return _select_result(self._fast("select_job_test")(job, nodes, mode, candidates, cluster))

    def select_test_only_for(
        self, cluster: Cluster
    ) -> Callable[[Job, Sequence[str]], SelectResult]:
        """``select_job_test`` in TEST_ONLY mode, without candidates, on ``cluster``, as a
        two-argument function for one backfill pass (which asks it for every job it plans):
        the implementation itself when it can be called directly (see :class:`_Hook`)."""
        direct = self._fast("select_job_test").direct()
        if direct is None:
            return functools.partial(
                self.select_job_test, mode=SelectMode.TEST_ONLY, candidates=(), cluster=cluster
            )
        implementation = direct
        test_only = SelectMode.TEST_ONLY

        def test(job: Job, nodes: Sequence[str]) -> SelectResult:
            return _select_result(implementation(job, nodes, test_only, (), cluster))

        return test

    def select_node_alloc(self, cluster: Cluster) -> dict[str, int]:
        alloc = self._fast("select_node_alloc")(cluster)
        return dict(alloc) if alloc else {}

    def select_partly_free(self, cluster: Cluster) -> int | None:
        partly: int | None = self._fast("select_partly_free")(cluster)
        return partly

    def select_answers_by_nodes(self, cluster: Cluster) -> bool:
        """``select_answers_by_nodes``: True only when the plugin says so."""
        return self._fast("select_answers_by_nodes")(cluster) is True

    def select_node_alloc_mem(self, cluster: Cluster) -> dict[str, int]:
        memory = self._fast("select_node_alloc_mem")(cluster)
        return dict(memory) if memory else {}

    def select_job_begin(self, job: Job, cluster: Cluster) -> None:
        self._fast("select_job_begin")(job, cluster)
        self.select_changes.changed(cluster.mask_of(job.nodes))

    def select_job_resources(self, job: Job, cluster: Cluster) -> frozenset[tuple[str, int]] | None:
        units = self._fast("select_job_resources")(job, cluster)
        return frozenset(units) if units is not None else None

    def select_job_gres(self, job: Job, cluster: Cluster) -> tuple[GresHeld, ...]:
        held = self._fast("select_job_gres")(job, cluster)
        return tuple(held) if held else ()

    def select_job_fini(self, job: Job, cluster: Cluster) -> None:
        self._fast("select_job_fini")(job, cluster)
        self.select_changes.changed(cluster.mask_of(job.nodes))

    def select_job_resized(self, job: Job, nodes: Sequence[str], cluster: Cluster) -> None:
        self._fast("select_job_resized")(job, nodes, cluster)
        self.select_changes.changed(cluster.mask_of(nodes))

    def select_job_suspend(self, job: Job, indefinite: bool, cluster: Cluster) -> None:
        self._fast("select_job_suspend")(job, indefinite, cluster)
        self.select_changes.changed(cluster.mask_of(job.nodes))

    def select_job_resumable(self, job: Job, cluster: Cluster) -> bool:
        """Whether the suspended ``job`` may resume on what it holds: select's answer, else
        a RUN_NOW test on its nodes that places it on all of them."""
        answer = self._fast("select_job_resumable")(job, cluster)
        if answer is not None:
            return bool(answer)
        result = self.select_job_test(job, job.nodes, SelectMode.RUN_NOW, (), cluster)
        return result.status.name == "SUCCESS" and set(result.nodes) == set(job.nodes)

    def select_job_resume(self, job: Job, indefinite: bool, cluster: Cluster) -> None:
        self._fast("select_job_resume")(job, indefinite, cluster)
        self.select_changes.changed(cluster.mask_of(job.nodes))

    # ----------------------------------------------------------------------------- preempt

    def preempt_by_tier(self, cluster: Cluster) -> bool:
        """Whether jobs preempt only jobs of lower-PriorityTier partitions."""
        return self._fast("preempt_by_tier")(cluster) is True

    def preempt_victims_fixed(self, cluster: Cluster) -> bool:
        """``preempt_victims_fixed``: True only when the plugin says so."""
        return self._fast("preempt_victims_fixed")(cluster) is True

    def preempt_by_partition(self, cluster: Cluster) -> bool:
        """``preempt_by_partition``: True only when the plugin says so."""
        return self._fast("preempt_by_partition")(cluster) is True

    def preempt_suspend_in_partition(self, cluster: Cluster) -> bool:
        """``preempt_suspend_in_partition``: True only when the plugin says so."""
        return self._fast("preempt_suspend_in_partition")(cluster) is True

    def preempt_suspend_releases(self, cluster: Cluster) -> bool:
        """``preempt_suspend_releases``: True only when the plugin says so."""
        return self._fast("preempt_suspend_releases")(cluster) is True

    def preempt_trim_victims(self, cluster: Cluster) -> bool:
        """``preempt_trim_victims``: True only when the plugin says so."""
        return self._fast("preempt_trim_victims")(cluster) is True

    def preempt_victim_cost(
        self, preemptor: Job, candidate: Candidate, cluster: Cluster
    ) -> float | None:
        """The cost of ``candidate`` as a victim of ``preemptor`` under the site's victim
        objective; None: Slurm's choice stands (no plugin answers)."""
        cost = self._fast("preempt_victim_cost")(preemptor, candidate, cluster)
        return None if cost is None else float(cost)

    def preempt_methods(self, job: Job, cluster: Cluster) -> tuple[PreemptMethod, ...] | None:
        """The policy's ladder for ``job``, or None when it gives none (``preempt_mode``
        then decides)."""
        ladder = self._fast("preempt_methods")(job, cluster)
        return None if ladder is None else tuple(ladder)

    def preempt_candidates(
        self, preemptor: Job, candidates: Sequence[Candidate], cluster: Cluster
    ) -> Sequence[Candidate]:
        """The policy's choice and order among ``candidates`` (any it did not get ignored),
        or ``candidates`` when it gives none."""
        chosen = self._fast("preempt_candidates")(preemptor, candidates, cluster)
        if chosen is None:
            return candidates
        offered = {id(candidate) for candidate in candidates}
        seen: set[int] = set()
        kept = []
        for candidate in chosen:
            if id(candidate) in offered and id(candidate) not in seen:
                seen.add(id(candidate))
                kept.append(candidate)
        return kept

    def preempt_traits(self, cluster: Cluster) -> PreemptTraits:
        """The preempt policy's capability answers, as other plugins read them on
        ``cluster.preempt_traits``."""
        return PreemptTraits(
            by_partition=self.preempt_by_partition(cluster),
            suspend_in_partition=self.preempt_suspend_in_partition(cluster),
            suspend_releases=self.preempt_suspend_releases(cluster),
            suspended_reserve=self._fast("preempt_suspended_reserve")(cluster) is True,
        )

    def preempt_enabled(self, cluster: Cluster) -> bool:
        """Whether any job may ever preempt another (True unless the plugin says no)."""
        return self._fast("preempt_enabled")(cluster) is not False

    def preempt_preemptable(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        """The policy's ``preempt_preemptable``, then, if it said yes, every guard's
        ``preempt_veto``: one True vetoes."""
        if not self._fast("preempt_preemptable")(preemptor, preemptee, cluster):
            return False
        veto = self._fast("preempt_veto")
        return veto.unanswered() or not any(veto(preemptor, preemptee, cluster))

    def preempt_policy_preemptable(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        """The policy's own ``preempt_preemptable``, without the guards (for explanations)."""
        return bool(self._fast("preempt_preemptable")(preemptor, preemptee, cluster))

    def preempt_vetoes(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> tuple[str, ...]:
        """The names of the guards whose ``preempt_veto`` spares ``preemptee`` from
        ``preemptor`` (for explanations; the hot path asks :meth:`preempt_preemptable`)."""
        given = {"preemptor": preemptor, "preemptee": preemptee, "cluster": cluster}
        return tuple(
            str(self.manager.get_name(impl.plugin))
            for impl in self._hook.preempt_veto.get_hookimpls()
            if impl.function(**{name: given[name] for name in impl.argnames})
        )

    def preempt_mode(self, job: Job, cluster: Cluster) -> PreemptMode:
        return _preempt_mode(self._fast("preempt_mode")(job, cluster))

    def preempt_priority(self, job: Job, cluster: Cluster) -> int:
        return int(self._fast("preempt_priority")(job, cluster) or 0)

    def preempt_grace_time(self, job: Job, cluster: Cluster) -> int:
        return int(self._fast("preempt_grace_time")(job, cluster) or 0)

    def preempt_suspended_counts(self, job: Job, scope: str, cluster: Cluster) -> bool:
        """Whether the preempt-suspended ``job`` counts against the limits of ``scope``
        ("user" or "account"): True unless the policy says no."""
        return self._fast("preempt_suspended_counts")(job, scope, cluster) is not False

    def preempt_requeue_delay(self, job: Job, cluster: Cluster, default: int) -> int:
        """Seconds the requeued victim ``job`` waits before it may run again: the policy's
        answer, else ``default`` (Slurm's delay)."""
        answer = self._fast("preempt_requeue_delay")(job, cluster)
        return default if answer is None else max(0, int(answer))

    def preempt_job_preempt_check(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        return bool(self._fast("preempt_job_preempt_check")(preemptor, preemptee, cluster))

    def preempt_candidate_questions(
        self, cluster: Cluster
    ) -> tuple[Callable[[Job, Job], bool], Callable[[Job], PreemptMode], Callable[[Job], int]]:
        """``preempt_preemptable``, ``preempt_mode`` and ``preempt_priority`` on ``cluster``,
        for one candidate walk (which asks all three for every running job): the
        implementations themselves when they can be called directly (see :class:`_Hook`) and
        no guard is loaded, with the same conversions as the methods above."""
        preemptable = self._fast("preempt_preemptable").direct()
        mode = self._fast("preempt_mode").direct()
        priority = self._fast("preempt_priority").direct()
        guarded = not self._fast("preempt_veto").unanswered()
        if preemptable is None or mode is None or priority is None or guarded:
            return (
                functools.partial(self.preempt_preemptable, cluster=cluster),
                functools.partial(self.preempt_mode, cluster=cluster),
                functools.partial(self.preempt_priority, cluster=cluster),
            )
        ask_preemptable, ask_mode, ask_priority = preemptable, mode, priority

        def may_preempt(preemptor: Job, preemptee: Job) -> bool:
            return bool(ask_preemptable(preemptor, preemptee, cluster))

        def mode_of(job: Job) -> PreemptMode:
            return _preempt_mode(ask_mode(job, cluster))

        def priority_of(job: Job) -> int:
            return int(ask_priority(job, cluster) or 0)

        return may_preempt, mode_of, priority_of

    def preempt_check_for(self, cluster: Cluster) -> Callable[[Job, Job], bool]:
        """``preempt_job_preempt_check`` on ``cluster`` as a two-argument function, for one
        queue sort (which asks it for every pair it compares): the implementation itself
        when it can be called directly (see :class:`_Hook`), looked up once for the sort."""
        direct = self._fast("preempt_job_preempt_check").direct()
        if direct is None:
            return functools.partial(self.preempt_job_preempt_check, cluster=cluster)
        implementation = direct

        def check(preemptor: Job, preemptee: Job) -> bool:
            return bool(implementation(preemptor, preemptee, cluster))

        return check

    # ----------------------------------------------------------------------------- sched

    def sched_queue_order(
        self, jobs: Sequence[Job], preempts: Callable[[Job, Job], bool], cluster: Cluster
    ) -> list[Job]:
        ordered = self._fast("sched_queue_order")(jobs, preempts, cluster)
        return list(ordered) if ordered is not None else list(jobs)

    def sched_queue_key(
        self, preempts: Callable[[Job, Job], bool], cluster: Cluster
    ) -> Callable[[Job], Any] | None:
        key = self._fast("sched_queue_key")(preempts, cluster)
        return key if callable(key) else None

    def sched_backfill_interval(self, cluster: Cluster) -> int | None:
        interval = self._fast("sched_backfill_interval")(cluster)
        return int(interval) if interval else None

    def sched_backfill(
        self, jobs: Sequence[Job], view: BackfillView, cluster: Cluster
    ) -> list[BackfillStart]:
        starts = self._fast("sched_backfill")(jobs, view, cluster)
        return list(starts or ())

    def _gang(self, name: str, *args: Any) -> GangDecision:
        hook = self._fast(name)
        if hook.unanswered():  # no gang plugin: every start and end asks, for nothing
            return _NO_GANG_DECISION
        decisions = [d for d in hook(*args) if d]
        if not decisions:  # nothing to do: the common answer, shared
            return _NO_GANG_DECISION
        return GangDecision(
            tuple(job for d in decisions for job in d.suspend),
            tuple(job for d in decisions for job in d.resume),
            tuple(job for d in decisions for job in d.preempt),
            tuple(pair for d in decisions for pair in d.displaced_by),
        )

    def sched_gang_job_start(self, job: Job, cluster: Cluster) -> GangDecision:
        return self._gang("sched_gang_job_start", job, cluster)

    def sched_gang_job_fini(self, job: Job, cluster: Cluster) -> GangDecision:
        return self._gang("sched_gang_job_fini", job, cluster)

    def sched_gang_job_resized(self, job: Job, cluster: Cluster) -> GangDecision:
        return self._gang("sched_gang_job_resized", job, cluster)

    def sched_gang_reconfig(self, cluster: Cluster) -> GangDecision:
        return self._gang("sched_gang_reconfig", cluster)

    def sched_gang_timeslice_interval(self, cluster: Cluster) -> int | None:
        interval = self._fast("sched_gang_timeslice_interval")(cluster)
        return int(interval) if interval else None

    def sched_gang_timeslice(self, cluster: Cluster) -> GangDecision:
        return self._gang("sched_gang_timeslice", cluster)

    # ----------------------------------------------------------------------------- auth

    def auth_create(self, uid: int, gid: int, payload: bytes) -> bytes:
        return bytes(self._fast("auth_create")(uid, gid, payload))

    def auth_verify(self, credential: bytes, payload: bytes) -> bool:
        return bool(self._fast("auth_verify")(credential, payload))

    def auth_token_create(self, username: str, lifespan: int) -> str | None:
        token = self._fast("auth_token_create")(username, lifespan)
        return None if token is None else str(token)

    def auth_token_verify(self, token: str, username: str) -> str | None:
        name = self._fast("auth_token_verify")(token, username)
        return None if name is None else str(name)

    def auth_get_ids(self, credential: bytes) -> tuple[int, int] | None:
        ids = self._fast("auth_get_ids")(credential)
        return None if ids is None else (int(ids[0]), int(ids[1]))

    # ----------------------------------------------------------------------------- acct_gather

    def acct_gather_poll(self, job: Job, now: float) -> None:
        self._fast("acct_gather_poll")(job, now)

    def acct_gather_add_task(self, job: Job, pid: int) -> None:
        self._fast("acct_gather_add_task")(job, pid)

    def acct_gather_job_start(
        self, job_id: int, sid: int, mem_limit: int | None, node: str
    ) -> None:
        self._fast("acct_gather_job_start")(job_id, sid, mem_limit, node)

    def acct_gather_sample(self, job_id: int, now: float) -> None:
        self._fast("acct_gather_sample")(job_id, now)

    def acct_gather_usage(self, job_id: int) -> dict[str, StepUsage]:
        """Each step's usage of ``job_id`` on this node (empty: nothing gathered)."""
        usage = self._fast("acct_gather_usage")(job_id)
        if not usage:
            return {}
        return {str(step): value for step, value in usage.items() if isinstance(value, StepUsage)}

    def acct_gather_over_memory(self, job_id: int) -> list[str]:
        steps = self._fast("acct_gather_over_memory")(job_id)
        return [str(step) for step in steps] if steps else []

    def acct_gather_job_end(self, job_id: int) -> None:
        self._fast("acct_gather_job_end")(job_id)

    def acct_gather_active(self) -> bool:
        """Whether a loaded plugin samples jobs (else nothing need call the hooks)."""
        return self.implements("acct_gather_sample") or self.implements("acct_gather_poll")

    def acct_gather_stat_job(self, job: Job) -> Mapping[str, float] | None:
        stats = self._fast("acct_gather_stat_job")(job)
        return None if stats is None else dict(stats)

    # ----------------------------------------------------------------------------- priority

    def priority_job_set(self, job: Job, cluster: Cluster) -> int:
        """The priority the plugin gives ``job`` now (at least 1)."""
        return max(1, int(self._fast("priority_job_set")(job, cluster) or 1))

    def priority_jobs_recovered(self, jobs: Sequence[Job], cluster: Cluster) -> None:
        self._fast("priority_jobs_recovered")(jobs, cluster)

    def priority_calc_period(self, cluster: Cluster) -> int | None:
        period = self._fast("priority_calc_period")(cluster)
        return int(period) if period else None

    def priority_recalc(self, cluster: Cluster) -> dict[int, int]:
        """New priorities by job id (at least 1 each); empty: none changed."""
        found = self._fast("priority_recalc")(cluster)
        return {int(k): max(1, int(v)) for k, v in found.items()} if found else {}

    def priority_job_end(self, job: Job, cluster: Cluster) -> None:
        self._fast("priority_job_end")(job, cluster)

    def priority_state_save(self, cluster: Cluster) -> dict[str, Any] | None:
        state = self._fast("priority_state_save")(cluster)
        return None if state is None else dict(state)

    def priority_state_load(self, state: Mapping[str, Any], cluster: Cluster) -> None:
        self._fast("priority_state_load")(state, cluster)

    def priority_weights(self, cluster: Cluster) -> PriorityWeights | None:
        return self._fast("priority_weights")(cluster)  # type: ignore[no-any-return]

    def priority_factors(self, job: Job, cluster: Cluster) -> PriorityFactors | None:
        return self._fast("priority_factors")(job, cluster)  # type: ignore[no-any-return]

    def priority_shares(self, cluster: Cluster) -> list[ShareRow] | None:
        rows = self._fast("priority_shares")(cluster)
        return None if rows is None else list(rows)

    # ----------------------------------------------------------------------------- lifecycle

    def plurm_job_default_time_limit(
        self, request: JobRequest, partition: str, cluster: Cluster
    ) -> int | None:
        """A policy's time limit (minutes) for a job that gives none, or None."""
        limit = self._fast("plurm_job_default_time_limit")(request, partition, cluster)
        return None if limit is None else max(1, int(limit))

    def plurm_job_state_changed(
        self, job: Job, old: JobState, new: JobState, cluster: Cluster
    ) -> None:
        self._fast("plurm_job_state_changed")(job, old, new, cluster)
