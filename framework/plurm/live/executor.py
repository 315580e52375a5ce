"""The controller's executor in live mode: what it decides goes to the nodes' ``plurmd``.

It implements :class:`plurm.controller.runtime.Executor`. Its methods return at once: each
queues a message, and the daemon sends the queue (:meth:`LiveExecutor.flush`) only after it
has committed the state the controller reached, so that no node acts on a decision a crash
could forget. A batch script and its steps run on the job's batch host (its first node);
the job's other nodes run nothing of it, so a kill frees them at once
(``Controller.nodes_released``), as Slurm 22.05 does for a batch job without steps there.

Node health: every ``plurmd`` sends a heartbeat each second. :meth:`ping` answers with the
nodes heard from within :data:`FRESH` seconds; a node that falls silent is reported to the
controller (``nodes_may_be_silent``), whose ping rounds then flag it and, after
SlurmdTimeout, set it DOWN.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import signal as signal_mod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from plurm.gather.memlimit import memory_limit
from plurm.live.rpc import AsyncRpc, RpcError
from plurm.live.settings import LiveSettings
from plurm.model.job import Job, JobState

if TYPE_CHECKING:
    from plurm.controller import Controller

__all__ = ["FRESH", "LiveExecutor"]

logger = logging.getLogger(__name__)

#: Seconds since its last heartbeat within which a node counts as answering.
FRESH = 3.0
#: The signals Plurm sends by name, as numbers.
SIGNALS = {
    "HUP": 1,
    "INT": 2,
    "QUIT": 3,
    "KILL": 9,
    "USR1": 10,
    "USR2": 12,
    "TERM": 15,
    "CONT": 18,
    "STOP": 19,
    "TSTP": 20,
}


class LiveExecutor:
    """Implements :class:`plurm.controller.runtime.Executor` over RPC to ``plurmd``."""

    def __init__(self, settings: LiveSettings, rpc: AsyncRpc, loop: asyncio.AbstractEventLoop):
        self.settings = settings
        self.rpc = rpc
        self.loop = loop
        self.controller: Controller | None = None
        #: Messages decided but not sent: (node, method, message).
        self._outbox: list[tuple[str, str, dict[str, Any]]] = []
        #: The loop time each node was last heard from.
        self.last_heard: dict[str, float] = {}
        self._silent: set[str] = set()
        #: Called after the controller acted on a failed send (the daemon commits then).
        self.after: Callable[[], None] = lambda: None
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ node health

    def heard(self, name: str) -> None:
        self.last_heard[name] = self.loop.time()
        self._silent.discard(name)

    def ping(self, names: Sequence[str]) -> frozenset[str]:
        now = self.loop.time()
        heard = self.last_heard
        return frozenset(n for n in names if now - heard.get(n, -math.inf) <= FRESH)

    def check_silence(self) -> None:
        """Tell the controller when a node that was heard from falls silent."""
        now = self.loop.time()
        newly = [
            name
            for name, when in self.last_heard.items()
            if now - when > FRESH and name not in self._silent
        ]
        if newly and self.controller is not None:
            self._silent.update(newly)
            logger.warning("nodes silent: %s", ",".join(newly))
            self.controller.nodes_may_be_silent()

    # ------------------------------------------------------------------ Executor

    def ends_by(self, job: Job) -> float | None:
        return None  # real processes end when they end

    def start(self, job: Job) -> None:
        self._outbox.append((job.nodes[0], "launch", self.launch_message(job)))

    def suspend(self, job: Job) -> None:
        self._to_batch_host(job, "suspend", {})

    def resume(self, job: Job) -> None:
        self._to_batch_host(job, "resume", {})

    def signal(
        self, job: Job, signal: str, *, steps_only: bool = False, batch_only: bool = False
    ) -> None:
        name = signal.upper().removeprefix("SIG")
        number = SIGNALS.get(name, getattr(signal_mod.Signals, f"SIG{name}", None))
        if number is None:
            logger.warning("job_id=%d: no signal %s", job.job_id, signal)
            return
        scope = {"steps_only": steps_only, "batch_only": batch_only}
        self._to_batch_host(job, "signal", {"signal": number, **scope})

    def kill(self, job: Job, kill_wait: int) -> None:
        self._to_batch_host(job, "kill", {"kill_wait": kill_wait})
        others = job.nodes[1:]
        controller = self.controller
        if others and controller is not None:
            job_id = job.job_id
            controller.timer.call_at(
                controller.now, lambda: controller.nodes_released(job_id, others)
            )

    def _to_batch_host(self, job: Job, method: str, message: dict[str, Any]) -> None:
        if job.nodes:
            body = {"job_id": job.job_id, "attempt": job.restarts, **message}
            self._outbox.append((job.nodes[0], method, body))

    # ------------------------------------------------------------------ sending

    def flush(self) -> None:
        """Send what was decided (after the state is committed)."""
        outbox, self._outbox = self._outbox, []
        for node, method, message in outbox:
            task = self.loop.create_task(self._send(node, method, message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, node: str, method: str, message: dict[str, Any]) -> None:
        place = self.settings.nodes[node]
        try:
            answer = await self.rpc.call(place.url, method, message)
        except RpcError as error:
            logger.warning(
                "node=%s %s job_id=%s failed: %s",
                node,
                method,
                message.get("job_id"),
                error.message,
            )
            answer = {"known": False, "error": error.message}
        if not isinstance(answer, dict):
            return
        if method == "launch" and answer.get("error"):
            self._launch_failed(message, str(answer["error"]))
        elif method == "kill" and answer.get("known") is False:
            # the node has no such process (it never ran, or its end was already reported)
            self._gone(message["job_id"], message["attempt"])

    def _launch_failed(self, message: dict[str, Any], error: str) -> None:
        """A batch job its node could not start ends FAILED (exit code 1), as a job whose
        slurmstepd fails to set it up does."""
        logger.error("job_id=%s launch failed: %s", message["job_id"], error)
        self._gone(message["job_id"], message["attempt"], exit_code=1)

    def _gone(self, job_id: int, attempt: int, exit_code: int = 0, signal: int = 9) -> None:
        controller = self.controller
        if controller is None:
            return
        try:
            job = controller.cluster.job(job_id)
        except KeyError:
            return
        if job.restarts != attempt or not job.state.holds_resources:
            return
        if job.state is JobState.COMPLETING:
            controller.job_ended(job_id, 0, signal)
        else:
            controller.job_ended(job_id, exit_code, 0)
        self.after()

    # ------------------------------------------------------------------ messages

    def launch_message(self, job: Job) -> dict[str, Any]:
        """What the batch host needs to run the job, and the environment facts about it."""
        request = job.request
        config = self.settings.config
        batch_host = job.nodes[0]
        if job.units is not None:
            cpus_here = sum(1 for node, _ in job.units if node == batch_host)
        else:
            cpus_here = config.node(batch_host).cpus
        return {
            "job_id": job.job_id,
            "attempt": job.restarts,
            "name": job.name,
            "user": request.user,
            "uid": request.uid,
            "gid": request.gid,
            "group": request.group,
            "script": request.script,
            "args": list(request.script_args),
            "work_dir": request.work_dir,
            "stdout": request.stdout,
            "stderr": request.stderr,
            "open_mode": request.open_mode,
            "environment": list(request.environment),
            "partition": job.partition,
            "account": job.account,
            "qos": job.qos,
            "nodes": list(job.nodes),
            "cpus_on_node": cpus_here,
            "ntasks": request.tasks,
            "cpus_per_task": request.cpus_per_task,
            "mem_per_node": request.mem_per_node,
            "mem_limit": memory_limit(job, cpus_here, config),
            "submit_host": request.submit_host,
            "cluster_name": config.cluster_name,
            "restart_count": job.restarts,
            "time_limit": job.time_limit,
            **_array_facts(job),
            **_gpu_facts(job, batch_host),
        }


def _gpu_facts(job: Job, node: str) -> dict[str, list[int] | int]:
    """The GPU indexes the job holds on ``node`` (``gpus``), only for a job given some; its
    ``--cpus-per-gpu`` and ``--mem-per-gpu`` (MiB) when it gave them."""
    facts: dict[str, list[int] | int] = {}
    gres = job.request.gres_request
    if gres is not None and gres.cpus_per_gpu is not None:
        facts["cpus_per_gpu"] = gres.cpus_per_gpu
    if gres is not None and gres.mem_per_gpu is not None:
        facts["mem_per_gpu"] = gres.mem_per_gpu
    if not job.gres_alloc:
        return facts
    indexes = sorted(
        i for u in job.gres_alloc if u.node == node and u.name == "gpu" for i in u.indexes
    )
    return {**facts, "gpus": indexes} if indexes else facts


def _array_facts(job: Job) -> dict[str, int | None]:
    """An array task's SLURM_ARRAY_* facts: its array's id, its task id, and the whole
    array's task count, lowest and highest id and step (the spacing of the ids when it is
    even, else 1); all None for a job that is not an array task."""
    tasks = job.request.array_tasks
    if job.array_job_id is None or job.array_task_id is None or not tasks:
        keys = ("job_id", "task_id", "task_count", "task_min", "task_max", "task_step")
        return {f"array_{key}": None for key in keys}
    gaps = {later - earlier for earlier, later in itertools.pairwise(tasks)}
    return {
        "array_job_id": job.array_job_id,
        "array_task_id": job.array_task_id,
        "array_task_count": len(tasks),
        "array_task_min": tasks[0],
        "array_task_max": tasks[-1],
        "array_task_step": gaps.pop() if len(gaps) == 1 else 1,
    }
