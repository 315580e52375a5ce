"""Replay a cleaned workload trace on a simulated cluster and record what happened to each job.

A :class:`TraceMapping` says how trace jobs become Plurm jobs: processors become tasks (``-n``,
which a whole-node selector rounds up to nodes and a consumable-resource one packs) or, if
asked, whole nodes (``-N``, processors / CPUs per node), the SWF partition and queue numbers
become partitions and QOS, the requested time becomes the time limit (whole minutes, rounded
up) and the run time the simulated run time. A seeded fraction of the jobs, or of the jobs a
rule matches (:class:`~plurm.sim.rule.JobRule`), may be marked high priority (a QOS or a
partition), so that a trace recorded without preemption exercises it. With an
``[associations]`` table, each job runs as a user named after its SWF user (field 12) and is
charged to an account named after its SWF group (field 13); the replayed configuration gets
those accounts (under ``root``, with the shares the table gives) and associations, so that a
log replays under fair-share priority. A ``[gpus]`` table gives jobs GPUs
(:mod:`plurm.sim.gpus`).

:func:`replay` submits the jobs at their submit times through the controller, as sbatch
would, runs the simulation until every job has ended, and returns a :class:`JobRecord` per
job. The records come from the controller's ``plurm_job_state_changed`` events, so the
replay measures exactly what the policies did. Given a list, it also appends every state change
as a :class:`Transition` (what the report's time series are drawn from: a requeued or suspended
job runs in several intervals, which its record sums up).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from plurm._markers import hookimpl
from plurm.conf.model import AccountSpec, Association, SlurmConfig
from plurm.controller import RequestError
from plurm.errors import NumberError, TraceError
from plurm.manager import Plugins
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState
from plurm.numbers import parse_int
from plurm.plugin_errors import explain
from plurm.sim.collector import batch_collection
from plurm.sim.gpus import GpuMapping, held_gpus
from plurm.sim.rule import JobRule
from plurm.sim.session import Simulation
from plurm.sim.tomlfile import read_toml
from plurm.workload import CleanedTrace, CleanJob

__all__ = ["JobRecord", "TraceMapping", "Transition", "replay"]

# Enum members for the hot paths: on Python 3.11 a member read through its enum class goes
# through the class's __getattr__ hook (some ten times the cost of reading a global).
_PENDING = JobState.PENDING
_RUNNING = JobState.RUNNING
_SUSPENDED = JobState.SUSPENDED
_COMPLETING = JobState.COMPLETING


@attrs.frozen
class TraceMapping:
    """How the jobs of a trace become Plurm jobs (all optional; see the module's doc).

    ``processors_as`` is ``tasks`` (the default) or ``nodes``. A job is high priority when
    it matches ``high_priority_match`` (if given) and the seeded draw made for every job
    falls under ``high_priority_fraction``.
    """

    partitions: Mapping[int, str] = attrs.field(factory=dict)
    queues: Mapping[int, str] = attrs.field(factory=dict)
    processors_as: str = "tasks"
    high_priority_fraction: float = 0.0
    high_priority_qos: str | None = None
    high_priority_partition: str | None = None
    high_priority_match: JobRule | None = None
    seed: int = 0
    #: ``[associations]``: the user and account name patterns (``{user}``, ``{group}``: the
    #: SWF numbers; None: jobs run as root, charged to no account) and each account's shares.
    user_pattern: str | None = None
    account_pattern: str | None = None
    account_shares: Mapping[str, int] = attrs.field(factory=dict)
    #: ``[gpus]``: the GPUs each trace job asks for (None: none; see plurm.sim.gpus).
    gpus: GpuMapping | None = None

    @classmethod
    def load(cls, path: str | Path) -> TraceMapping:
        """Read a mapping file::

        processors_as = "nodes"
        [partitions]   # SWF partition number = Plurm partition
        1 = "batch"
        [queues]       # SWF queue number = QOS
        0 = "interactive"
        [high_priority]
        fraction = 0.1  # of the jobs the match table picks (default 1 with a match table, else 0)
        qos = "high"
        seed = 7
        [high_priority.match]  # optional: every condition must hold (see plurm.sim.rule)
        processors = { min = 64 }
        [associations]   # optional: users and accounts from SWF fields 12 and 13
        user = "u{user}"      # (the default)
        account = "g{group}"  # (the default)
        [associations.shares]  # account = Fairshare (default 1)
        g3 = 10
        """
        return cls.from_dict(read_toml(path, "mapping", TraceError), str(path))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], name: str = "<mapping>") -> TraceMapping:
        known = {"partitions", "queues", "processors_as", "high_priority", "associations", "gpus"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise TraceError(f"{name}: unknown mapping key {unknown[0]!r}")
        high = data.get("high_priority", {})
        if not isinstance(high, Mapping):
            raise TraceError(f"{name}: high_priority must be a table")
        unknown = sorted(set(high) - {"fraction", "qos", "partition", "seed", "match"})
        if unknown:
            raise TraceError(f"{name}: unknown high_priority key {unknown[0]!r}")
        match = None
        if "match" in high:
            match = JobRule.from_dict(high["match"], f"{name}: high_priority.match")
        fraction = high.get("fraction", 0.0 if match is None else 1.0)
        if isinstance(fraction, bool) or not isinstance(fraction, int | float):
            raise TraceError(f"{name}: high_priority.fraction must be a number, not {fraction!r}")
        if not 0.0 <= fraction <= 1.0:
            raise TraceError(f"{name}: high_priority.fraction must be between 0 and 1")
        seed = high.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TraceError(f"{name}: high_priority.seed must be a whole number, not {seed!r}")
        processors_as = data.get("processors_as", "tasks")
        if processors_as not in ("nodes", "tasks"):
            raise TraceError(f"{name}: processors_as must be 'nodes' or 'tasks'")
        mapping = cls(
            partitions=_numbered(data.get("partitions", {}), "partitions", name),
            queues=_numbered(data.get("queues", {}), "queues", name),
            processors_as=processors_as,
            high_priority_fraction=float(fraction),
            high_priority_qos=_name(high.get("qos"), "high_priority.qos", name),
            high_priority_partition=_name(high.get("partition"), "high_priority.partition", name),
            high_priority_match=match,
            seed=seed,
            gpus=GpuMapping.from_dict(data["gpus"], name) if "gpus" in data else None,
        )
        if "associations" in data:
            mapping = _with_associations(mapping, data["associations"], name)
        return mapping

    def user_and_account(self, job: CleanJob) -> tuple[str, str | None]:
        """The user a trace job runs as and the account it is charged to."""
        if self.user_pattern is None or self.account_pattern is None:
            return "root", None
        return _named(self.user_pattern, job), _named(self.account_pattern, job)

    def with_associations(self, config: SlurmConfig, trace: CleanedTrace) -> SlurmConfig:
        """``config`` with the accounts (under ``root``, with their shares) and the
        associations the trace's users and groups make, as accounts.conf would give them
        (each user's first account its default); ``config`` itself without
        ``[associations]``."""
        if self.user_pattern is None:
            return config
        have = {spec.name for spec in config.accounts}
        accounts = list(config.accounts) or [AccountSpec("root", parent=None, qos=("normal",))]
        associations = {(a.user, a.account): a for a in config.associations}
        defaults = dict(config.default_accounts)
        every_qos = tuple(spec.name for spec in config.qos) or ("normal",)
        for job in trace.jobs:
            user, account = self.user_and_account(job)
            assert account is not None
            if account not in have:
                have.add(account)
                shares = self.account_shares.get(account, 1)
                accounts.append(AccountSpec(account, qos=every_qos, fairshare=shares))
            if (user, account) not in associations:
                associations[(user, account)] = Association(user, account, every_qos)
                defaults.setdefault(user, account)
        return attrs.evolve(
            config,
            accounts=tuple(accounts),
            associations=tuple(associations.values()),
            default_accounts=defaults,
        )

    def with_names(
        self, partitions: Mapping[int, str], queues: Mapping[int, str], config: SlurmConfig
    ) -> tuple[TraceMapping, list[str]]:
        """This mapping with the trace header's partition and QOS names (``; Partition: 1
        debug``, ``; Queue: 1 normal``) for the numbers it does not map itself, where the
        configuration has a partition or QOS of that name; and what was taken, as
        ``partition 1 = debug``."""
        have_partitions = {spec.name for spec in config.partitions}
        have_qos = {spec.name for spec in config.qos}
        taken: list[str] = []
        new_partitions = dict(self.partitions)
        for number, name in sorted(partitions.items()):
            if number not in new_partitions and name in have_partitions:
                new_partitions[number] = name
                taken.append(f"partition {number} = {name}")
        new_queues = dict(self.queues)
        for number, name in sorted(queues.items()):
            if number not in new_queues and name in have_qos:
                new_queues[number] = name
                taken.append(f"queue {number} = QOS {name}")
        return attrs.evolve(self, partitions=new_partitions, queues=new_queues), taken

    def check(self, config: SlurmConfig, name: str = "the mapping") -> None:
        """Refuse a mapping that names a partition or QOS the configuration lacks: every
        job sent there would be rejected, and the replay would report nothing useful."""
        partitions = {spec.name for spec in config.partitions}
        qos = {spec.name for spec in config.qos}
        named = [(f"partitions.{n}", p) for n, p in sorted(self.partitions.items())]
        if self.high_priority_partition is not None:
            named.append(("high_priority.partition", self.high_priority_partition))
        for key, partition in named:
            if partition not in partitions:
                raise TraceError(
                    f"{name}: {key}: no partition {partition!r} in {config_name(config)} "
                    f"(it has: {', '.join(sorted(partitions)) or 'none'})"
                )
        wanted = [(f"queues.{n}", q) for n, q in sorted(self.queues.items())]
        if self.high_priority_qos is not None:
            wanted.append(("high_priority.qos", self.high_priority_qos))
        for key, name_of_qos in wanted:
            if name_of_qos not in qos:
                raise TraceError(
                    f"{name}: {key}: no QOS {name_of_qos!r} in the configuration "
                    f"(it has: {', '.join(sorted(qos))})"
                )
        if self.gpus is not None:
            self.gpus.check(config, name, config_name(config))


#: What a name pattern may hold besides its fields: what accounts.conf takes in a name.
_PATTERN_TEXT = re.compile(r"[a-z0-9_.-]*\Z")


def _with_associations(mapping: TraceMapping, table: object, name: str) -> TraceMapping:
    if not isinstance(table, Mapping):
        raise TraceError(f"{name}: associations must be a table")
    unknown = sorted(set(table) - {"user", "account", "shares"})
    if unknown:
        raise TraceError(f"{name}: unknown associations key {unknown[0]!r}")
    patterns = []
    for key, default in (("user", "u{user}"), ("account", "g{group}")):
        pattern = table.get(key, default)
        rest = (
            pattern.replace("{user}", "").replace("{group}", "")
            if isinstance(pattern, str)
            else None
        )
        if rest is None or pattern == rest or not _PATTERN_TEXT.match(rest):
            raise TraceError(
                f"{name}: associations.{key} must be a lower-case name with {{user}} or "
                f"{{group}} in it, not {pattern!r}"
            )
        patterns.append(pattern)
    shares = table.get("shares", {})
    if not isinstance(shares, Mapping):
        raise TraceError(f"{name}: associations.shares must be a table of ACCOUNT = SHARES")
    for account, count in shares.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise TraceError(
                f"{name}: associations.shares.{account} must be a whole number >= 1, not {count!r}"
            )
    return attrs.evolve(
        mapping,
        user_pattern=patterns[0],
        account_pattern=patterns[1],
        account_shares=dict(shares),
    )


def _named(pattern: str, job: CleanJob) -> str:
    """A name from a pattern: ``{user}`` and ``{group}`` become the job's SWF numbers (-1
    where the trace gives none, as SWF writes it)."""
    user = job.record.user
    group = job.record.group
    return pattern.replace("{user}", str(-1 if user is None else user)).replace(
        "{group}", str(-1 if group is None else group)
    )


def config_name(config: SlurmConfig) -> str:
    """The main file of ``config``, for messages."""
    return config.files[0] if config.files else "slurm.conf"


def _numbered(table: object, key: str, name: str) -> dict[int, str]:
    """A table of SWF numbers (TOML keys are strings) to Plurm names."""
    if not isinstance(table, Mapping):
        raise TraceError(f'{name}: {key} must be a table of NUMBER = "NAME", not {table!r}')
    numbered = {}
    for number, value in table.items():
        try:
            index = parse_int(str(number), what="number")
        except NumberError:
            raise TraceError(f"{name}: {key}: {number!r} is not a whole number") from None
        numbered[index] = _name(value, f"{key}.{number}", name, required=True) or ""
    return numbered


def _name(value: object, key: str, name: str, *, required: bool = False) -> str | None:
    """A partition or QOS name (None when not given and not ``required``)."""
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise TraceError(f"{name}: {key} must be a name, not {value!r}")
    return value


@attrs.define
class JobRecord:
    """What happened to one trace job. Times are seconds from the trace's start."""

    job_id: int
    trace_number: int
    partition: str
    qos: str | None
    high_priority: bool
    submit: float
    cpus: int
    nodes: int = 0
    #: The nodes of its first start.
    node_names: tuple[str, ...] = ()
    start: float | None = None
    end: float | None = None
    state: str = "PENDING"
    #: Seconds the job ran (all its runs, suspended time excluded).
    run: float = 0.0
    suspended: float = 0.0
    preempted_requeue: int = 0
    preempted_cancel: int = 0
    preempted_suspend: int = 0
    #: CPU-seconds of work thrown away by requeue and cancel preemptions.
    lost_cpu_seconds: float = 0.0
    #: The GPUs it held in its last run, the GPU-seconds of all its runs (suspended time
    #: excluded) and those thrown away by requeue and cancel preemptions.
    gpus: int = 0
    gpu_seconds: float = 0.0
    lost_gpu_seconds: float = 0.0
    rejected: str | None = None
    #: The user it ran as and the account it was charged to ("": none, without the
    #: mapping's ``[associations]``).
    user: str = ""
    account: str = ""
    #: Its fair-share factor (0 to 1) when it first started, as the priority plugin weighed
    #: it (None: the plugin has no fair-share weight).
    fairshare: float | None = None

    @property
    def wait(self) -> float | None:
        return None if self.start is None else self.start - self.submit


