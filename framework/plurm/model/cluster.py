"""The cluster as plugins see it: configuration, live partitions, nodes and jobs.

:class:`Cluster` is the controller's one mutable owner of state. Plugins receive it in every
hook to *read*: partitions as currently configured (``scontrol update`` may change them),
node availability, the jobs, the clock. Only the controller changes it.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence, Set

import attrs

from plurm.conf.model import NodeSpec, PartitionSpec, QosSpec, SlurmConfig
from plurm.model.bitmap import NodeBitmap
from plurm.model.job import Job, JobState
from plurm.model.node import NodeCondition, NodeState, NodeStatus, after_contact, configured
from plurm.model.traits import PreemptTraits

__all__ = ["DEFAULT_QOS", "Cluster", "NodeBits", "mask_of_indexes"]


_job_id = operator.attrgetter("job_id")
#: How many node tuples mask_of remembers before it starts afresh.
_MASK_MEMO_SIZE = 1 << 16
#: How many tuple objects it knows by identity (each kept alive: fewer, as they may be
#: equal copies of one another).
_SAME_MEMO_SIZE = 1 << 12

#: The QOS a job without --qos gets (the default association QOS slurmdbd creates).
DEFAULT_QOS = "normal"


def mask_of_indexes(indexes: Iterable[int]) -> int:
    """The node bitmap with the bits ``indexes`` set. A run of consecutive indexes (a
    partition, a job's nodes in table order) costs one shift, not one per node."""
    mask = 0
    first = last = -2
    for index in indexes:
        if index == last + 1:
            last = index
            continue
        if first >= 0:
            mask |= ((2 << (last - first)) - 1) << first
        first = last = index
    if first >= 0:
        mask |= ((2 << (last - first)) - 1) << first
    return mask


class NodeBits(Mapping[str, int]):
    """Each node's bit in a node bitmap, by name: ``1 << index``, worked out when asked."""

    __slots__ = ("_index",)

    def __init__(self, index: Mapping[str, int]) -> None:
        self._index = index

    def __getitem__(self, name: str) -> int:
        return 1 << self._index[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, name: object) -> bool:
        return name in self._index


@attrs.define
class Cluster:
    """Configuration plus live state. ``now`` is the controller's clock, set by the core."""

    config: SlurmConfig
    now: float = 0.0
    jobs: dict[int, Job] = attrs.Factory(dict)
    partitions: dict[str, PartitionSpec] = attrs.Factory(dict)
    #: What the preempt policy says about itself (its capability hooks), set by the core
    #: when the controller starts and after a partition update: see
    #: :class:`~plurm.model.traits.PreemptTraits`.
    preempt_traits: PreemptTraits = PreemptTraits()
    #: Nodes an admin or the configuration took out of service (down or drained): see
    #: :attr:`node_down`, changed only by :meth:`set_condition`.
    _node_down: dict[str, NodeCondition] = attrs.Factory(dict)
    #: Nodes whose slurmd missed the controller's last ping: see :attr:`not_responding`,
    #: changed only by :meth:`set_responding`.
    _not_responding: set[str] = attrs.Factory(set)
    #: The nodes in either, as a node bitmap: no new job starts on them.
    _out_of_service: int = attrs.field(default=0, init=False, repr=False, eq=False)
    #: The jobs in each state, so that a pass over pending or running jobs does not walk
    #: every job ever submitted (a trace replay keeps tens of thousands of finished ones).
    _by_state: dict[JobState, dict[int, Job]] = attrs.Factory(dict)
    #: mask_of's answers for node tuples (jobs' nodes, select's choices): the same tuples
    #: come back pass after pass. Emptied when it grows large.
    _tuple_masks: dict[tuple[str, ...], int] = attrs.field(
        factory=dict, init=False, repr=False, eq=False
    )
    #: The same by the tuple object: its id, with the tuple kept alive in the entry so
    #: that no other object can have that id while the entry lasts. A tuple's hash is
    #: not kept, and hashing a wide job's node names on every call costs more than this.
    _same_tuples: dict[int, tuple[tuple[str, ...], int]] = attrs.field(
        factory=dict, init=False, repr=False, eq=False
    )
    #: jobs_in's answers until a job is added or changes state: a pass asks for the same
    #: sorted lists again and again (every preemption candidate walk, every queue order).
    _in_states: dict[tuple[JobState, ...], list[Job]] = attrs.field(
        factory=dict, init=False, repr=False, eq=False
    )
    _by_partition: dict[tuple[JobState | None, ...], dict[str, list[Job]]] = attrs.field(
        factory=dict, init=False, repr=False, eq=False
    )
    # Worked out at construction from the node table (which never changes), not as
    # functools.cached_property: with one of those, attrs gives the class a __getattr__,
    # which on Python 3.11 sends every attribute read of every Cluster through a slow hook.
    #: Each node's place in the node table (the order of Slurm's bitmaps).
    node_index: Mapping[str, int] = attrs.field(
        default=attrs.Factory(
            lambda self: {name: index for index, name in enumerate(self.config.node_names)},
            takes_self=True,
        ),
        init=False,
        repr=False,
        eq=False,
    )
    #: Each node's bit in a node bitmap (``1 << node_index[name]``), worked out when read:
    #: a table of them would hold n ints of up to n bits, growing with the square of the
    #: node count (about 7 MB at 10,000 nodes).
    node_bits: Mapping[str, int] = attrs.field(
        default=attrs.Factory(lambda self: NodeBits(self.node_index), takes_self=True),
        init=False,
        repr=False,
        eq=False,
    )

    @classmethod
    def from_config(cls, config: SlurmConfig) -> Cluster:
        cluster = cls(config, partitions={part.name: part for part in config.partitions})
        # Every slurmd registers as the cluster starts, and ReturnToService decides, as at
        # any later contact, whether a node the configuration set DOWN comes back (with 2 it
        # does: observed on 22.05).
        for name in config.node_names:
            condition = configured(*config.node_state(name))
            condition = after_contact(condition, config.return_to_service)
            if condition is not None:
                cluster.set_condition(name, condition)
        return cluster

    # ----------------------------------------------------------------------------- nodes

    def bitmap(self, mask: int) -> NodeBitmap:
        """The nodes of ``mask`` as a :class:`~plurm.model.bitmap.NodeBitmap` (which reads as
        their names)."""
        return NodeBitmap(mask, self.config.node_names)

    def mask_of(self, names: Iterable[str]) -> int:
        """The bitmap of the nodes ``names`` (unknown names are left out)."""
        # tuples first: they are most calls, and isinstance against the NodeBitmap ABC is slow
        if type(names) is tuple:
            same = self._same_tuples.get(id(names))
            if same is not None:  # (its tuple is alive: no other object has that id now)
                return same[1]
            mask = self._tuple_masks.get(names, -1)
            if mask < 0:
                if len(self._tuple_masks) >= _MASK_MEMO_SIZE:
                    self._tuple_masks.clear()
                mask = self._tuple_masks[names] = self._mask(names)
            if len(self._same_tuples) >= _SAME_MEMO_SIZE:
                self._same_tuples.clear()
            self._same_tuples[id(names)] = (names, mask)
            return mask
        if isinstance(names, NodeBitmap):
            return names.mask
        return self._mask(names if isinstance(names, list) else list(names))

    def _mask(self, names: Sequence[str]) -> int:
        index = self.node_index
        try:
            return mask_of_indexes(map(index.__getitem__, names))
        except KeyError:
            return mask_of_indexes([index[name] for name in names if name in index])

    def node(self, name: str) -> NodeSpec:
        return self.config.node(name)

    @property
    def node_down(self) -> Mapping[str, NodeCondition]:
        """Nodes an admin or the configuration took out of service (down or drained)."""
        return self._node_down

    @property
    def not_responding(self) -> Set[str]:
        """Nodes whose slurmd missed the controller's last ping (sinfo's ``*``, scontrol's
        +NOT_RESPONDING); no new job starts on them."""
        return self._not_responding

    def node_status(self, name: str, cpus_used: int) -> NodeStatus:
        """Node ``name``'s state as the commands show it, given the CPUs its jobs use."""
        condition = self._node_down.get(name)
        if condition is not None and condition.down:
            base = NodeState.DOWN
        elif cpus_used <= 0:
            base = NodeState.IDLE
        elif cpus_used >= self.config.node(name).cpus:
            base = NodeState.ALLOCATED
        else:
            base = NodeState.MIXED
        return NodeStatus(
            base=base,
            drain=condition is not None and condition.drain,
            not_responding=name in self._not_responding,
            in_use=cpus_used > 0,
        )

    @property
    def out_of_service(self) -> int:
        """The nodes down, drained or not responding, as a node bitmap: no new job may
        start on them."""
        return self._out_of_service

    def set_condition(self, name: str, condition: NodeCondition | None) -> None:
        """Take node ``name`` out of service with ``condition``, or (None) put it back."""
        if condition is None:
            self._node_down.pop(name, None)
        else:
            self._node_down[name] = condition
        self._update_service(name)

    def set_responding(self, name: str, responding: bool) -> None:
        """Whether node ``name``'s slurmd answers the controller's pings."""
        if responding:
            self._not_responding.discard(name)
        else:
            self._not_responding.add(name)
        self._update_service(name)

    def _update_service(self, name: str) -> None:
        bit = 1 << self.node_index[name]
        if name in self._node_down or name in self._not_responding:
            self._out_of_service |= bit
        else:
            self._out_of_service &= ~bit

    def node_available(self, name: str) -> bool:
        """Up, not drained and responding: new work may start on it."""
        return name not in self._node_down and name not in self._not_responding

    def in_table_order(self, names: Iterable[str]) -> tuple[str, ...]:
        """``names`` once each, in node-table order."""
        names = tuple(names)
        if names:
            # the common answer: one stretch of the node table (a tuple comparison in C,
            # where most elements are the table's own string objects)
            first = self.node_index[names[0]]
            if self.config.node_names[first : first + len(names)] == names:
                return names
        places = list(map(self.node_index.__getitem__, names))
        if all(map(operator.lt, places, itertools.islice(places, 1, None))):
            return names  # already in order (select answers so): no set, no sort
        return tuple(sorted(set(names), key=self.node_index.__getitem__))

    # ----------------------------------------------------------------------------- partitions

    def partition(self, name: str) -> PartitionSpec:
        return self.partitions[name]

    def default_partition(self) -> PartitionSpec | None:
        defaults = [part for part in self.partitions.values() if part.default]
        return defaults[-1] if defaults else None

    def qos(self, name: str) -> QosSpec | None:
        return self.config.qos_spec(name)

    def job_qos(self, job: Job) -> QosSpec | None:
        """The job's QOS: the one it was given at submission, else its --qos, else the
        default QOS ``normal`` (slurmdbd's)."""
        return self.qos(job.qos or job.request.qos or DEFAULT_QOS)

    def preempt_exempt_time(self, job: Job) -> int:
        """Seconds a job runs before it may be preempted: the first PreemptExemptTime set
        among its QOS, its partition's QOS and the cluster (Slurm's acct_policy order)."""
        partition_qos = self.partition(job.partition).qos
        for qos in (self.job_qos(job), self.qos(partition_qos) if partition_qos else None):
            if qos is not None and qos.preempt_exempt_time is not None:
                return qos.preempt_exempt_time
        return self.config.preempt_exempt_time or 0

    # ----------------------------------------------------------------------------- jobs

    def job(self, job_id: int) -> Job:
        return self.jobs[job_id]

    def add_job(self, job: Job) -> None:
        self.jobs[job.job_id] = job
        self._by_state.setdefault(job.state, {})[job.job_id] = job
        self._in_states.clear()
        self._by_partition.clear()

    def remove_job(self, job_id: int) -> Job | None:
        """Forget a job (plurmctld's purge of a job past MinJobAge)."""
        job = self.jobs.pop(job_id, None)
        if job is not None:
            self._by_state.get(job.state, {}).pop(job_id, None)
            self._in_states.clear()
            self._by_partition.clear()
        return job

    def set_state(self, job: Job, state: JobState) -> None:
        """The one way a job's state changes, keeping the per-state index right."""
        self._by_state.get(job.state, {}).pop(job.job_id, None)
        job.state = state
        self._by_state.setdefault(state, {})[job.job_id] = job
        self._in_states.clear()
        self._by_partition.clear()

    def jobs_unordered(self, state: JobState) -> Collection[Job]:
        """Jobs in ``state``, in no particular order (cheaper than :meth:`jobs_in`)."""
        return self._by_state.get(state, {}).values()

    def jobs_in(self, *states: JobState) -> Iterator[Job]:
        """Jobs in the given states, in job-id order."""
        found = self._in_states.get(states)
        if found is None:
            found = [job for state in states for job in self._by_state.get(state, {}).values()]
            found.sort(key=_job_id)
            self._in_states[states] = found
        return iter(found)

    def jobs_by_partition(self, *states: JobState) -> Mapping[str, Sequence[Job]]:
        """Jobs in the given states grouped by the partition they run in (or wait for),
        each group in job-id order."""
        key = (*states, None)  # kept beside jobs_in's lists, under a key of its own
        grouped = self._by_partition.get(key)
        if grouped is None:
            grouped = {}
            for job in self.jobs_in(*states):
                grouped.setdefault(job.partition, []).append(job)
            self._by_partition[key] = grouped
        return grouped

    def allocated(self) -> Iterator[Job]:
        """Jobs holding resources (running, suspended, completing), in job-id order."""
        return self.jobs_in(JobState.RUNNING, JobState.SUSPENDED, JobState.COMPLETING)
