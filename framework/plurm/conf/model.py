"""The typed, frozen configuration: what slurm.conf, qos.conf and accounts.conf mean once
defaults apply.

Every field holds an *effective* value: DEFAULT records merged in, legacy aliases resolved,
node topology inferred, partition fall-backs applied. ``None`` stands for Slurm's INFINITE or
"not set, use the cluster's value" as each field's doc says. Times are in the unit the key
uses in Slurm (minutes for partition time limits, seconds elsewhere).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from plurm import hostlist
from plurm.conf.values import (
    OverSubscribe,
    PreemptMode,
    SelectTypeParameters,
)
from plurm.errors import SourceLocation

__all__ = [
    "AccountSpec",
    "AssocLimits",
    "Association",
    "ConfNotice",
    "ControlHost",
    "DownNodesSpec",
    "GresConfig",
    "GresCount",
    "GresDevice",
    "GresRecord",
    "NodeSetSpec",
    "NodeSpec",
    "PartitionSpec",
    "PreemptParameters",
    "QosSpec",
    "SchedulerParameters",
    "SlurmConfig",
    "node_table",
]


@attrs.frozen
class ConfNotice:
    """A warning about the configuration: Slurm logs it and goes on, and so does Plurm."""

    message: str
    location: SourceLocation | None = None

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


@attrs.frozen
class ControlHost:
    """One SlurmctldHost (or ControlMachine) entry: ``name(address)``."""

    name: str
    address: str | None = None

    def __str__(self) -> str:
        return f"{self.name}({self.address})" if self.address else self.name


@attrs.frozen
class NodeSpec:
    """One NodeName line: the nodes it names and their effective attributes.

    ``names`` is the expanded hostlist, in order. ``hostnames`` and ``addresses`` run in
    parallel with it (NodeHostname and NodeAddr default to the name). ``extra`` holds keys
    Plurm accepts but does not act on, as written.
    """

    expression: str
    names: tuple[str, ...]
    hostnames: tuple[str, ...]
    addresses: tuple[str, ...]
    cpus: int = 1
    boards: int = 1
    sockets: int = 1
    cores_per_socket: int = 1
    threads_per_core: int = 1
    real_memory: int = 1
    tmp_disk: int = 0
    weight: int = 1
    features: tuple[str, ...] = ()
    gres: tuple[str, ...] = ()
    state: str = "UNKNOWN"
    reason: str | None = None
    extra: Mapping[str, str] = attrs.field(factory=dict)
    location: SourceLocation | None = attrs.field(default=None, eq=False)


@attrs.frozen
class GresCount:
    """One ``name[:type][:count]`` of a node's ``Gres=``."""

    name: str
    type: str | None
    count: int

    def __str__(self) -> str:
        head = f"{self.name}:{self.type}" if self.type else self.name
        return f"{head}:{self.count}"


@attrs.frozen
class GresDevice:
    """One device of a generic resource on a node (a gres.conf record with ``File``): its
    index among the node's devices of that name (Slurm's device index), type, device file and
    the cores it is bound to (None: any core). Resources without files are counts only, as
    in Slurm."""

    name: str
    index: int
    type: str | None = None
    file: str | None = None
    cores: frozenset[int] | None = None


@attrs.frozen
class GresRecord:
    """One gres.conf record, as read: ``nodes`` None applies it to every node."""

    name: str
    type: str | None
    count: int
    files: tuple[str, ...]
    cores: frozenset[int] | None
    nodes: tuple[str, ...] | None
    location: SourceLocation | None = attrs.field(default=None, eq=False)


@attrs.frozen
class GresConfig:
    """Generic resources, resolved: the names GresTypes allows, each node's counts (only
    nodes with some) and devices, and where gres.conf was read."""

    types: tuple[str, ...] = ()
    counts: Mapping[str, tuple[GresCount, ...]] = attrs.field(factory=dict)
    devices: Mapping[str, tuple[GresDevice, ...]] = attrs.field(factory=dict)
    records: tuple[GresRecord, ...] = ()
    autodetect: str | None = None

    def node_counts(self, node: str) -> tuple[GresCount, ...]:
        return self.counts.get(node, ())


@attrs.frozen
class DownNodesSpec:
    """A DownNodes line: nodes that start in ``state`` (DOWN unless given) with ``reason``."""

    names: tuple[str, ...]
    state: str = "DOWN"
    reason: str | None = None
    location: SourceLocation | None = attrs.field(default=None, eq=False)


