"""Every slurm.conf key Slurm 22.05 recognises, what kind of value it takes, and whether
Plurm acts on it.

The tables were measured on the real 22.05 binary (tests/data/oracle/keys/): each key was
probed with a range of values, and the kinds below reproduce which values Slurm accepts. A
key Plurm does not act on is still accepted, its value still checked, and it is reported
once as having no effect. An unknown key is an error with a "did you mean" suggestion.

Keys are case-insensitive; the tables hold Slurm's own spelling, which messages use.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterator, Mapping

import attrs

from plurm.conf.values import (
    INFINITE,
    BadValue,
    parse_accounting_enforce,
    parse_bool,
    parse_int,
    parse_oversubscribe,
    parse_preempt_mode,
    parse_select_type_parameters,
    parse_time,
)
from plurm.numbers import is_digits, leading_int

__all__ = [
    "DEFAULTABLE_RECORDS",
    "FATAL_RECORDS",
    "WHOLE_CONFIG_CHECKS",
    "KeySpec",
    "record_keys",
    "record_kind",
    "suggest",
    "top",
]

#: A value check: returns normally or raises BadValue with the reason.
Check = Callable[[str], object]


@attrs.frozen
class KeySpec:
    """What Plurm knows about one key.

    ``check`` validates a value as Slurm would (None: any text). ``effect`` says whether
    Plurm acts on the key. ``multi`` keys may appear many times and accumulate. ``removed``
    is the fatal message Slurm gives for a key it has dropped; ``defunct`` keys are
    accepted with a warning. ``since`` marks keys from a later Slurm that Plurm accepts.
    """

    name: str
    check: Check | None = None
    effect: bool = False
    multi: bool = False
    defunct: bool = False
    removed: str | None = None
    since: str | None = None


# ----------------------------------------------------------------------------- value kinds


def _integer(bits: int, *, k_suffix: bool) -> Check:
    def check(text: str) -> int:
        if text == "":
            return 0  # Key="" is 0 for Slurm's number parsers
        value = parse_int(text, bits=bits, k_suffix=k_suffix)
        # UNLIMITED/INFINITE is every bit set, as Slurm stores it.
        return (1 << bits) - 1 if value == INFINITE else value

    return check


STRING: Check | None = None
PLUGIN: Check | None = None  # a plugin type; the registry checks it when it loads plugins
UINT16 = _integer(16, k_suffix=False)
UINT32 = _integer(32, k_suffix=True)
UINT64 = _integer(64, k_suffix=True)
BOOL: Check = parse_bool


def TIME(text: str) -> object:
    return parse_time(text, unit="seconds")


def _words(text: str) -> Iterator[str]:
    return (word for word in text.split(",") if word)


def _flags(key: str, allowed: str, *, extra: Callable[[str], bool] | None = None) -> Check:
    """A comma list of case-insensitive words from ``allowed`` (space-separated)."""
    names = {word.lower() for word in allowed.split()}

    def check(text: str) -> object:
        for word in _words(text):
            if word.lower() not in names and not (extra and extra(word)):
                raise BadValue(f"invalid {key} item {word!r}")
        return text

    return check


def _one_of(key: str, allowed: str) -> Check:
    names = {word.lower() for word in allowed.split()}

    def check(text: str) -> object:
        if text.lower() not in names:
            raise BadValue(f'Bad value "{text}" for {key}')
        return text

    return check


def _log_level(text: str) -> object:
    """A level name, or a number read as C's strtoul reads it and kept in 16 bits.

    Slurm takes any text that starts with digits (``3x`` is 3) and clamps levels above 9;
    the one number it refuses is its "no value" marker, 65534 once truncated to 16 bits.
    """
    levels = "quiet fatal error info verbose debug debug2 debug3 debug4 debug5"
    if text.lower() in levels.split():
        return text
    digits = re.match(r"[0-9]+", text)
    if digits is None:
        raise BadValue(f"Invalid log level {text!r}")
    level = leading_int(digits.group(), minimum=0, maximum=2**64 - 1) & 0xFFFF
    if level == 0xFFFE:
        raise BadValue(f"Invalid log level {text!r}")
    return min(level, 9)


def _plugin_dirs(text: str) -> object:
    for directory in text.split(":"):
        if directory and not os.path.isdir(directory):
            raise BadValue(f"PluginDir: {directory}: No such file or directory")
    return text


def _bcast_exclude(text: str) -> object:
    if text.upper() == "NONE":
        return text
    for path in _words(text):
        if not path.startswith("/"):
            raise BadValue(f"Invalid path for BcastExclude: {path}")
    return text


def _port_range(text: str) -> object:
    """``N`` or ``N-M``, decimal, N at least 1 and M not below N."""
    low, dash, high = text.partition("-")
    valid = is_digits(low) and (not dash or is_digits(high))
    if valid:
        first = int(low)
        last = int(high) if dash else first
        valid = 1 <= first <= last < 2**63 - 1
    if not valid:
        raise BadValue(f"Invalid SlurmctldPort {text}")
    return text


def _positive_minutes(text: str) -> object:
    minutes = parse_time(text, unit="minutes")
    if minutes is None or not 0 < minutes < 0xFFFF_FFFE:
        raise BadValue(f'Bad value "{text}" for PriorityCalcPeriod')
    return minutes


def _decay_half_life(text: str) -> object:
    """A time in minutes; 0 and values past 32 bits leave Slurm's decay rolling over."""
    minutes = parse_time(text, unit="minutes")
    if minutes is not None and not 0 < minutes < 0xFFFF_FFFF:
        raise BadValue(
            "You have to either have PriorityDecayHalfLife != 0 or PriorityUsageResetPeriod "
            "set to something or the priority plugin will result in rolling over."
        )
    return minutes


