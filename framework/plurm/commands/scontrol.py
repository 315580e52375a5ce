"""scontrol: show job|node|partition|config, suspend, resume, requeue, hold, uhold, release,
version, update PartitionName|NodeName|JobId (the last in :mod:`plurm.commands.jobupdate`),
and Plurm's explain (in :mod:`plurm.commands.explain`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from plurm import hostlist
from plurm.commands.base import SIMULATED, VERSION_LINE, CommandError, CommandResult, Invocation
from plurm.commands.client import ClusterClient, ClusterView, cpus_in_use, node_alloc_mem
from plurm.commands.gres_display import (
    gres_used,
    job_gres_tres,
    node_gres_tres,
    per_gpu_memory,
    tres_per_lines,
)
from plurm.commands.timefmt import clock_time, limit_long
from plurm.commands.tres_units import tres_memory
from plurm.conf.model import PartitionSpec
from plurm.conf.values import BadValue, parse_oversubscribe, parse_preempt_mode
from plurm.errors import HostlistError, RequestError
from plurm.model.job import Job, JobState, PendingReason, dependency_text, min_cpus_per_node
from plurm.numbers import NO_VAL, UINT16_MAX, is_digits, parse_time_limit, parse_uint

__all__ = ["run", "show_job", "show_node", "show_partition", "tres_text"]


def _lines(groups: Sequence[Sequence[str]]) -> str:
    """scontrol's layout: the first group unindented, the others indented three spaces."""
    text = [" ".join(groups[0])]
    text += ["   " + " ".join(group) for group in groups[1:]]
    return "\n".join(text) + "\n"


def _yes(flag: bool) -> str:
    return "YES" if flag else "NO"


def _moment(seconds: float | None, missing: str = "None") -> str:
    return missing if seconds is None else clock_time(seconds)


def _duration(seconds: float) -> str:
    """RunTime: HH:MM:SS, or D-HH:MM:SS past a day."""
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    clock = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{clock}" if days else clock


def _output_path(job: Job) -> str:
    path = (job.request.stdout or "").replace("%j", str(job.job_id))
    if job.array_job_id is not None:
        path = path.replace("%A", str(job.array_job_id))
        if job.array_task_id is not None:
            path = path.replace("%a", str(job.array_task_id))
    return path or "(null)"


def _array_ids(job: Job) -> list[str]:
    """An array record's ids on scontrol's first line (Slurm 22.05): ArrayJobId and
    ArrayTaskId (a task's id, or the tasks not started yet with the throttle), and the
    throttle on the record of the tasks not started."""
    if job.array_job_id is None:
        return []
    pending = job.array_tasks_text
    task = pending if pending is not None else str(job.array_task_id)
    ids = [f"ArrayJobId={job.array_job_id}", f"ArrayTaskId={task}"]
    if pending is not None and job.request.array_throttle:
        ids.append(f"ArrayTaskThrottle={job.request.array_throttle}")
    return ids


