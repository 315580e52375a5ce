"""priority/multifactor: Slurm 22.05's multifactor job priority.

A pending job's priority is the sum of each factor (between 0 and 1) times its weight
(PriorityWeightAge, ...Assoc, ...Fairshare, ...JobSize, ...Partition, ...QOS and
PriorityWeightTRES), minus its ``--nice``, at least 1, cut to a whole number. The factors
are in :mod:`.factors`, the fair-share factor (Fair Tree, or classic with
``PriorityFlags=NO_FAIR_TREE``) in :mod:`.fairshare`, usage and its decay in :mod:`.usage`.

With accounting storage (AccountingStorageType=accounting_storage/slurmdbd, or associations
from accounts.conf or a trace mapping, which stand for slurmdbd's), every PriorityCalcPeriod
the plugin charges the running jobs' new usage, decays all usage, resets it at
PriorityUsageResetPeriod boundaries, works the fair-share factors out again and gives every
pending job (and, with ``CALCULATE_RUNNING``, every running one) its priority anew; with
``INCR_ONLY`` a priority never goes down. Without either, as in Slurm (whose decay thread
then never starts), a job's priority is worked out when it is submitted or updated only: no
age accrues. A job's usage up to its end is charged when it stops running; plurmctld keeps
the usage across its restarts (:mod:`.state`). The association factor is the job's
association's Priority (accounts.conf, handed down the account tree) over the highest of
any association; ``DEPTH_OBLIVIOUS``, ``MAX_TRES`` (which weighs billing) and the other
flags are accepted and do nothing here.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from plurm import hookimpl
from plurm._markers import HOOK_API_VERSION
from plurm.conf.model import SlurmConfig
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobState
from plurm.model.priority import PriorityFactors, PriorityWeights, ShareRow
from plurm.registry import PluginContext
from plurm_priority_multifactor import factors as fx
from plurm_priority_multifactor.fairshare import (
    FairTreePlan,
    Node,
    Tree,
    build_tree,
    classic,
    fair_tree,
)
from plurm_priority_multifactor.state import load_state, save_state
from plurm_priority_multifactor.usage import decay_per_second, reset_period_key

__all__ = ["MultifactorPriority", "parse_tres_weights"]

_RUNNING = (JobState.RUNNING,)


def parse_tres_weights(text: str) -> tuple[tuple[str, float], ...]:
    """PriorityWeightTRES (``CPU=1000,Mem=2000,GRES/gpu=3000``): names lower-cased."""
    pairs = []
    for word in text.split(","):
        name, equals, value = word.partition("=")
        if not equals or not name.strip():
            continue
        try:
            pairs.append((name.strip().lower(), float(value)))
        except ValueError:
            continue
    return tuple(pairs)


class MultifactorPriority:
    """The multifactor priority and the fair-share usage it keeps."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        config = context.config
        self.config = config
        self.log = logging.getLogger(context.logger_name)
        self.settings = settings = config.priority
        self.flags = settings.flags
        self.fair_tree = "NO_FAIR_TREE" not in self.flags
        self.weights = PriorityWeights(
            age=settings.weight_age,
            assoc=settings.weight_assoc,
            fairshare=settings.weight_fairshare,
            jobsize=settings.weight_jobsize,
            partition=settings.weight_partition,
            qos=settings.weight_qos,
            tres=parse_tres_weights(settings.weight_tres),
        )
        self.totals = fx.ClusterTotals.of(config)
        #: Each association's Priority (accounts.conf; inherited down the account tree),
        #: and the highest of any association, which the ASSOC factor divides by.
        self.assoc_priority = {
            (a.account, a.user): a.priority for a in config.associations if a.priority
        }
        self.max_assoc_priority = max(
            [*self.assoc_priority.values(), *(spec.priority or 0 for spec in config.accounts)],
            default=0,
        )
        self.tree = _tree_of(context)
        self.plan = FairTreePlan(self.tree) if self.fair_tree else None
        self.decay = decay_per_second(settings.decay_half_life)
        self.last_ran: float | None = None
        self.reset_key: tuple[int, ...] | None = None
        #: Run time charged so far per (job id, run).
        self.charged: dict[tuple[int, int], float] = {}
        #: What each run is charged per second (its CPUs times its QOS's UsageFactor), and
        #: the tree nodes it is charged to: found at its first charge, fixed while it runs.
        self.rates: dict[tuple[int, int], tuple[float, list[Node]]] = {}
        self.fairshare: dict[tuple[str, str | None], float] = {}
        #: The usage the fair-share factors are owed on, when a recalculation had no job to
        #: give a priority and left them to be worked out once one is needed (None: they
        #: are current; a list: the usage as it was then, each tree node's in the plan's
        #: order; an empty list: the tree's own usage, unchanged since).
        self.owed: list[float] | None = None
        #: Each job's factors as its priority was last worked out (sprio shows these,
        #: as Slurm's controller keeps them between its calculations).
        self.last: dict[int, PriorityFactors] = {}
        self._refresh_fairshare()

    # ------------------------------------------------------------------ usage

    def _association(self, job: Job) -> tuple[str, str | None] | None:
        if job.account is None:
            return None
        key = (job.account, job.request.user)
        return key if key in self.tree.nodes else None

    def _cpus(self, job: Job, cluster: Cluster) -> int:
        """The CPUs the job holds (what Slurm bills without TRESBillingWeights)."""
        units = job.units
        if units:
            return sum(cluster.node(name).threads_per_core for name, _ in units)
        if units is None and job.nodes:
            return sum(cluster.node(name).cpus for name in job.nodes)
        return job.request.cpus

    def _charge(self, job: Job, cluster: Cluster) -> None:
        """Charge the run time ``job`` has had since it was last charged."""
        run = (job.job_id, job.restarts)
        ran = job.run_time(cluster.now)
        delta = ran - self.charged.get(run, 0.0)
        if delta <= 0:
            return
        self.charged[run] = ran
        rate = self.rates.get(run)
        if rate is None:
            rate = self.rates[run] = self._rate(job, cluster)
        per_second, path = rate
        amount = per_second * delta * self.decay**delta
        for node in path:
            node.usage += amount

    def _rate(self, job: Job, cluster: Cluster) -> tuple[float, list[Node]]:
        """What a run of ``job`` is charged per second, and the nodes charged (its
        association and every account above; none without an association)."""
        key = self._association(job)
        node = None if key is None else self.tree.nodes.get(key)
        path = []
        while node is not None:
            path.append(node)
            node = node.parent
        if not path:
            return 0.0, path
        qos = self.config.qos_spec(job.qos or "normal")
        factor = qos.usage_factor if qos is not None else 1.0
        return self._cpus(job, cluster) * factor, path

    def _bring_up_to_date(self, now: float, cluster: Cluster) -> None:
        """Decay, reset and charge usage up to ``now``."""
        key = reset_period_key(self.settings.usage_reset_period, now)
        if self.last_ran is not None:
            elapsed = now - self.last_ran
            if elapsed > 0:
                scale = self.decay**elapsed
                for node in self.tree.nodes.values():
                    node.usage *= scale
            if key is not None and key != self.reset_key:
                for node in self.tree.nodes.values():
                    node.usage = 0.0
        self.reset_key = key
        self.last_ran = now
        for job in cluster.jobs_in(*_RUNNING):
            self._charge(job, cluster)

    def _refresh_fairshare(self, usage: list[float] | None = None) -> None:
        self.owed = None
        if not self.weights.fairshare:
            self.fairshare = {}  # weighed by 0: every job's fair-share term is 0 anyway
        elif self.plan is not None:
            self.fairshare = self.plan.factors(usage)
        else:
            values = classic(self.tree)
            self.fairshare = {
                key: value.factor for key, value in values.items() if key[1] is not None
            }

    # ------------------------------------------------------------------ priority

    def _factors(self, job: Job, cluster: Cluster) -> PriorityFactors:
        settings, weights, totals = self.settings, self.weights, self.totals
        now = cluster.now
        cpus = job.request.cpus
        if job.state is not JobState.PENDING and job.nodes:
            cpus = self._cpus(job, cluster)
        key = self._association(job)
        if self.owed is not None:
            self._refresh_fairshare(self.owed or None)
        fairshare = self.fairshare.get(key, 0.0) if key is not None else 0.0
        size = fx.job_size(
            job,
            totals,
            favor_small=settings.favor_small,
            relative_to_time="SMALL_RELATIVE_TO_TIME" in self.flags,
            cpus=cpus,
        )
        tres = fx.tres(job, totals, weights.tres, cpus)
        return PriorityFactors(
            job_id=job.job_id,
            partition=job.partition,
            user=job.request.user,
            account=job.account or "",
            qos=job.qos or "normal",
            priority=job.priority,
            age=weights.age * fx.age(job, now, settings.max_age),
            assoc=weights.assoc * self._assoc_factor(key),
            fairshare=weights.fairshare * fairshare,
            jobsize=weights.jobsize * size,
            part=weights.partition * fx.partition(self.config, job, totals),
            qos_factor=weights.qos * fx.qos(self.config, job, totals),
            tres=tuple(
                (name, weight * factor)
                for (name, weight), (_, factor) in zip(weights.tres, tres, strict=True)
            ),
            nice=job.request.nice,
        )

    def _assoc_factor(self, key: tuple[str, str | None] | None) -> float:
        """The association's Priority over the highest of any association (0 without)."""
        if key is None or self.max_assoc_priority <= 0:
            return 0.0
        return self.assoc_priority.get(key, 0) / self.max_assoc_priority

    def _priority(self, job: Job, cluster: Cluster) -> int:
        parts = self.last[job.job_id] = self._factors(job, cluster)
        total = (
            parts.site
            + parts.age
            + parts.assoc
            + parts.fairshare
            + parts.jobsize
            + parts.part
            + parts.qos_factor
            + sum(value for _, value in parts.tres)
            - parts.nice
        )
        if not math.isfinite(total) or total < 1:
            return 1
        return min(int(total), 0xFFFF_FFFE)

    @hookimpl
    def priority_job_set(self, job: Job, cluster: Cluster) -> int:
        return self._priority(job, cluster)

    @hookimpl
    def priority_calc_period(self, cluster: Cluster) -> int | None:
        # without accounting storage Slurm 22.05 starts no decay thread: priorities are
        # worked out at submission (and on updates) only, so age never grows
        # (tests/data/priority/age-without-accounting.json); associations (accounts.conf,
        # a trace mapping's users and groups) stand for slurmdbd's, as everywhere in Plurm
        if not (self.config.accounting or _has_associations(self.config)):
            return None
        return self.settings.calc_period

    @hookimpl
    def priority_recalc(self, cluster: Cluster) -> Mapping[int, int]:
        self._bring_up_to_date(cluster.now, cluster)
        states = [JobState.PENDING]
        if "CALCULATE_RUNNING" in self.flags:
            states.append(JobState.RUNNING)
        jobs = [job for job in cluster.jobs_in(*states) if job.priority != 0]
        self.last.clear()
        if jobs or self.plan is None:
            self._refresh_fairshare()
        else:  # no job to give a priority: the factors are worked out when one needs them
            self.owed = []
        changed = {}
        increase_only = "INCR_ONLY" in self.flags
        for job in jobs:
            priority = self._priority(job, cluster)
            if increase_only:
                priority = max(priority, job.priority)
            if priority != job.priority:
                changed[job.job_id] = priority
        return changed

    @hookimpl
    def priority_job_end(self, job: Job, cluster: Cluster) -> None:
        if self.last_ran is None:
            self.last_ran = cluster.now
        if self.owed == [] and self.plan is not None:
            self.owed = self.plan.usage()  # as the recalculation left it, before this charge
        self._charge(job, cluster)
        self.rates.pop((job.job_id, job.restarts), None)  # this run is charged in full

    @hookimpl
    def priority_jobs_recovered(self, jobs: Sequence[Job], cluster: Cluster) -> None:
        # with no saved state, the restored jobs' run time before the restart is not
        # charged (its usage is lost); with one, what ran since it was saved is charged
        for job in jobs:
            if job.start_time is not None:
                self.charged.setdefault((job.job_id, job.restarts), job.run_time(cluster.now))

    @hookimpl
    def priority_state_save(self, cluster: Cluster) -> Mapping[str, Any]:
        holding = [
            (job.job_id, job.restarts)
            for job in cluster.jobs_in(JobState.RUNNING, JobState.SUSPENDED)
        ]
        return save_state(self.tree, self.last_ran, self.reset_key, self.charged, holding)

    @hookimpl
    def priority_state_load(self, state: Mapping[str, Any], cluster: Cluster) -> None:
        saved = load_state(state, self.tree)
        if saved is None:
            self.log.warning("saved usage not read: state version %r", state.get("version"))
            return
        self.last_ran, self.reset_key = saved.last_ran, saved.reset_key
        self.charged.update(saved.charged)
        self._refresh_fairshare()
        self.log.info("usage restored associations=%d", len(self.tree.nodes))

    # ------------------------------------------------------------------ display

    @hookimpl
    def priority_weights(self, cluster: Cluster) -> PriorityWeights:
        return self.weights

    @hookimpl
    def priority_factors(self, job: Job, cluster: Cluster) -> PriorityFactors:
        found = self.last.get(job.job_id)
        return found if found is not None else self._factors(job, cluster)

    @hookimpl
    def priority_shares(self, cluster: Cluster) -> Sequence[ShareRow]:
        return shares_of(self.tree, fair=self.fair_tree, cluster=cluster, cpus=self._cpus)