@attrs.frozen
class Transition:
    """One state change of a trace job: ``old`` and ``new`` are JobState names, ``preempted``
    the preemption it counts as in the job's record (``requeue``, ``cancel``, ``suspend``)."""

    time: float
    job_id: int
    old: str
    new: str
    preempted: str | None = None


#: Each state's name (an enum's ``name`` is a property, read at every state change).
_STATE_NAMES = {state: state.name for state in JobState}


class _Recorder:
    """Follows the controller's state changes into JobRecords (and Transitions if given a
    list)."""

    def __init__(
        self, records: dict[int, JobRecord], transitions: list[Transition] | None = None
    ) -> None:
        self.records = records
        self.transitions = transitions
        self._since: dict[int, float] = {}
        #: Run time of each job's current attempt (since it last left the queue).
        self._attempt: dict[int, float] = {}
        #: GPU-seconds of each GPU job's current attempt.
        self._attempt_gpu: dict[int, float] = {}
        #: Jobs killed by a preemption, COMPLETING until their nodes are released.
        self._preempted: set[int] = set()
        #: Each preempted job's preemption count when the recorder last saw it go up.
        self._counted: dict[int, int] = {}
        #: How many of the records have an end.
        self.ended = 0
        #: The simulation's plugins (asked for a starting job's fair-share factor).
        self.plugins: Plugins | None = None
        self._fairshare_weight: int | None = None

    @hookimpl
    def plurm_job_state_changed(
        self, job: Job, old: JobState, new: JobState, cluster: Cluster
    ) -> None:
        record = self.records.get(job.job_id)
        if record is None:
            return
        now = cluster.now
        record.state = _STATE_NAMES[new]
        held = self._since.pop(job.job_id, None)
        if old is _RUNNING and held is not None:
            record.run += now - held
            self._attempt[job.job_id] = self._attempt.get(job.job_id, 0.0) + now - held
            if job.gres_alloc:  # (set after the start's state change: read when it ends)
                record.gpus = held_gpus(job)
                used = (now - held) * record.gpus
                record.gpu_seconds += used
                self._attempt_gpu[job.job_id] = self._attempt_gpu.get(job.job_id, 0.0) + used
        elif old is _SUSPENDED and held is not None:
            record.suspended += now - held
        # preempted now: its count went up since the recorder last saw it
        preempted = job.preemptions > self._counted.get(job.job_id, 0)
        if preempted:
            self._counted[job.job_id] = job.preemptions
        mode: str | None = None
        if new is _COMPLETING:  # killed: its end comes when its nodes are released
            if preempted:
                self._preempted.add(job.job_id)
            if self.transitions is not None:
                self.transitions.append(Transition(now, job.job_id, old.name, new.name))
            return
        if old is _COMPLETING:
            preempted = job.job_id in self._preempted
            self._preempted.discard(job.job_id)
        if new is _RUNNING:
            if old is _PENDING:
                self._attempt[job.job_id] = 0.0
            if record.start is None:
                record.start = now
                record.nodes = len(job.nodes)
                record.node_names = job.nodes
                if record.account:
                    record.fairshare = self._fairshare(job, cluster)
            self._since[job.job_id] = now
        elif new is _SUSPENDED:
            self._since[job.job_id] = now
            record.preempted_suspend += preempted
            mode = "suspend" if preempted else None
        elif new is _PENDING and old.holds_resources:
            record.preempted_requeue += preempted
            record.lost_cpu_seconds += self._attempt.pop(job.job_id, 0.0) * record.cpus
            record.lost_gpu_seconds += self._attempt_gpu.pop(job.job_id, 0.0)
            mode = "requeue" if preempted else None
        elif new.finished:
            self.ended += record.end is None
            record.end = now
            # no command asks a replayed job for its cores after its end: a trace's worth
            # of finished allocations is not kept (an LLNL-Atlas replay: 680 MB instead of
            # 170 MB)
            job.units = None
            attempt = self._attempt.pop(job.job_id, 0.0)
            attempt_gpu = self._attempt_gpu.pop(job.job_id, 0.0)
            if new is JobState.PREEMPTED:
                record.preempted_cancel += 1
                record.lost_cpu_seconds += attempt * record.cpus
                record.lost_gpu_seconds += attempt_gpu
                mode = "cancel"
        if self.transitions is not None:
            self.transitions.append(Transition(now, job.job_id, old.name, new.name, mode))

    def _fairshare(self, job: Job, cluster: Cluster) -> float | None:
        """The job's fair-share factor, as the priority plugin weighs it now (None without
        a fair-share weight)."""
        if self.plugins is None:
            return None
        if self._fairshare_weight is None:
            weights = self.plugins.priority_weights(cluster)
            self._fairshare_weight = weights.fairshare if weights is not None else 0
        if not self._fairshare_weight:
            return None
        factors = self.plugins.priority_factors(job, cluster)
        return None if factors is None else factors.fairshare / self._fairshare_weight