def _suspend_time(text: str) -> object:
    """A partition's SuspendTime: any text, but a number must fit 32 bits (or be -1)."""
    if re.fullmatch(r"[+-]?[0-9]+", text):
        value = leading_int(text, minimum=-(1 << 63), maximum=1 << 63)
        if value != -1 and not 0 <= value <= 0xFFFF_FFFF:
            raise BadValue(f'Bad value "{text}" for SuspendTime')
    return text


def _propagate_prio_process(text: str) -> object:
    value = UINT16(text)
    if value not in (0, 1, 2):
        raise BadValue(f"Bad PropagatePrioProcess: {value}")
    return value


def exempt_time(text: str) -> int | None:
    """PreemptExemptTime: a time in seconds; -1, -2 and INFINITE mean none."""
    if text == "-2":
        return None
    try:
        return parse_time(text, unit="seconds")
    except BadValue:
        raise BadValue(f"PreemptExemptTime={text} invalid") from None


def _removed_after_bool(message: str) -> Check:
    def check(text: str) -> object:
        parse_bool(text)
        raise BadValue(message)

    return check


def _enforce_part_limits(text: str) -> object:
    if text.lower() in ("all", "any", "no") or text.lower() in ("yes", "true", "false", "0", "1"):
        return text
    raise BadValue(f"Bad EnforcePartLimits: {text}")


def _rlimits(key: str) -> Check:
    names = {
        "ALL",
        "NONE",
        "AS",
        "CORE",
        "CPU",
        "DATA",
        "FSIZE",
        "MEMLOCK",
        "NOFILE",
        "NPROC",
        "RSS",
        "STACK",
    }

    def check(text: str) -> object:
        for word in _words(text):
            if word not in names:  # Slurm wants the rlimit names in upper case
                raise BadValue(f"Bad rlimit name: {word}")
        return text

    return check


def _task_plugin_param(text: str) -> object:
    simple = {"cores", "none", "sockets", "threads", "slurmdoffspec", "verbose"}
    for word in _words(text):
        name, _, value = word.lower().partition("=")
        if name == "autobind" and value in ("cores", "threads", "sockets"):
            continue
        if name not in simple or value:
            raise BadValue(f"Bad TaskPluginParam: {word}")
    return text


def _select_type_parameters(text: str) -> object:
    # Words Slurm does not know may be select plugins' options: the loaded plugins claim
    # them, and plurm.params.check_options refuses the rest, with the nearest word.
    try:
        return parse_select_type_parameters(text, plugin_options=True)
    except BadValue:
        raise BadValue(f"Bad SelectTypeParameter: {text}") from None


