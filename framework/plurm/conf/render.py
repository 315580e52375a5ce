"""The effective configuration as text, in slurm.conf's own syntax.

``plurm conf check`` prints this: every value after defaults, so an admin sees what Plurm will
do with the file. The output is itself a valid slurm.conf body for the keys it shows (the
record lines carry a few read-only counts, such as TotalNodes, in comments).
"""

from __future__ import annotations

from collections.abc import Iterator

from plurm import hostlist
from plurm.conf.model import AccountSpec, NodeSpec, PartitionSpec, QosSpec, SlurmConfig
from plurm.conf.values import PreemptMode, format_seconds, format_time_limit

__all__ = ["render"]


def _limit(value: int | None) -> str:
    return "UNLIMITED" if value is None else str(value)


def _yes(flag: bool) -> str:
    return "YES" if flag else "NO"


def render(config: SlurmConfig) -> str:
    """The whole effective configuration, one setting or record a line."""
    return "\n".join(_lines(config)) + "\n"


def _lines(config: SlurmConfig) -> Iterator[str]:
    yield "# Files: " + ", ".join(config.files)
    yield f"ClusterName={config.cluster_name}"
    for host in config.control_hosts:
        yield f"SlurmctldHost={host}"
    yield ""
    yield "# Scheduling"
    yield f"SchedulerType={config.scheduler_type}"
    sched = config.scheduler_parameters
    yield (
        f"SchedulerParameters=sched_interval={sched.sched_interval},"
        f"default_queue_depth={sched.default_queue_depth},bf_interval={sched.bf_interval},"
        f"bf_window={sched.bf_window},bf_max_job_test={sched.bf_max_job_test},"
        f"bf_resolution={sched.bf_resolution}"
        + (
            f",bf_job_part_count_reserve={sched.bf_job_part_count_reserve}"
            if sched.bf_job_part_count_reserve
            else ""
        )
        + (",bf_continue" if sched.bf_continue else "")
    )
    yield f"SchedulerTimeSlice={config.scheduler_time_slice}"
    yield f"SelectType={config.select_type}"
    yield f"SelectTypeParameters={config.select_type_parameters}"
    yield f"PriorityType={config.priority_type}"
    yield f"JobRequeue={int(config.job_requeue)}"
    yield f"KillWait={config.kill_wait}"
    yield f"ReturnToService={config.return_to_service}"
    yield f"MessageTimeout={config.message_timeout}"
    yield f"SlurmdTimeout={config.slurmd_timeout}"
    yield f"MinJobAge={config.min_job_age}"
    yield f"OverTimeLimit={config.over_time_limit}"
    for key, value in (
        ("DefMemPerCPU", config.def_mem_per_cpu),
        ("DefMemPerNode", config.def_mem_per_node),
        ("MaxMemPerCPU", config.max_mem_per_cpu),
        ("MaxMemPerNode", config.max_mem_per_node),
    ):
        yield f"{key}={_limit(value)}"
    yield ""
    yield "# Preemption"
    yield f"PreemptType={config.preempt_type}"
    yield f"PreemptMode={config.preempt_mode}"
    exempt = config.preempt_exempt_time
    yield f"PreemptExemptTime={'-1' if exempt is None else format_seconds(exempt)}"
    params = config.preempt_parameters
    words = [
        f"reorder_count={params.reorder_count}",
        f"suspend_grace_time={params.suspend_grace_time}",
    ]
    words += [
        name
        for name, flag in (
            ("youngest_first", params.youngest_first),
            ("strict_order", params.strict_order),
            ("send_user_signal", params.send_user_signal),
            ("reclaim_licenses", params.reclaim_licenses),
        )
        if flag
    ]
    if params.min_exempt_priority is not None:
        words.append(f"min_exempt_priority={params.min_exempt_priority}")
    yield "PreemptParameters=" + ",".join(words)
    if config.preempt_guards:
        yield "# plurm.conf: PreemptGuards=" + ",".join(config.preempt_guards)
    if config.scheduler_pass_on != "tick":
        yield f"# plurm.conf: SchedulerPassOn={config.scheduler_pass_on}"
    yield f"AuthType={config.auth_type}"
    yield f"JobAcctGatherType={config.jobacct_gather_type}"
    yield ""
    total = len(config.node_names)
    yield f"# Nodes: {total} in {len(config.nodes)} NodeName line(s)"
    for node in config.nodes:
        yield _node(node)
    for nodeset in config.nodesets:
        yield f"NodeSet={nodeset.name} Nodes={hostlist.compress(nodeset.nodes)}"
    yield ""
    yield f"# Partitions: {len(config.partitions)}"
    for part in config.partitions:
        yield _partition(part, config.preempt_mode)
    yield ""
    yield f"# QOS: {len(config.qos)}"
    for qos in config.qos:
        yield _qos(qos)
    yield ""
    yield "# Accounting"
    yield f"AccountingStorageType={config.accounting_storage_type}"
    yield f"AccountingStorageEnforce={','.join(sorted(config.accounting_enforce)) or 'none'}"
    for account in config.accounts:
        yield _account(account)
    for association in config.associations:
        default = config.default_accounts.get(association.user) == association.account
        yield (
            f"User={association.user} Account={association.account}"
            + (" DefaultAccount=" + association.account if default else "")
            + f" QOS={','.join(association.qos)}"
            + (f" DefaultQOS={association.default_qos}" if association.default_qos else "")
        )
    if config.inactive:
        yield ""
        yield "# Accepted, but no effect in Plurm:"
        for key in sorted(config.inactive):
            yield f"#   {key}={config.inactive[key]}"
    for node in config.nodes:
        for key in sorted(node.extra):
            yield f"#   NodeName={node.expression} {key}={node.extra[key]} (no effect in Plurm)"
    for part in config.partitions:
        for key in sorted(part.extra):
            yield f"#   PartitionName={part.name} {key}={part.extra[key]} (no effect in Plurm)"
    if config.notices:
        yield ""
        yield "# Warnings:"
        for notice in config.notices:
            yield f"#   {notice}"


