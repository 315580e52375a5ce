"""Replay a cleaned workload trace on a simulated cluster and record what happened to each job.

A :class:`TraceMapping` says how trace jobs become Plurm jobs: processors become tasks (``-n``,
which a whole-node selector rounds up to nodes and a consumable-resource one packs) or, if
asked, whole nodes (``-N``, processors / CPUs per node), the SWF partition and queue numbers
become partitions and QOS, the requested time becomes the time limit (whole minutes, rounded
up) and the run time the simulated run time. A seeded fraction of the jobs, or of the jobs a
rule matches (:class:`~plurm.sim.rule.JobRule`), may be marked high priority (a QOS or a
partition), so that a trace recorded without preemption exercises it.

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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from plurm._markers import hookimpl
from plurm.conf.model import SlurmConfig
from plurm.controller import RequestError
from plurm.errors import NumberError, TraceError
from plurm.manager import Plugins
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState
from plurm.numbers import parse_int
from plurm.plugin_errors import explain
from plurm.sim.collector import batch_collection
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
        """
        return cls.from_dict(read_toml(path, "mapping", TraceError), str(path))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], name: str = "<mapping>") -> TraceMapping:
        known = {"partitions", "queues", "processors_as", "high_priority"}
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
        )
        return mapping

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
    rejected: str | None = None

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
        #: Jobs killed by a preemption, COMPLETING until their nodes are released.
        self._preempted: set[int] = set()
        #: How many of the records have an end.
        self.ended = 0

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
        elif old is _SUSPENDED and held is not None:
            record.suspended += now - held
        preempted = job.preempt_time == now
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
            self._since[job.job_id] = now
        elif new is _SUSPENDED:
            self._since[job.job_id] = now
            record.preempted_suspend += preempted
            mode = "suspend" if preempted else None
        elif new is _PENDING and old.holds_resources:
            record.preempted_requeue += preempted
            record.lost_cpu_seconds += self._attempt.pop(job.job_id, 0.0) * record.cpus
            mode = "requeue" if preempted else None
        elif new.finished:
            self.ended += record.end is None
            record.end = now
            attempt = self._attempt.pop(job.job_id, 0.0)
            if new is JobState.PREEMPTED:
                record.preempted_cancel += 1
                record.lost_cpu_seconds += attempt * record.cpus
                mode = "cancel"
        if self.transitions is not None:
            self.transitions.append(Transition(now, job.job_id, old.name, new.name, mode))


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
    if mapping.processors_as == "nodes":
        nodes = max(1, math.ceil(job.processors / cpus_per_node))
        sizing: dict[str, Any] = {"min_nodes": nodes, "max_nodes": nodes}
    else:
        sizing = {"min_nodes": 1, "max_nodes": None, "ntasks": job.processors}
    return JobRequest(
        name=f"swf{record.number}",
        partitions=(partition,) if partition else (),
        qos=qos,
        time_limit=max(1, math.ceil(job.requested_time / 60)),
        sim_runtime=float(job.run_time),
        sim_mem_per_cpu=_used_memory(record.used_memory),
        **sizing,
    )


def replay(
    trace: CleanedTrace,
    config: SlurmConfig,
    mapping: TraceMapping | None = None,
    *,
    progress: Callable[[float, int, int], None] | None = None,
    transitions: list[Transition] | None = None,
    controller_start: float | None = None,
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
    by default it starts at the first submission."""
    with batch_collection():
        return _replay(
            trace, config, mapping or TraceMapping(), progress, transitions, controller_start
        )


def _replay(
    trace: CleanedTrace,
    config: SlurmConfig,
    mapping: TraceMapping,
    progress: Callable[[float, int, int], None] | None,
    transitions: list[Transition] | None,
    controller_start: float | None,
) -> list[JobRecord]:
    mapping.check(config)
    records: dict[int, JobRecord] = {}
    recorder = _Recorder(records, transitions)
    start = math.floor(trace.jobs[0].submit_time) if trace.jobs else 0
    first = float(trace.jobs[0].submit_time - start) if trace.jobs else 0.0
    began = first if controller_start is None else min(first, controller_start - start)
    simulation = Simulation(config, Plugins.load(config, extra=(recorder,)), start=began)
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