def _preempt_mode(text: str) -> object:
    try:
        return parse_preempt_mode(text)
    except BadValue as error:
        raise BadValue(f"PreemptMode={text} invalid: {error}") from None


def _oversubscribe(text: str) -> object:
    return parse_oversubscribe(text)


def _partition_state(text: str) -> object:
    word = text.upper()
    for state in ("UP", "DOWN", "DRAIN", "INACTIVE"):
        if word and state.startswith(word):
            return state
    raise BadValue(f'Bad value "{text}" for State')


DEBUG_FLAGS = (
    "Accrue Agent Backfill BackfillMap BurstBuffer Cgroup CPU_Bind CpuFrequency Data "
    "Dependency Elasticsearch Energy ExtSensors Federation FrontEnd Gres Hetjob Gang "
    "JobAccountGather JobContainer License Network NetworkRaw NodeFeatures NO_CONF_HASH Power "
    "Priority Profile Protocol Reservation Route Script SelectType Steps Switch TimeCray "
    "TraceJobs Triggers WorkQueue Task"
)

_TOP_KINDS: dict[str, Check | None] = {
    "AccountingStorageBackupHost": STRING,
    "AccountingStorageExternalHost": STRING,
    "AccountingStorageHost": STRING,
    "AccountingStorageParameters": STRING,
    "AccountingStoragePass": STRING,
    "AccountingStoragePort": UINT16,
    "AccountingStorageTRES": STRING,
    "AccountingStorageType": PLUGIN,
    "AccountingStorageUser": STRING,
    "AccountingStoreFlags": STRING,
    "AcctGatherEnergyType": PLUGIN,
    "AcctGatherFilesystemType": PLUGIN,
    "AcctGatherInfinibandType": PLUGIN,
    "AcctGatherInterconnectType": PLUGIN,
    "AcctGatherNodeFreq": UINT16,
    "AcctGatherProfileType": PLUGIN,
    "AllowSpecResourcesUsage": BOOL,
    "AuthAltParameters": STRING,
    "AuthAltTypes": PLUGIN,
    "AuthInfo": STRING,
    "AuthType": PLUGIN,
    "BackupAddr": STRING,
    "BackupController": STRING,
    "BatchStartTimeout": UINT16,
    "BcastParameters": STRING,
    "BurstBufferParameters": STRING,
    "BurstBufferType": PLUGIN,
    "CliFilterPlugins": PLUGIN,
    "ClusterName": STRING,
    "CommunicationParameters": STRING,
    "CompleteWait": UINT16,
    "ControlAddr": STRING,
    "ControlMachine": STRING,
    "CoreSpecPlugin": PLUGIN,
    "CredType": PLUGIN,
    "CryptoType": PLUGIN,
    "DefCpuPerGPU": UINT64,
    "DefMemPerCPU": UINT64,
    "DefMemPerGPU": UINT64,
    "DefMemPerNode": UINT64,
    "DependencyParameters": STRING,
    "DisableRootJobs": BOOL,
    "EioTimeout": UINT16,
    "Epilog": STRING,
    "EpilogMsgTime": UINT32,
    "EpilogSlurmctld": STRING,
    "ExtSensorsFreq": UINT16,
    "ExtSensorsType": PLUGIN,
    "FairShareDampeningFactor": UINT16,
    "FastSchedule": UINT16,
    "FederationParameters": STRING,
    "FirstJobId": UINT32,
    "GetEnvTimeout": UINT16,
    "GpuFreqDef": STRING,
    "GresTypes": STRING,
    "GroupUpdateForce": UINT16,
    "GroupUpdateTime": UINT16,
    "HealthCheckInterval": UINT16,
    "HealthCheckProgram": STRING,
    "InactiveLimit": UINT16,
    "InteractiveStepOptions": STRING,
    "JobAcctGatherFrequency": STRING,
    "JobAcctGatherParams": STRING,
    "JobAcctGatherType": PLUGIN,
    "JobCompHost": STRING,
    "JobCompLoc": STRING,
    "JobCompParams": STRING,
    "JobCompPass": STRING,
    "JobCompPort": UINT32,
    "JobCompType": PLUGIN,
    "JobCompUser": STRING,
    "JobContainerType": PLUGIN,
    "JobCredentialPrivateKey": STRING,
    "JobCredentialPublicCertificate": STRING,
    "JobFileAppend": UINT16,
    "JobRequeue": UINT16,
    "JobSubmitPlugins": PLUGIN,
    "KeepAliveTime": UINT32,
    "KillOnBadExit": UINT16,
    "KillWait": UINT16,
    "LaunchParameters": STRING,
    "LaunchType": PLUGIN,
    "Licenses": STRING,
    "LogTimeFormat": STRING,
    "MailDomain": STRING,
    "MailProg": STRING,
    "MaxArraySize": UINT32,
    "MaxDBDMsgs": UINT32,
    "MaxJobCount": UINT32,
    "MaxJobId": UINT32,
    "MaxMemPerCPU": UINT64,
    "MaxMemPerNode": UINT64,
    "MaxNodeCount": UINT32,
    "MaxStepCount": UINT32,
    "MaxTasksPerNode": UINT16,
    "MCSParameters": STRING,
    "MCSPlugin": PLUGIN,
    "MessageTimeout": UINT16,
    "MinJobAge": UINT32,
    "MpiDefault": PLUGIN,
    "MpiParams": STRING,
    "NodeFeaturesPlugins": PLUGIN,
    "OverTimeLimit": UINT16,
    "PlugStackConfig": STRING,
    "PowerParameters": STRING,
    "PowerPlugin": PLUGIN,
    "PreemptExemptTime": TIME,
    "PreemptType": PLUGIN,
    "PrEpParameters": STRING,
    "PrEpPlugins": PLUGIN,
    "PriorityDecayHalfLife": TIME,
    "PriorityFavorSmall": BOOL,
    "PriorityFlags": STRING,
    "PriorityMaxAge": TIME,
    "PriorityParameters": STRING,
    "PrioritySiteFactorParameters": STRING,
    "PrioritySiteFactorPlugin": PLUGIN,
    "PriorityType": PLUGIN,
    "PriorityWeightAge": UINT32,
    "PriorityWeightAssoc": UINT32,
    "PriorityWeightFairshare": UINT32,
    "PriorityWeightJobSize": UINT32,
    "PriorityWeightPartition": UINT32,
    "PriorityWeightQOS": UINT32,
    "PriorityWeightTRES": STRING,
    "PrivateData": STRING,
    "ProctrackType": PLUGIN,
    "Prolog": STRING,
    "PrologEpilogTimeout": UINT16,
    "PrologSlurmctld": STRING,
    "PropagatePrioProcess": UINT16,
    "RebootProgram": STRING,
    "RequeueExit": STRING,
    "RequeueExitHold": STRING,
    "ResumeFailProgram": STRING,
    "ResumeProgram": STRING,
    "ResumeRate": UINT16,
    "ResumeTimeout": UINT16,
    "ResvEpilog": STRING,
    "ResvOverRun": UINT16,
    "ResvProlog": STRING,
    "ReturnToService": UINT16,
    "RoutePlugin": PLUGIN,
    "SbcastParameters": STRING,
    "SchedulerParameters": STRING,
    "SchedulerTimeSlice": UINT16,
    "SchedulerType": PLUGIN,
    "ScronParameters": STRING,
    "SelectType": PLUGIN,
    "SlurmctldAddr": STRING,
    "SlurmctldLogFile": STRING,
    "SlurmctldParameters": STRING,
    "SlurmctldPidFile": STRING,
    "SlurmctldPlugstack": STRING,
    "SlurmctldPrimaryOffProg": STRING,
    "SlurmctldPrimaryOnProg": STRING,
    "SlurmctldTimeout": UINT16,
    "SlurmdLogFile": STRING,
    "SlurmdParameters": STRING,
    "SlurmdPidFile": STRING,
    "SlurmdPort": UINT32,
    "SlurmdSpoolDir": STRING,
    "SlurmdTimeout": UINT16,
    "SlurmSchedLogFile": STRING,
    "SlurmSchedLogLevel": UINT16,
    "SrunEpilog": STRING,
    "SrunPortRange": STRING,
    "SrunProlog": STRING,
    "StateSaveLocation": STRING,
    "SuspendExcNodes": STRING,
    "SuspendExcParts": STRING,
    "SuspendProgram": STRING,
    "SuspendRate": UINT16,
    "SuspendTime": STRING,
    "SuspendTimeout": UINT16,
    "SwitchParameters": STRING,
    "SwitchType": PLUGIN,
    "TaskEpilog": STRING,
    "TaskPlugin": PLUGIN,
    "TaskProlog": STRING,
    "TCPTimeout": UINT16,
    "TmpFS": STRING,
    "TopologyParam": STRING,
    "TopologyPlugin": PLUGIN,
    "TrackWCKey": BOOL,
    "TreeWidth": UINT16,
    "UnkillableStepProgram": STRING,
    "UnkillableStepTimeout": UINT16,
    "UsePAM": BOOL,
    "VSizeFactor": UINT16,
    "WaitTime": UINT16,
    "X11Parameters": STRING,
}
_NODE_KINDS: dict[str, Check | None] = {
    "BcastAddr": STRING,
    "Boards": UINT16,
    "CoreSpecCount": UINT16,
    "CoresPerSocket": UINT16,
    "CPUs": UINT16,
    "CpuSpecList": STRING,
    "Feature": STRING,
    "Features": STRING,
    "Gres": STRING,
    "MemSpecLimit": UINT64,
    "NodeAddr": STRING,
    "NodeHostname": STRING,
    "Port": STRING,
    "Procs": UINT16,
    "RealMemory": UINT64,
    "Reason": STRING,
    "Sockets": UINT16,
    "SocketsPerBoard": UINT16,
    "State": STRING,
    "ThreadsPerCore": UINT16,
    "TmpDisk": UINT32,
    "TRESWeights": STRING,
    "Weight": UINT32,
}
_PARTITION_KINDS: dict[str, Check | None] = {
    "AllocNodes": STRING,
    "AllowAccounts": STRING,
    "AllowGroups": STRING,
    "AllowQos": STRING,
    "Alternate": STRING,
    "Default": BOOL,
    "DefaultTime": TIME,
    "DefCpuPerGPU": UINT64,
    "DefMemPerCPU": UINT64,
    "DefMemPerGPU": UINT64,
    "DefMemPerNode": UINT64,
    "DenyAccounts": STRING,
    "DenyQos": STRING,
    "DisableRootJobs": BOOL,
    "ExclusiveUser": BOOL,
    "GraceTime": UINT32,
    "Hidden": BOOL,
    "LLN": BOOL,
    "MaxCPUsPerNode": UINT32,
    "MaxMemPerCPU": UINT64,
    "MaxMemPerNode": UINT64,
    "MaxNodes": UINT32,
    "MaxTime": TIME,
    "MinNodes": UINT32,
    "Nodes": STRING,
    "OverTimeLimit": STRING,
    "Priority": UINT16,
    "PriorityJobFactor": UINT16,
    "PriorityTier": UINT16,
    "QOS": STRING,
    "ReqResv": BOOL,
    "ResumeTimeout": UINT16,
    "RootOnly": BOOL,
    "SuspendTime": STRING,
    "SuspendTimeout": UINT16,
    "TRESBillingWeights": STRING,
}

