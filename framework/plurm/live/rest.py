"""slurmrestd's REST API for Slurm 22.05 (``/slurm/v0.0.38/``): rendering and parsing only.

The HTTP server mounts these pure functions; nothing here does I/O. Field names, nesting and
value forms follow the v0.0.38 openapi plugin of Slurm 22.05 (the spec's field names are kept in
``tests/data/rest/v0.0.38-keys.json``):

* every response starts with ``meta`` (the plugin's type and name, Slurm's version) and an
  ``errors`` list;
* numbers are plain integers, times are Unix seconds (0 when unset), ``job_state`` and
  ``state_reason`` are single strings (v0.0.39 made them lists and objects);
* a string Slurm has no value for is JSON ``null`` (slurmrestd writes a C NULL so).

The controller's clock counts seconds from :data:`plurm.commands.timefmt.EPOCH`; responses
give Unix seconds.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from plurm import hostlist
from plurm.commands.timefmt import EPOCH
from plurm.conf.model import PartitionSpec
from plurm.conf.values import BadValue, PreemptBase, parse_time
from plurm.errors import PlurmError
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState, PendingReason

__all__ = [
    "API_VERSION",
    "DIAG_FIELDS",
    "ESLURM_ALREADY_DONE",
    "ESLURM_INVALID_JOB_ID",
    "ESLURM_JOB_SCRIPT_MISSING",
    "ESLURM_REST_FAIL_PARSING",
    "ESLURM_REST_INVALID_JOBS_DESC",
    "ESLURM_REST_INVALID_QUERY",
    "MAX_BODY_BYTES",
    "SLURM_RELEASE",
    "STRERROR",
    "RestError",
    "SubmitRequest",
    "cancel_response",
    "diag_response",
    "error_item",
    "error_response",
    "from_unix",
    "job_json",
    "job_not_found",
    "jobs_response",
    "lookup_error",
    "meta",
    "node_json",
    "nodes_response",
    "parse_job_submit",
    "partition_json",
    "partitions_response",
    "ping_response",
    "submit_error",
    "submit_response",
    "to_unix",
]

API_VERSION = "v0.0.38"
PLUGIN_TYPE = f"openapi/{API_VERSION}"
PLUGIN_NAME = f"Slurm OpenAPI {API_VERSION}"
#: The Slurm release Plurm stands for (scontrol show node prints Version=22.05.8 too).
SLURM_VERSION = (22, 5, 8)
SLURM_RELEASE = "22.05.8"
#: The largest request body parse_job_submit reads: slurmctld's default max_script_size
#: (4 MiB) for the script, plus room for the job description.
MAX_SCRIPT_BYTES = 4 * 1024 * 1024
MAX_BODY_BYTES = MAX_SCRIPT_BYTES + 1024 * 1024

_EPOCH_UNIX = int(EPOCH.timestamp())

# Slurm's error numbers (slurm/slurm_errno.h) and slurm_strerror's texts for them.
SLURM_ERROR = -1
ESLURM_JOB_SCRIPT_MISSING = 2009
ESLURM_INVALID_JOB_ID = 2017
ESLURM_ALREADY_DONE = 2021
ESLURM_ENVIRONMENT_MISSING = 2127
ESLURM_INVALID_PARTITION_NAME = 2000
ESLURM_INVALID_NODE_NAME = 2018
ESLURM_REST_INVALID_QUERY = 9000
ESLURM_REST_FAIL_PARSING = 9001
ESLURM_REST_INVALID_JOBS_DESC = 9002
STRERROR = {
    SLURM_ERROR: "Unspecified error",
    1: "Operation not permitted",
    ESLURM_INVALID_PARTITION_NAME: "Invalid partition name specified",
    ESLURM_JOB_SCRIPT_MISSING: "Job script not specified",
    ESLURM_INVALID_JOB_ID: "Invalid job id specified",
    ESLURM_INVALID_NODE_NAME: "Invalid node name specified",
    ESLURM_ALREADY_DONE: "Job/step already completing or completed",
    ESLURM_ENVIRONMENT_MISSING: "Environment is missing in job",
    ESLURM_REST_INVALID_QUERY: "Query empty or not RFC7320 compliant",
    ESLURM_REST_FAIL_PARSING: "Failure during parsing",
    ESLURM_REST_INVALID_JOBS_DESC: (
        "Jobs description entry not found, empty or not dictionary or list"
    ),
}


# --------------------------------------------------------------------------------- common


def to_unix(seconds: float | None) -> int:
    """A controller-clock time as Unix seconds; 0 (Slurm's "not set") for None."""
    return 0 if seconds is None else _EPOCH_UNIX + int(seconds)


def from_unix(unix: int) -> float:
    """Unix seconds as a controller-clock time."""
    return float(unix - _EPOCH_UNIX)


def meta() -> dict[str, Any]:
    """The ``meta`` block every v0.0.38 response starts with."""
    major, minor, micro = SLURM_VERSION
    return {
        "plugin": {"type": PLUGIN_TYPE, "name": PLUGIN_NAME},
        "Slurm": {
            "version": {"major": major, "micro": micro, "minor": minor},
            "release": SLURM_RELEASE,
        },
    }


def _response(errors: Iterable[Mapping[str, Any]] = (), **fields: Any) -> dict[str, Any]:
    return {"meta": meta(), "errors": [dict(error) for error in errors], **fields}


def error_item(
    errno: int, *, description: str | None = None, source: str | None = None
) -> dict[str, Any]:
    """One ``errors`` entry as slurmrestd's generic error helper writes it: a description,
    the error number and Slurm's text for it, and where it arose (each only when known)."""
    item: dict[str, Any] = {}
    if description is not None:
        item["description"] = description
    if errno:
        item["error_number"] = errno
        item["error"] = STRERROR.get(errno, f"Unknown error {errno}")
    if source is not None:
        item["source"] = source
    return item


def lookup_error(errno: int) -> dict[str, Any]:
    """The ``errors`` entry the nodes and partitions handlers write: ``error`` and ``errno``
    (the key the v0.0.38 spec names)."""
    return {"error": STRERROR.get(errno, f"Unknown error {errno}"), "errno": errno}


def submit_error(errno: int, text: str | None = None) -> dict[str, Any]:
    """The ``errors`` entry the job submission handler writes: ``error_code`` and ``error``."""
    return {"error_code": errno, "error": text or STRERROR.get(errno, f"Unknown error {errno}")}


def error_response(errors: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """A response that carries only errors (a refused submission, an unknown job)."""
    return _response(errors)


# --------------------------------------------------------------------------------- ping, diag


def ping_response(controller_host: str, up: bool, mode: str = "primary") -> dict[str, Any]:
    """GET /ping/: one entry per controller; status is slurm_ping's return code."""
    ping = {"hostname": controller_host, "ping": "UP" if up else "DOWN"}
    return _response(pings=[{**ping, "status": 0 if up else SLURM_ERROR, "mode": mode}])


#: The statistics of GET /diag/, in slurmrestd's order; bf_active is the only boolean.
DIAG_FIELDS = (
    "parts_packed",
    "req_time",
    "req_time_start",
    "server_thread_count",
    "agent_queue_size",
    "agent_count",
    "agent_thread_count",
    "dbd_agent_queue_size",
    "gettimeofday_latency",
    "schedule_cycle_max",
    "schedule_cycle_last",
    "schedule_cycle_total",
    "schedule_cycle_mean",
    "schedule_cycle_mean_depth",
    "schedule_cycle_per_minute",
    "schedule_queue_length",
    "jobs_submitted",
    "jobs_started",
    "jobs_completed",
    "jobs_canceled",
    "jobs_failed",
    "jobs_pending",
    "jobs_running",
    "job_states_ts",
    "bf_backfilled_jobs",
    "bf_last_backfilled_jobs",
    "bf_backfilled_het_jobs",
    "bf_cycle_counter",
    "bf_cycle_mean",
    "bf_depth_mean",
    "bf_depth_mean_try",
    "bf_cycle_last",
    "bf_cycle_max",
    "bf_queue_len",
    "bf_queue_len_mean",
    "bf_when_last_cycle",
    "bf_active",
)


def diag_response(stats: Mapping[str, float]) -> dict[str, Any]:
    """GET /diag/: the statistics the controller gives, by slurmrestd's names (times as
    Unix seconds and durations in microseconds, as the caller gives them); any it does not
    give are 0. Names slurmrestd does not print are left out."""
    statistics: dict[str, Any] = {}
    for name in DIAG_FIELDS:
        value = stats.get(name, 0)
        statistics[name] = bool(value) if name == "bf_active" else int(value)
    return _response(statistics=statistics)


# --------------------------------------------------------------------------------- jobs


def _job_times(job: Job, now: float) -> tuple[float | None, float | None]:
    """Start and end as scontrol shows them: expected for a pending job with a begin time,
    the limit's end for a running one."""
    if job.requeued and job.state is JobState.COMPLETING:
        return now, None
    if job.state is JobState.PENDING:
        start = job.eligible_time if job.eligible_time > now else None
        limit = job.time_limit
        return start, (start + limit * 60 if start is not None and limit is not None else None)
    start, end = job.start_time, job.end_time
    if end is None and job.time_limit is not None and start is not None:
        end = start + job.time_limit * 60
    if start is None and job.state.finished:
        start = end
    return start, end


def _allocated(job: Job) -> bool:
    return bool(job.nodes) and job.state is not JobState.PENDING


def _job_cpus(job: Job, cluster: Cluster) -> int:
    """The CPUs of the job's allocation (the cores it holds, when the select plugin said,
    with their threads), else those it asks for."""
    if not _allocated(job):
        return job.request.cpus
    if job.units:
        held = set(job.nodes)
        return sum(cluster.node(name).threads_per_core for name, _ in job.units if name in held)
    return sum(cluster.node(name).cpus for name in job.nodes)


def _job_resources(job: Job, cluster: Cluster, cpus: int) -> dict[str, Any]:
    """``job_resources`` of an allocated job: its nodes, CPUs and, per node, the cores it
    holds by socket (every core when it holds whole nodes)."""
    request = job.request
    per_node: list[dict[str, Any]] = []
    for name in job.nodes:
        spec = cluster.node(name)
        per_socket = spec.cores_per_socket
        if job.units is not None:
            cores = sorted(core for node, core in job.units if node == name)
        else:
            cores = list(range(spec.sockets * per_socket))
        sockets: dict[str, Any] = {}
        for core in cores:
            socket = sockets.setdefault(str(core // per_socket), {"cores": {}})
            socket["cores"][str(core % per_socket)] = "allocated"
        memory = request.mem_per_node or (
            request.mem_per_cpu * len(cores) * spec.threads_per_core if request.mem_per_cpu else 0
        )
        per_node.append(
            {
                "nodename": name,
                "cpus_used": 0,
                "memory_used": 0,
                "memory_allocated": memory,
                "sockets": sockets,
            }
        )
    params = str(cluster.config.select_type_parameters).upper()
    count_key = "allocated_cores" if "CORE" in params or "SOCKET" in params else "allocated_cpus"
    return {
        "nodes": hostlist.compress(job.nodes),
        count_key: cpus,
        "allocated_hosts": len(job.nodes),
        "allocated_nodes": per_node,
    }


def _output_path(job: Job) -> str | None:
    return (job.request.stdout or "").replace("%j", str(job.job_id)) or None


def _shared(request: JobRequest) -> str | None:
    if request.exclusive:
        return "none"
    if request.oversubscribe:
        return "shared"
    return None


def job_json(job: Job, cluster: Cluster, now: float, *, cpus: int | None = None) -> dict[str, Any]:
    """One entry of GET /jobs/ and /job/{id}: every field of v0.0.38's job, in slurmrestd's
    order. ``cpus`` overrides the allocation's CPU count (the controller knows it better
    than the job record under a consumable-resource select without gang scheduling)."""
    request = job.request
    allocated = _allocated(job)
    if cpus is None:
        cpus = _job_cpus(job, cluster)
    start, end = _job_times(job, now)
    nodes = job.held_nodes
    node_count = len(nodes) if allocated else job.wanted_nodes
    if job.reason is PendingReason.REQ_NODE_NOT_AVAIL and job.unavailable_nodes:
        description: str | None = job.reason_text
    else:
        description = None
    tres_alloc = f"cpu={cpus},node={len(job.nodes)},billing={cpus}" if allocated else None
    memory_per_cpu = request.mem_per_cpu if request.mem_per_node is None else None
    evaluated = job.start_time if job.start_time is not None else job.submit_time
    return {
        "account": job.account,
        "accrue_time": to_unix(job.eligible_time),
        "admin_comment": None,
        "array_job_id": 0,
        "array_task_id": None,
        "array_max_tasks": 0,
        "array_task_string": None,
        "association_id": 0,
        "batch_features": None,
        "batch_flag": True,
        "batch_host": job.nodes[0] if allocated else None,
        "flags": [],
        "burst_buffer": None,
        "burst_buffer_state": None,
        "cluster": cluster.config.cluster_name,
        "cluster_features": None,
        "command": None if request.wrapped else (request.command or None),
        "comment": None,
        "contiguous": request.contiguous,
        "core_spec": None,
        "thread_spec": None,
        "cores_per_socket": None,
        "billable_tres": float(cpus),
        "cpus_per_task": request.cpus_per_task,
        "cpu_frequency_minimum": None,
        "cpu_frequency_maximum": None,
        "cpu_frequency_governor": None,
        "cpus_per_tres": None,
        "deadline": 0,
        "delay_boot": 0,
        "dependency": None,
        "derived_exit_code": 0,
        "eligible_time": to_unix(job.eligible_time),
        "end_time": to_unix(end),
        "excluded_nodes": ",".join(request.exclude) or None,
        # a wait status, as Slurm keeps it: the exit code in the high byte, the signal low
        "exit_code": (job.exit_code << 8) | job.exit_signal,
        "features": None,
        "federation_origin": None,
        "federation_siblings_active": None,
        "federation_siblings_viable": None,
        "gres_detail": [],
        "group_id": request.gid,
        "job_id": job.job_id,
        **({"job_resources": _job_resources(job, cluster, cpus)} if allocated else {}),
        "job_state": job.state.name,
        "last_sched_evaluation": to_unix(evaluated),
        "licenses": None,
        "max_cpus": 0,
        "max_nodes": request.max_nodes or 0,
        "mcs_label": None,
        "memory_per_tres": None,
        "name": job.name,
        "nodes": hostlist.compress(nodes) if job.nodes and nodes else None,
        "nice": request.nice or None,
        "tasks_per_core": None,
        "tasks_per_node": 0,
        "tasks_per_socket": None,
        "tasks_per_board": 0,
        "cpus": cpus,
        "node_count": node_count,
        "tasks": request.tasks,
        "het_job_id": 0,
        "het_job_id_set": None,
        "het_job_offset": 0,
        "partition": job.partition,
        "memory_per_node": request.mem_per_node,
        "memory_per_cpu": memory_per_cpu,
        "minimum_cpus_per_node": request.cpus_per_task,
        "minimum_tmp_disk_per_node": 0,
        "preempt_time": to_unix(job.preempt_time),
        "pre_sus_time": int(job.pre_suspend_time) if job.suspend_time is not None else 0,
        "priority": job.priority,
        "profile": None,
        "qos": job.qos,
        "reboot": False,
        "required_nodes": ",".join(request.nodelist) or None,
        "requeue": job.requeue,
        "resize_time": 0,
        "restart_cnt": job.restarts,
        "resv_name": None,
        "shared": _shared(request),
        "show_flags": ["SHOW_ALL", "SHOW_DETAIL"],
        "sockets_per_board": 0,
        "sockets_per_node": None,
        "start_time": to_unix(start),
        "state_description": description,
        "state_reason": job.reason.value,
        "standard_error": _output_path(job),
        "standard_input": "/dev/null",
        "standard_output": _output_path(job),
        "submit_time": to_unix(job.submit_time),
        "suspend_time": to_unix(job.suspend_time),
        "system_comment": None,
        "time_limit": job.time_limit,
        "time_minimum": 0,
        "threads_per_core": None,
        "tres_bind": None,
        "tres_freq": None,
        "tres_per_job": None,
        "tres_per_node": None,
        "tres_per_socket": None,
        "tres_per_task": None,
        "tres_req_str": f"cpu={request.cpus},node={request.min_nodes},billing={request.cpus}",
        "tres_alloc_str": tres_alloc,
        "user_id": request.uid,
        "user_name": request.user,
        "wckey": None,
        "current_working_directory": request.work_dir,
    }


def jobs_response(jobs: Iterable[Job], cluster: Cluster, now: float) -> dict[str, Any]:
    """GET /jobs/ (and /job/{id} with one job)."""
    return _response(jobs=[job_json(job, cluster, now) for job in jobs])


def submit_response(job_id: int, user_message: str | None = None) -> dict[str, Any]:
    """POST /job/submit accepted: the new job's id; a batch job's step is ``BATCH``."""
    return _response(job_id=job_id, step_id="BATCH", job_submit_user_msg=user_message)


def job_not_found(job_id: str) -> dict[str, Any]:
    """GET /job/{id} for a job the controller does not know."""
    return error_response(
        [
            error_item(
                ESLURM_INVALID_JOB_ID,
                description=f"Unable to find JobId={job_id}",
                source="slurm_load_job",
            )
        ]
    )


def cancel_response(errors: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """DELETE /job/{id}: nothing but the (empty) errors. A job already done is a success."""
    return _response(errors)


# --------------------------------------------------------------------------------- nodes


def _node_state(name: str, cluster: Cluster, used: int) -> tuple[str, list[str]]:
    """The base state in lower case and the flags, as slurmrestd prints them."""
    status = cluster.node_status(name, used)
    flags = ["DRAIN"] * status.drain + ["NOT_RESPONDING"] * status.not_responding
    return status.base.value.lower(), flags


def node_json(name: str, cluster: Cluster, cpus_in_use: Mapping[str, int]) -> dict[str, Any]:
    """One entry of GET /nodes/. Facts a simulated or unmeasured node lacks (load, free
    memory) are 0; its boot and slurmd start are the clock's origin."""
    spec = cluster.node(name)
    index = spec.names.index(name)
    used = cpus_in_use.get(name, 0)
    state, flags = _node_state(name, cluster, used)
    condition = cluster.node_down.get(name)
    reason = condition.reason if condition is not None else None
    holders = [job for job in cluster.allocated() if name in job.held_nodes]
    whole = any(job.units is None for job in holders)
    alloc_memory = spec.real_memory if used and whole else 0
    features = ",".join(spec.features) or None
    return {
        "architecture": "x86_64",
        "burstbuffer_network_address": None,
        "boards": spec.boards,
        "boot_time": to_unix(0),
        "cores": spec.cores_per_socket,
        "cpu_binding": 0,
        "cpu_load": 0,
        "free_memory": 0,
        "cpus": spec.cpus,
        "features": features,
        "active_features": features,
        "gres": ",".join(spec.gres) or None,
        "gres_drained": "N/A",
        "gres_used": None,
        "mcs_label": None,
        "name": name,
        "next_state_after_reboot": "invalid",
        "next_state_after_reboot_flags": [],
        "address": spec.addresses[index],
        "hostname": spec.hostnames[index],
        "state": state,
        "state_flags": flags,
        "operating_system": "Linux",
        "owner": None,
        "partitions": [p.name for p in cluster.partitions.values() if name in p.nodes],
        "port": 6818,
        "real_memory": spec.real_memory,
        "reason": reason,
        "reason_changed_at": to_unix(condition.since) if reason and condition else 0,
        "reason_set_by_user": "root" if reason else None,
        "slurmd_start_time": to_unix(0),
        "sockets": spec.sockets,
        "threads": spec.threads_per_core,
        "temporary_disk": spec.tmp_disk,
        "weight": spec.weight,
        "tres": f"cpu={spec.cpus},mem={spec.real_memory}M,billing={spec.cpus}",
        "slurmd_version": SLURM_RELEASE,
        "alloc_memory": alloc_memory,
        "alloc_cpus": used,
        "idle_cpus": spec.cpus - used,
        "tres_used": f"cpu={used}" if used else None,
        "tres_weighted": float(used),
    }


def nodes_response(
    names: Iterable[str], cluster: Cluster, cpus_in_use: Mapping[str, int]
) -> dict[str, Any]:
    """GET /nodes/ (all of ``names``); an empty answer is slurmrestd's invalid-node error."""
    nodes = [node_json(name, cluster, cpus_in_use) for name in names]
    errors = [] if nodes else [lookup_error(ESLURM_INVALID_NODE_NAME)]
    return _response(errors, nodes=nodes)


# --------------------------------------------------------------------------------- partitions


def _preemption_mode(spec: PartitionSpec, cluster: Cluster) -> list[str]:
    mode = spec.preempt_mode if spec.preempt_mode is not None else cluster.config.preempt_mode
    words = []
    if mode.base is PreemptBase.OFF and not mode.gang:
        words.append("disabled")
    if mode.base is PreemptBase.SUSPEND:
        words.append("suspend")
    if mode.base is PreemptBase.REQUEUE:
        words.append("requeue")
    if mode.gang:
        words.append("gang_schedule")
    # CANCEL has no word of its own in v0.0.38's list (slurmrestd prints none for it)
    return words


def _names(values: Sequence[str] | None) -> str | None:
    return ",".join(values) if values else None


def partition_json(spec: PartitionSpec, cluster: Cluster) -> dict[str, Any]:
    """One entry of GET /partitions/. Unlimited values are -1, as slurmrestd prints them."""
    flags = []
    for on, word in (
        (spec.default, "default"),
        (spec.hidden, "hidden"),
        (spec.root_only, "root_only"),
        (spec.req_resv, "reservation_required"),
        (spec.lln, "least_loaded_nodes"),
        (spec.exclusive_user, "exclusive_user"),
    ):
        if on:
            flags.append(word)
    cpus = sum(cluster.node(name).cpus for name in spec.nodes)
    memory = sum(cluster.node(name).real_memory for name in spec.nodes)
    default_time = spec.default_time if spec.default_time_configured else None
    if spec.default_time_configured and spec.default_time is None:
        default_time = -1
    return {
        "flags": flags,
        "preemption_mode": _preemption_mode(spec, cluster),
        "allowed_allocation_nodes": None,
        "allowed_accounts": _names(spec.allow_accounts),
        "allowed_groups": _names(spec.allow_groups),
        "allowed_qos": _names(spec.allow_qos),
        "alternative": None,
        "billing_weights": None,
        "default_memory_per_cpu": spec.def_mem_per_cpu or 0,
        "default_time_limit": default_time,
        "denied_accounts": _names(spec.deny_accounts),
        "denied_qos": _names(spec.deny_qos),
        "preemption_grace_time": spec.grace_time,
        "maximum_cpus_per_node": -1,
        "maximum_memory_per_node": spec.max_mem_per_node or 0,
        "maximum_nodes_per_job": -1 if spec.max_nodes is None else spec.max_nodes,
        "max_time_limit": -1 if spec.max_time is None else spec.max_time,
        "min_nodes_per_job": spec.min_nodes,
        "name": spec.name,
        "nodes": hostlist.compress(spec.nodes) if spec.nodes else None,
        "over_time_limit": spec.over_time_limit,
        "priority_job_factor": spec.priority_job_factor,
        "priority_tier": spec.priority_tier,
        "qos": spec.qos,
        "state": spec.state if spec.state in ("UP", "DOWN", "INACTIVE", "DRAIN") else "UNKNOWN",
        "total_cpus": cpus,
        "total_nodes": len(spec.nodes),
        "tres": f"cpu={cpus},mem={memory}M,node={len(spec.nodes)},billing={cpus}",
    }


def partitions_response(specs: Iterable[PartitionSpec], cluster: Cluster) -> dict[str, Any]:
    """GET /partitions/; an empty answer is slurmrestd's invalid-partition error."""
    partitions = [partition_json(spec, cluster) for spec in specs]
    errors = [] if partitions else [lookup_error(ESLURM_INVALID_PARTITION_NAME)]
    return _response(errors, partitions=partitions)


# --------------------------------------------------------------------------------- job/submit


class RestError(PlurmError):
    """A request slurmrestd refuses. ``errno`` is Slurm's error number, ``errors`` the
    ``errors`` list slurmrestd answers with (render it with :func:`error_response`)."""

    def __init__(self, errno: int, errors: Sequence[Mapping[str, Any]]) -> None:
        self.errno = errno
        self.errors = tuple(dict(error) for error in errors)
        texts = [str(e.get("description") or e.get("error") or "") for e in self.errors]
        super().__init__("; ".join(text for text in texts if text) or STRERROR.get(errno, ""))

    def response(self) -> dict[str, Any]:
        return error_response(self.errors)


def _refuse(errno: int, *leading: Mapping[str, Any]) -> RestError:
    """A refused submission: the details first, then the submission handler's own entry."""
    return RestError(errno, [*leading, submit_error(errno)])


@attrs.frozen
class SubmitRequest:
    """A parsed POST /job/submit: the script, the job as a :class:`JobRequest`, and what
    JobRequest has no field for yet, kept as given (``extra``: the job description's other
    accepted keys, lower-cased, with their JSON values)."""

    script: str
    request: JobRequest
    environment: tuple[tuple[str, str], ...]
    stderr: str | None = None
    array: str | None = None
    dependency: str | None = None
    hold: bool = False
    signal: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


#: The job description keys slurmrestd 22.05 takes (lower case, as it compares them).
_ACCEPTED = frozenset(
    [
        "account",
        "account_gather_frequency",
        "array",
        "argv",
        "batch_features",
        "begin_time",
        "burst_buffer",
        "cluster_constraint",
        "comment",
        "constraint",
        "constraints",
        "core_specification",
        "cores_per_socket",
        "cpu_binding_hint",
        "cpu_frequency",
        "cpus_per_gpu",
        "cpus_per_task",
        "current_working_directory",
        "cwd",
        "deadline",
        "delay_boot",
        "dependency",
        "distribution",
        "environment",
        "exclude_nodes",
        "exclusive",
        "get_user_environment",
        "gpu_binding",
        "gpu_frequency",
        "gpus",
        "gpus_per_node",
        "gpus_per_socket",
        "gpus_per_task",
        "gres_flags",
        "gres",
        "hold",
        "job_name",
        "kill_on_invalid_dependency",
        "license",
        "licenses",
        "mail_type",
        "mail_user",
        "mcs_label",
        "memory_binding",
        "memory_per_cpu",
        "memory_per_gpu",
        "memory_per_node",
        "minimum_cpus_per_node",
        "minimum_nodes",
        "name",
        "nice",
        "nodelist",
        "node_list",
        "nodes",
        "no_kill",
        "no_requeue",
        "open_mode",
        "partition",
        "priority",
        "profile",
        "qos",
        "requeue",
        "reservation",
        "signal",
        "sockets_per_node",
        "spread_job",
        "standard_error",
        "standard_input",
        "standard_output",
        "tasks",
        "ntasks",
        "tasks_per_core",
        "ntasks_per_core",
        "ntasks_per_gpu",
        "tasks_per_node",
        "ntasks_per_node",
        "tasks_per_socket",
        "ntasks_per_socket",
        "ntasks_per_tres",
        "temporary_disk_per_node",
        "test_only",
        "thread_specification",
        "threads_per_core",
        "time_limit",
        "time_minimum",
        "umask",
        "wait_all_nodes",
        "wckey",
    ]
)
#: Keys slurmrestd knows but refuses ("Disabled key"): sbatch options that make no sense
#: over REST. Among them ``excluded_nodes``, ``cpu_binding`` and ``required_nodes``, which
#: the v0.0.38 spec lists all the same.
_DISABLED = frozenset(
    [
        "accelerator_binding",
        "allocation_node_list",
        "bell",
        "burst_buffer_file",
        "cluster",
        "clusters",
        "compress",
        "contiguous",
        "cpu_binding",
        "debugger_test",
        "disable_status",
        "epilog",
        "excluded_nodes",
        "export_file",
        "export",
        "extra_node_info",
        "group_id",
        "help",
        "ignore_pbs",
        "immediate",
        "job_id",
        "kill_command",
        "kill_on_bad_exit",
        "label",
        "max_threads",
        "message_timeout",
        "mpi",
        "multiple_program",
        "network",
        "no_allocation",
        "no_bell",
        "nodefile",
        "no_shell",
        "overcommit",
        "oversubscribe",
        "hetjob_group",
        "parsable",
        "power_flags",
        "preserve_environment",
        "prolog",
        "propagate",
        "pty",
        "quiet",
        "quit_on_interrupt",
        "reboot",
        "relative",
        "required_nodes",
        "required_switches",
        "reserve_port",
        "reserve_ports",
        "slurmd_debug",
        "task_epilog",
        "task_prolog",
        "threads",
        "unbuffered",
        "unknown",
        "usage",
        "user_id",
        "version",
        "verbose",
        "wait",
        "wait_for_switch",
        "wrap",
        "x11",
    ]
)


class _BadValue(Exception):
    """A value of the wrong type or form (turned into slurmrestd's errors by the caller)."""


def _text(value: Any) -> str:
    """A value read as a string, as Slurm converts scalars."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    raise _BadValue("Unable to read string")


_INTEGER = re.compile(r"[ \t]*([+-]?[0-9]{1,18})[ \t]*")


def _integer(value: Any) -> int:
    if isinstance(value, bool):
        raise _BadValue("Unable to read integer value")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    # ASCII digits and blanks only (int(), \d and \s take other characters too)
    match = re.fullmatch(_INTEGER, value) if isinstance(value, str) else None
    if match is not None:
        return int(match.group(1))
    raise _BadValue("Unable to read integer value")


def _count(value: Any, least: int = 1) -> int:
    number = _integer(value)
    if not least <= number < 1 << 32:
        raise _BadValue(f"Invalid count: {number}")
    return number


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str) and value.lower() in ("true", "yes", "1", "false", "no", "0"):
        return value.lower() in ("true", "yes", "1")
    raise _BadValue("Unable to read boolean")


def _nodes(value: Any) -> tuple[int, int | None]:
    """``nodes``: a count, ``"MIN-MAX"``, or the spec's [min] / [min, max]."""
    if isinstance(value, list):
        if not 1 <= len(value) <= 2:
            raise _BadValue("Invalid node count")
        least = _count(value[0], 0)
        return least, _count(value[-1], least) if len(value) == 2 else least
    text = _text(value).strip()
    match = re.fullmatch(r"([0-9]{1,9})(?:-([0-9]{1,9}))?", text)
    if match is None:
        raise _BadValue(f"Invalid node count specification: {text}")
    least = int(match.group(1))
    most = int(match.group(2)) if match.group(2) else least
    if most < least:
        raise _BadValue(f"Invalid node count specification: {text}")
    return least, most


_MEMORY_UNITS = {"": 1, "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}


def _memory(value: Any) -> int:
    """MiB: a number, or a number with a K/M/G/T suffix, as sbatch --mem reads it."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _count(value, 0)
    match = re.fullmatch(r"[ \t]*([0-9]{1,15})[ \t]*([kmgtKMGT]?)[bB]?[ \t]*", _text(value))
    if match is None:
        raise _BadValue("Invalid memory specification")
    return math.ceil(int(match.group(1)) * _MEMORY_UNITS[match.group(2).lower()])


def _time_limit(value: Any) -> int | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        minutes = _integer(value)
        if minutes < 0 and minutes != -1:
            raise _BadValue("Invalid time limit specification")
        return None if minutes == -1 else minutes
    try:
        return parse_time(_text(value).strip(), unit="minutes")
    except BadValue:
        raise _BadValue("Invalid time limit specification") from None


def _hostlist(value: Any) -> tuple[str, ...]:
    words = value if isinstance(value, list) else [value]
    names: list[str] = []
    try:
        for word in words:
            names += hostlist.expand(_text(word))
    except PlurmError:
        raise _BadValue("Invalid node list specification") from None
    return tuple(names)


def _environment(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise _BadValue("environment must be a dictionary")
    pairs = []
    for key, entry in value.items():
        if isinstance(entry, (dict, list)) or entry is None:
            raise _BadValue("failure parsing environment")
        pairs.append((key, _text(entry)))
    return tuple(pairs)


def _exclusive(value: Any) -> str:
    word = _text(value).lower()
    if word not in ("user", "mcs", "true", "false", "exclusive", "oversubscribe"):
        raise _BadValue(f"Invalid exclusive specification: {word}")
    return word


def _job_fields(job: Mapping[str, Any]) -> dict[str, Any]:
    """The job description's keys, lower-cased and checked as slurmrestd checks them."""
    fields: dict[str, Any] = {}
    for key, value in job.items():
        name = key[:255].lower()
        if name in _DISABLED:
            raise _refuse(
                ESLURM_REST_FAIL_PARSING,
                error_item(
                    1, description=f'Disabled key: "{name}"', source="openapi specification"
                ),
            )
        if name not in _ACCEPTED:
            raise _refuse(
                ESLURM_REST_FAIL_PARSING,
                error_item(0, description=f'Unknown key "{name}"', source="hsearch_r"),
            )
        fields[name] = value
    return fields


def _build(script: str, fields: Mapping[str, Any]) -> SubmitRequest:
    changes: dict[str, Any] = {}
    kept: dict[str, Any] = {}
    environment: tuple[tuple[str, str], ...] = ()
    stderr = array = dependency = signal = None
    hold = False
    for name, value in fields.items():
        if name in ("name", "job_name"):
            changes["name"] = _text(value)
        elif name == "partition":
            changes["partitions"] = tuple(p for p in _text(value).split(",") if p)
        elif name == "qos":
            changes["qos"] = _text(value)
        elif name == "account":
            changes["account"] = _text(value)
        elif name == "nodes":
            changes["min_nodes"], changes["max_nodes"] = _nodes(value)
        elif name in ("tasks", "ntasks"):
            changes["ntasks"] = _count(value)
        elif name == "cpus_per_task":
            changes["cpus_per_task"] = _count(value)
        elif name == "memory_per_node":
            changes["mem_per_node"] = _memory(value)
        elif name == "memory_per_cpu":
            changes["mem_per_cpu"] = _memory(value)
        elif name == "time_limit":
            changes["time_limit"] = _time_limit(value)
        elif name == "begin_time":
            changes["begin_time"] = from_unix(_integer(value))
        elif name == "requeue":
            changes["requeue"] = _boolean(value)
        elif name == "no_requeue":
            if _boolean(value):
                changes["requeue"] = False
        elif name in ("nodelist", "node_list"):
            changes["nodelist"] = _hostlist(value)
        elif name == "exclude_nodes":
            changes["exclude"] = _hostlist(value)
        elif name == "exclusive":
            word = _exclusive(value)
            changes["exclusive"] = word in ("true", "exclusive")
            if word in ("user", "mcs"):
                kept[name] = word
        elif name in ("current_working_directory", "cwd"):
            changes["work_dir"] = _text(value)
        elif name == "standard_output":
            changes["stdout"] = _text(value)
        elif name == "standard_error":
            stderr = _text(value)
        elif name == "environment":
            environment = _environment(value)
        elif name == "array":
            array = _text(value)
        elif name == "dependency":
            dependency = _text(value)
        elif name == "hold":
            hold = _boolean(value)
        elif name == "nice":
            nice = _integer(value)
            if abs(nice) >= 2**31 - 1:
                raise _BadValue("Invalid nice value")
            changes["nice"] = nice
        elif name == "signal":
            signal = _text(value)
        else:
            kept[name] = value
    return SubmitRequest(
        script=script,
        request=JobRequest(command=script, **changes),
        environment=environment,
        stderr=stderr,
        array=array,
        dependency=dependency,
        hold=hold,
        signal=signal,
        extra=kept,
    )


def parse_job_submit(body: bytes) -> SubmitRequest:
    """POST /job/submit's body, checked as slurmrestd 22.05 checks it.

    It must be a JSON object with a ``script`` string (refused without: "Job script not
    specified", 2009) and a ``job`` object (or ``jobs``, a list; Plurm takes a list of one
    only, having no heterogeneous jobs). Other top-level keys are ignored, as slurmrestd
    ignores them; an unknown or disabled key *in the job* is refused ("Failure during
    parsing", 9001, after an entry that names the key), as is a value of the wrong type.
    The job needs a non-empty ``environment`` object ("environment must be set", 2127).
    Plurm also refuses a script that does not start with ``#!`` (sbatch's rule) and a body
    over :data:`MAX_BODY_BYTES`.
    """
    if len(body) > MAX_BODY_BYTES:
        raise _refuse(
            ESLURM_REST_FAIL_PARSING,
            error_item(0, description=f"request body larger than {MAX_BODY_BYTES} bytes"),
        )
    try:
        query = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _refuse(
            ESLURM_REST_FAIL_PARSING,
            error_item(0, description="Unable to parse query", source="JSON"),
        ) from None
    script = query.get("script") if isinstance(query, dict) else None
    if isinstance(script, (int, float)) and not isinstance(script, bool):
        script = _text(script) if isinstance(script, int) or math.isfinite(script) else None
    if not isinstance(script, str) or not script:
        raise _refuse(ESLURM_JOB_SCRIPT_MISSING)
    if not script.startswith("#!"):
        raise _refuse(
            ESLURM_JOB_SCRIPT_MISSING,
            error_item(
                0,
                description="script must start with #! followed by the path to an interpreter",
            ),
        )
    if len(script.encode("utf-8", "surrogatepass")) > MAX_SCRIPT_BYTES:
        raise _refuse(
            ESLURM_REST_FAIL_PARSING,
            error_item(0, description=f"script larger than {MAX_SCRIPT_BYTES} bytes"),
        )
    assert isinstance(query, dict)
    job = query.get("job")
    if job is None:
        job = query.get("jobs")
    if isinstance(job, list):
        if len(job) != 1:
            raise _refuse(
                ESLURM_REST_INVALID_JOBS_DESC,
                error_item(0, description="Plurm runs no heterogeneous jobs: give one job"),
            )
        job = job[0]
    if not isinstance(job, dict):
        raise _refuse(ESLURM_REST_INVALID_JOBS_DESC)
    fields = _job_fields(job)
    try:
        parsed = _build(script, fields)
    except _BadValue as error:
        raise _refuse(
            ESLURM_REST_FAIL_PARSING,
            {"error": str(error), "error_code": SLURM_ERROR},
        ) from None
    if not parsed.environment:
        raise _refuse(
            ESLURM_REST_FAIL_PARSING,
            {"error": "environment must be set", "error_code": ESLURM_ENVIRONMENT_MISSING},
        )
    return parsed
