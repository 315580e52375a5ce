"""A node's daemon registers: what it has against its NodeName line, and the jobs it runs
against the controller's.

As Slurm 22.05's controller validates a registration: a node that reports fewer CPUs
(sockets x cores x threads, or CPUs) or less memory than its line says is drained with
Slurm's reason (``Low socket*core*thread count, Low CPUs``; ``Low RealMemory (reported:R <
100.00% of configured:C)``), unless ``SlurmdParameters=config_overrides``. A batch job the
controller believes runs on the node but the node does not report was lost with it: it is
requeued or ends NODE_FAIL as for a node failure. A job the node runs that the controller
has settled (finished, requeued, or not its node) is killed by the node.
"""

from __future__ import annotations

from typing import Any

from plurm.controller import Controller
from plurm.live.rpc import RpcError
from plurm.live.settings import LiveSettings
from plurm.model.job import JobState
from plurm.model.usage import OOM_SIGNAL, SIG_OOM

__all__ = ["check_end", "job_ended", "register", "shortfall"]


def _count(message: dict[str, Any], key: str) -> int:
    value = message.get(key)
    if type(value) is not int or not 0 <= value < 1 << 62:
        raise RpcError(f"{key}: not a count")
    return value


#: The largest job id and attempt (restart count) a node may report (Slurm's are uint32).
_MAX_ID = 0xFFFF_FFFF


def check_end(item: object) -> tuple[int, int, int, int]:
    """A node's report of a job's end, ``[job_id, attempt, exit_code, signal]``: an exit
    code from 0 to 255 and the number of the signal that ended it (or SIG_OOM, plurmd's word
    that it ended the job for its memory); RpcError otherwise."""
    if not (isinstance(item, list) and len(item) == 4 and all(type(v) is int for v in item)):
        raise RpcError("job_id, attempt, exit_code and signal must be integers")
    job_id, attempt, code, number = item
    if not (0 <= job_id <= _MAX_ID and 0 <= attempt <= _MAX_ID):
        raise RpcError(f"job_id and attempt: not from 0 to {_MAX_ID}")
    if not (0 <= code <= 255 and (0 <= number <= 127 or number == SIG_OOM)):
        raise RpcError("exit_code: not from 0 to 255, or signal: not from 0 to 127")
    return job_id, attempt, code, number


def shortfall(settings: LiveSettings, name: str, cpus: int, memory: int) -> str | None:
    """Slurm's reason for draining a node that reports ``cpus`` and ``memory`` (MiB), or
    None when it has what its line says (or config_overrides)."""
    if settings.config_overrides:
        return None
    spec = settings.config.node(name)
    reasons = []
    if cpus < spec.sockets * spec.cores_per_socket * spec.threads_per_core:
        reasons.append("Low socket*core*thread count")
    if cpus < spec.cpus:
        reasons.append("Low CPUs")
    if memory < spec.real_memory:
        reasons.append(
            f"Low RealMemory (reported:{memory} < 100.00% of configured:{spec.real_memory})"
        )
    return ", ".join(reasons) or None


def register(
    controller: Controller, settings: LiveSettings, name: str, message: dict[str, Any]
) -> dict[str, Any]:
    """Apply a registration; the answer names the jobs the node must kill."""
    cpus = _count(message, "cpus")
    memory = _count(message, "real_memory")
    reported = message.get("jobs")
    if not isinstance(reported, list) or not all(
        isinstance(item, list) and len(item) == 2 and all(type(v) is int for v in item)
        for item in reported
    ):
        raise RpcError("jobs: not a list of [job_id, attempt] pairs")
    running = {(job_id, attempt) for job_id, attempt in reported}
    items = message.get("ended", [])
    if not isinstance(items, list):
        raise RpcError("ended: not a list of [job_id, attempt, exit_code, signal]")
    ended = [check_end(item) for item in items]
    reason = shortfall(settings, name, cpus, memory)
    cluster = controller.cluster
    condition = cluster.node_down.get(name)
    if reason is not None and not (condition is not None and (condition.down or condition.drain)):
        controller.update_nodes([name], "DRAIN", reason)
    controller.node_registered(name)
    for job_id, attempt, code, number in ended:
        job_ended(controller, name, job_id, attempt, code, number)
    kill = []
    for job_id, attempt in sorted(running):
        job = cluster.jobs.get(job_id)
        if (
            job is None
            or job.restarts != attempt
            or not job.state.holds_resources
            or not job.nodes
            or job.nodes[0] != name
        ):
            kill.append([job_id, attempt])
    lost = [
        job
        for job in cluster.allocated()
        if job.nodes and job.nodes[0] == name and (job.job_id, job.restarts) not in running
    ]
    for job in lost:
        if job.state is JobState.COMPLETING:
            # killed, and its processes are gone: the kill's end
            controller.job_ended(job.job_id, 0, 9)
        else:
            controller.job_lost(job.job_id)
    return {"kill": kill}


def job_ended(
    controller: Controller, name: str, job_id: int, attempt: int, code: int, signal: int
) -> bool:
    """Apply a node's report that a job's processes ended; False for a report about an
    attempt the controller has settled already (a repeat after a lost answer)."""
    job = controller.cluster.jobs.get(job_id)
    if (
        job is None
        or job.restarts != attempt
        or not job.state.holds_resources
        or not job.nodes
        or job.nodes[0] != name
    ):
        return False
    if signal == SIG_OOM:  # its batch step was ended for its memory (plurmd's gather)
        controller.job_ended(job_id, code, OOM_SIGNAL, out_of_memory=True)
    else:
        controller.job_ended(job_id, code, signal)
    return True