@attrs.frozen
class NodeSetSpec:
    """A NodeSet: a name usable in a partition's Nodes=, for the union of its members."""

    name: str
    nodes: tuple[str, ...]
    feature: str | None = None
    location: SourceLocation | None = attrs.field(default=None, eq=False)


@attrs.frozen
class PartitionSpec:
    """One PartitionName line with PartitionName=DEFAULT values and Slurm's defaults applied.

    ``nodes`` lists the member nodes in node-table order (Slurm keeps a bitmap); ``nodes_expr``
    is the Nodes= value as written. ``preempt_mode`` None means the cluster's PreemptMode.
    ``max_time``/``default_time`` are minutes, None for UNLIMITED. ``default_time`` is the
    limit a job without ``--time`` gets, so it falls back to ``max_time`` when DefaultTime is
    not configured (``default_time_configured`` says which; scontrol shows NONE then).
    Memory limits are MiB, None for unlimited.
    """

    name: str
    nodes: tuple[str, ...]
    nodes_expr: str = ""
    default: bool = False
    priority_tier: int = 1
    priority_job_factor: int = 1
    oversubscribe: OverSubscribe = OverSubscribe()
    preempt_mode: PreemptMode | None = None
    grace_time: int = 0
    max_time: int | None = None
    default_time: int | None = None
    default_time_configured: bool = False
    state: str = "UP"
    max_nodes: int | None = None
    min_nodes: int = 0
    def_mem_per_cpu: int | None = None
    def_mem_per_node: int | None = None
    max_mem_per_cpu: int | None = None
    max_mem_per_node: int | None = None
    qos: str | None = None
    allow_accounts: tuple[str, ...] | None = None
    allow_groups: tuple[str, ...] | None = None
    allow_qos: tuple[str, ...] | None = None
    deny_accounts: tuple[str, ...] | None = None
    deny_qos: tuple[str, ...] | None = None
    hidden: bool = False
    root_only: bool = False
    exclusive_user: bool = False
    lln: bool = False
    req_resv: bool = False
    select_type_parameters: SelectTypeParameters | None = None
    over_time_limit: int | None = None
    extra: Mapping[str, str] = attrs.field(factory=dict)
    location: SourceLocation | None = attrs.field(default=None, eq=False)


@attrs.frozen
class QosSpec:
    """One QOS from qos.conf, with sacctmgr's meanings.

    ``preempt_mode`` None means the cluster's PreemptMode (sacctmgr's ``cluster`` or empty).
    ``preempt_exempt_time`` None means "defer to PreemptExemptTime" (sacctmgr's -1).
    """

    name: str
    priority: int = 0
    preempt: tuple[str, ...] = ()
    preempt_mode: PreemptMode | None = None
    preempt_exempt_time: int | None = None
    grace_time: int = 0
    usage_factor: float = 1.0
    flags: frozenset[str] = frozenset()
    location: SourceLocation | None = attrs.field(default=None, eq=False)


@attrs.frozen
class AssocLimits:
    """The association limits of accounts.conf Plurm enforces (sacctmgr's fields; None: no
    limit). ``grp_*`` cover every job of the association, or of the account and the
    accounts below it; ``max_*`` hold for each job or each user association (an account's
    are the default of the associations below it). ``max_wall`` is in minutes."""

    grp_cpus: int | None = None
    grp_nodes: int | None = None
    grp_jobs: int | None = None
    max_jobs: int | None = None
    max_submit_jobs: int | None = None
    max_wall: int | None = None

    @property
    def any(self) -> bool:
        """Whether any limit is set."""
        return any(value is not None for value in attrs.astuple(self))


NO_LIMITS = AssocLimits()


@attrs.frozen
class AccountSpec:
    """One account from accounts.conf, as ``sacctmgr add account`` (and ``sacctmgr add
    coordinator``) make it.

    ``qos`` None means the parent's QOS list (the root account's is ``normal``);
    ``default_qos`` None means the parent's default (none at the root).
    """

    name: str
    parent: str | None = "root"
    qos: tuple[str, ...] | None = None
    default_qos: str | None = None
    #: The users who coordinate the account (``sacctmgr add coordinator``): they may act
    #: on the jobs charged to it and to its sub-accounts.
    coordinators: tuple[str, ...] = ()
    location: SourceLocation | None = attrs.field(default=None, eq=False)
    #: Fairshare: its shares among its siblings (sacctmgr's default 1); None: ``parent``.
    fairshare: int | None = 1
    #: Priority: what its associations add to their jobs' association factor (None: not
    #: set; its sub-accounts and users without one of their own take it).
    priority: int | None = None
    #: Its limits as written (GrpTRES, GrpJobs, MaxJobs, MaxSubmitJobs, MaxWall).
    limits: AssocLimits = NO_LIMITS