def _used_memory(kilobytes: int | None) -> int | None:
    """SWF's used memory (field 7, KB per processor) in whole MiB per CPU."""
    return math.ceil(kilobytes / 1024) if kilobytes is not None and kilobytes > 0 else None


def _request(
    job: CleanJob, config: SlurmConfig, mapping: TraceMapping, high: bool, cpus_per_node: int
) -> JobRequest:
    record = job.record
    partition = mapping.partitions.get(record.partition or -1)
    qos = mapping.queues.get(record.queue if record.queue is not None else -1)
    if high:
        partition = mapping.high_priority_partition or partition
        qos = mapping.high_priority_qos or qos
    user, account = mapping.user_and_account(job)
    if mapping.processors_as == "nodes":
        nodes = max(1, math.ceil(job.processors / cpus_per_node))
        sizing: dict[str, Any] = {"min_nodes": nodes, "max_nodes": nodes}
    else:
        sizing = {"min_nodes": 1, "max_nodes": None, "ntasks": job.processors}
    return JobRequest(
        name=f"swf{record.number}",
        user=user,
        account=account,
        partitions=(partition,) if partition else (),
        qos=qos,
        time_limit=max(1, math.ceil(job.requested_time / 60)),
        sim_runtime=float(job.run_time),
        sim_mem_per_cpu=_used_memory(record.used_memory),
        **sizing,
        **(mapping.gpus.request(job) if mapping.gpus is not None else {}),
    )