# Keys whose checks are their own (the rest of the tables above are plain kinds).
_TOP_KINDS.update(
    {
        "AccountingStorageEnforce": parse_accounting_enforce,
        "BcastExclude": _bcast_exclude,
        "CpuFreqDef": STRING,  # Slurm logs a bad value and ignores it; the file is accepted
        "CpuFreqGovernors": STRING,  # likewise
        "DebugFlags": _flags("DebugFlags", DEBUG_FLAGS),
        "EnforcePartLimits": _enforce_part_limits,
        "HealthCheckNodeState": STRING,  # bad items are logged and ignored
        "PluginDir": _plugin_dirs,
        "PreemptExemptTime": exempt_time,
        "PriorityDecayHalfLife": _decay_half_life,
        "PropagatePrioProcess": _propagate_prio_process,
        "PreemptMode": _preempt_mode,
        "PriorityCalcPeriod": _positive_minutes,
        "PriorityUsageResetPeriod": _one_of(
            "PriorityUsageResetPeriod", "NONE NOW DAILY WEEKLY MONTHLY QUARTERLY YEARLY"
        ),
        "PrologFlags": _flags("PrologFlags", "Alloc Contain DeferBatch NoHold Serial X11"),
        "PropagateResourceLimits": _rlimits("PropagateResourceLimits"),
        "PropagateResourceLimitsExcept": _rlimits("PropagateResourceLimitsExcept"),
        "ReconfigFlags": STRING,  # bad items are logged; the file is accepted
        "SelectTypeParameters": _select_type_parameters,
        "SlurmctldDebug": _log_level,
        "SlurmctldSyslogDebug": _log_level,
        "SlurmdDebug": _log_level,
        "SlurmdSyslogDebug": _log_level,
        "SlurmctldPort": _port_range,
        "TaskPluginParam": _task_plugin_param,
        "SchedulerAuth": STRING,
        # Slurm looks these users up in the local passwd; Plurm's simulator has no such users,
        # so it takes any name (docs/configuration.md lists this difference).
        "SlurmUser": STRING,
        "SlurmdUser": STRING,
        "SlurmctldHost": STRING,
    }
)
_NODE_KINDS.update({"CpuBind": STRING, "State": STRING, "Port": STRING})
_PARTITION_KINDS.update(
    {
        "CpuBind": STRING,
        "OverSubscribe": _oversubscribe,
        "Shared": _oversubscribe,
        "PreemptMode": _preempt_mode,
        "SelectTypeParameters": _select_type_parameters,
        "State": _partition_state,
        "OverTimeLimit": STRING,  # Slurm accepts any text here and logs bad numbers
        "SuspendTime": _suspend_time,
    }
)