@attrs.frozen
class Association:
    """A user's right to charge an account, with the QOS its jobs may use (resolved
    through the account tree) and the one they get without --qos (None: ``normal``)."""

    user: str
    account: str
    qos: tuple[str, ...] = ("normal",)
    default_qos: str | None = None
    #: Fairshare: its shares among its account's children (sacctmgr's default 1); None:
    #: ``parent`` (the user's jobs count as its account's own).
    fairshare: int | None = 1
    #: Priority (its own, else the nearest account's above it; None: not set), which
    #: priority/multifactor divides by the highest of any association for the ASSOC factor.
    priority: int | None = None
    #: Its limits: its Grp* as its line writes them, its Max* from its line else from the
    #: nearest account above that sets them (as slurmdbd propagates them).
    limits: AssocLimits = NO_LIMITS


@attrs.frozen
class SchedulerParameters:
    """SchedulerParameters: the options Plurm acts on, typed, plus every option as written."""

    sched_interval: int = 60
    sched_min_interval: int = 2
    default_queue_depth: int = 100
    bf_interval: int = 30
    bf_window: int = 1440
    bf_max_job_test: int = 500
    bf_resolution: int = 60
    #: Reservations per partition in one backfill pass (0: every job reserves).
    bf_job_part_count_reserve: int = 0
    bf_continue: bool = False
    options: Mapping[str, str | None] = attrs.field(factory=dict)
    #: Where each option was written, for messages.
    locations: Mapping[str, SourceLocation] = attrs.field(factory=dict, eq=False, repr=False)


@attrs.frozen
class PrioritySettings:
    """slurm.conf's Priority* keys, typed: what a priority plugin other than priority/basic
    reads (Slurm 22.05's defaults). Times are seconds; ``max_age`` and ``decay_half_life``
    0 mean none (no age factor; no decay); ``flags`` are PriorityFlags, upper case;
    ``weight_tres`` is PriorityWeightTRES as written (``CPU=1000,Mem=2000``)."""

    weight_age: int = 0
    weight_assoc: int = 0
    weight_fairshare: int = 0
    weight_jobsize: int = 0
    weight_partition: int = 0
    weight_qos: int = 0
    weight_tres: str = ""
    max_age: int = 7 * 86400
    favor_small: bool = False
    decay_half_life: int = 7 * 86400
    usage_reset_period: str = "NONE"
    calc_period: int = 300
    flags: frozenset[str] = frozenset()


@attrs.frozen
class PreemptParameters:
    """The preemption tunables, from PreemptParameters or their legacy spellings.

    Slurm 22.05 reads them from SchedulerParameters (``preempt_youngest_first``,
    ``preempt_strict_order``, ``preempt_reorder_count``) and SlurmctldParameters
    (``preempt_send_user_signal``); Slurm 23.02 added ``PreemptParameters``.
    """

    youngest_first: bool = False
    strict_order: bool = False
    reorder_count: int = 1
    min_exempt_priority: int | None = None
    send_user_signal: bool = False
    reclaim_licenses: bool = False
    suspend_grace_time: int = 2
    #: Every option of PreemptParameters as written (lower-case name -> value or None),
    #: Slurm's and those plugins declare (see :mod:`plurm.params`).
    options: Mapping[str, str | None] = attrs.field(factory=dict)
    #: Where each option was written, for messages.
    locations: Mapping[str, SourceLocation] = attrs.field(factory=dict, eq=False, repr=False)


#: The PreemptParameters options Slurm knows; plugins may declare more.
PREEMPT_OPTIONS = frozenset(
    {
        "youngest_first",
        "strict_order",
        "send_user_signal",
        "reclaim_licenses",
        "reorder_count",
        "suspend_grace_time",
        "min_exempt_priority",
    }
)