def show_job(job: Job, view: ClusterView) -> str:
    """``scontrol show job``: Slurm 22.05's lines, in its order."""
    now = view.now
    request = job.request
    allocated = bool(job.nodes) and job.state is not JobState.PENDING
    pending = job.state is JobState.PENDING
    # A job killed to be requeued is on its way back to the queue while it completes:
    # 22.05 shows no preemption times for it, as for a pending job, and a StartTime of the
    # moment asked (linear/182, requeue/016; both asked 3 s after the requeue).
    requeueing = job.requeued and job.state is JobState.COMPLETING
    nodes = job.held_nodes  # a completing job lists only the nodes it still holds
    start: float | None
    end: float | None
    if requeueing:
        start, end = now, None
    elif pending:
        # a job that may not start before a time is expected to start then, and to end
        # its time limit later
        start = job.eligible_time if job.eligible_time > now else None
        limit = job.time_limit
        end = start + limit * 60 if start is not None and limit is not None else None
    else:
        start = job.start_time
        end = job.end_time
        if end is None and job.time_limit is not None and job.start_time is not None:
            end = job.start_time + job.time_limit * 60
        if start is None and job.state.finished:
            start = end  # a job that ended without running starts and ends at once
    never_ran = job.state.finished and job.start_time is None
    refused = _refused_at_submission(job)
    cpus = _allocated_cpus(job, view, nodes) if allocated else request.cpus
    if allocated:
        num_nodes = str(len(nodes))
    elif request.max_nodes and not job.state.finished:  # a maximum of 0 (-N 0): none
        num_nodes = f"{job.wanted_nodes}-{request.max_nodes}"
    else:
        num_nodes = str(job.wanted_nodes)
    exit_code = f"{job.exit_code}:{job.exit_signal}"
    memory = request.mem_per_node
    evaluated = job.start_time if job.start_time is not None else job.submit_time
    groups = [
        [f"JobId={job.job_id}", *_array_ids(job), f"JobName={job.name}"],
        [
            f"UserId={request.user}({request.uid})",
            f"GroupId={request.group}({request.gid})",
            "MCS_label=N/A",
        ],
        [
            f"Priority={job.priority}",
            f"Nice={request.nice}",
            f"Account={job.account or '(null)'}",
            f"QOS={job.qos or '(null)'}",
        ],
        # scontrol writes the reason's spaces as underscores (22.05, trials/reqnode.out:
        # Reason=ReqNodeNotAvail,_UnavailableNodes:d2)
        [
            f"JobState={job.state.name}",
            f"Reason={job.reason_text.replace(' ', '_')}",
            f"Dependency={dependency_text(job.dependencies)}",
        ],
        [
            f"Requeue={int(job.requeue)}",
            f"Restarts={job.restarts}",
            "BatchFlag=1",
            "Reboot=0",
            f"ExitCode={exit_code}",
        ],
        [
            f"RunTime={_duration(job.run_time(now))}",
            f"TimeLimit={limit_long(job.time_limit)}",
            "TimeMin=N/A",
        ],
        [
            f"SubmitTime={clock_time(job.submit_time)}",
            f"EligibleTime={clock_time(job.eligible_time)}",
        ],
        [f"AccrueTime={'Unknown' if refused else clock_time(job.eligible_time)}"],
        [
            f"StartTime={_moment(start, 'Unknown')}",
            f"EndTime={_moment(end, 'Unknown')}",
            "Deadline=N/A",
        ],
    ]
    if not pending and not requeueing and view.config.preempt_type != "preempt/none":
        eligible = job.start_time or 0.0
        exempt = view.config.preempt_exempt_time or 0
        groups.append(
            [
                f"PreemptEligibleTime={clock_time(eligible + exempt)}",
                f"PreemptTime={_moment(job.preempt_time)}",
            ]
        )
    groups += [
        [
            f"SuspendTime={_moment(job.suspend_time)}",
            f"SecsPreSuspend={int(job.pre_suspend_time) if job.suspend_time is not None else 0}",
            f"LastSchedEval={clock_time(evaluated)}",
            "Scheduler=Main",
        ],
        [f"Partition={job.partition}", "AllocNode:Sid=localhost:1"],
        [
            f"ReqNodeList={','.join(request.nodelist) or '(null)'}",
            f"ExcNodeList={','.join(request.exclude) or '(null)'}",
        ],
        [f"NodeList={hostlist.compress(nodes) if allocated else ''}"],
    ]
    if allocated:
        groups.append([f"BatchHost={job.nodes[0]}"])
    groups += [
        [
            f"NumNodes={num_nodes}",
            f"NumCPUs={cpus}",
            f"NumTasks={'N/A' if never_ran and request.ntasks is None else _tasks(job, allocated)}",
            f"CPUs/Task={request.cpus_per_task}",
            "ReqB:S:C:T=0:0:*:*",
        ],
        ["TRES=(null)" if refused and request.min_nodes < 1 else _tres(job, allocated, view)],
        ["Socks/Node=*", "NtasksPerN:B:S:C=0:0:*:*", "CoreSpec=*"],
        [
            f"MinCPUsNode={min_cpus_per_node(request)}",
            f"MinMemoryNode={f'{memory}M' if memory else 0}",
            "MinTmpDiskNode=0",
        ],
        ["Features=(null)", "DelayBoot=00:00:00"],
        [
            f"OverSubscribe={_oversubscribe(job, view)}",
            f"Contiguous={int(request.contiguous)}",
            "Licenses=(null)",
            "Network=(null)",
        ],
        [f"Command={'(null)' if request.wrapped else request.command or '(null)'}"],
        [f"WorkDir={request.work_dir}"],
        [f"StdErr={_output_path(job)}"],
        ["StdIn=/dev/null"],
        [f"StdOut={_output_path(job)}"],
        ["Power="],
        *tres_per_lines(job),
        [""],
    ]
    return _lines(groups) + "\n"


