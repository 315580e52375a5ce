"""What Slurm's commands need of a cluster: a view to read and requests to make.

The commands render the same bytes in simulation and on a live cluster because they see the
cluster only through a :class:`ClusterClient`. A simulation hands them :class:`LocalClient`,
which wraps the controller in the same process; live mode hands them an RPC client
(:mod:`plurm.live.client`) that asks ``plurmctld`` and builds the same :class:`ClusterView`
from its answer. Refusals are :class:`~plurm.controller.RequestError`\\ s with Slurm's
message either way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from plurm.commands.gres_display import tracked
from plurm.conf.model import SlurmConfig
from plurm.errors import RequestError
from plurm.model.job import Job, JobRequest, JobState

if TYPE_CHECKING:  # (sbatch, scancel need only the protocol: no cluster model to import)
    from plurm.controller import Controller
    from plurm.controller.estimates import WillRun
    from plurm.model.acct import AcctQuery, JobRecord, StepRecord
    from plurm.model.cluster import Cluster
    from plurm.model.priority import PriorityReport

__all__ = [
    "ClusterClient",
    "ClusterView",
    "LocalClient",
    "alloc_cpus",
    "cpus_in_use",
    "node_alloc_mem",
]


@attrs.frozen(eq=False)
class ClusterView:
    """The cluster as the commands read it at one moment.

    ``cluster`` is the controller's own state in a simulation and a copy rebuilt from the
    controller's answer in live mode: commands read it and never change it. ``node_alloc``
    gives the CPUs the select plugin counts in use on each node, ``units`` the (node, core)
    pairs a job holds (None: whole nodes), both as the select plugin answers them;
    ``alloc_mem`` the memory (MiB) the select plugin counts allocated on each node (empty
    when it does not count memory).
    """

    cluster: Cluster
    now: float
    node_alloc: Callable[[], Mapping[str, int]]
    units: Callable[[Job], frozenset[tuple[str, int]] | None]
    alloc_mem: Callable[[], Mapping[str, int]] = dict

    @property
    def config(self) -> SlurmConfig:
        return self.cluster.config


class ClusterClient(Protocol):
    """A cluster the commands talk to."""

    @property
    def config(self) -> SlurmConfig:
        """The cluster's configuration (a live client reads the same slurm.conf)."""
        ...

    @property
    def now(self) -> float:
        """The controller's clock (seconds since :data:`plurm.commands.timefmt.EPOCH`)."""
        ...

    def view(self) -> ClusterView:
        """The cluster's state now."""
        ...

    def submit(self, request: JobRequest) -> int:
        """Queue a batch job; its id."""
        ...

    def cancel(self, job_id: int, task: int | None = None) -> None:
        """scancel: the job (every task of an array, given its id), or one ``task`` of the
        array ``job_id``."""
        ...

    def hold(self, job_id: int, *, user: bool = False) -> None:
        """scontrol hold (``user``: uhold, a hold its user may release)."""
        ...

    def release(self, job_id: int) -> None:
        """scontrol release."""
        ...

    def signal(self, job_id: int, signal: str) -> None:
        """Send ``signal`` (a name such as "USR1") to a running job's processes."""
        ...

    def suspend(self, job_id: int) -> None: ...

    def resume(self, job_id: int) -> None: ...

    def requeue(self, job_id: int) -> None: ...

    def update_partition(self, name: str, changes: Mapping[str, Any]) -> None: ...

    def update_nodes(self, names: Sequence[str], state: str | None, reason: str | None) -> None: ...

    def records(self, query: AcctQuery) -> list[JobRecord]:
        """The accounting records ``query`` selects (sacct)."""
        ...

    def job_usage(self, job_id: int) -> list[StepRecord] | None:
        """sstat: the running steps of a running job with what they used so far (None:
        the job does not run)."""
        ...

    def update_job(self, job_id: int, changes: Mapping[str, Any]) -> None:
        """scontrol update JobId=...: ``changes`` as
        :meth:`~plurm.controller.Controller.update_job` takes them, made as the client's
        user."""
        ...

    def will_run(self, request: JobRequest) -> WillRun:
        """sbatch --test-only: when and where the job would start (a job id is used up)."""
        ...

    def expected_starts(self) -> Mapping[int, float]:
        """squeue --start: the expected start of each pending job that has one."""
        ...

    def explain(self, job_id: int) -> Mapping[str, Any]:
        """scontrol explain: the controller's facts on one job (see
        :meth:`plurm.controller.explain.ExplainMixin.explain`)."""
        ...

    def priorities(self) -> PriorityReport:
        """sprio and sshare: the priority plugin's weights, factors and shares."""
        ...

    def sleep(self, seconds: float) -> None:
        """Let ``seconds`` pass (sbatch --wait polls the cluster between sleeps)."""
        ...


#: The most simulated time a command may wait for (sbatch --wait), in seconds.
MAX_SIMULATED_WAIT = 7 * 86400


