"""Submission: sbatch's checks and refusals, the partition a job goes to, its priority
(asked of the priority plugin) and node count, and the filing of pending jobs in the queue's
indexes; the priority plugin's periodic recalculation.

Part of :class:`~plurm.controller.controller.Controller` (see :mod:`.base`).
"""

from __future__ import annotations

import attrs

from plurm.conf.model import PartitionSpec
from plurm.controller.access import partition_refusal, slurm_user_uid
from plurm.controller.accounting import Charge, Refused, charge
from plurm.controller.base import (
    _NEVER,
    _PENDING,
    _PRIORITY,
    _TEST_ONLY,
    ControllerBase,
    RequestError,
)
from plurm.model.gres import satisfiable
from plurm.model.job import Job, JobRequest, JobState, PendingReason, min_cpus_per_node
from plurm.model.priority import PriorityFactors, PriorityReport

#: The states in which a job keeps the recalculation going: it waits or holds resources.
_LIVE = (JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING)
#: The states whose jobs take a recalculated priority.
_RECALCULATED = frozenset({JobState.PENDING, JobState.RUNNING, JobState.SUSPENDED})

__all__ = ["SubmissionMixin"]

#: How many request shapes a partition keeps select's TEST_ONLY answer for (then forgets).
_SHAPES_KEPT = 4096