def _refused_at_submission(job: Job) -> bool:
    """A job Slurm refused at submission but kept as FAILED: it was never queued, so it
    never accrued time. (Refused for its node count, sbatch -N 0, it never had its
    resources (TRES) worked out either; refused for a node configuration none has, it
    shows what it asked for: trials/misc.out.)"""
    return (
        job.state is JobState.FAILED
        and job.reason is PendingReason.BAD_CONSTRAINTS
        and job.start_time is None
    )


def _allocated_cpus(job: Job, view: ClusterView, nodes: Sequence[str]) -> int:
    """The CPUs of a job's allocation on ``nodes``: the cores a consumable-resource select
    gave it while it holds them (each with its threads), else the nodes' CPUs."""
    cluster = view.cluster
    units = job.units
    if units is None and job.state.holds_resources:
        units = view.units(job)
    if units:
        return sum(cluster.node(name).threads_per_core for name, _ in units if name in nodes)
    return sum(cluster.node(name).cpus for name in nodes)


def _tasks(job: Job, allocated: bool) -> int:
    """NumTasks: -n, else one a node (the nodes it was given: a job may get more than its
    -N asks for, as --gpus's spread over nodes does, recorded in tests/data/gres)."""
    request = job.request
    if request.ntasks is None and allocated:
        return max(request.tasks, len(job.nodes))
    return request.tasks


def _whole_nodes(job: Job, view: ClusterView) -> bool:
    """Whether the select plugin gives jobs whole nodes: it has no finer resources to tell
    of (select_job_resources answers None), as select/linear."""
    return view.units(job) is None


#: Reasons a job waits for before the select plugin ever tests it: its request is beyond
#: its partition's limits.
_PARTITION_LIMITS = (
    PendingReason.PARTITION_CONFIG,
    PendingReason.PARTITION_NODE_LIMIT,
    PendingReason.PARTITION_TIME_LIMIT,
)


def _oversubscribe(job: Job, view: ClusterView) -> str:
    """A job's OverSubscribe: OK when it may share its nodes, which --oversubscribe allows,
    and so does a select that allocates less than whole nodes, for any job not --exclusive
    (22.05 shows OK for every cons_res job, NO for a running select/linear one).

    A whole-node select settles NO when it first tests the job (Slurm tests every job at
    submission, even one that may not start yet). Until then the job shows OK: 22.05 shows
    OK for a select/linear job pending on its partition's limits (PartitionConfig: those
    are checked before the select plugin is asked) and for one refused at submission,
    NO for one pending on Resources, Priority, BeginTime or PartitionDown."""
    request = job.request
    shares = not request.exclusive and not _whole_nodes(job, view)
    untested = (
        job.state is JobState.PENDING and job.reason in _PARTITION_LIMITS
    ) or _refused_at_submission(job)
    return "OK" if request.oversubscribe or shares or untested else "NO"