def replay(
    trace: CleanedTrace,
    config: SlurmConfig,
    mapping: TraceMapping | None = None,
    *,
    progress: Callable[[float, int, int], None] | None = None,
    transitions: list[Transition] | None = None,
    controller_start: float | None = None,
    explanations: dict[int, dict[str, Any] | None] | None = None,
) -> list[JobRecord]:
    """Run ``trace`` on the cluster ``config`` describes; one record per trace job, in
    trace order. ``progress(simulated_seconds, jobs_submitted, jobs_ended)`` is called now
    and then, for a progress bar. ``transitions``, if given, receives every state change of
    the trace's jobs, in order.

    Times are seconds from the whole second at or before the first submission: a trace
    with fractions of seconds keeps their phase against the controller's passes, which
    fall on whole seconds. ``controller_start`` (seconds on the trace's clock, as
    :attr:`plurm.workload.names.TraceNames.controller_start`) starts the simulated
    controller then, so that its periodic passes keep the recorded controller's phase;
    by default it starts at the first submission. ``explanations``, if given, gets for each
    of its keys (Plurm job ids) the controller's ``scontrol explain`` facts at the end of
    the replay (None: no such job)."""
    with batch_collection():
        return _replay(
            trace,
            config,
            mapping or TraceMapping(),
            progress,
            transitions,
            controller_start,
            explanations,
        )