_REMOVED = {
    "AccountingStorageLoc": "The AccountingStorageLoc option has been removed. "
    "It is safe to remove from your configuration.",
    "SallocDefaultCommand": "SallocDefaultCommand has been removed. Please consider setting "
    "LaunchParameters=use_interactive_step instead.",
}
_REMOVED_AFTER_BOOL = {
    "AccountingStoreJobComment": "The AccountingStoreJobComment option has been removed, "
    "please use AccountingStoreFlags=job_comment option instead.",
}
_DEFUNCT = ("SchedulerAuth",)
_MULTI = ("SlurmctldHost", "Prolog", "Epilog")

#: Top-level keys Plurm acts on (the rest are accepted and reported as inactive).
_TOP_EFFECT = frozenset(
    [
        "ClusterName",
        "SlurmctldHost",
        "ControlMachine",
        "ControlAddr",
        "BackupController",
        "BackupAddr",
        "SelectType",
        "SelectTypeParameters",
        "PreemptType",
        "PreemptMode",
        "PreemptExemptTime",
        "PreemptParameters",
        "SchedulerType",
        "SchedulerParameters",
        "SchedulerTimeSlice",
        "PriorityType",
        "PriorityWeightAge",
        "PriorityWeightAssoc",
        "PriorityWeightFairshare",
        "PriorityWeightJobSize",
        "PriorityWeightPartition",
        "PriorityWeightQOS",
        "PriorityWeightTRES",
        "PriorityMaxAge",
        "PriorityFavorSmall",
        "PriorityDecayHalfLife",
        "PriorityUsageResetPeriod",
        "PriorityCalcPeriod",
        "PriorityFlags",
        "AuthType",
        "AuthAltTypes",
        "AuthInfo",
        "AuthAltParameters",
        "SlurmUser",
        "PrivateData",
        "JobAcctGatherType",
        "JobRequeue",
        "KillWait",
        "ReturnToService",
        "MessageTimeout",
        "SlurmdTimeout",
        "MinJobAge",
        "FirstJobId",
        "MaxJobCount",
        "MaxArraySize",
        "OverTimeLimit",
        "DefMemPerCPU",
        "DefMemPerNode",
        "MaxMemPerCPU",
        "MaxMemPerNode",
        "SlurmctldParameters",
        "EnforcePartLimits",
        "AccountingStorageType",
        "AccountingStorageEnforce",
    ]
)
_NODE_EFFECT = frozenset(
    [
        "NodeName",
        "NodeHostname",
        "NodeAddr",
        "CPUs",
        "Procs",
        "Boards",
        "Sockets",
        "SocketsPerBoard",
        "CoresPerSocket",
        "ThreadsPerCore",
        "RealMemory",
        "TmpDisk",
        "Weight",
        "Features",
        "Feature",
        "Gres",
        "State",
        "Reason",
    ]
)
_PARTITION_EFFECT = frozenset(
    [
        "PartitionName",
        "Nodes",
        "Default",
        "PriorityTier",
        "PriorityJobFactor",
        "Priority",
        "OverSubscribe",
        "Shared",
        "PreemptMode",
        "GraceTime",
        "MaxTime",
        "DefaultTime",
        "State",
        "MaxNodes",
        "MinNodes",
        "DefMemPerCPU",
        "DefMemPerNode",
        "MaxMemPerCPU",
        "MaxMemPerNode",
        "QOS",
        "AllowAccounts",
        "AllowGroups",
        "AllowQos",
        "DenyAccounts",
        "DenyQos",
        "Hidden",
        "RootOnly",
        "ExclusiveUser",
        "LLN",
        "ReqResv",
        "SelectTypeParameters",
        "OverTimeLimit",
    ]
)


