"""scontrol: show job|node|partition, suspend, resume, requeue, update PartitionName=..."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from plurm import hostlist
from plurm.commands.base import CommandError, CommandResult
from plurm.commands.sinfo import node_states
from plurm.commands.timefmt import clock_time, limit_long
from plurm.conf.model import PartitionSpec
from plurm.conf.values import BadValue, parse_oversubscribe, parse_preempt_mode, parse_time
from plurm.controller import Controller, RequestError
from plurm.model.job import Job, JobState

__all__ = ["run", "show_job", "show_node", "show_partition"]


def _lines(groups: Sequence[Sequence[str]]) -> str:
    """scontrol's layout: the first group unindented, the others indented three spaces."""
    text = [" ".join(groups[0])]
    text += ["   " + " ".join(group) for group in groups[1:]]
    return "\n".join(text) + "\n\n"


def _yes(flag: bool) -> str:
    return "YES" if flag else "NO"


def show_job(job: Job, controller: Controller) -> str:
    now = controller.now
    request = job.request
    running = job.state in (JobState.RUNNING, JobState.SUSPENDED)
    end = job.end_time
    if end is None and running and job.time_limit is not None and job.start_time is not None:
        end = job.start_time + job.time_limit * 60
    nodes = hostlist.compress(job.nodes) if job.nodes else "(null)"
    cpus = sum(controller.cluster.node(n).cpus for n in job.nodes) if job.nodes else request.cpus
    exit_code = f"{job.exit_code}:0" if job.exit_code < 128 else f"0:{job.exit_code - 128}"
    groups = [
        [f"JobId={job.job_id}", f"JobName={job.name}"],
        [
            f"UserId={request.user}({request.uid})",
            f"GroupId={request.user}({request.uid})",
            "MCS_label=N/A",
        ],
        [f"Priority={job.priority}", "Nice=0", "Account=(null)", f"QOS={request.qos or 'normal'}"],
        [f"JobState={job.state.name}", f"Reason={job.reason.value}", "Dependency=(null)"],
        [
            f"Requeue={int(job.requeue)}",
            f"Restarts={job.restarts}",
            "BatchFlag=1",
            "Reboot=0",
            f"ExitCode={exit_code}",
        ],
        [f"RunTime={_runtime(job, now)}", f"TimeLimit={limit_long(job.time_limit)}", "TimeMin=N/A"],
        [
            f"SubmitTime={clock_time(job.submit_time)}",
            f"EligibleTime={clock_time(job.eligible_time)}",
        ],
        [f"AccrueTime={clock_time(job.eligible_time)}"],
        [f"StartTime={clock_time(job.start_time)}", f"EndTime={clock_time(end)}", "Deadline=N/A"],
        [
            f"PreemptEligibleTime={clock_time(job.start_time)}",
            f"PreemptTime={_moment(job.preempt_time)}",
        ],
        [
            f"SuspendTime={_moment(job.suspend_time)}",
            f"SecsPreSuspend={int(job.pre_suspend_time)}",
        ],
        [f"Partition={job.partition}"],
        [
            f"ReqNodeList={','.join(request.nodelist) or '(null)'}",
            f"ExcNodeList={','.join(request.exclude) or '(null)'}",
        ],
        [f"NodeList={nodes}"],
        [
            f"NumNodes={len(job.nodes) or request.min_nodes}",
            f"NumCPUs={cpus}",
            f"NumTasks={request.tasks}",
            f"CPUs/Task={request.cpus_per_task}",
        ],
        [
            f"OverSubscribe={'OK' if request.oversubscribe else 'NO'}",
            f"Contiguous={int(request.contiguous)}",
        ],
        [f"Command={request.command if request.command else '(null)'}"],
        [f"WorkDir={request.work_dir}"],
        [f"StdOut={request.stdout or '(null)'}"],
    ]
    return _lines(groups)


def _moment(seconds: float | None) -> str:
    return "None" if seconds is None else clock_time(seconds)


def _runtime(job: Job, now: float) -> str:
    seconds = int(job.run_time(now))
    days, rest = divmod(seconds, 86400)
    clock = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{clock}" if days else clock


def show_node(name: str, controller: Controller) -> str:
    cluster = controller.cluster
    spec = cluster.node(name)
    state = node_states(controller)[name]
    alloc = controller.plugins.select_node_alloc(cluster).get(name, 0)
    partitions = [p.name for p in cluster.partitions.values() if name in p.nodes]
    reason = cluster.node_down.get(name, (None, None))[1]
    groups = [
        [f"NodeName={name}", "Arch=x86_64", f"CoresPerSocket={spec.cores_per_socket}"],
        [f"CPUAlloc={alloc}", f"CPUEfctv={spec.cpus}", f"CPUTot={spec.cpus}", "CPULoad=0.00"],
        [f"AvailableFeatures={','.join(spec.features) or '(null)'}"],
        [f"ActiveFeatures={','.join(spec.features) or '(null)'}"],
        [f"Gres={','.join(spec.gres) or '(null)'}"],
        [
            f"NodeAddr={spec.addresses[spec.names.index(name)]}",
            f"NodeHostName={spec.hostnames[spec.names.index(name)]}",
        ],
        [
            f"RealMemory={spec.real_memory}",
            "AllocMem=0",
            "FreeMem=N/A",
            f"Sockets={spec.sockets}",
            f"Boards={spec.boards}",
        ],
        [
            f"State={state.value}",
            f"ThreadsPerCore={spec.threads_per_core}",
            f"TmpDisk={spec.tmp_disk}",
            f"Weight={spec.weight}",
        ],
        [f"Partitions={','.join(partitions)}"],
    ]
    if reason:
        groups.append([f"Reason={reason}"])
    return _lines(groups)