class SubmissionMixin(ControllerBase):
    """The controller's submission: :meth:`submit` and what it asks."""

    def submit(self, request: JobRequest) -> Job:
        """Queue a batch job (sbatch); it may start at once. Refusals are RequestErrors with
        Slurm's message.

        As in Slurm 22.05 without EnforcePartLimits, a job beyond its partition's limits is
        accepted and waits (PartitionConfig, PartitionTimeLimit); with EnforcePartLimits it
        is refused. A node count of 0, and a job no node of its partition could ever hold
        (select's TEST_ONLY answer, or generic resources no node has), are refused but, as
        in Slurm, still take a job id and leave a FAILED job behind (reason BadConstraints).
        """
        self._tick()
        partition = self._partition_for(request)
        if request.min_nodes < 1:
            self._fail_at_submission(self._new_job(request, partition))
            raise RequestError("Node count specification invalid")
        charged = self._validate(request, partition)
        never = self._never_runs(request, partition)
        if never is not None:
            self._fail_at_submission(self._new_job(request, partition, charged))
            raise never
        self._check_array(request)
        dependencies = self._parse_dependency(request.dependency) if request.dependency else ()
        job = self._new_job(request, partition, charged)
        if request.array_tasks:
            self._new_array(job)
        if request.begin_time is not None and request.begin_time > self.now:
            job.eligible_time = request.begin_time
            job.reason = PendingReason.BEGIN_TIME
            self._pass_after(job.eligible_time)
        elif self._queued_ahead(job):
            job.reason = _PRIORITY  # as Slurm shows it from submission on
        if request.hold or dependencies:
            job.dependencies = dependencies
            self._wait_at_submission(job)
        self._arm_priority_recalc()
        self._request_pass()
        return job

    def _fail_at_submission(self, job: Job) -> None:
        """A job refused after its record was made: FAILED at once, reason BadConstraints,
        ExitCode 0:1, as slurmctld keeps it (tests/data/oracle/cli/trials/misc.out)."""
        job.reason = PendingReason.BAD_CONSTRAINTS
        job.end_time = self.now
        job.exit_signal = 1
        self._set_state(job, JobState.FAILED)

    def _never_runs(self, request: JobRequest, partition: str) -> RequestError | None:
        """The refusal of a job no node of any partition it names could ever hold, all of
        them idle (its generic resources, or select's TEST_ONLY answer: -N1 -n3 on 2-CPU
        nodes, -c3), else None. A job beyond its partition's node, CPU or MaxMemPerNode
        limits is not asked: it waits (PartitionConfig), as in Slurm. When the CPUs a node
        must give (-c, times --ntasks-per-node) or the memory it must hold exceed every
        node's, slurmctld also says so (trials/misc.out)."""
        detail = None
        for name in request.partitions or (partition,):
            part = self.cluster.partition(name)
            if request.gres_request is not None and not self._gres_satisfiable(request, part):
                continue
            if self._beyond_node_limits(request, name) or self._beyond_memory_limit(request, part):
                return None
            if not self._never_fits(request, part):
                return None
            detail = detail or self._beyond_every_node(request, part)
        return RequestError("Requested node configuration is not available", detail)

    def _beyond_memory_limit(self, request: JobRequest, part: PartitionSpec) -> bool:
        """A --mem beyond the partition's MaxMemPerNode (else the cluster's): a limit, which
        the job waits on rather than being refused."""
        if request.mem_per_node is None:
            return False
        config = self.config
        if part.max_mem_per_cpu is not None or part.max_mem_per_node is not None:
            limit = part.max_mem_per_node
        else:
            limit = config.max_mem_per_node
        return limit is not None and request.mem_per_node > limit

    def _beyond_every_node(self, request: JobRequest, part: PartitionSpec) -> str | None:
        """What no node of the partition has for the job, in slurmctld's words, if anything:
        the CPUs a node must give, or the memory (per node, or per CPU times those CPUs)."""
        cpus = min_cpus_per_node(request)
        if cpus > self._largest_node_cpus(part):
            return "CPU count per node can not be satisfied"
        memory = request.mem_per_node or (request.mem_per_cpu or 0) * cpus
        if memory > max(self.cluster.node(name).real_memory for name in part.nodes):
            return "Memory specification can not be satisfied"
        return None

    def _never_fits(self, request: JobRequest, part: PartitionSpec) -> bool:
        """select's TEST_ONLY answer for the request on the partition's nodes, all idle:
        NEVER. Kept per partition and request resources (``JobRequest.resources``), as the
        answer depends on nothing else, until the partition's nodes change."""
        known = self._never_known.get(part.name)
        if known is None or known[0] is not part.nodes or len(known[1]) >= _SHAPES_KEPT:
            known = self._never_known[part.name] = (part.nodes, {})
        answers = known[1]
        shape = request.resources
        never = answers.get(shape)
        if never is None:
            probe = Job(
                job_id=self._next_id,
                request=request,
                submit_time=self.now,
                partition=part.name,
                wanted_nodes=self._wanted_nodes(request, part),
            )
            mask = self.cluster.mask_of(part.nodes)
            if request.exclude:
                mask &= ~self.cluster.mask_of(request.exclude)
            test = self.plugins.select_job_test(
                probe, self.cluster.bitmap(mask), _TEST_ONLY, (), self.cluster
            )
            never = answers[shape] = test.status is _NEVER
        return never

    def _time_limit_of(self, request: JobRequest, part: PartitionSpec) -> int | None:
        """The job's time limit: its own, else the policy's default for its partition
        (``plurm_job_default_time_limit``), else the partition's DefaultTime."""
        if request.time_limit is not None:
            return request.time_limit
        limit = self.plugins.plurm_job_default_time_limit(request, part.name, self.cluster)
        return limit if limit is not None else part.default_time

    def _queued_ahead(self, job: Job) -> bool:
        """Whether an eligible job of higher priority already waits in the job's partition."""
        return self._by_partition.higher_waits(job, self.now)

    def _new_job(self, request: JobRequest, partition: str, charged: Charge | None = None) -> Job:
        part = self.cluster.partition(partition)
        limit = self._time_limit_of(request, part)
        requeue = request.requeue if request.requeue is not None else self.config.job_requeue
        job = Job(
            job_id=self._next_id,
            request=request,
            submit_time=self.now,
            partition=partition,
            eligible_time=max(self.now, request.begin_time or self.now),
            time_limit=limit,
            requeue=requeue,
            wanted_nodes=self._wanted_nodes(request, part),
        )
        if charged is not None:
            job.account, job.qos = charged.account, charged.qos
            if self._limits is not None:  # (MaxWall is the limit of a job without --time)
                job.time_limit = self._limits.time_limit(job, part.max_time)
        job.priority = self._new_priority(job)
        self._next_id += 1
        self.cluster.add_job(job)
        self._file(job)
        return job

    def _file(self, job: Job) -> None:
        """File ``job`` anew in the indexes of pending jobs, after it became pending, left
        the queue or moved to another of its partitions: the kept queue (at its next read),
        the jobs per partition by priority, and the jobs that require nodes."""
        self._pending.note(job)
        self._by_partition.update(job)
        if job.state is _PENDING and self._pending.kept:
            self._unsettled[job.job_id] = job
        else:
            self._unsettled.pop(job.job_id, None)
        if job.request.nodelist:
            if job.state is JobState.PENDING:
                self._pinned[job.job_id] = job
            else:
                self._pinned.pop(job.job_id, None)

    def _wanted_nodes(self, request: JobRequest, part: PartitionSpec) -> int:
        """The node count a job waits for: as Slurm 22.05 estimates it at submission, at
        least as many of its partition's largest nodes as its tasks need, whole tasks a
        node (-n4 on 2-CPU nodes: 2; -n3 -c2: 3; -c3: 1; --ntasks-per-node caps a node's
        tasks: -n3 --ntasks-per-node=1, 3), and never fewer than its -N (trials/misc.out)."""
        if request.min_nodes < 1 or not part.nodes:
            return request.min_nodes
        fit = max(1, self._largest_node_cpus(part) // request.cpus_per_task)
        if request.ntasks_per_node:
            fit = min(fit, request.ntasks_per_node)
        return max(request.min_nodes, -(-request.tasks // fit))

    def _largest_node_cpus(self, part: PartitionSpec) -> int:
        """The CPUs of the partition's largest node (which has nodes)."""
        known = self._largest_cpus.get(part.name)
        if known is None or known[0] is not part.nodes:  # node sizes never change
            known = (part.nodes, max(self.cluster.node(name).cpus for name in part.nodes))
            self._largest_cpus[part.name] = known
        return known[1]

    def _new_priority(self, job: Job) -> int:
        """The priority the priority plugin gives ``job`` now (submission, release, resume);
        it is the plugin's again, whatever an administrator set before."""
        self._fixed_priority.discard(job.job_id)
        return self.plugins.priority_job_set(job, self.cluster)

    def _arm_priority_recalc(self) -> None:
        """The priority plugin's next recalculation, on its period's next tick since the
        controller started, while jobs are pending or hold resources (so that an idle
        simulation ends); a submission arms it again."""
        period = self._priority_period
        if period is None or self._priority_timer is not None:
            return

        def run() -> None:
            self._priority_timer = None
            self._tick()
            self._recalc_priorities()
            if any(map(self.cluster.jobs_unordered, _LIVE)):
                self._arm_priority_recalc()

        self._priority_timer = self.timer.call_at(self._next_tick(period), run)

    def priority_report(self) -> PriorityReport:
        """sprio's and sshare's view: the priority plugin's weights, the factors of each
        pending job that is not held (by job id) and its fair-share tree, as of now."""
        self._tick()
        plugins, cluster = self.plugins, self.cluster
        weights = plugins.priority_weights(cluster)
        jobs: list[PriorityFactors] = []
        if weights is not None:
            for job in sorted(cluster.jobs_in(_PENDING), key=lambda j: j.job_id):
                if job.priority == 0:
                    continue
                found = plugins.priority_factors(job, cluster)
                if found is not None:
                    direct = job.job_id in self._fixed_priority
                    jobs.append(attrs.evolve(found, priority=job.priority, direct=direct))
        shares = plugins.priority_shares(cluster)
        return PriorityReport(weights, tuple(jobs), None if shares is None else tuple(shares))

    def _recalc_priorities(self) -> None:
        """Apply the plugin's new priorities to the jobs that are not held and whose
        priority no administrator set: pending ones are refiled in the queue; running and
        suspended ones (Slurm's CALCULATE_RUNNING) just take it."""
        changed = self.plugins.priority_recalc(self.cluster)
        jobs = self.cluster.jobs
        for job_id, priority in changed.items():
            job = jobs.get(job_id)
            if job is None or job.priority == 0 or job.state not in _RECALCULATED:
                continue
            if job_id in self._fixed_priority or job.priority == priority:
                continue
            job.priority = priority
            if job.state is _PENDING:
                self._file(job)

    def _partition_for(self, request: JobRequest) -> str:
        if request.partitions:
            for name in request.partitions:
                if name not in self.cluster.partitions:
                    raise RequestError("Invalid partition name specified")
            return request.partitions[0]
        default = self.cluster.default_partition()
        if default is None:
            raise RequestError("No partition specified or system default partition")
        return default.name

    def _validate(self, request: JobRequest, partition: str) -> Charge:
        """Refuse what Slurm refuses at submission; the account and QOS the job gets."""
        part = self.cluster.partition(partition)
        if part.state in ("DRAIN", "INACTIVE"):
            raise RequestError("Required partition not available (inactive or drain)")
        try:
            charged = charge(self.config, request)
        except Refused as refusal:
            raise RequestError(refusal.message) from None
        if self._limits is not None:
            tasks = len(request.array_tasks) or 1
            refused = self._limits.refusal(request.user, charged.account, self.cluster, tasks)
            if refused is not None:
                raise RequestError(refused)
        denied = self._access_refusal(request, partition, charged)
        if denied is not None:
            raise RequestError(denied)
        if request.nodelist and any(
            name not in self.cluster.node_index for name in request.nodelist
        ):
            raise RequestError("Invalid node name specified")
        if self.config.enforce_part_limits != "NO":
            if self._beyond_node_limits(request, partition):
                raise RequestError("More processors requested than permitted")
            if self._beyond_time_limit(request, partition):
                raise RequestError(
                    "Requested time limit is invalid (missing or exceeds some limit)"
                )
        return charged

    def _access_refusal(self, request: JobRequest, partition: str, charged: Charge) -> str | None:
        """RootOnly, AllowGroups, Allow/DenyAccounts, Allow/DenyQos (:mod:`.access`)."""
        try:
            spec = self.config.partition(partition)
        except KeyError:
            return None
        if not (
            spec.root_only
            or spec.allow_groups is not None
            or spec.allow_accounts is not None
            or spec.deny_accounts is not None
            or spec.allow_qos is not None
            or spec.deny_qos is not None
        ):
            return None  # the common case, checked without looking SlurmUser up
        return partition_refusal(
            spec, request, charged.account, charged.qos, slurm_user_uid(self.config)
        )

    def _capacity(self, nodes: tuple[str, ...]) -> tuple[int, int]:
        """Node and CPU count of a node list (cached: every pass asks for every job). The
        last list asked for is known by identity: hashing a long tuple costs a visit of
        every name, and most jobs ask for their partition's own tuple."""
        last = self._last_capacity
        if last is not None and last[0] is nodes:
            return last[1]
        known = self._capacities.get(nodes)
        if known is None:
            known = self._capacities[nodes] = (
                len(nodes),
                sum(self.cluster.node(name).cpus for name in nodes),
            )
        self._last_capacity = (nodes, known)
        return known

    def _beyond_node_limits(self, request: JobRequest, partition: str) -> bool:
        part = self.cluster.partition(partition)
        nodes = part.nodes
        if request.exclude:
            nodes = tuple(name for name in part.nodes if name not in request.exclude)
        count, cpus = self._capacity(nodes)
        too_many = part.max_nodes is not None and request.min_nodes > part.max_nodes
        if request.min_nodes > count or request.cpus > cpus or too_many:
            return True
        return bool(request.nodelist) and any(name not in part.nodes for name in request.nodelist)

    def _gres_satisfiable(self, request: JobRequest, part: PartitionSpec) -> bool:
        """Some nodes of the partition, all free, could hold the job's generic resources."""
        assert request.gres_request is not None
        counts = self.cluster.config.gres.counts
        nodes = [name for name in part.nodes if name not in request.exclude]
        return satisfiable(
            request.gres_request,
            request.min_nodes,
            request.tasks,
            request.ntasks_per_node,
            [counts.get(name, ()) for name in nodes],
            max_nodes=request.max_nodes,
            ntasks=request.ntasks,
        )

    def _beyond_time_limit(self, request: JobRequest, partition: str) -> bool:
        limit = self.cluster.partition(partition).max_time
        return limit is not None and request.time_limit is not None and request.time_limit > limit