def _tres(job: Job, allocated: bool, view: ClusterView) -> str:
    text = _cpu_tres(job, allocated, view)
    if job.request.gres_request is None:
        return text
    return text + job_gres_tres(job, view.config, allocated)


def _cpu_tres(job: Job, allocated: bool, view: ClusterView) -> str:
    """TRES: the whole allocation, even while a completing job holds only part of it
    (requeue/016); a pending job also asks for the memory of the nodes it wants; one
    requeued after it finished still shows what it held."""
    if allocated:
        cpus = _allocated_cpus(job, view, job.nodes)
        per_gpu = per_gpu_memory(job, True)  # (--mem-per-gpu: its GPUs' memory)
        mem = f",mem={tres_memory(per_gpu)}" if per_gpu else ""
        return f"TRES=cpu={cpus}{mem},node={len(job.nodes)},billing={cpus}"
    held = job.requeued_allocation
    if held:  # as it showed while finished: its nodes' CPUs
        cpus = sum(view.cluster.node(name).cpus for name in held)
        return f"TRES=cpu={cpus},node={len(held)},billing={cpus}"
    cpus = job.request.cpus  # (--cpus-per-gpu counts only once placed, as recorded)
    nodes = job.request.min_nodes
    part = view.cluster.partition(job.partition)
    memory = per_gpu_memory(job, False) or (
        view.cluster.node(part.nodes[0]).real_memory * nodes if part.nodes else 0
    )
    return f"TRES=cpu={cpus},mem={tres_memory(memory)},node={nodes},billing={cpus}"


def tres_text(job: Job, view: ClusterView) -> str:
    """The TRES a job holds (or, pending, asks for), as squeue -O tres-alloc prints them."""
    allocated = bool(job.nodes) and job.state is not JobState.PENDING
    return _tres(job, allocated, view).removeprefix("TRES=")


def _node_state(name: str, used: int, view: ClusterView) -> str:
    """scontrol's State=: the base state by the node's CPUs in use (or DOWN), then +DRAIN
    and +NOT_RESPONDING."""
    status = view.cluster.node_status(name, used)
    return (
        status.base.value
        + ("+DRAIN" if status.drain else "")
        + ("+NOT_RESPONDING" if status.not_responding else "")
    )


def _alloc_tres(name: str, used: int, view: ClusterView) -> str:
    """AllocTRES: a job given whole nodes (select/linear) holds their memory too; one given
    cores (cons_res) only the CPUs when it asked for no memory (both as 22.05 shows them)."""
    holders = [job for job in view.cluster.allocated() if name in job.held_nodes]
    if not used or not holders:
        return ""
    if _whole_nodes(holders[0], view):
        memory = view.cluster.node(name).real_memory
        return f"cpu={used},mem={tres_memory(memory)},billing={used}"
    memory = node_alloc_mem(view, name)  # (0 unless select counts memory, CR_*_Memory)
    return f"cpu={used},mem={tres_memory(memory)}" if memory else f"cpu={used}"