class LocalClient:
    """The controller of this process (a simulation). Its requests are made as ``uid``
    (root by default). ``advance`` lets simulated time pass (the simulation's clock), for
    the commands that wait; without it they are refused."""

    def __init__(
        self,
        controller: Controller,
        *,
        uid: int = 0,
        advance: Callable[[float], None] | None = None,
    ) -> None:
        self.controller = controller
        self.uid = uid
        self.advance = advance
        self.slept = 0.0

    @property
    def config(self) -> SlurmConfig:
        return self.controller.config

    @property
    def now(self) -> float:
        return self.controller.now

    def view(self) -> ClusterView:
        controller = self.controller
        cluster = controller.cluster
        plugins = controller.plugins
        return ClusterView(
            cluster,
            controller.now,
            lambda: plugins.select_node_alloc(cluster),
            lambda job: plugins.select_job_resources(job, cluster),
            lambda: plugins.select_node_alloc_mem(cluster),
        )

    def submit(self, request: JobRequest) -> int:
        return self.controller.submit(request).job_id

    def cancel(self, job_id: int, task: int | None = None) -> None:
        self.controller.cancel(job_id, task)

    def hold(self, job_id: int, *, user: bool = False) -> None:
        # a session's commands run as root: hold is an administrator's hold
        self.controller.hold(job_id, admin=not user)

    def release(self, job_id: int) -> None:
        self.controller.release(job_id)

    def signal(self, job_id: int, signal: str) -> None:
        job = self.controller.job(job_id)
        self.controller.executor.signal(job, signal)

    def suspend(self, job_id: int) -> None:
        self.controller.suspend(job_id)

    def resume(self, job_id: int) -> None:
        self.controller.resume(job_id)

    def requeue(self, job_id: int) -> None:
        self.controller.requeue(job_id)

    def update_partition(self, name: str, changes: Mapping[str, Any]) -> None:
        self.controller.update_partition(name, **changes)

    def update_nodes(self, names: Sequence[str], state: str | None, reason: str | None) -> None:
        self.controller.update_nodes(names, state, reason)

    def update_job(self, job_id: int, changes: Mapping[str, Any]) -> None:
        self.controller.update_job(job_id, changes, by_uid=self.uid)

    def will_run(self, request: JobRequest) -> WillRun:
        return self.controller.will_run(request)

    def expected_starts(self) -> Mapping[int, float]:
        return self.controller.expected_starts()

    def explain(self, job_id: int) -> Mapping[str, Any]:
        return self.controller.explain(job_id)

    def priorities(self) -> PriorityReport:
        return self.controller.priority_report()

    def sleep(self, seconds: float) -> None:
        """Let simulated time pass, up to :data:`MAX_SIMULATED_WAIT` in all (a job that
        never ends would otherwise keep a waiting command going for ever)."""
        if self.advance is None:
            raise RequestError("this cluster's clock cannot be waited on here")
        self.slept += seconds
        if self.slept > MAX_SIMULATED_WAIT:
            raise RequestError("gave up waiting after 7 simulated days")
        self.advance(self.controller.now + seconds)

    def job_usage(self, job_id: int) -> list[StepRecord] | None:
        """A simulated job runs its batch step only, with no processes to sample."""
        job = self.controller.job(job_id)
        if job.state is not JobState.RUNNING and job.state is not JobState.SUSPENDED:
            return None
        from plurm.model.acct import AcctQuery, JobSelector

        query = AcctQuery(jobs=(JobSelector(job_id),))
        return [step for record in self.records(query) for step in record.steps]

    def records(self, query: AcctQuery) -> list[JobRecord]:
        """A simulation keeps no accounting store: the records come from its jobs."""
        from plurm.model.acct import records_from_jobs

        view = self.view()
        jobs = view.cluster.jobs.values()
        records = records_from_jobs(
            jobs, view.now, alloc_cpus=alloc_cpus(view), gres_tracked=tracked(view.config)
        )
        return [record for record in records if query.matches(record)]


def cpus_in_use(view: ClusterView) -> dict[str, int]:
    """The CPUs allocated on each node, as select counts them, except that a node whose
    jobs are all suspended shows none: Slurm 22.05 shows such a node idle (a gang-suspended
    job alone on its node, tests/data/oracle/cli linear/193), though select keeps the
    suspended job's resources for it."""
    cluster = view.cluster
    alloc = dict(view.node_alloc())
    suspended = {name for job in cluster.jobs_unordered(JobState.SUSPENDED) for name in job.nodes}
    if not suspended:
        return alloc
    running = {
        name
        for state in (JobState.RUNNING, JobState.COMPLETING)
        for job in cluster.jobs_unordered(state)
        for name in job.held_nodes  # a completing job has released its other nodes
    }
    return {name: cpus for name, cpus in alloc.items() if name in running or name not in suspended}


def node_alloc_mem(view: ClusterView, name: str) -> int:
    """The memory (MiB) allocated on a node, as scontrol's AllocMem and sinfo's ALLOCMEM
    show it: what select counts when memory is a consumable resource, else 0."""
    return view.alloc_mem().get(name, 0)


def alloc_cpus(view: ClusterView) -> Callable[[Job], int]:
    """A started job's CPUs, as scontrol counts them: the cores a consumable-resource
    select gave it (each with its threads), else its nodes' CPUs when the select plugin
    gives whole nodes, else what it asked for."""
    cluster = view.cluster

    def cpus(job: Job) -> int:
        units = job.units
        if units is None:
            units = view.units(job)
            if units is None:  # whole nodes
                return sum(cluster.node(name).cpus for name in job.nodes)
        if units:
            return sum(cluster.node(name).threads_per_core for name, _ in units)
        return max(job.request.cpus, len(job.nodes))

    return cpus
