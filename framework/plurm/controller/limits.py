"""accounts.conf's association limits, enforced as Slurm 22.05's accounting policy does
with ``AccountingStorageEnforce=limits`` (or ``safe``, ``all``; see
:mod:`plurm.conf.accounts` for the fields).

At submission a job is refused with Slurm's ``ESLURM_ACCOUNTING_POLICY`` text when its
association already has MaxSubmitJobs jobs pending or running (an array counts each task);
a job without ``--time`` takes MaxWall as its time limit (bounded by its partition's
MaxTime), as Slurm sets the limit it did not ask for.

A pending job the scheduler reaches waits, without holding up the jobs after it, while

* its association or an account above it runs GrpJobs jobs (``AssocGrpJobsLimit``), its
  association runs MaxJobs jobs (``AssocMaxJobsLimit``), or its time limit is beyond its
  association's MaxWall (``AssocMaxWallDurationPerJobLimit``) -- checked association first,
  then each account up to ``root``, as Slurm's check before selection;
* its CPUs or nodes with those its association or an account above it already holds go
  beyond GrpTRES ``cpu=`` (``AssocGrpCpuLimit``) or ``node=`` (``AssocGrpNodeLimit``).

Plurm checks the CPUs and nodes before selecting nodes, with those the job asks for (its
CPUs, the node count it waits for), where Slurm checks them after selection with those it
would get (nodes its association already uses count once there); running and suspended
jobs count, as their resources stay theirs; a job suspended by a preemption that released
its resources counts unless the preempt policy says otherwise (``preempt_suspended_counts``,
asked per scope: "user" for its association, "account" for each account above it).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

import attrs

from plurm.conf.model import AccountSpec, AssocLimits, SlurmConfig
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobState, PendingReason

__all__ = ["POLICY_REFUSAL", "AssociationLimits", "allocated_cpus"]

logger = logging.getLogger(__name__)

#: Slurm's text for ESLURM_ACCOUNTING_POLICY (sbatch prints it after "Batch job
#: submission failed: ").
POLICY_REFUSAL = (
    "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
)
_HOLDING = (JobState.RUNNING, JobState.SUSPENDED)
_SUBMITTED = (JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED)
#: A scope of limits: ("user", user, account) for an association, ("account", name).
_Scope = tuple[str, ...]


@attrs.define
class _Used:
    """What the running jobs of one scope hold."""

    jobs: int = 0
    cpus: int = 0
    nodes: Counter[str] = attrs.field(factory=Counter)


class AssociationLimits:
    """The limits of one configuration and what the running jobs use of them."""

    def __init__(
        self,
        config: SlurmConfig,
        cpus_of: Callable[[Job], int],
        counts_suspended: Callable[[Job, str], bool] | None = None,
    ) -> None:
        self.config = config
        #: A started job's CPUs.
        self.cpus_of = cpus_of
        #: Whether a job suspended by a releasing preemption counts at a scope's kind
        #: ("user", "account"); None: it counts.
        self.counts_suspended = counts_suspended
        self.accounts: dict[str, AccountSpec] = {spec.name: spec for spec in config.accounts}
        self._chains: dict[tuple[str, str], tuple[tuple[_Scope, AssocLimits], ...]] = {}
        #: Per scope, what running jobs use; None until a check needs it after a pass began.
        self._used: dict[_Scope, _Used] | None = None
        #: The CPUs and nodes each job held when counted (a job's allocation is fixed).
        self._held: dict[int, tuple[int, tuple[str, ...]]] = {}

    @classmethod
    def of(
        cls,
        config: SlurmConfig,
        cpus_of: Callable[[Job], int],
        counts_suspended: Callable[[Job, str], bool] | None = None,
    ) -> AssociationLimits | None:
        """The limits to enforce, or None when there are none or they are not enforced."""
        if not config.accounting or "limits" not in config.accounting_enforce:
            return None
        if not any(spec.limits.any for spec in config.accounts) and not any(
            association.limits.any for association in config.associations
        ):
            return None
        return cls(config, cpus_of, counts_suspended)

    # ------------------------------------------------------------------ scopes

    def _chain(self, user: str, account: str) -> tuple[tuple[_Scope, AssocLimits], ...]:
        """The job's association, then its account and each account above it."""
        key = (user, account)
        chain = self._chains.get(key)
        if chain is None:
            association = self.config.association(user, account)
            found: list[tuple[_Scope, AssocLimits]] = []
            if association is not None:
                found.append((("user", user, account), association.limits))
                seen: set[str] = set()
                current: str | None = account
                while current is not None and current in self.accounts and current not in seen:
                    seen.add(current)
                    found.append((("account", current), self.accounts[current].limits))
                    current = self.accounts[current].parent
            chain = self._chains[key] = tuple(found)
        return chain

    def _scopes(self, job: Job) -> tuple[tuple[_Scope, AssocLimits], ...]:
        if job.account is None:
            return ()
        return self._chain(job.request.user, job.account)

    # ------------------------------------------------------------------ submission

    def refusal(self, user: str, account: str | None, cluster: Cluster, count: int) -> str | None:
        """Slurm's refusal of ``count`` more jobs of ``user`` charged to ``account`` when
        its association's MaxSubmitJobs would be passed (None: accepted)."""
        if account is None:
            return None
        chain = self._chain(user, account)
        if not chain or chain[0][1].max_submit_jobs is None:
            return None
        submitted = 0
        for job in cluster.jobs_in(*_SUBMITTED):
            if job.account == account and job.request.user == user:
                submitted += len(job.array_pending) or 1
        if submitted + count > chain[0][1].max_submit_jobs:
            logger.debug(
                "submission refused user=%s account=%s submitted=%d max_submit_jobs=%d",
                user,
                account,
                submitted,
                chain[0][1].max_submit_jobs,
            )
            return POLICY_REFUSAL
        return None

    def time_limit(self, job: Job, part_max: int | None) -> int | None:
        """The time limit of a job submitted without ``--time``: its association's MaxWall
        (bounded by its partition's MaxTime) when it has one, else the one it has."""
        chain = self._scopes(job)
        if job.request.time_limit is not None or not chain or chain[0][1].max_wall is None:
            return job.time_limit
        wall = chain[0][1].max_wall
        return wall if part_max is None else min(wall, part_max)

    # ------------------------------------------------------------------ scheduling

    def forget_usage(self) -> None:
        """A pass begins: what running jobs use is counted again at the next check."""
        self._used = None

    def started(self, job: Job) -> None:
        """``job`` started: count it while this pass goes on."""
        if self._used is not None:
            self._count(job, self._used)

    def _count(self, job: Job, used: dict[_Scope, _Used]) -> None:
        held = self._held.get(job.job_id)
        if held is None or held[1] != job.nodes:
            held = self._held[job.job_id] = (self.cpus_of(job), job.nodes)
        asks = (
            self.counts_suspended
            if job.preempt_suspended and job.state is JobState.SUSPENDED
            else None
        )
        for scope, _ in self._scopes(job):
            if asks is not None and not asks(job, scope[0]):
                continue  # left out of this scope by the preempt policy
            entry = used.get(scope)
            if entry is None:
                entry = used[scope] = _Used()
            entry.jobs += 1
            entry.cpus += held[0]
            entry.nodes.update(held[1])

    def _usage(self, cluster: Cluster) -> dict[_Scope, _Used]:
        used = self._used
        if used is None:
            used = self._used = {}
            holding = list(cluster.jobs_in(*_HOLDING))
            kept = {job.job_id for job in holding}
            self._held = {key: value for key, value in self._held.items() if key in kept}
            for job in holding:
                self._count(job, used)
        return used

    def hold(self, job: Job, cluster: Cluster) -> bool:
        """Whether a limit keeps pending ``job`` from starting now; if so, its reason
        says which."""
        chain = self._scopes(job)
        if not chain:
            return False
        used = self._usage(cluster)
        empty = _Used()
        for index, (scope, limits) in enumerate(chain):
            running = used.get(scope, empty).jobs
            if limits.grp_jobs is not None and running >= limits.grp_jobs:
                return _held(job, PendingReason.ASSOC_GRP_JOBS_LIMIT)
            if index:
                continue  # Max* hold for the association (propagated to it from above)
            if limits.max_jobs is not None and running >= limits.max_jobs:
                return _held(job, PendingReason.ASSOC_MAX_JOBS_LIMIT)
            wall = limits.max_wall
            if wall is not None and (job.time_limit is None or job.time_limit > wall):
                return _held(job, PendingReason.ASSOC_MAX_WALL_LIMIT)
        cpus, nodes = job.request.cpus, job.wanted_nodes
        for scope, limits in chain:
            entry = used.get(scope, empty)
            if limits.grp_cpus is not None and entry.cpus + cpus > limits.grp_cpus:
                return _held(job, PendingReason.ASSOC_GRP_CPU_LIMIT)
            if limits.grp_nodes is not None and len(entry.nodes) + nodes > limits.grp_nodes:
                return _held(job, PendingReason.ASSOC_GRP_NODE_LIMIT)
        return False


def allocated_cpus(
    job: Job, cluster: Cluster, units_of: Callable[[Job], frozenset[tuple[str, int]] | None]
) -> int:
    """A started job's CPUs: the cores its select plugin gave it, each with its threads;
    its nodes' CPUs when the plugin gives whole nodes."""
    units = job.units if job.units is not None else units_of(job)
    if units is None:
        return sum(cluster.node(name).cpus for name in job.nodes)
    if units:
        return sum(cluster.node(name).threads_per_core for name, _ in units)
    return max(job.request.cpus, len(job.nodes))


def _held(job: Job, reason: PendingReason) -> bool:
    job.reason = reason
    return True