def show_node(name: str, view: ClusterView, details: bool = False) -> str:
    """``scontrol show node``: Slurm 22.05's lines; hardware facts a simulation does not
    have (load, free memory, OS) are shown as fixed values. With ``-d`` (``details``) the
    GRES drained and in use follow ``Gres=``."""
    cluster = view.cluster
    spec = cluster.node(name)
    index = spec.names.index(name)
    alloc = cpus_in_use(view).get(name, 0)
    partitions = [p.name for p in cluster.partitions.values() if name in p.nodes]
    condition = cluster.node_down.get(name)
    cfg = f"cpu={spec.cpus},mem={tres_memory(spec.real_memory)},billing={spec.cpus}"
    alloc_tres = _alloc_tres(name, alloc, view)
    if name in view.config.gres.counts:
        cfg += node_gres_tres(name, view.config, None)
        if alloc_tres:
            holders = (job for job in cluster.allocated() if name in job.held_nodes)
            alloc_tres += node_gres_tres(name, view.config, holders)
    groups = [
        [f"NodeName={name}", "Arch=x86_64", f"CoresPerSocket={spec.cores_per_socket}", ""],
        [f"CPUAlloc={alloc}", f"CPUEfctv={spec.cpus}", f"CPUTot={spec.cpus}", "CPULoad=0.00"],
        [f"AvailableFeatures={','.join(spec.features) or '(null)'}"],
        [f"ActiveFeatures={','.join(spec.features) or '(null)'}"],
        [f"Gres={','.join(spec.gres) or '(null)'}"],
        *(_gres_detail(name, view) if details else []),
        [
            f"NodeAddr={spec.addresses[index]}",
            f"NodeHostName={spec.hostnames[index]}",
            "Port=6818",
            "Version=22.05.8",
        ],
        ["OS=Linux (simulated)", ""],
        [
            f"RealMemory={spec.real_memory}",
            f"AllocMem={node_alloc_mem(view, name)}",
            "FreeMem=N/A",
            f"Sockets={spec.sockets}",
            f"Boards={spec.boards}",
        ],
        [
            f"State={_node_state(name, alloc, view)}",
            f"ThreadsPerCore={spec.threads_per_core}",
            f"TmpDisk={spec.tmp_disk}",
            f"Weight={spec.weight}",
            "Owner=N/A",
            "MCS_label=N/A",
        ],
        [f"Partitions={','.join(partitions)}", ""],
        [f"BootTime={clock_time(0)}", f"SlurmdStartTime={clock_time(0)}"],
        [f"LastBusyTime={clock_time(view.now)}"],
        [f"CfgTRES={cfg}"],
        [f"AllocTRES={alloc_tres}"],
        ["CapWatts=n/a"],
        ["CurrentWatts=0", "AveWatts=0"],
        ["ExtSensorsJoules=n/s", "ExtSensorsWatts=0", "ExtSensorsTemp=n/s"],
    ]
    if condition is not None and condition.reason:
        groups.append([f"Reason={condition.reason} [root@{clock_time(condition.since)}]"])
    return _lines(groups) + "\n"


def _gres_detail(name: str, view: ClusterView) -> list[list[str]]:
    """``scontrol -d show node``'s GRES lines: none drained (Plurm drains no GRES), and
    those in use as sinfo's GRES_USED shows them."""
    holders = (job for job in view.cluster.allocated() if name in job.held_nodes)
    return [["GresDrain=N/A"], [f"GresUsed={gres_used(name, view.config, holders)}"]]


def show_partition(part: PartitionSpec, view: ClusterView) -> str:
    """``scontrol show partition``: Slurm 22.05's lines."""
    config = view.config
    cluster = view.cluster
    mode = part.preempt_mode if part.preempt_mode is not None else config.preempt_mode
    cpus = sum(cluster.node(n).cpus for n in part.nodes)
    memory = sum(cluster.node(n).real_memory for n in part.nodes)
    default_time = limit_long(part.default_time) if part.default_time_configured else "NONE"
    groups = [
        [f"PartitionName={part.name}"],
        ["AllowGroups=ALL", "AllowAccounts=ALL", "AllowQos=ALL"],
        ["AllocNodes=ALL", f"Default={_yes(part.default)}", f"QoS={part.qos or 'N/A'}"],
        [
            f"DefaultTime={default_time}",
            "DisableRootJobs=NO",
            f"ExclusiveUser={_yes(part.exclusive_user)}",
            f"GraceTime={part.grace_time}",
            f"Hidden={_yes(part.hidden)}",
        ],
        [
            f"MaxNodes={part.max_nodes if part.max_nodes is not None else 'UNLIMITED'}",
            f"MaxTime={limit_long(part.max_time)}",
            f"MinNodes={part.min_nodes}",
            f"LLN={_yes(part.lln)}",
            "MaxCPUsPerNode=UNLIMITED",
        ],
        [f"Nodes={hostlist.compress(part.nodes) if part.nodes else '(null)'}"],
        [
            f"PriorityJobFactor={part.priority_job_factor}",
            f"PriorityTier={part.priority_tier}",
            f"RootOnly={_yes(part.root_only)}",
            f"ReqResv={_yes(part.req_resv)}",
            f"OverSubscribe={part.oversubscribe}",
        ],
        ["OverTimeLimit=NONE", f"PreemptMode={mode}"],
        [
            f"State={part.state}",
            f"TotalCPUs={cpus}",
            f"TotalNodes={len(part.nodes)}",
            f"SelectTypeParameters={part.select_type_parameters or 'NONE'}",
        ],
        ["JobDefaults=(null)"],
        [
            f"DefMemPerNode={part.def_mem_per_node or 'UNLIMITED'}",
            f"MaxMemPerNode={part.max_mem_per_node or 'UNLIMITED'}",
        ],
        [f"TRES=cpu={cpus},mem={tres_memory(memory)},node={len(part.nodes)},billing={cpus}"],
    ]
    return _lines(groups) + "\n"