#: Plurm's own PreemptParameters options and the core preempt plugin each loads (beside the
#: PreemptType policy and plurm.conf's guards) when slurm.conf sets it: the victim objective
#: and the anti-thrash guards (see ``plurm.builtin.preempt_victims`` and
#: ``plurm.builtin.preempt_guards``).
CORE_PREEMPT_PLUGINS: Mapping[str, str] = {
    "victims": "preempt/victims",
    "max_job_preempt": "preempt/max_job_preempt",
    "no_preempt_run_time": "preempt/no_preempt_run_time",
    "no_preempt_finish_time": "preempt/no_preempt_finish_time",
}


#: slurm.conf keys naming Slurm plugins that have no effect in simulation, and the prefix of
#: their type strings (``MpiDefault=pmi2`` is ``mpi/pmi2``). Each plugin a configuration
#: names there loads (see ``plurm.builtin.no_effect``), so a missing one is an error.
NO_EFFECT_KEYS: Mapping[str, str] = {
    "AccountingStorageType": "accounting_storage",
    "AcctGatherEnergyType": "acct_gather_energy",
    "AcctGatherFilesystemType": "acct_gather_filesystem",
    "AcctGatherInterconnectType": "acct_gather_interconnect",
    "AcctGatherProfileType": "acct_gather_profile",
    "CredType": "cred",
    "JobCompType": "jobcomp",
    "JobContainerType": "job_container",
    "LaunchType": "launch",
    "MpiDefault": "mpi",
    "PrEpPlugins": "prep",
    "ProctrackType": "proctrack",
    "SwitchType": "switch",
    "TaskPlugin": "task",
    "TopologyPlugin": "topology",
}


#: The last node table built and the NodeName lines it was built from: a configuration is
#: evolved a few times as it is loaded, each copy keeping the same lines.
_LAST_TABLE: list[tuple[tuple[NodeSpec, ...], tuple[str, ...]]] = []


def node_table(nodes: tuple[NodeSpec, ...]) -> tuple[str, ...]:
    """Every node the NodeName lines name, in node-table order: Slurm 22.05 sorts its node
    table by name in natural order (``n2`` before ``n10``; :func:`plurm.hostlist.natural_key`)
    whatever the order of the lines, when no topology plugin ranks the nodes (Plurm has
    none). Bitmaps, select's scans and node listings follow this order."""
    if _LAST_TABLE and _LAST_TABLE[0][0] is nodes:
        return _LAST_TABLE[0][1]
    table = tuple(sorted((name for spec in nodes for name in spec.names), key=hostlist.natural_key))
    _LAST_TABLE[:] = [(nodes, table)]
    return table


def _node_names(config: SlurmConfig) -> tuple[str, ...]:
    return node_table(config.nodes)


def _node_index(config: SlurmConfig) -> Mapping[str, NodeSpec]:
    return {name: spec for spec in config.nodes for name in spec.names}


def _down_index(config: SlurmConfig) -> Mapping[str, tuple[str, str | None]]:
    """Each node a DownNodes line names: the state and reason of the last such line."""
    return {name: (down.state, down.reason) for down in config.down_nodes for name in down.names}


def _associations(config: SlurmConfig) -> Mapping[tuple[str, str], Association]:
    return {(a.user, a.account): a for a in config.associations}


def _qos_index(config: SlurmConfig) -> Mapping[str, QosSpec]:
    index: dict[str, QosSpec] = {}
    for spec in config.qos:
        index.setdefault(spec.name, spec)  # the first of a name, as a scan finds it
    return index