def _node(node: NodeSpec) -> str:
    words = [
        f"NodeName={hostlist.compress(node.names)}",
        f"CPUs={node.cpus}",
        f"Boards={node.boards}",
        f"Sockets={node.sockets}",
        f"CoresPerSocket={node.cores_per_socket}",
        f"ThreadsPerCore={node.threads_per_core}",
        f"RealMemory={node.real_memory}",
        f"TmpDisk={node.tmp_disk}",
        f"Weight={node.weight}",
    ]
    if node.features:
        words.append("Features=" + ",".join(node.features))
    if node.gres:
        words.append("Gres=" + ",".join(node.gres))
    words.append(f"State={node.state}")
    words.append(f"# {len(node.names)} node(s)")
    return " ".join(words)


def _partition(part: PartitionSpec, cluster_mode: PreemptMode) -> str:
    mode = part.preempt_mode if part.preempt_mode is not None else cluster_mode
    default_time = format_time_limit(part.default_time) if part.default_time_configured else "NONE"
    words = [
        f"PartitionName={part.name}",
        f"Nodes={hostlist.compress(part.nodes) if part.nodes else '(null)'}",
        f"Default={_yes(part.default)}",
        f"State={part.state}",
        f"PriorityTier={part.priority_tier}",
        f"PriorityJobFactor={part.priority_job_factor}",
        f"OverSubscribe={part.oversubscribe}",
        f"PreemptMode={mode}",
        f"GraceTime={part.grace_time}",
        f"MaxTime={format_time_limit(part.max_time)}",
        f"DefaultTime={default_time}",
        f"MaxNodes={_limit(part.max_nodes)}",
        f"MinNodes={part.min_nodes}",
    ]
    if part.qos:
        words.append(f"QOS={part.qos}")
    words.append(f"# TotalNodes={len(part.nodes)}")
    return " ".join(words)


def _account(account: AccountSpec) -> str:
    words = [f"Account={account.name}"]
    if account.parent is not None:
        words.append(f"Parent={account.parent}")
    if account.qos is not None:
        words.append(f"QOS={','.join(account.qos)}")
    if account.default_qos is not None:
        words.append(f"DefaultQOS={account.default_qos}")
    return " ".join(words)


def _qos(qos: QosSpec) -> str:
    mode = "cluster" if qos.preempt_mode is None else str(qos.preempt_mode)
    exempt = "-1" if qos.preempt_exempt_time is None else format_seconds(qos.preempt_exempt_time)
    words = [
        f"QOS={qos.name}",
        f"Priority={qos.priority}",
        f"Preempt={','.join(qos.preempt)}" if qos.preempt else 'Preempt=""',
        f"PreemptMode={mode}",
        f"PreemptExemptTime={exempt}",
        f"GraceTime={qos.grace_time}",
        f"UsageFactor={qos.usage_factor:g}",
    ]
    if qos.flags:
        words.append("Flags=" + ",".join(sorted(qos.flags)))
    return " ".join(words)