def _replay(
    trace: CleanedTrace,
    config: SlurmConfig,
    mapping: TraceMapping,
    progress: Callable[[float, int, int], None] | None,
    transitions: list[Transition] | None,
    controller_start: float | None,
    explanations: dict[int, dict[str, Any] | None] | None = None,
) -> list[JobRecord]:
    mapping.check(config)
    config = mapping.with_associations(config, trace)
    records: dict[int, JobRecord] = {}
    recorder = _Recorder(records, transitions)
    start = math.floor(trace.jobs[0].submit_time) if trace.jobs else 0
    first = float(trace.jobs[0].submit_time - start) if trace.jobs else 0.0
    began = first if controller_start is None else min(first, controller_start - start)
    simulation = Simulation(config, Plugins.load(config, extra=(recorder,)), start=began)
    simulation.controller.keep_finished_units = False  # (see _Recorder: nothing asks)
    recorder.plugins = simulation.plugins
    ordered: list[JobRecord] = []
    try:
        _run(trace, config, mapping, progress, simulation, records, recorder, ordered, start)
    except Exception as error:
        plugins = simulation.plugins
        now = simulation.clock.now()
        explained = explain(error, plugins.manager, plugins.loaded, now)
        if explained is None:
            raise
        explained.records = ordered  # the records as far as the replay got
        raise explained from error
    if explanations is not None:
        controller = simulation.controller
        for job_id in explanations:
            known = job_id in controller.cluster.jobs
            explanations[job_id] = controller.explain(job_id) if known else None
    return ordered