@attrs.frozen
class SlurmConfig:
    """A whole configuration, effective values only. Build it with :func:`plurm.conf.load`."""

    cluster_name: str
    control_hosts: tuple[ControlHost, ...]
    nodes: tuple[NodeSpec, ...] = ()
    partitions: tuple[PartitionSpec, ...] = ()
    nodesets: tuple[NodeSetSpec, ...] = ()
    down_nodes: tuple[DownNodesSpec, ...] = ()
    qos: tuple[QosSpec, ...] = ()
    select_type: str = "select/linear"
    select_type_parameters: SelectTypeParameters = SelectTypeParameters()
    preempt_type: str = "preempt/none"
    preempt_mode: PreemptMode = PreemptMode()
    preempt_exempt_time: int | None = None
    preempt_parameters: PreemptParameters = PreemptParameters()
    #: PreemptGuards (plurm.conf, Plurm's own): preempt plugins loaded after the
    #: PreemptType policy that may only veto its victims (``preempt_veto``).
    preempt_guards: tuple[str, ...] = ()
    #: Generic resources: GresTypes, each node's Gres= counts and gres.conf's devices.
    gres: GresConfig = GresConfig()
    #: SchedulerPassOn (plurm.conf, Plurm's own): ``tick`` runs the pass that answers an
    #: event (a submission, a job's end) at the next whole second, as Slurm does; ``event``
    #: runs it at once.
    scheduler_pass_on: str = "tick"
    scheduler_type: str = "sched/backfill"
    scheduler_parameters: SchedulerParameters = SchedulerParameters()
    scheduler_time_slice: int = 30
    priority_type: str = "priority/basic"
    #: The Priority* keys (PriorityWeight*, PriorityMaxAge, PriorityFlags, ...).
    priority: PrioritySettings = PrioritySettings()
    auth_type: str = "auth/munge"
    auth_alt_types: tuple[str, ...] = ()
    #: AuthInfo, as written (auth/munge reads ``socket=PATH`` and ``ttl=N`` from it).
    auth_info: str = ""
    #: AuthAltParameters, as written (auth/jwt reads ``jwt_key=FILE`` from it).
    auth_alt_parameters: str = ""
    #: SlurmUser: the user the controller runs as; it may act on every job, as root may.
    slurm_user: str = "root"
    #: PrivateData, lower-cased words (``jobs``: users see only their own jobs).
    private_data: frozenset[str] = frozenset()
    jobacct_gather_type: str = "jobacct_gather/none"
    job_requeue: bool = True
    kill_wait: int = 30
    #: ReturnToService: when a DOWN node's slurmd is heard from again (registration, a ping
    #: answer), 2 brings it back into service whatever set it DOWN, 1 only if the controller
    #: set it DOWN for not responding, 0 never.
    return_to_service: int = 0
    message_timeout: int = 10
    #: SlurmdTimeout: seconds a node's slurmd may stay silent before the controller sets the
    #: node DOWN ("Not responding"); it pings nodes every third of it. 0: never tested.
    slurmd_timeout: int = 300
    min_job_age: int = 300
    first_job_id: int = 1
    max_job_count: int = 10000
    #: MaxArraySize: array task ids must be below it.
    max_array_size: int = 1001
    over_time_limit: int = 0
    def_mem_per_cpu: int | None = None
    def_mem_per_node: int | None = None
    max_mem_per_cpu: int | None = None
    max_mem_per_node: int | None = None
    #: EnforcePartLimits: NO (accept and let the job wait), ALL or ANY (refuse at submit).
    enforce_part_limits: str = "NO"
    #: Whether QOS came from a qos.conf (else only the implicit ``normal`` exists, and like
    #: Slurm without accounting, --qos is not checked).
    qos_file: bool = False
    #: AccountingStorageType: ``accounting_storage/slurmdbd`` gives jobs an account and a
    #: QOS from the associations (accounts.conf stands for slurmdbd's database).
    accounting_storage_type: str = "accounting_storage/none"
    #: AccountingStorageEnforce with Slurm's implications applied (qos and limits imply
    #: associations, safe implies limits, all is every one but nojobs/nosteps).
    accounting_enforce: frozenset[str] = frozenset()
    #: The accounts of accounts.conf, the implicit ``root`` first.
    accounts: tuple[AccountSpec, ...] = ()
    #: Every (user, account) association, the implicit ``root`` user's in ``root`` first.
    associations: tuple[Association, ...] = ()
    #: Each user's default account (the one a job without -A is charged to).
    default_accounts: Mapping[str, str] = attrs.field(factory=dict)
    #: Users with an AdminLevel above None in accounts.conf: ``Operator`` or ``Administrator``.
    admin_levels: Mapping[str, str] = attrs.field(factory=dict)
    #: Keys Plurm accepts but does not act on: canonical key -> value as written.
    inactive: Mapping[str, str] = attrs.field(factory=dict)
    #: Where each plugin type string slurm.conf names was written: type string -> (key,
    #: location), for messages about a plugin that is not installed.
    plugin_locations: Mapping[str, tuple[str, SourceLocation]] = attrs.field(
        factory=dict, eq=False, repr=False
    )
    #: Everything Slurm would log without refusing the file.
    notices: tuple[ConfNotice, ...] = attrs.field(default=(), eq=False)
    #: The files read, main file first, in reading order.
    files: tuple[str, ...] = attrs.field(default=(), eq=False)
    # Indexes worked out at construction, not as functools.cached_property: with one of
    # those, attrs gives the class a __getattr__, which on Python 3.11 sends every attribute
    # read of every configuration through a slow hook (the core reads it in its hot paths).
    #: Every node, in node-table order.
    node_names: tuple[str, ...] = attrs.field(
        default=attrs.Factory(_node_names, takes_self=True), init=False, repr=False, eq=False
    )
    _node_index: Mapping[str, NodeSpec] = attrs.field(
        default=attrs.Factory(_node_index, takes_self=True), init=False, repr=False, eq=False
    )
    _down_index: Mapping[str, tuple[str, str | None]] = attrs.field(
        default=attrs.Factory(_down_index, takes_self=True), init=False, repr=False, eq=False
    )
    _associations: Mapping[tuple[str, str], Association] = attrs.field(
        default=attrs.Factory(_associations, takes_self=True), init=False, repr=False, eq=False
    )
    _qos_index: Mapping[str, QosSpec] = attrs.field(
        default=attrs.Factory(_qos_index, takes_self=True), init=False, repr=False, eq=False
    )

    @property
    def accounting(self) -> bool:
        """Jobs are accounted in slurmdbd (AccountingStorageType=accounting_storage/slurmdbd):
        each gets an account and a QOS at submission."""
        return self.accounting_storage_type == "accounting_storage/slurmdbd"

    def association(self, user: str, account: str) -> Association | None:
        """The association of ``user`` with ``account``, if there is one."""
        return self._associations.get((user, account))

    def qos_spec(self, name: str) -> QosSpec | None:
        """The QOS called ``name``, if there is one."""
        return self._qos_index.get(name)

    @property
    def gang_scheduling(self) -> bool:
        """Gang scheduling is on: PreemptMode has GANG."""
        return self.preempt_mode.gang

    def plugin_types(self) -> dict[str, tuple[str, ...]]:
        """The plugin type strings this configuration names, by plugin type.

        The sched type lists the scheduler that orders the queue first and, when gang
        scheduling is on, the gang plugin (``sched/gang``) after it; the preempt type lists
        the PreemptType policy first, the guards of plurm.conf after it, then the core's
        preempt plugins of the Plurm options PreemptParameters sets
        (``CORE_PREEMPT_PLUGINS``). The types of
        :data:`NO_EFFECT_KEYS` list the plugins slurm.conf names there (none when the key is
        not set, AccountingStorageType's always).
        """
        sched = (
            (self.scheduler_type, "sched/gang") if self.gang_scheduling else (self.scheduler_type,)
        )
        options = self.preempt_parameters.options
        core = tuple(
            type_string
            for option, type_string in CORE_PREEMPT_PLUGINS.items()
            if option in options and type_string not in self.preempt_guards
        )
        types = {
            "select": (self.select_type,),
            "preempt": (self.preempt_type, *self.preempt_guards, *core),
            "sched": sched,
            "jobacct_gather": (self.jobacct_gather_type,),
            "priority": (self.priority_type,),
            "auth": (self.auth_type, *self.auth_alt_types),
        }
        for key, prefix in NO_EFFECT_KEYS.items():
            written = (
                self.accounting_storage_type
                if key == "AccountingStorageType"
                else self.inactive.get(key, "")
            )
            names = (word.strip() for word in written.split(","))
            types[prefix] = tuple(
                dict.fromkeys(name if "/" in name else f"{prefix}/{name}" for name in names if name)
            )
        return types

    def node(self, name: str) -> NodeSpec:
        """The NodeName line that defines node ``name``; KeyError when none does."""
        return self._node_index[name]

    def node_state(self, name: str) -> tuple[str, str | None]:
        """The state and reason node ``name`` starts in: a DownNodes line wins over NodeName."""
        down = self._down_index.get(name)
        if down is not None:
            return down
        spec = self.node(name)
        return spec.state, spec.reason

    def partition(self, name: str) -> PartitionSpec:
        """The partition called ``name``; KeyError when none is."""
        for part in self.partitions:
            if part.name == name:
                return part
        raise KeyError(name)

    @property
    def default_partition(self) -> PartitionSpec | None:
        """The partition marked Default=YES (the last one, as in Slurm), else None."""
        defaults = [part for part in self.partitions if part.default]
        return defaults[-1] if defaults else None
