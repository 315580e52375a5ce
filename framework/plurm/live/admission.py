"""What ``plurmctld`` takes as a job request from the network: the values sbatch can send.

The codec (:mod:`.codec`) checks a request's types; sbatch checks its values before it
sends one. A request that did not come from sbatch may carry any value of the right type:
a nice that pushes the job's priority past 64 bits (the saved state would no longer read
back), no CPUs per task, a NUL inside a path. :func:`check_request` refuses those with an
RpcError naming the field, before the controller sees the request.
"""

from __future__ import annotations

import math

from plurm.live.rpc import MAX_ID, RpcError
from plurm.model.job import JobRequest
from plurm.numbers import INT32_MAX, MAX_BEGIN_SECONDS, MAX_TIME_MINUTES

__all__ = ["NICE_LIMIT", "check_request"]

#: sbatch's bound on --nice (either way).
NICE_LIMIT = 2147483645
#: The largest memory size in MiB a request may carry.
_MAX_MEMORY = (1 << 63) - 1


def _refuse(field: str, what: str) -> RpcError:
    return RpcError(f"bad job request: {field}: {what}")


def _within(request: JobRequest, field: str, low: int, high: int, *, none: bool = False) -> None:
    value = getattr(request, field)
    if value is None and none:
        return
    if value is None or not low <= value <= high:
        raise _refuse(field, f"not from {low} to {high}")


def _texts(request: JobRequest) -> None:
    for field in (
        "name",
        "user",
        "group",
        "qos",
        "account",
        "command",
        "work_dir",
        "stdout",
        "stderr",
        "script",
        "submit_host",
    ):
        value = getattr(request, field)
        if value is not None and "\0" in value:
            raise _refuse(field, "contains a NUL character")
    for field in ("partitions", "nodelist", "exclude", "script_args", "environment"):
        if any("\0" in item for item in getattr(request, field)):
            raise _refuse(field, "contains a NUL character")


def check_request(request: JobRequest) -> None:
    """Refuse (RpcError) a request with a value sbatch could not have sent."""
    _within(request, "min_nodes", 0, INT32_MAX)
    _within(request, "max_nodes", max(request.min_nodes, 0), INT32_MAX, none=True)
    _within(request, "ntasks", 1, INT32_MAX, none=True)
    _within(request, "cpus_per_task", 1, INT32_MAX)
    _within(request, "mem_per_node", 1, _MAX_MEMORY, none=True)
    _within(request, "mem_per_cpu", 1, _MAX_MEMORY, none=True)
    _within(request, "time_limit", 0, MAX_TIME_MINUTES, none=True)
    _within(request, "nice", -NICE_LIMIT, NICE_LIMIT)
    _within(request, "uid", 0, MAX_ID)
    _within(request, "gid", 0, MAX_ID)
    begin = request.begin_time
    if begin is not None and not (math.isfinite(begin) and abs(begin) <= MAX_BEGIN_SECONDS):
        raise _refuse("begin_time", f"not within {MAX_BEGIN_SECONDS} seconds of the epoch")
    if request.open_mode not in ("truncate", "append"):
        raise _refuse("open_mode", "not truncate or append")
    _texts(request)
