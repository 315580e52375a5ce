"""Turn what the reader collected into a typed :class:`~plurm.conf.model.SlurmConfig`.

Here live Slurm's defaults, legacy aliases, topology inference, Nodes= resolution and the
whole-configuration checks (a ClusterName, a SlurmctldHost, PreemptMode against PreemptType).
Every problem is collected, so one run reports all of them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TypeVar

import attrs

from plurm import hostlist
from plurm.conf import keys
from plurm.conf.model import (
    NO_EFFECT_KEYS,
    ConfNotice,
    ControlHost,
    DownNodesSpec,
    NodeSetSpec,
    NodeSpec,
    PartitionSpec,
    PreemptParameters,
    PrioritySettings,
    SchedulerParameters,
    SlurmConfig,
    node_table,
)
from plurm.conf.reader import RawConfig, RawRecord, Setting
from plurm.conf.values import (
    SLURM_PREEMPT_TYPES,
    BadValue,
    CrBase,
    OverSubscribe,
    PreemptBase,
    PreemptMode,
    SelectTypeParameters,
    c_strtol,
    parse_accounting_enforce,
    parse_bool,
    parse_int,
    parse_oversubscribe,
    parse_preempt_mode,
    parse_select_type_parameters,
    parse_time,
)
from plurm.errors import ConfError, ConfValueError, HostlistError, SourceLocation
from plurm.numbers import UINT16_MAX

__all__ = ["build_config"]


T = TypeVar("T")


def build_config(raw: RawConfig) -> tuple[SlurmConfig | None, list[ConfError]]:
    """The configuration, or None and every error found."""
    builder = _Builder(raw)
    config = builder.build()
    return (config if not builder.errors else None), builder.errors


def _uint(bits: int) -> Callable[[str], int]:
    """Slurm's unsigned integer of ``bits`` bits (the same parser the key tables check with)."""
    return {16: keys.UINT16, 32: keys.UINT32, 64: keys.UINT64}[bits]  # type: ignore[return-value]


def _uint_or_none(bits: int) -> Callable[[str], int | None]:
    """An integer where INFINITE/UNLIMITED (and Slurm's all-ones value) mean None."""

    def parse(text: str) -> int | None:
        value = _uint(bits)(text)
        return None if value in (-1, (1 << bits) - 1) else value

    return parse


def _memory(text: str) -> int | None:
    """MiB; 0 and UNLIMITED mean no limit."""
    value = _uint(64)(text)
    return None if value in (0, -1) else value


def _minutes(text: str) -> int | None:
    """A partition time limit in minutes (None: UNLIMITED)."""
    return parse_time(text, unit="minutes", wrap=True)


def _seconds(text: str) -> int | None:
    return parse_time(text, unit="seconds")


def _comma_list(text: str) -> tuple[str, ...]:
    return tuple(word for word in text.split(",") if word)


def _access_list(text: str) -> tuple[str, ...] | None:
    """AllowAccounts and friends: ``ALL`` (any case) means no restriction."""
    words = _comma_list(text)
    return None if any(word.upper() == "ALL" for word in words) else words


#: The keys that name the plugins Plurm runs (policies, accounting, auth).
_POLICY_PLUGIN_KEYS = (
    "SelectType",
    "PreemptType",
    "SchedulerType",
    "JobAcctGatherType",
    "AuthType",
    "AuthAltTypes",
)


def _option_locations(setting: Setting) -> dict[str, SourceLocation]:
    """Where each option of a comma list ``setting`` starts (for messages about one)."""
    found: dict[str, SourceLocation] = {}
    offset = 0
    for word in setting.value.split(","):
        name = word.partition("=")[0].strip().lower()
        if name and name not in found:
            found[name] = setting.source.locate(setting.index, setting.value_column + offset)
        offset += len(word) + 1
    return found


def _options(text: str) -> dict[str, str | None]:
    """``a,b=1,c``: a comma list of options, each with an optional ``=value``."""
    options: dict[str, str | None] = {}
    for word in text.split(","):
        if not word:
            continue
        name, equals, value = word.partition("=")
        options[name.strip().lower()] = value if equals else None
    return options


#: The most nodes a configuration may define, over all its NodeName lines.
MAX_NODES = hostlist.MAX_HOSTS
#: The most host names all of a configuration's hostlists (NodeName, NodeHostname, NodeAddr,
#: Nodes=, DownNodes) may expand to together.
MAX_CONF_HOST_NAMES = 16 * hostlist.MAX_HOSTS