def _top_table() -> dict[str, KeySpec]:
    table: dict[str, KeySpec] = {}
    for name, check in _TOP_KINDS.items():
        table[name.lower()] = KeySpec(
            name,
            check,
            effect=name in _TOP_EFFECT,
            multi=name in _MULTI,
            defunct=name in _DEFUNCT,
        )
    for name, message in _REMOVED.items():
        table[name.lower()] = KeySpec(name, removed=message)
    for name, message in _REMOVED_AFTER_BOOL.items():
        table[name.lower()] = KeySpec(name, _removed_after_bool(message))
    # PreemptParameters arrived in Slurm 23.02; 22.05 reads the same options from
    # SchedulerParameters. Plurm accepts both spellings (see the reader's notice).
    table["preemptparameters"] = KeySpec("PreemptParameters", STRING, effect=True, since="23.02")
    return table


def _record_table(kinds: Mapping[str, Check | None], effect: frozenset[str]) -> dict[str, KeySpec]:
    return {
        name.lower(): KeySpec(name, check, effect=name in effect) for name, check in kinds.items()
    }


_TOP = _top_table()
_RECORDS: dict[str, dict[str, KeySpec]] = {
    "NodeName": _record_table(_NODE_KINDS, _NODE_EFFECT),
    "PartitionName": _record_table(_PARTITION_KINDS, _PARTITION_EFFECT),
    "NodeSet": _record_table({"Feature": STRING, "Nodes": STRING}, frozenset({"Feature", "Nodes"})),
    "DownNodes": _record_table({"Reason": STRING, "State": STRING}, frozenset()),
    "FrontendName": {},
}
_RECORD_KINDS = {name.lower(): name for name in _RECORDS}
_RECORD_KINDS["frontendname"] = "FrontendName"