def _show(args: Sequence[str], view: ClusterView, details: bool = False) -> CommandResult:
    if not args:
        raise CommandError("scontrol: error: Invalid command: show")
    what = args[0].lower()
    name = args[1] if len(args) > 1 else None
    cluster = view.cluster
    if what == "job":
        if name is not None:
            if not is_digits(name):
                return CommandResult(1, "", "scontrol_print_job error: Invalid job id specified\n")
            wanted = int(name)
            # an array's id shows every record of the array
            chosen = [
                job for job in _visible(view) if job.job_id == wanted or job.array_job_id == wanted
            ]
            if wanted in cluster.jobs and cluster.job(wanted) not in chosen:
                chosen.insert(0, cluster.job(wanted))
            if not chosen:
                return CommandResult(1, "", "slurm_load_jobs error: Invalid job id specified\n")
            return CommandResult(0, "".join(show_job(job, view) for job in chosen))
        text = "".join(show_job(job, view) for job in _visible(view))
        return CommandResult(0, text or "No jobs in the system\n")
    if what == "node":
        names = hostlist.expand(name) if name else list(cluster.config.node_names)
        out = []
        for node in names:
            if node not in cluster.node_index:
                return CommandResult(1, f"Node {node} not found\n")
            out.append(show_node(node, view, details))
        return CommandResult(0, "".join(out))
    if what == "partition":
        if name is not None:
            if name not in cluster.partitions:
                return CommandResult(1, f"Partition {name} not found\n")
            return CommandResult(0, show_partition(cluster.partition(name), view))
        return CommandResult(
            0, "".join(show_partition(p, view) for p in cluster.partitions.values())
        )
    raise CommandError(f"scontrol: error: Invalid entity: {args[0]} for keyword: show")


def _visible(view: ClusterView) -> Iterator[Job]:
    now = view.now
    age = view.config.min_job_age
    for job in view.cluster.jobs.values():
        if not job.purged(now, age):
            yield job


def _uint16(text: str) -> int:
    """scontrol reads PriorityTier and PriorityJobFactor as 16-bit unsigned numbers."""
    return parse_uint(text, maximum=UINT16_MAX - 2)  # below Slurm's NO_VAL16 and INFINITE16


def _uint32(text: str) -> int:
    """GraceTime: a 32-bit unsigned number of seconds, below Slurm's NO_VAL."""
    return parse_uint(text, maximum=NO_VAL - 1)


_PARTITION_STATES = ("UP", "DOWN", "DRAIN", "INACTIVE")


def _partition_state(text: str) -> str:
    state = text.upper()
    if state not in _PARTITION_STATES:
        raise _BadState(text)
    return state


