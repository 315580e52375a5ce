"""scontrol show config: Slurm 22.05's layout (``Configuration data as of DATE``, then one
``Key = value`` line per setting, keys padded to 23 columns, in Slurm's order, then the
controller's status), for the settings Plurm knows: those it acts on, with their effective
values, and those it accepts without acting on, as written. Settings Plurm does not read
at all are left out (tests/data/oracle/jobcmds, record ``jobcmds/001``, is the whole list).
"""

from __future__ import annotations

from collections.abc import Callable

from plurm.commands.base import SLURM_VERSION
from plurm.commands.client import ClusterView
from plurm.commands.timefmt import clock_time
from plurm.conf.model import SlurmConfig

__all__ = ["SLURM_VERSION", "show_config"]

#: The Slurm release whose behaviour Plurm follows (scontrol show config, --version).


def _null(text: str | None) -> str:
    return text if text else "(null)"


def _sec(seconds: int) -> str:
    return f"{seconds} sec"


def _mem(per_node: int | None, per_cpu: int | None, node_key: str) -> tuple[str, str]:
    if per_cpu is not None:
        return node_key.replace("Node", "CPU"), str(per_cpu)
    return node_key, "UNLIMITED" if per_node is None else str(per_node)


def _enforce(config: SlurmConfig) -> str:
    return ",".join(sorted(config.accounting_enforce)) or "none"


def _sched_params(config: SlurmConfig) -> str:
    options = config.scheduler_parameters.options
    words = [key if value is None else f"{key}={value}" for key, value in options.items()]
    return ",".join(words) or "(null)"


def _exempt(config: SlurmConfig) -> str:
    seconds = config.preempt_exempt_time or 0
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


#: The settings Plurm acts on, by Slurm's key: their values as scontrol prints them.
_KNOWN: dict[str, Callable[[SlurmConfig], str]] = {
    "AccountingStorageEnforce": _enforce,
    "AccountingStorageType": lambda c: c.accounting_storage_type,
    "AuthAltTypes": lambda c: _null(",".join(c.auth_alt_types)),
    "AuthType": lambda c: c.auth_type,
    "ClusterName": lambda c: c.cluster_name,
    "EnforcePartLimits": lambda c: c.enforce_part_limits,
    "FirstJobId": lambda c: str(c.first_job_id),
    "JobAcctGatherType": lambda c: c.jobacct_gather_type,
    "JobRequeue": lambda c: str(int(c.job_requeue)),
    "KillWait": lambda c: _sec(c.kill_wait),
    "MaxJobCount": lambda c: str(c.max_job_count),
    "MessageTimeout": lambda c: _sec(c.message_timeout),
    "MinJobAge": lambda c: _sec(c.min_job_age),
    "OverTimeLimit": lambda c: f"{c.over_time_limit} min",
    "PreemptMode": lambda c: str(c.preempt_mode),
    "PreemptType": lambda c: c.preempt_type,
    "PreemptExemptTime": _exempt,
    "PriorityType": lambda c: c.priority_type,
    "ReturnToService": lambda c: str(c.return_to_service),
    "SchedulerParameters": _sched_params,
    "SchedulerTimeSlice": lambda c: _sec(c.scheduler_time_slice),
    "SchedulerType": lambda c: c.scheduler_type,
    "SelectType": lambda c: c.select_type,
    "SlurmdTimeout": lambda c: _sec(c.slurmd_timeout),
}