#: Records whose ``=DEFAULT`` form sets defaults for the records after it.
DEFAULTABLE_RECORDS = frozenset({"NodeName", "PartitionName"})
#: Records Slurm 22.05 (as Debian builds it) refuses outright, with its message.
FATAL_RECORDS = {
    "FrontendName": "Use of FrontendName in slurm.conf without Slurm being configured/built "
    "with the --enable-front-end option",
}


def top(key: str) -> KeySpec | None:
    """The global key ``key`` (any case), or None when Slurm does not know it."""
    return _TOP.get(key.lower())


def record_kind(key: str) -> str | None:
    """The record a line starting with ``key=`` opens (NodeName, PartitionName, ...)."""
    return _RECORD_KINDS.get(key.lower())


def record_keys(kind: str) -> Mapping[str, KeySpec]:
    """The sub-keys of record ``kind``, by lower-case name."""
    return _RECORDS[kind]


def all_keys() -> dict[str, list[str]]:
    """Every key Plurm recognises, by table: "top" and each record kind."""
    tables = {"top": sorted(spec.name for spec in _TOP.values())}
    tables.update(
        {kind: sorted(spec.name for spec in table.values()) for kind, table in _RECORDS.items()}
    )
    return tables


def suggest(key: str, record: str | None = None) -> str | None:
    """The known key closest to ``key``, for a "did you mean" hint."""
    table = _TOP if record is None else _RECORDS.get(record, {})
    names = {spec.name.lower(): spec.name for spec in table.values()}
    if record is None:
        names.update({kind.lower(): kind for kind in _RECORDS if kind != "FrontendName"})
    found = difflib.get_close_matches(key.lower(), list(names), n=1, cutoff=0.75)
    return names[found[0]] if found else None