class _BadState(ValueError):
    """A partition State= scontrol does not know; it has its own message."""


def _max_time(text: str) -> int | None:
    return parse_time_limit(text)


_UPDATABLE: dict[str, tuple[str, Callable[[str], object]]] = {
    "prioritytier": ("priority_tier", _uint16),
    "priorityjobfactor": ("priority_job_factor", _uint16),
    "state": ("state", _partition_state),
    "oversubscribe": ("oversubscribe", lambda text: parse_oversubscribe(text)[0]),
    "preemptmode": ("preempt_mode", parse_preempt_mode),
    "gracetime": ("grace_time", _uint32),
    "maxtime": ("max_time", _max_time),
}


def _update(args: Sequence[str], client: ClusterClient) -> CommandResult:
    pairs = [arg.partition("=") for arg in args]
    keys = [key.lower() for key, _, _ in pairs]
    if "nodename" in keys:
        return _update_nodes(pairs, client)
    if "jobid" in keys or "job" in keys:
        from plurm.commands.jobupdate import update_job
        from plurm.commands.sbatch import begin_time

        return update_job(pairs, client, begin_time)
    if not pairs or keys[0] != "partitionname":
        raise CommandError("scontrol: error: Only PartitionName and NodeName updates are supported")
    name = pairs[0][2]
    changes = {}
    for key, _, value in pairs[1:]:
        entry = _UPDATABLE.get(key.lower())
        if entry is None:
            raise CommandError(f"scontrol: error: Update of this parameter is not supported: {key}")
        try:
            changes[entry[0]] = entry[1](value)
        except _BadState:
            raise CommandError(
                f"scontrol: error: Invalid input: {key}={value}\n"
                "scontrol: error: Acceptable State values are UP, DOWN, DRAIN and INACTIVE\n"
                "slurm_update error: No error"
            ) from None
        except (BadValue, ValueError):
            raise CommandError(
                f"scontrol: error: Invalid {key} value: {value}\nslurm_update error: No error"
            ) from None
    try:
        client.update_partition(name, changes)
    except RequestError as error:
        raise CommandError(f"slurm_update error: {error.message}") from None
    return CommandResult(0)


#: The node states Plurm's controller applies (plurm.model.node.admin_update).
_NODE_STATES = ("DOWN", "DRAIN", "RESUME", "UNDRAIN", "IDLE")
#: The other states scontrol takes, about power, reboots and responsiveness, which a
#: simulated cluster does not have.
_UNSIMULATED_NODE_STATES = (
    "NORESP",
    "FAIL",
    "FUTURE",
    "POWER_DOWN",
    "POWER_DOWN_ASAP",
    "POWER_DOWN_FORCE",
    "POWER_UP",
    "CANCEL_REBOOT",
)
_INVALID_NODE_STATE = (
    "Invalid input: {arg}\n"
    "Request aborted\n"
    "Valid states are: NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN\n"
    "Not all states are valid given a node's prior state"
)


def _update_nodes(pairs: Sequence[tuple[str, str, str]], client: ClusterClient) -> CommandResult:
    """``scontrol update NodeName=LIST [State=S] [Reason=TEXT]``, keys in any order and case.
    Like Slurm's scontrol, it refuses to down or drain a node without a reason itself."""
    names: list[str] = []
    state = reason = None
    for key, _, value in pairs:
        word = key.lower()
        if word == "nodename":
            try:
                names += hostlist.expand(value)
            except HostlistError:
                raise CommandError("slurm_update error: Invalid node name specified") from None
        elif word == "state":
            state = value.upper()
            if state in _UNSIMULATED_NODE_STATES:
                raise CommandError(f"scontrol: error: State={value} is not simulated by Plurm")
            if state not in _NODE_STATES:
                raise CommandError(_INVALID_NODE_STATE.format(arg=f"{key}={value}"))
        elif word == "reason":
            reason = value or None
        else:
            raise CommandError(f"scontrol: error: Update of this parameter is not supported: {key}")
    if state in ("DOWN", "DRAIN") and reason is None:
        raise CommandError(
            "You must specify a reason when DOWNING or DRAINING a node. Request denied"
        )
    try:
        client.update_nodes(names, state, reason)
    except RequestError as error:
        raise CommandError(f"slurm_update error: {error.message}") from None
    return CommandResult(0)