def show_partition(part: PartitionSpec, controller: Controller) -> str:
    config = controller.config
    mode = part.preempt_mode if part.preempt_mode is not None else config.preempt_mode
    cpus = sum(controller.cluster.node(n).cpus for n in part.nodes)
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
    ]
    return _lines(groups)


def _show(args: Sequence[str], controller: Controller) -> CommandResult:
    if not args:
        raise CommandError("scontrol: error: Invalid command: show")
    what = args[0].lower()
    name = args[1] if len(args) > 1 else None
    cluster = controller.cluster
    if what == "job":
        if name is not None:
            if not name.isdigit() or int(name) not in cluster.jobs:
                return CommandResult(1, "", "slurm_load_jobs error: Invalid job id specified\n")
            return CommandResult(0, show_job(cluster.job(int(name)), controller))
        text = "".join(show_job(job, controller) for job in _visible(controller))
        return CommandResult(0, text or "No jobs in the system\n")
    if what == "node":
        names = hostlist.expand(name) if name else list(cluster.config.node_names)
        out = []
        for node in names:
            if node not in cluster.node_index:
                return CommandResult(1, "", f"Node {node} not found\n")
            out.append(show_node(node, controller))
        return CommandResult(0, "".join(out))
    if what == "partition":
        if name is not None:
            if name not in cluster.partitions:
                return CommandResult(1, "", f"Partition {name} not found\n")
            return CommandResult(0, show_partition(cluster.partition(name), controller))
        return CommandResult(
            0, "".join(show_partition(p, controller) for p in cluster.partitions.values())
        )
    raise CommandError(f"scontrol: error: Invalid entity: {args[0]} for keyword: show")


def _visible(controller: Controller) -> Iterator[Job]:
    now = controller.now
    age = controller.config.min_job_age
    for job in controller.cluster.jobs.values():
        if not (job.state.finished and job.end_time is not None and job.end_time + age < now):
            yield job


_UPDATABLE: dict[str, tuple[str, Callable[[str], object]]] = {
    "prioritytier": ("priority_tier", lambda text: int(text)),
    "priorityjobfactor": ("priority_job_factor", lambda text: int(text)),
    "state": ("state", lambda text: text.upper()),
    "oversubscribe": ("oversubscribe", lambda text: parse_oversubscribe(text)[0]),
    "preemptmode": ("preempt_mode", parse_preempt_mode),
    "gracetime": ("grace_time", lambda text: int(text)),
    "maxtime": ("max_time", lambda text: parse_time(text, unit="minutes")),
}


def _update(args: Sequence[str], controller: Controller) -> CommandResult:
    pairs = [arg.partition("=") for arg in args]
    if not pairs or pairs[0][0].lower() != "partitionname":
        raise CommandError("scontrol: error: Only PartitionName updates are supported")
    name = pairs[0][2]
    changes = {}
    for key, _, value in pairs[1:]:
        entry = _UPDATABLE.get(key.lower())
        if entry is None:
            raise CommandError(f"scontrol: error: Update of this parameter is not supported: {key}")
        try:
            changes[entry[0]] = entry[1](value)
        except (BadValue, ValueError):
            raise CommandError(f"scontrol: error: Invalid input: {key}={value}") from None
    try:
        controller.update_partition(name, **changes)
    except RequestError as error:
        raise CommandError(f"scontrol: error: {error.message}") from None
    return CommandResult(0)


def _job_command(verb: str, args: Sequence[str], controller: Controller) -> CommandResult:
    if not args:
        raise CommandError(f"scontrol: error: Invalid job id specified for {verb}")
    errors = []
    for word in args:
        for job_id in word.split(","):
            if not job_id.isdigit():
                raise CommandError(f"scontrol: error: Invalid job id specified for {verb}")
            try:
                getattr(controller, verb)(int(job_id))
            except RequestError as error:
                errors.append(f"{verb.capitalize()} of job {job_id} failed: {error.message}\n")
    return CommandResult(1 if errors else 0, "", "".join(errors))


def run(argv: Sequence[str], controller: Controller, cwd: Path) -> CommandResult:
    if not argv:
        raise CommandError("scontrol: error: no command given")
    verb = argv[0].lower()
    if verb == "show":
        return _show(argv[1:], controller)
    if verb in ("suspend", "resume", "requeue"):
        return _job_command(verb, argv[1:], controller)
    if verb == "update":
        return _update(argv[1:], controller)
    raise CommandError(f"scontrol: error: Invalid command: {argv[0]}")