# ----------------------------------------------------------------------------- cross-key checks


def _number(scalars: Mapping[str, object], key: str) -> int | None:
    setting = scalars.get(key)
    if setting is None:
        return None
    try:
        value = int(UINT64(getattr(setting, "value")))  # type: ignore[call-overload]  # noqa: B009
    except BadValue:
        return None
    # INFINITE is all bits set; every key checked here is 32 bits wide.
    return 0xFFFF_FFFF if value == -1 else value


def _text(scalars: Mapping[str, object], key: str) -> str | None:
    setting = scalars.get(key)
    return None if setting is None else str(getattr(setting, "value"))  # noqa: B009


def _cross_checks(scalars: Mapping[str, object]) -> Iterator[tuple[str, str]]:
    """Slurm's whole-configuration checks on global keys: (the key at fault, its message)."""
    first = _number(scalars, "FirstJobId")
    maximum = _number(scalars, "MaxJobId")
    if first == 0:
        yield "FirstJobId", "FirstJobId cannot be zero"
    elif (first or 1) > (maximum if maximum is not None else 0x03FF0000):
        yield "FirstJobId", "FirstJobId > MaxJobId"
    if _number(scalars, "MaxJobCount") == 0:
        yield "MaxJobCount", "MaxJobCount=0, No jobs permitted"
    if _number(scalars, "MaxStepCount") == 0:
        yield "MaxStepCount", "MaxStepCount=0, No steps permitted"
    dbd = _number(scalars, "MaxDBDMsgs")
    if dbd is not None and dbd < 10000:
        yield "MaxDBDMsgs", f"MaxDBDMsgs value ({dbd}) needs to be greater than 10000"
    mcs = _text(scalars, "MCSParameters")
    mcs_plugin = _text(scalars, "MCSPlugin")
    if mcs and mcs_plugin in (None, "", "mcs/none"):
        yield "MCSParameters", f"MCSParameters={mcs} used and no MCSPlugin"
    if mcs_plugin == "mcs/group" and not mcs:
        yield "MCSPlugin", f"MCSPlugin is {mcs_plugin} and no MCSParameters"
    if _text(scalars, "MaxNodeCount") is not None and _text(scalars, "SelectType") not in (
        "select/cons_tres",
    ):
        yield "MaxNodeCount", "MaxNodeCount only compatible with cons_tres"
    if _text(scalars, "SlurmSchedLogLevel") is not None and not _text(scalars, "SlurmSchedLogFile"):
        yield "SlurmSchedLogLevel", "SlurmSchedLogLevel requires SlurmSchedLogFile value"
    prolog_flags = (_text(scalars, "PrologFlags") or "").lower().split(",")
    if _text(scalars, "JobContainerType") == "job_container/tmpfs" and "contain" not in (
        prolog_flags
    ):
        yield "JobContainerType", "PrologFlags=Contain is required for use with job_container/tmpfs"
    if _text(scalars, "AccountingStorageType") == "accounting_storage/mysql":
        yield (
            "AccountingStorageType",
            "AccountingStorageType=accounting_storage/mysql only permitted in SlurmDBD.",
        )
    communication = (_text(scalars, "CommunicationParameters") or "").lower().split(",")
    if "disableipv4" in communication and "enableipv6" not in communication:
        yield "CommunicationParameters", "Both IPv4 and IPv6 support disabled, cannot communicate"
    if _text(scalars, "SlurmctldHost") is None:
        machine = _text(scalars, "ControlMachine") or ""
        if "," in machine and not _text(scalars, "ControlAddr"):
            yield (
                "ControlMachine",
                "ControlMachine has multiple host names, so ControlAddr must be specified.",
            )


CrossCheck = Callable[[Mapping[str, object]], Iterator[tuple[str, str]]]
WHOLE_CONFIG_CHECKS: tuple[CrossCheck, ...] = (_cross_checks,)