def _job_command(verb: str, args: Sequence[str], client: ClusterClient) -> CommandResult:
    if not args:
        raise CommandError(f"scontrol: error: Invalid job id specified for {verb}")
    errors = []
    for word in args:
        for job_id in word.split(","):
            if not is_digits(job_id):
                raise CommandError(f"scontrol: error: Invalid job id specified for {verb}")
            try:
                if verb == "uhold":
                    client.hold(int(job_id), user=True)
                else:
                    getattr(client, verb)(int(job_id))
            except RequestError as error:
                errors.append(f"{error.message} for job {job_id}\n")
    return CommandResult(1 if errors else 0, "", "".join(errors))


def _one_line_each(text: str) -> str:
    """scontrol -o: each record (records end with a blank line) on one line, its lines'
    indentation and ends trimmed and joined by single spaces."""
    records = [record for record in text.split("\n\n") if record.strip()]
    return "".join(" ".join(line.strip() for line in r.split("\n")) + "\n" for r in records)


def run(
    argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation = SIMULATED
) -> CommandResult:
    oneliner = details = False
    while argv and argv[0] in ("-o", "--oneliner", "-d", "--details"):
        oneliner = oneliner or argv[0] in ("-o", "--oneliner")
        details = details or argv[0] in ("-d", "--details")
        argv = argv[1:]
    if not argv:
        raise CommandError("scontrol: error: no command given")
    verb = argv[0].lower()
    if verb == "version":
        return CommandResult(0, VERSION_LINE + "\n")
    if verb == "show" and len(argv) > 1 and argv[1].lower() in ("config", "conf"):
        from plurm.commands.showconfig import show_config

        return CommandResult(0, show_config(client.view()))
    if verb == "show":
        shown = _show(argv[1:], client.view(), details)
        if oneliner:
            return CommandResult(shown.status, _one_line_each(shown.stdout), shown.stderr)
        return shown
    if verb in ("suspend", "resume", "requeue", "hold", "uhold", "release"):
        return _job_command(verb, argv[1:], client)
    if verb == "update":
        return _update(argv[1:], client)
    if verb == "token":
        return _token(argv[1:], client)
    if verb == "explain":
        from plurm.commands.explain import explain

        return explain(argv[1:], client)
    raise CommandError(f"scontrol: error: Invalid command: {argv[0]}")


#: scontrol token's lifespan when none is given (Slurm's DEFAULT_AUTH_TOKEN_LIFESPAN).
TOKEN_LIFESPAN = 1800


def _token(args: Sequence[str], client: ClusterClient) -> CommandResult:
    """``scontrol token [lifespan=N] [username=U]``: a JWT from the controller (auth/jwt),
    printed as ``SLURM_JWT=...``."""
    lifespan, username = TOKEN_LIFESPAN, None
    for word in args:
        key, equals, value = word.partition("=")
        key = key.lower()
        if equals and key == "lifespan" and value.isdigit() and 0 < int(value) < 0xFFFFFFFE:
            lifespan = int(value)
        elif equals and key == "username" and value:
            username = value
        else:
            raise CommandError(f"scontrol: error: Invalid parameter {word}")
    fetch = getattr(client, "token", None)
    if fetch is None:
        raise CommandError("Unable to fetch token: Requested operation not supported")
    try:
        token = fetch(username, lifespan)
    except RequestError as error:
        raise CommandError(f"Unable to fetch token: {error.message}") from None
    return CommandResult(0, f"SLURM_JWT={token}\n")