def _run(
    trace: CleanedTrace,
    config: SlurmConfig,
    mapping: TraceMapping,
    progress: Callable[[float, int, int], None] | None,
    simulation: Simulation,
    records: dict[int, JobRecord],
    recorder: _Recorder,
    ordered: list[JobRecord],
    start: int,
) -> None:
    """Submit the trace's jobs in time (``start``: the trace's time 0), then run to the end,
    appending to ``ordered``."""
    controller = simulation.controller
    cpus_per_node = min((node.cpus for node in config.nodes), default=1)
    rng = random.Random(mapping.seed)
    for count, job in enumerate(trace.jobs, start=1):
        when = float(job.submit_time - start)
        simulation.run_until(when)
        # one draw for every job whatever the rule, so that a rule narrows the same sample
        high = mapping.high_priority_fraction > 0 and rng.random() < mapping.high_priority_fraction
        if high and mapping.high_priority_match is not None:
            high = mapping.high_priority_match.matches(job)
        request = _request(job, config, mapping, high, cpus_per_node)
        record = JobRecord(
            job_id=0,
            trace_number=job.record.number,
            partition=request.partitions[0] if request.partitions else "",
            qos=request.qos,
            high_priority=high,
            submit=when,
            cpus=request.cpus,
            user=request.user if request.account else "",
            account=request.account or "",
        )
        try:
            submitted = controller.submit(request)
        except RequestError as error:
            record.rejected = error.message
            record.state = "REJECTED"
        else:
            record.job_id = submitted.job_id
            record.partition = submitted.partition
            records[submitted.job_id] = record
        ordered.append(record)
        if progress is not None and count % 1000 == 0:
            progress(when, count, recorder.ended)
    simulation.clock.run()
    if progress is not None:
        progress(simulation.clock.now(), len(ordered), len(ordered))