def _has_associations(config: SlurmConfig) -> bool:
    """Associations beyond the implicit root user's in root (which always exists)."""
    return any((a.user, a.account) != ("root", "root") for a in config.associations)


def _tree_of(context: PluginContext) -> Tree:
    config = context.config
    accounts = {spec.name: (spec.parent, spec.fairshare) for spec in config.accounts}
    if not accounts:
        accounts = {"root": (None, None)}
    users = {(a.user, a.account): a.fairshare for a in config.associations}
    return build_tree(accounts, users)


def shares_of(tree: Tree, *, fair: bool, cluster: Cluster, cpus: object) -> list[ShareRow]:
    """sshare's rows, root first, depth first."""
    root_usage = tree.root.usage
    rows: list[ShareRow] = []
    run_mins = _run_minutes(tree, cluster)
    if fair:
        factors, values = fair_tree(tree)
        for node in tree.walk():
            share, used, lf = values.get(node.key, (0.0, 0.0, math.inf))
            if node is tree.root:
                share, used = 0.0, 1.0
            rows.append(
                ShareRow(
                    account=node.account,
                    user=node.user,
                    depth=node.depth,
                    raw_shares=None if node is tree.root else node.shares,
                    norm_shares=share,
                    raw_usage=node.usage,
                    norm_usage=node.usage / root_usage if root_usage else 0.0,
                    effective_usage=used,
                    fairshare=factors.get(node.key) if node.user is not None else None,
                    level_fs=None if node is tree.root else lf,
                    parent=node is not tree.root and node.shares is None,
                    tres_run_mins=run_mins.get(node.key, ()),
                )
            )
        return rows
    values_classic = classic(tree)
    for node in tree.walk():
        value = values_classic[node.key]
        rows.append(
            ShareRow(
                account=node.account,
                user=node.user,
                depth=node.depth,
                raw_shares=None if node is tree.root else node.shares,
                norm_shares=0.0 if node is tree.root else value.norm_shares,
                raw_usage=node.usage,
                norm_usage=value.norm_usage,
                effective_usage=value.effective_usage,
                fairshare=value.factor,
                parent=node is not tree.root and node.shares is None,
                tres_run_mins=run_mins.get(node.key, ()),
            )
        )
    return rows


def _run_minutes(
    tree: Tree, cluster: Cluster
) -> dict[tuple[str, str | None], tuple[tuple[str, int], ...]]:
    """TRES-minutes the running jobs of each association (and the accounts above) have
    left to run, by their time limits."""
    left: dict[tuple[str, str | None], list[float]] = {}
    for job in cluster.jobs_in(JobState.RUNNING):
        if job.account is None or job.time_limit is None:
            continue
        node = tree.nodes.get((job.account, job.request.user))
        remaining = max(0.0, job.time_limit * 60 - job.run_time(cluster.now))
        cpus = sum(cluster.node(name).cpus for name in job.nodes) if job.nodes else 0
        while node is not None:
            counts = left.setdefault(node.key, [0.0, 0.0])
            counts[0] += cpus * remaining
            counts[1] += len(job.nodes) * remaining
            node = node.parent
    return {
        key: (("cpu", int(cpu // 60)), ("node", int(nodes // 60)))
        for key, (cpu, nodes) in left.items()
    }