#: Every key of Slurm 22.05's listing, in its order (from the recording).
_ORDER = [
    "AccountingStorageBackupHost",
    "AccountingStorageEnforce",
    "AccountingStorageHost",
    "AccountingStorageExternalHost",
    "AccountingStorageParameters",
    "AccountingStoragePort",
    "AccountingStorageTRES",
    "AccountingStorageType",
    "AccountingStorageUser",
    "AccountingStoreFlags",
    "AcctGatherEnergyType",
    "AcctGatherFilesystemType",
    "AcctGatherInterconnectType",
    "AcctGatherNodeFreq",
    "AcctGatherProfileType",
    "AllowSpecResourcesUsage",
    "AuthAltTypes",
    "AuthAltParameters",
    "AuthInfo",
    "AuthType",
    "BatchStartTimeout",
    "BcastExclude",
    "BcastParameters",
    "BurstBufferType",
    "CliFilterPlugins",
    "ClusterName",
    "CommunicationParameters",
    "CompleteWait",
    "CoreSpecPlugin",
    "CpuFreqDef",
    "CpuFreqGovernors",
    "CredType",
    "DebugFlags",
    "DefMemPerNode",
    "DependencyParameters",
    "DisableRootJobs",
    "EioTimeout",
    "EnforcePartLimits",
    "Epilog",
    "EpilogMsgTime",
    "EpilogSlurmctld",
    "ExtSensorsType",
    "ExtSensorsFreq",
    "FederationParameters",
    "FirstJobId",
    "GetEnvTimeout",
    "GresTypes",
    "GpuFreqDef",
    "GroupUpdateForce",
    "GroupUpdateTime",
    "HealthCheckInterval",
    "HealthCheckNodeState",
    "HealthCheckProgram",
    "InactiveLimit",
    "InteractiveStepOptions",
    "JobAcctGatherFrequency",
    "JobAcctGatherType",
    "JobAcctGatherParams",
    "JobCompHost",
    "JobCompLoc",
    "JobCompPort",
    "JobCompType",
    "JobCompUser",
    "JobContainerType",
    "JobCredentialPrivateKey",
    "JobCredentialPublicCertificate",
    "JobDefaults",
    "JobFileAppend",
    "JobRequeue",
    "JobSubmitPlugins",
    "KillOnBadExit",
    "KillWait",
    "LaunchParameters",
    "LaunchType",
    "Licenses",
    "LogTimeFormat",
    "MailDomain",
    "MailProg",
    "MaxArraySize",
    "MaxDBDMsgs",
    "MaxJobCount",
    "MaxJobId",
    "MaxMemPerNode",
    "MaxNodeCount",
    "MaxStepCount",
    "MaxTasksPerNode",
    "MCSPlugin",
    "MCSParameters",
    "MessageTimeout",
    "MinJobAge",
    "MpiDefault",
    "MpiParams",
    "NodeFeaturesPlugins",
    "OverTimeLimit",
    "PluginDir",
    "PlugStackConfig",
    "PowerParameters",
    "PowerPlugin",
    "PreemptMode",
    "PreemptType",
    "PreemptExemptTime",
    "PrEpParameters",
    "PrEpPlugins",
    "PriorityParameters",
    "PrioritySiteFactorParameters",
    "PrioritySiteFactorPlugin",
    "PriorityType",
    "PrivateData",
    "ProctrackType",
    "Prolog",
    "PrologEpilogTimeout",
    "PrologSlurmctld",
    "PrologFlags",
    "PropagatePrioProcess",
    "PropagateResourceLimits",
    "PropagateResourceLimitsExcept",
    "RebootProgram",
    "ReconfigFlags",
    "RequeueExit",
    "RequeueExitHold",
    "ResumeFailProgram",
    "ResumeProgram",
    "ResumeRate",
    "ResumeTimeout",
    "ResvEpilog",
    "ResvOverRun",
    "ResvProlog",
    "ReturnToService",
    "RoutePlugin",
    "SchedulerParameters",
    "SchedulerTimeSlice",
    "SchedulerType",
    "ScronParameters",
    "SelectType",
    "SelectTypeParameters",
    "SlurmUser",
    "SlurmctldAddr",
    "SlurmctldDebug",
    "SlurmctldHost",
    "SlurmctldLogFile",
    "SlurmctldPort",
    "SlurmctldSyslogDebug",
    "SlurmctldPrimaryOffProg",
    "SlurmctldPrimaryOnProg",
    "SlurmctldTimeout",
    "SlurmctldParameters",
    "SlurmdDebug",
    "SlurmdLogFile",
    "SlurmdParameters",
    "SlurmdPidFile",
    "SlurmdPort",
    "SlurmdSpoolDir",
    "SlurmdSyslogDebug",
    "SlurmdTimeout",
    "SlurmdUser",
    "SlurmSchedLogFile",
    "SlurmSchedLogLevel",
    "SlurmctldPidFile",
    "SlurmctldPlugstack",
    "SLURM_CONF",
    "SLURM_VERSION",
    "SrunEpilog",
    "SrunPortRange",
    "SrunProlog",
    "StateSaveLocation",
    "SuspendExcNodes",
    "SuspendExcParts",
    "SuspendProgram",
    "SuspendRate",
    "SuspendTime",
    "SuspendTimeout",
    "SwitchParameters",
    "SwitchType",
    "TaskEpilog",
    "TaskPlugin",
    "TaskPluginParam",
    "TaskProlog",
    "TCPTimeout",
    "TmpFS",
    "TopologyParam",
    "TopologyPlugin",
    "TrackWCKey",
    "TreeWidth",
    "UsePam",
    "UnkillableStepProgram",
    "UnkillableStepTimeout",
    "VSizeFactor",
    "WaitTime",
    "X11Parameters",
]


def _line(key: str, value: str) -> str:
    return f"{key:<23} = {value}\n"


def show_config(view: ClusterView) -> str:
    """The listing, as of the view's time."""
    config = view.config
    out = [f"Configuration data as of {clock_time(view.now)}\n"]
    for key in _ORDER:
        if key == "DefMemPerNode":
            out.append(_line(*_mem(config.def_mem_per_node, config.def_mem_per_cpu, key)))
        elif key == "MaxMemPerNode":
            out.append(_line(*_mem(config.max_mem_per_node, config.max_mem_per_cpu, key)))
        elif key == "SelectTypeParameters":
            params = str(config.select_type_parameters)
            if params and params != "NONE":
                out.append(_line(key, params))
        elif key == "SlurmctldHost":
            for index, host in enumerate(config.control_hosts):
                shown = f"{host.name}({host.address})" if host.address else host.name
                out.append(_line(f"SlurmctldHost[{index}]", shown))
        elif key == "SLURM_CONF":
            if config.files:
                out.append(_line(key, config.files[0]))
        elif key == "SLURM_VERSION":
            out.append(_line(key, SLURM_VERSION))
        elif key in _KNOWN:
            out.append(_line(key, _KNOWN[key](config)))
        elif key in config.inactive:
            out.append(_line(key, config.inactive[key]))
    primary = config.control_hosts[0].name if config.control_hosts else "localhost"
    out.append(f"\nSlurmctld(primary) at {primary} is UP\n")
    return "".join(out)