class _Builder:
    def __init__(self, raw: RawConfig) -> None:
        self.raw = raw
        self.errors: list[ConfError] = list(raw.errors)
        self.notices: list[ConfNotice] = list(raw.notices)
        self._order: dict[str, int] | None = None
        self._table: list[str] = []  # the node names in node-table order
        self.node_count = 0
        self.expanded = 0

    # ----------------------------------------------------------------------------- helpers

    def parse(self, setting: Setting | None, parse: Callable[[str], T], default: T) -> T:
        if setting is None:
            return default
        try:
            return parse(setting.value)
        except BadValue as error:
            self.fail(setting, str(error))
            return default

    def scalar(self, key: str, parse: Callable[[str], T], default: T) -> T:
        return self.parse(self.raw.scalars.get(key), parse, default)

    def fail(self, setting: Setting, reason: str) -> None:
        self.errors.append(
            ConfValueError(setting.key, setting.value, reason, setting.value_location)
        )

    def whole_file(self) -> SourceLocation:
        """The main file as a whole: where a problem with no single line is reported."""
        return SourceLocation(self.raw.files[0] if self.raw.files else "slurm.conf", 0)

    def notice(self, message: str, setting: Setting | None = None) -> None:
        self.notices.append(ConfNotice(message, setting.location if setting else None))

    def expand(self, setting: Setting) -> tuple[str, ...]:
        try:
            return self.counted(setting.value)
        except HostlistError as error:
            self.fail(setting, str(error))
            return ()

    def counted(self, expression: str) -> tuple[str, ...]:
        """A hostlist's names, counted against the whole configuration's budget: the cap
        on one expression alone would let a few short lines name millions of hosts."""
        names = tuple(hostlist.expand(expression))
        self.expanded += len(names)
        if self.expanded > MAX_CONF_HOST_NAMES:
            raise HostlistError(
                f"Invalid hostlist: {expression} (the configuration's hostlists name more "
                f"than {MAX_CONF_HOST_NAMES} hosts in all)"
            )
        return names

    # ----------------------------------------------------------------------------- whole

    def build(self) -> SlurmConfig:
        nodes = tuple(self.node(record) for record in self._records("NodeName"))
        self.check_duplicate_nodes(nodes)
        nodesets = tuple(self.nodeset(record, nodes) for record in self._records("NodeSet"))
        partitions = self.partitions(nodes, nodesets)
        down_nodes = tuple(self.down(record, nodes) for record in self._records("DownNodes"))
        config = SlurmConfig(
            cluster_name=self.cluster_name(),
            control_hosts=self.control_hosts(),
            nodes=nodes,
            partitions=partitions,
            nodesets=nodesets,
            down_nodes=down_nodes,
            select_type=self.scalar("SelectType", str, "select/linear"),
            select_type_parameters=self.select_type_parameters(),
            preempt_type=self.preempt_type(),
            preempt_mode=self.scalar("PreemptMode", parse_preempt_mode, PreemptMode()),
            preempt_exempt_time=self.scalar("PreemptExemptTime", keys.exempt_time, None),
            preempt_parameters=self.preempt_parameters(),
            scheduler_type=self.scalar("SchedulerType", str, "sched/backfill"),
            scheduler_parameters=self.scheduler_parameters(),
            scheduler_time_slice=self.time_slice(),
            priority_type=self.scalar("PriorityType", str, "priority/basic"),
            priority=self.priority_settings(),
            auth_type=self.scalar("AuthType", str, "auth/munge"),
            auth_alt_types=self.scalar("AuthAltTypes", _comma_list, ()),
            auth_info=self.scalar("AuthInfo", str, ""),
            auth_alt_parameters=self.scalar("AuthAltParameters", str, ""),
            slurm_user=self.scalar("SlurmUser", str, "root"),
            private_data=self.scalar(
                "PrivateData",
                lambda text: frozenset(w.strip().lower() for w in text.split(",") if w.strip()),
                frozenset(),
            ),
            jobacct_gather_type=self.scalar("JobAcctGatherType", str, "jobacct_gather/none"),
            job_requeue=self.scalar("JobRequeue", lambda t: _uint(16)(t) >= 1, True),
            kill_wait=self.scalar("KillWait", _uint(16), 30),
            return_to_service=self.scalar("ReturnToService", _uint(16), 0),
            message_timeout=self.scalar("MessageTimeout", _uint(16), 10),
            slurmd_timeout=self.scalar("SlurmdTimeout", _uint(16), 300),
            min_job_age=self.scalar("MinJobAge", _uint(32), 300),
            first_job_id=self.scalar("FirstJobId", _uint(32), 1),
            max_job_count=self.scalar("MaxJobCount", _uint(32), 10000),
            max_array_size=self.scalar("MaxArraySize", _uint(32), 1001),
            over_time_limit=self.scalar("OverTimeLimit", _uint(16), 0),
            def_mem_per_cpu=self.scalar("DefMemPerCPU", _memory, None),
            def_mem_per_node=self.scalar("DefMemPerNode", _memory, None),
            max_mem_per_cpu=self.scalar("MaxMemPerCPU", _memory, None),
            max_mem_per_node=self.scalar("MaxMemPerNode", _memory, None),
            enforce_part_limits=self.scalar("EnforcePartLimits", _enforce_part_limits, "NO"),
            accounting_storage_type=self.scalar(
                "AccountingStorageType", str, "accounting_storage/none"
            ),
            accounting_enforce=self.scalar(
                "AccountingStorageEnforce", parse_accounting_enforce, frozenset()
            ),
            inactive=self.inactive(),
            plugin_locations=self.plugin_locations(),
            files=tuple(self.raw.files),
        )
        config = self.legacy_gang(config)
        self.check_preemption(config)
        for check in keys.WHOLE_CONFIG_CHECKS:
            for key, message in check(self.raw.scalars):
                setting = self.raw.scalars.get(key)
                where = setting.location if setting else self.whole_file()
                self.errors.append(ConfError(message, where))
        return attrs.evolve(config, notices=tuple(self.notices))

    def _records(self, kind: str) -> list[RawRecord]:
        return [record for record in self.raw.records if record.kind == kind]

    def cluster_name(self) -> str:
        name = self.raw.get("ClusterName")
        if not name:
            self.errors.append(ConfError("ClusterName needs to be specified", self.whole_file()))
            return ""
        # Slurm lower-cases the cluster name it stores.
        return name.lower()

    def control_hosts(self) -> tuple[ControlHost, ...]:
        hosts = []
        for setting in self.raw.multi.get("SlurmctldHost", []):
            host = _control_host(setting.value)
            if host is None:
                self.fail(setting, f'Bad value "{setting.value}" for SlurmctldHost')
            else:
                hosts.append(host)
        if not hosts:
            legacy = self.raw.get("ControlMachine")
            if legacy is not None:
                address = self.raw.get("ControlAddr")
                hosts.append(ControlHost(legacy, address))
                backup = self.raw.get("BackupController")
                if backup:
                    hosts.append(ControlHost(backup, self.raw.get("BackupAddr")))
        if not hosts:
            self.errors.append(ConfError("No SlurmctldHost defined.", self.whole_file()))
        return tuple(hosts)

    def inactive(self) -> dict[str, str]:
        """Keys Plurm accepts without acting on them, reported once each."""
        inactive = {}
        for name, setting in self.raw.scalars.items():
            spec = keys.top(name)
            if spec is not None and not spec.effect:
                inactive[name] = setting.value
        for name, settings in self.raw.multi.items():
            spec = keys.top(name)
            if spec is not None and not spec.effect:
                inactive[name] = ",".join(s.value for s in settings)
        # Option lists Plurm reads only in part: the options it leaves alone are listed too.
        for name, used in _USED_OPTIONS.items():
            options = self.raw.get(name)
            if options is None:
                continue
            unused = [
                word
                for word in options.split(",")
                if word and word.partition("=")[0].strip().lower() not in used
            ]
            if unused:
                inactive[name] = ",".join(unused)
        return inactive

    def select_type_parameters(self) -> SelectTypeParameters:
        """SelectTypeParameters, with the words Slurm does not know kept as plugin options
        (with where each was written)."""
        setting = self.raw.scalars.get("SelectTypeParameters")
        parsed = self.parse(
            setting,
            functools.partial(parse_select_type_parameters, plugin_options=True),
            SelectTypeParameters(),
        )
        if setting is None or not parsed.options:
            return parsed
        where = _option_locations(setting)
        locations = {name: where[name] for name in parsed.options if name in where}
        return attrs.evolve(parsed, locations=locations)

    def plugin_locations(self) -> dict[str, tuple[str, SourceLocation]]:
        """Where each plugin type string of the plugin keys was written (the type strings
        as :meth:`SlurmConfig.plugin_types` spells them)."""
        found: dict[str, tuple[str, SourceLocation]] = {}
        for key in (*_POLICY_PLUGIN_KEYS, *NO_EFFECT_KEYS):
            setting = self.raw.scalars.get(key)
            if setting is None:
                continue
            prefix = NO_EFFECT_KEYS.get(key)
            offset = 0
            for word in setting.value.split(","):
                name = word.strip()
                if name:
                    type_string = name if prefix is None or "/" in name else f"{prefix}/{name}"
                    where = setting.source.locate(setting.index, setting.value_column + offset)
                    found.setdefault(type_string, (key, where))
                offset += len(word) + 1
        return found

    # ----------------------------------------------------------------------------- scheduling

    def priority_settings(self) -> PrioritySettings:
        """The Priority* keys (their values were checked with the key tables)."""

        def minutes(key: str, default: int) -> int:
            value = self.scalar(key, lambda text: parse_time(text, unit="minutes"), None)
            return default if key not in self.raw.scalars else (value or 0) * 60

        def weight(key: str) -> int:
            return self.scalar(key, _uint(32), 0)

        return PrioritySettings(
            weight_age=weight("PriorityWeightAge"),
            weight_assoc=weight("PriorityWeightAssoc"),
            weight_fairshare=weight("PriorityWeightFairshare"),
            weight_jobsize=weight("PriorityWeightJobSize"),
            weight_partition=weight("PriorityWeightPartition"),
            weight_qos=weight("PriorityWeightQOS"),
            weight_tres=self.scalar("PriorityWeightTRES", str, ""),
            max_age=minutes("PriorityMaxAge", 7 * 86400),
            favor_small=self.scalar("PriorityFavorSmall", parse_bool, False),
            decay_half_life=minutes("PriorityDecayHalfLife", 7 * 86400),
            usage_reset_period=self.scalar("PriorityUsageResetPeriod", str.upper, "NONE"),
            calc_period=minutes("PriorityCalcPeriod", 300),
            flags=self.scalar(
                "PriorityFlags",
                lambda text: frozenset(w.strip().upper() for w in text.split(",") if w.strip()),
                frozenset(),
            ),
        )

    def preempt_type(self) -> str:
        value = self.raw.get("PreemptType")
        # Slurm takes preempt/none as "no preemption plugin".
        return value if value else "preempt/none"

    def legacy_gang(self, config: SlurmConfig) -> SlurmConfig:
        """SchedulerType=sched/gang is Slurm 1.3's spelling of what 2.0 and later write as
        the builtin scheduler with PreemptType=preempt/partition_prio and SUSPEND,GANG."""
        if config.scheduler_type != "sched/gang":
            return config
        setting = self.raw.scalars["SchedulerType"]
        if config.preempt_type != "preempt/none":
            self.notice(
                "SchedulerType=sched/gang (Slurm 1.3) read as sched/builtin with GANG", setting
            )
            return attrs.evolve(
                config,
                scheduler_type="sched/builtin",
                preempt_mode=attrs.evolve(config.preempt_mode, gang=True),
            )
        self.notice(
            "SchedulerType=sched/gang (Slurm 1.3) read as SchedulerType=sched/builtin, "
            "PreemptType=preempt/partition_prio, PreemptMode=SUSPEND,GANG",
            setting,
        )
        return attrs.evolve(
            config,
            scheduler_type="sched/builtin",
            preempt_type="preempt/partition_prio",
            preempt_mode=PreemptMode(PreemptBase.SUSPEND, gang=True),
        )

    def check_preemption(self, config: SlurmConfig) -> None:
        """Slurm's rules tying PreemptMode to PreemptType, with its messages."""
        mode = config.preempt_mode
        setting = self.raw.scalars.get("PreemptMode") or self.raw.scalars.get("PreemptType")
        location = setting.value_location if setting else self.whole_file()
        has_plugin = config.preempt_type != "preempt/none"
        # Slurm checks OFF against the two plugins it ships; another name is left for the
        # plugin loader to judge.
        slurm_plugin = config.preempt_type in SLURM_PREEMPT_TYPES[1:]
        # Without a plugin only OFF and plain GANG make sense.
        needs_plugin = mode.base is not PreemptBase.OFF or mode.within or mode.priority
        if not has_plugin and not needs_plugin:
            return
        if config.preempt_type not in SLURM_PREEMPT_TYPES:
            return  # another policy says what it needs once loaded (preempt_check_mode)
        if mode.base is PreemptBase.SUSPEND and not mode.gang:
            message = "PreemptMode=SUSPEND requires GANG too"
        elif (slurm_plugin and mode.base is PreemptBase.OFF) or (needs_plugin and not has_plugin):
            message = "PreemptType and PreemptMode values incompatible"
        else:
            return
        self.errors.append(ConfError(message, location))

    def time_slice(self) -> int:
        setting = self.raw.scalars.get("SchedulerTimeSlice")
        value = self.parse(setting, _uint(16), 30)
        if setting is not None and value < 5:
            self.notice("SchedulerTimeSlice must be at least 5 seconds", setting)
            return 30
        return value

    def scheduler_parameters(self) -> SchedulerParameters:
        setting = self.raw.scalars.get("SchedulerParameters")
        options: dict[str, str | None] = self.parse(setting, _options, {})
        typed: dict[str, int | bool] = {}
        for name, default in (
            ("sched_interval", 60),
            ("sched_min_interval", 2),
            ("default_queue_depth", 100),
            ("bf_interval", 30),
            ("bf_window", 1440),
            ("bf_max_job_test", 500),
            ("bf_resolution", 60),
        ):
            if name in options:
                text = options[name] or ""
                try:
                    typed[name] = parse_int(text, bits=32, infinite=False)
                except BadValue:
                    self.notice(f"Invalid SchedulerParameters {name}: {text}", setting)
                    typed[name] = default
        reserve = options.get("bf_job_part_count_reserve")
        if reserve is not None:  # a bare word is not the option slurmctld looks for
            # read as slurmctld's backfill plugin reads it: C's atoi, then a range check
            count = c_strtol(reserve)
            if not 0 <= count <= _MAX_BF_JOB_PART_COUNT_RESERVE:
                self.notice(
                    f"Invalid SchedulerParameters bf_job_part_count_reserve: {count}", setting
                )
                count = 0
            typed["bf_job_part_count_reserve"] = count
        typed["bf_continue"] = "bf_continue" in options
        locations = _option_locations(setting) if setting is not None else {}
        return SchedulerParameters(
            options=options,
            locations=locations,
            **typed,  # type: ignore[arg-type]
        )

    def preempt_parameters(self) -> PreemptParameters:
        """PreemptParameters (Slurm 23.02+) over the legacy 22.05 spellings."""
        sched: dict[str, str | None] = self.parse(
            self.raw.scalars.get("SchedulerParameters"), _options, {}
        )
        ctld: dict[str, str | None] = self.parse(
            self.raw.scalars.get("SlurmctldParameters"), _options, {}
        )
        setting = self.raw.scalars.get("PreemptParameters")
        modern: dict[str, str | None] = self.parse(setting, _options, {})
        values: dict[str, object] = {}
        if "preempt_youngest_first" in sched:
            values["youngest_first"] = True
        if "preempt_strict_order" in sched:
            values["strict_order"] = True
        if "preempt_reorder_count" in sched:
            values["reorder_count"] = self._option_int(
                "preempt_reorder_count", sched, self.raw.scalars.get("SchedulerParameters"), 1
            )
        if "preempt_send_user_signal" in ctld:
            values["send_user_signal"] = True
        for flag in ("youngest_first", "strict_order", "send_user_signal", "reclaim_licenses"):
            if flag in modern:
                values[flag] = True
        for name, default in (("reorder_count", 1), ("suspend_grace_time", 2)):
            if name in modern:
                values[name] = self._option_int(name, modern, setting, default)
        if "min_exempt_priority" in modern:
            values["min_exempt_priority"] = self._option_int(
                "min_exempt_priority", modern, setting, 0
            )
        # Options Slurm does not know are left for the plugins that declare them
        # (plurm.params.check_options refuses those no loaded plugin declares).
        values["options"] = modern
        if setting is not None:
            values["locations"] = _option_locations(setting)
        return PreemptParameters(**values)  # type: ignore[arg-type]

    def _option_int(
        self, name: str, options: Mapping[str, str | None], setting: Setting | None, default: int
    ) -> int:
        text = options.get(name) or ""
        try:
            return parse_int(text, bits=32, infinite=False)
        except BadValue:
            if setting is not None:
                self.fail(setting, f"{name} needs a number, not {text!r}")
            return default

    # ----------------------------------------------------------------------------- nodes

    def node(self, record: RawRecord) -> NodeSpec:
        settings = record.settings
        name_setting = settings["NodeName"]
        if record.name.upper() == "ALL":
            self.fail(name_setting, "NodeName=ALL is reserved")
        names = self.expand(name_setting)
        self.node_count += len(names)
        if self.node_count > MAX_NODES:
            self.fail(name_setting, f"more than {MAX_NODES} nodes in the configuration")
            names = ()
        hostnames = self._parallel(settings.get("NodeHostname"), names)
        addresses = self._parallel(settings.get("NodeAddr"), hostnames)
        topology = self.topology(settings)
        extra = _inactive_keys(record)
        return NodeSpec(
            expression=record.name,
            names=names,
            hostnames=hostnames,
            addresses=addresses,
            cpus=topology["cpus"],
            boards=topology["boards"],
            sockets=topology["sockets"],
            cores_per_socket=topology["cores"],
            threads_per_core=topology["threads"],
            real_memory=self.parse(settings.get("RealMemory"), _uint(64), 1),
            tmp_disk=self.parse(settings.get("TmpDisk"), _uint(32), 0),
            weight=self.parse(settings.get("Weight"), _weight, 1),
            features=self.parse(
                settings.get("Features") or settings.get("Feature"), _comma_list, ()
            ),
            gres=self.parse(settings.get("Gres"), _comma_list, ()),
            state=self.parse(settings.get("State"), str.upper, "UNKNOWN"),
            reason=settings["Reason"].value if "Reason" in settings else None,
            extra=extra,
            location=record.location,
        )

    def _parallel(self, setting: Setting | None, names: tuple[str, ...]) -> tuple[str, ...]:
        """NodeHostname/NodeAddr lists run in parallel with NodeName; missing ones default."""
        if setting is None:
            return names
        try:
            values = self.counted(setting.value)
        except HostlistError as error:
            # scontrol accepts the file; only slurmctld expands these lists. Plurm warns and
            # falls back to the node names, which is all the simulator needs.
            self.notice(f"{setting.key}: {error}; using the node names instead", setting)
            return names
        if len(values) < len(names):
            return values + names[len(values) :]
        return values[: len(names)]

    def topology(self, settings: Mapping[str, Setting]) -> dict[str, int]:
        """Boards, sockets, cores, threads and CPUs, the missing ones inferred as Slurm does.

        Sockets come from SocketsPerBoard (times Boards), else Sockets, else CPUs divided by
        cores and threads. CPUs must then equal the sockets, the cores or the threads of the
        node; any other count is reset to the threads, with Slurm's message.
        """
        name = settings["NodeName"].value

        def get(key: str) -> int | None:
            setting = settings.get(key)
            return None if setting is None else self.parse(setting, _uint(16), 1)

        cpu_setting = settings.get("CPUs") or settings.get("Procs")
        cpus = get(cpu_setting.key) if cpu_setting else None
        boards = get("Boards")
        sockets = get("Sockets")
        per_board = get("SocketsPerBoard")
        cores = get("CoresPerSocket") or 1
        threads = get("ThreadsPerCore") or 1
        if cpus == 0:
            self.notice(f"NodeNames={name} CPUs=0 is invalid, reset to 1", cpu_setting)
            cpus = 1
        if sockets == 0:
            self.notice(f"NodeNames={name} Sockets=0 is invalid, reset to 1", settings["Sockets"])
            sockets = 1
        if per_board is not None and sockets is not None and boards is None:
            self.notice(
                f"NodeNames={name} Sockets=# and SocketsPerBoard=# is invalid , "
                "using SocketsPerBoard",
                settings["Sockets"],
            )
            sockets = None
        if per_board is not None:
            sockets = (boards or 1) * per_board
        elif sockets is None:
            sockets = max(1, cpus // (cores * threads)) if cpus is not None else boards or 1
        threads_total = sockets * cores * threads
        if max(threads_total, cpus or 0) > UINT16_MAX:
            # Slurm keeps a node's CPU count in 16 bits.
            self.fail(
                settings["NodeName"],
                f"{threads_total} CPUs (Sockets*CoresPerSocket*ThreadsPerCore) is more than "
                f"a node may have ({UINT16_MAX})",
            )
            threads_total = cpus = 1
        if cpus is None:
            cpus = threads_total
        elif cpus not in (sockets, sockets * cores, threads_total):
            self.notice(
                f"NodeNames={name} CPUs={cpus} match no Sockets, Sockets*CoresPerSocket or "
                "Sockets*CoresPerSocket*ThreadsPerCore. Resetting CPUs.",
                cpu_setting,
            )
            cpus = threads_total
        return {
            "cpus": cpus,
            "boards": boards or 1,
            "sockets": sockets,
            "cores": cores,
            "threads": threads,
        }

    def check_duplicate_nodes(self, nodes: tuple[NodeSpec, ...]) -> None:
        seen: set[str] = set()
        for spec in nodes:
            for name in spec.names:
                if name in seen:
                    self.errors.append(ConfError(f"Duplicated NodeName {name}", spec.location))
                seen.add(name)

    def nodeset(self, record: RawRecord, nodes: tuple[NodeSpec, ...]) -> NodeSetSpec:
        members: list[str] = []
        feature = record.settings.get("Feature")
        if feature is not None:
            members += [
                name for spec in nodes if feature.value in spec.features for name in spec.names
            ]
        listed = record.settings.get("Nodes")
        if listed is not None:
            members += self._node_names(listed, nodes, {})
        return NodeSetSpec(
            record.name,
            tuple(dict.fromkeys(members)),
            feature.value if feature else None,
            record.location,
        )

    def down(self, record: RawRecord, nodes: tuple[NodeSpec, ...]) -> DownNodesSpec:
        """A DownNodes line: its nodes start DOWN (or the State it names) with its Reason."""
        names = self._node_names(record.settings["DownNodes"], nodes, {})
        state_setting = record.settings.get("State")
        state = state_setting.value.upper() if state_setting else "DOWN"
        if state not in _DOWN_STATES:
            # slurmctld ignores the line; Plurm says so.
            self.notice(f"DownNodes: invalid State {state!r}; line ignored", state_setting)
            names = []
        reason = record.settings.get("Reason")
        return DownNodesSpec(
            tuple(names),
            state,
            reason.value if reason else "Set in slurm.conf",
            record.location,
        )

    # ----------------------------------------------------------------------------- partitions

    def partitions(
        self, nodes: tuple[NodeSpec, ...], nodesets: tuple[NodeSetSpec, ...]
    ) -> tuple[PartitionSpec, ...]:
        sets = {nodeset.name: nodeset for nodeset in nodesets}
        built: list[PartitionSpec] = []
        seen: set[str] = set()
        for record in self._records("PartitionName"):
            if record.name in seen:
                self.errors.append(
                    ConfError(f"Duplicated PartitionName {record.name}", record.location)
                )
                continue
            seen.add(record.name)
            built.append(self.partition(record, nodes, sets))
        # Only the last partition marked Default=YES is the default, as in Slurm.
        defaults = [index for index, part in enumerate(built) if part.default]
        for index in defaults[:-1]:
            built[index] = attrs.evolve(built[index], default=False)
        return tuple(built)

    def _node_names(
        self, setting: Setting, nodes: tuple[NodeSpec, ...], sets: Mapping[str, NodeSetSpec]
    ) -> list[str]:
        """A Nodes= value: ALL, NodeSet names and hostlists, in node-table order.

        Each name is looked up once in the node table, and the result is built from the
        table's own name strings, so that partitions that overlap share them.
        """
        if setting.value == "":
            return []
        order = self.node_order(nodes)
        listed = self.expand(setting)
        found = list(map(order.get, listed))
        places: list[int]
        if None not in found and sets.keys().isdisjoint(listed):
            places = found  # type: ignore[assignment]  # no None in it
        else:
            places = []
            for name in listed:
                if name.upper() == "ALL":
                    return list(self._table)
                if name in sets:
                    places += map(order.__getitem__, sets[name].nodes)
                elif name in order:
                    places.append(order[name])
                else:
                    self.notice(f"{setting.key}: node {name!r} is not defined; ignored", setting)
        table = self._table
        return [table[place] for place in sorted(set(places))]

    def node_order(self, nodes: tuple[NodeSpec, ...]) -> dict[str, int]:
        """Each node's place in the node table (computed once)."""
        if self._order is None:
            self._table = list(node_table(nodes))
            self._order = {name: place for place, name in enumerate(self._table)}
        return self._order

    def over_time_limit(self, setting: Setting | None) -> int | None:
        """A partition's OverTimeLimit: minutes, UNLIMITED (None), or unset (None).

        Slurm reads it leniently: text without digits counts as 0, and a number outside
        0..65534 is logged ("Ignoring bad OverTimeLimit value") and ignored.
        """
        if setting is None or setting.value.upper() in ("UNLIMITED", "INFINITE"):
            return None
        minutes = c_strtol(setting.value)
        if not 0 <= minutes < 0xFFFF:
            self.notice(f"Ignoring bad OverTimeLimit value: {setting.value}", setting)
            return None
        return minutes

    def partition(
        self, record: RawRecord, nodes: tuple[NodeSpec, ...], sets: Mapping[str, NodeSetSpec]
    ) -> PartitionSpec:
        s = record.settings
        members = self._node_names(s["Nodes"], nodes, sets) if "Nodes" in s else []
        tier = self.parse(s.get("PriorityTier"), _uint(16), None)
        factor = self.parse(s.get("PriorityJobFactor"), _uint(16), None)
        legacy = self.parse(s.get("Priority"), _uint(16), None)
        oversubscribe = OverSubscribe()
        shared = s.get("OverSubscribe") or s.get("Shared")
        if shared is not None:
            try:
                oversubscribe, complaint = parse_oversubscribe(shared.value)
            except BadValue as error:
                self.fail(shared, str(error))
            else:
                if complaint:
                    self.notice(complaint, shared)
        preempt_mode = self.parse(s.get("PreemptMode"), parse_preempt_mode, None)
        if preempt_mode is not None and preempt_mode.gang:
            # 22.05 keeps and shows the bit, but gang scheduling is switched on only by the
            # cluster's PreemptMode.
            self.notice(
                "PreemptMode=GANG on a partition has no effect; GANG is a cluster-wide option",
                s.get("PreemptMode"),
            )
        max_time = self.parse(s.get("MaxTime"), _minutes, None)
        default_time = self.parse(s.get("DefaultTime"), _minutes, max_time)
        configured = "DefaultTime" in s
        if (
            configured
            and max_time is not None
            and (default_time is None or default_time > max_time)
        ):
            self.notice(
                f"partition {record.name} DefaultTime exceeds MaxTime "
                f"({_minutes_text(default_time)} > {max_time})",
                s["DefaultTime"],
            )
            default_time, configured = max_time, False
        memory = {
            key: self.parse(s.get(key), _memory, None)
            for key in ("DefMemPerCPU", "DefMemPerNode", "MaxMemPerCPU", "MaxMemPerNode")
        }
        for per_cpu, per_node in (
            ("DefMemPerCPU", "DefMemPerNode"),
            ("MaxMemPerCPU", "MaxMemPerNode"),
        ):
            if per_cpu in s and per_node in s:
                self.notice(
                    f"PartitionName={record.name}: {per_cpu} and {per_node} are "
                    f"mutually exclusive; {per_node} used",
                    s[per_cpu],
                )
                memory[per_cpu] = None
        extra = _inactive_keys(record)
        return PartitionSpec(
            name=record.name,
            nodes=tuple(members),
            nodes_expr=s["Nodes"].value if "Nodes" in s else "",
            default=self.parse(s.get("Default"), parse_bool, False),
            # The legacy Priority sets both and wins over either, wherever it stands.
            priority_tier=legacy if legacy is not None else (tier if tier is not None else 1),
            priority_job_factor=(
                legacy if legacy is not None else (factor if factor is not None else 1)
            ),
            oversubscribe=oversubscribe,
            preempt_mode=preempt_mode,
            grace_time=self.parse(s.get("GraceTime"), _uint(32), 0),
            max_time=max_time,
            default_time=default_time,
            default_time_configured=configured,
            state=self.parse(s.get("State"), _partition_state, "UP"),
            max_nodes=self.parse(s.get("MaxNodes"), _uint_or_none(32), None),
            min_nodes=self.parse(s.get("MinNodes"), _uint(32), 0),
            def_mem_per_cpu=memory["DefMemPerCPU"],
            def_mem_per_node=memory["DefMemPerNode"],
            max_mem_per_cpu=memory["MaxMemPerCPU"],
            max_mem_per_node=memory["MaxMemPerNode"],
            qos=s["QOS"].value if "QOS" in s else None,
            allow_accounts=self.parse(s.get("AllowAccounts"), _access_list, None),
            allow_groups=self.parse(s.get("AllowGroups"), _access_list, None),
            allow_qos=self.parse(s.get("AllowQos"), _access_list, None),
            deny_accounts=self.parse(s.get("DenyAccounts"), _comma_list, None),
            deny_qos=self.parse(s.get("DenyQos"), _comma_list, None),
            hidden=self.parse(s.get("Hidden"), parse_bool, False),
            root_only=self.parse(s.get("RootOnly"), parse_bool, False),
            exclusive_user=self.parse(s.get("ExclusiveUser"), parse_bool, False),
            lln=self.parse(s.get("LLN"), parse_bool, False),
            req_resv=self.parse(s.get("ReqResv"), parse_bool, False),
            select_type_parameters=self.parse(
                s.get("SelectTypeParameters"), _partition_select_parameters, None
            ),
            over_time_limit=self.over_time_limit(s.get("OverTimeLimit")),
            extra=extra,
            location=record.location,
        )


def _enforce_part_limits(text: str) -> str:
    """ALL and ANY as written; the boolean spellings mean ALL (yes) or NO."""
    word = text.upper()
    if word in ("ALL", "ANY", "NO"):
        return word
    return "ALL" if parse_bool(text) else "NO"


def _minutes_text(minutes: int | None) -> str:
    return "UNLIMITED" if minutes is None else str(minutes)


def _partition_select_parameters(text: str) -> SelectTypeParameters:
    """A partition may only narrow the consumable resource to cores or sockets."""
    params = parse_select_type_parameters(text)
    allowed = (CrBase.CORE, CrBase.CORE_MEMORY, CrBase.SOCKET, CrBase.SOCKET_MEMORY)
    if params.base not in allowed or params.flags:
        raise BadValue(f"Bad value for SelectTypeParameters: {text}")
    return params


def _inactive_keys(record: RawRecord) -> dict[str, str]:
    """The record's keys that Plurm accepts without acting on them, as written."""
    table = keys.record_keys(record.kind)
    return {
        key: setting.value
        for key, setting in record.settings.items()
        if key != record.kind and not table[key.lower()].effect
    }


def _weight(text: str) -> int:
    """Weight is a uint32; INFINITE is clamped to one less, as in Slurm."""
    value = _uint(32)(text)
    return 0xFFFF_FFFE if value in (-1, 0xFFFF_FFFF) else value


#: The largest bf_job_part_count_reserve slurmctld's backfill plugin takes.
_MAX_BF_JOB_PART_COUNT_RESERVE = 100_000


# The options of these keys that Plurm acts on; the others are reported as inactive.
_USED_OPTIONS = {
    "SchedulerParameters": frozenset(
        {
            "sched_interval",
            "sched_min_interval",
            "default_queue_depth",
            "bf_interval",
            "bf_window",
            "bf_max_job_test",
            "bf_resolution",
            "bf_job_part_count_reserve",
            "bf_continue",
            "preempt_youngest_first",
            "preempt_strict_order",
            "preempt_reorder_count",
        }
    ),
    "SlurmctldParameters": frozenset({"preempt_send_user_signal"}),
}

# States a DownNodes line may set (slurmctld ignores the line for any other).
_DOWN_STATES = ("DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE", "UNKNOWN")

_PARTITION_STATES = ("UP", "DOWN", "DRAIN", "INACTIVE")


def _partition_state(text: str) -> str:
    """A prefix of UP, DOWN, DRAIN or INACTIVE, any case."""
    word = text.upper()
    for state in _PARTITION_STATES:
        if word and state.startswith(word):
            return state
    raise BadValue(f"invalid partition State {text!r}")


def _control_host(text: str) -> ControlHost | None:
    """``name`` or ``name(address)``; None when the parenthesis is not closed at the end."""
    name, paren, rest = text.partition("(")
    if not paren:
        return ControlHost(name)
    if not rest.endswith(")") or not name:
        return None
    return ControlHost(name, rest[:-1] or None)
