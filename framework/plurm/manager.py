"""The typed facade over pluggy: one method per hook, so the core never calls ``pm.hook.*``.

:meth:`Plugins.load` reads the plugin type strings from the configuration, loads each through
the :class:`~plurm.registry.Registry`, registers it, runs pluggy's ``check_pending`` and then
checks Slurm's rule that a single-valued type has exactly one implementation: every exclusive
(``firstresult``) hook a role needs must be implemented by exactly one loaded plugin.

Set ``PLURM_TRACE_HOOKS=1`` to log every hook call (pluggy's hook-call monitoring).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pluggy

from plurm._markers import NAME
from plurm.conf.model import SlurmConfig
from plurm.conf.values import PreemptMode
from plurm.hookspecs import SPEC_MODULES
from plurm.model.backfill import BackfillStart, BackfillView
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobState
from plurm.model.select import Candidate, GangDecision, SelectMode, SelectResult
from plurm.registry import LoadedPlugin, PluginConflictError, PluginLoadError, Registry

__all__ = ["DAEMON_ROLES", "SIMULATOR_ROLES", "Plugins"]

logger = logging.getLogger(__name__)

#: Plugin types the simulator loads (it sends no messages, so it needs no auth).
SIMULATOR_ROLES = ("select", "preempt", "sched", "jobacct_gather")
#: Plugin types the live daemons load.
DAEMON_ROLES = (*SIMULATOR_ROLES, "auth")

# Exclusive hooks each role must have exactly one implementation of.
_REQUIRED = {
    "select": ("select_job_test", "select_job_begin", "select_job_fini"),
    "preempt": ("preempt_preemptable", "preempt_mode", "preempt_priority"),
    "sched": ("sched_queue_order",),
    "jobacct_gather": (),
    "auth": ("auth_create", "auth_verify", "auth_get_ids"),
}


class Plugins:
    """The loaded plugins of one controller, behind typed methods."""

    def __init__(self, manager: pluggy.PluginManager, loaded: Sequence[LoadedPlugin] = ()) -> None:
        self.manager = manager
        self.loaded = tuple(loaded)
        self._hook = manager.hook

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
                plugin = registry.load(type_string, config)
                manager.register(plugin.plugin, name=type_string)
                loaded.append(plugin)
        for index, obj in enumerate(extra):
            manager.register(obj, name=f"extra-{index}")
        plugins = cls(manager, loaded)
        plugins.check(roles)
        return plugins

    def check(self, roles: Iterable[str]) -> None:
        """pluggy's check_pending, then exactly one implementation of each exclusive hook."""
        try:
            self.manager.check_pending()
        except pluggy.PluginValidationError as error:
            raise PluginLoadError(f"{error.plugin!r}: {error}") from error
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

    def type_strings(self) -> tuple[str, ...]:
        """The type strings loaded, in loading order."""
        return tuple(plugin.type_string for plugin in self.loaded)

    def implements(self, hook: str) -> bool:
        """Whether any loaded plugin implements ``hook``."""
        return bool(getattr(self._hook, hook).get_hookimpls())

    def _call(self, name: str, **kwargs: Any) -> Any:
        return getattr(self._hook, name)(**kwargs)

    # ----------------------------------------------------------------------------- select

    def select_node_init(self, cluster: Cluster) -> None:
        self._call("select_node_init", cluster=cluster)

    def select_reconfigure(self, cluster: Cluster) -> None:
        self._call("select_reconfigure", cluster=cluster)

    def select_job_test(
        self,
        job: Job,
        nodes: Sequence[str],
        mode: SelectMode,
        candidates: Sequence[Candidate],
        cluster: Cluster,
    ) -> SelectResult:
        result = self._call(
            "select_job_test",
            job=job,
            nodes=nodes,
            mode=mode,
            candidates=candidates,
            cluster=cluster,
        )
        if not isinstance(result, SelectResult):
            raise PluginLoadError(f"select_job_test returned {result!r}, not a SelectResult")
        return result

    def select_node_alloc(self, cluster: Cluster) -> dict[str, int]:
        alloc = self._call("select_node_alloc", cluster=cluster)
        return dict(alloc) if alloc else {}

    def select_job_begin(self, job: Job, cluster: Cluster) -> None:
        self._call("select_job_begin", job=job, cluster=cluster)

    def select_job_fini(self, job: Job, cluster: Cluster) -> None:
        self._call("select_job_fini", job=job, cluster=cluster)

    def select_job_suspend(self, job: Job, indefinite: bool, cluster: Cluster) -> None:
        self._call("select_job_suspend", job=job, indefinite=indefinite, cluster=cluster)

    def select_job_resume(self, job: Job, indefinite: bool, cluster: Cluster) -> None:
        self._call("select_job_resume", job=job, indefinite=indefinite, cluster=cluster)

    # ----------------------------------------------------------------------------- preempt

    def preempt_preemptable(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        return bool(
            self._call(
                "preempt_preemptable", preemptor=preemptor, preemptee=preemptee, cluster=cluster
            )
        )

    def preempt_mode(self, job: Job, cluster: Cluster) -> PreemptMode:
        mode = self._call("preempt_mode", job=job, cluster=cluster)
        return mode if isinstance(mode, PreemptMode) else PreemptMode()

    def preempt_priority(self, job: Job, cluster: Cluster) -> int:
        return int(self._call("preempt_priority", job=job, cluster=cluster) or 0)

    def preempt_grace_time(self, job: Job, cluster: Cluster) -> int:
        return int(self._call("preempt_grace_time", job=job, cluster=cluster) or 0)

    def preempt_job_preempt_check(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        return bool(
            self._call(
                "preempt_job_preempt_check",
                preemptor=preemptor,
                preemptee=preemptee,
                cluster=cluster,
            )
        )

    # ----------------------------------------------------------------------------- sched

    def sched_queue_order(
        self, jobs: Sequence[Job], preempts: Callable[[Job, Job], bool], cluster: Cluster
    ) -> list[Job]:
        ordered = self._call("sched_queue_order", jobs=jobs, preempts=preempts, cluster=cluster)
        return list(ordered) if ordered is not None else list(jobs)

    def sched_backfill_interval(self, cluster: Cluster) -> int | None:
        interval = self._call("sched_backfill_interval", cluster=cluster)
        return int(interval) if interval else None

    def sched_backfill(
        self, jobs: Sequence[Job], view: BackfillView, cluster: Cluster
    ) -> list[BackfillStart]:
        starts = self._call("sched_backfill", jobs=jobs, view=view, cluster=cluster)
        return list(starts or ())

    def _gang(self, name: str, **kwargs: Any) -> GangDecision:
        decisions = [d for d in self._call(name, **kwargs) if d]
        return GangDecision(
            tuple(job for d in decisions for job in d.suspend),
            tuple(job for d in decisions for job in d.resume),
            tuple(job for d in decisions for job in d.preempt),
        )

    def sched_gang_job_start(self, job: Job, cluster: Cluster) -> GangDecision:
        return self._gang("sched_gang_job_start", job=job, cluster=cluster)

    def sched_gang_job_fini(self, job: Job, cluster: Cluster) -> GangDecision:
        return self._gang("sched_gang_job_fini", job=job, cluster=cluster)

    def sched_gang_reconfig(self, cluster: Cluster) -> GangDecision:
        return self._gang("sched_gang_reconfig", cluster=cluster)

    def sched_gang_timeslice_interval(self, cluster: Cluster) -> int | None:
        interval = self._call("sched_gang_timeslice_interval", cluster=cluster)
        return int(interval) if interval else None

    def sched_gang_timeslice(self, cluster: Cluster) -> GangDecision:
        return self._gang("sched_gang_timeslice", cluster=cluster)

    # ----------------------------------------------------------------------------- auth

    def auth_create(self, uid: int, gid: int, payload: bytes) -> bytes:
        return bytes(self._call("auth_create", uid=uid, gid=gid, payload=payload))

    def auth_verify(self, credential: bytes, payload: bytes) -> bool:
        return bool(self._call("auth_verify", credential=credential, payload=payload))

    def auth_get_ids(self, credential: bytes) -> tuple[int, int] | None:
        ids = self._call("auth_get_ids", credential=credential)
        return None if ids is None else (int(ids[0]), int(ids[1]))

    # ----------------------------------------------------------------------------- acct_gather

    def acct_gather_poll(self, job: Job, now: float) -> None:
        self._call("acct_gather_poll", job=job, now=now)

    def acct_gather_add_task(self, job: Job, pid: int) -> None:
        self._call("acct_gather_add_task", job=job, pid=pid)

    def acct_gather_stat_job(self, job: Job) -> Mapping[str, float] | None:
        stats = self._call("acct_gather_stat_job", job=job)
        return None if stats is None else dict(stats)

    # ----------------------------------------------------------------------------- lifecycle

    def plurm_job_state_changed(
        self, job: Job, old: JobState, new: JobState, cluster: Cluster
    ) -> None:
        self._call("plurm_job_state_changed", job=job, old=old, new=new, cluster=cluster)
