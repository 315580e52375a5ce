"""plurmd's side of job accounting: the jobacct_gather plugin's samples of the jobs that run
on this node, and the steps it ends for their memory.

Every ``JobAcctGatherFrequency`` seconds (``task=N``; 0 samples only at a job's end and when
asked) each running job is sampled through the plugin, which then names the steps to end
OUT_OF_MEMORY (``JobAcctGatherParams=OverMemoryKill``, or a cgroup's ``memory.max``). A
batch step over its limit ends the whole job: its session is SIGKILLed and the job's end is
reported with Slurm's ``SIG_OOM`` status, which the controller turns into OUT_OF_MEMORY.
A numbered step (srun's tasks, a process group of their own in the job's session) is
SIGKILLed alone and reported OUT_OF_MEMORY at once; the job goes on.

With ``jobacct_gather/none`` nothing is scheduled and nothing is called.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

from plurm.manager import Plugins
from plurm.model.usage import GatherSettings, StepUsage

__all__ = ["NodeGather", "step_groups"]

logger = logging.getLogger(__name__)

#: What the node sends when a step ended OUT_OF_MEMORY: (job id, step, its usage).
StepReport = Callable[[int, str, dict[str, StepUsage]], Awaitable[None]]


def step_groups(sid: int) -> dict[str, int]:
    """The srun steps of session ``sid``: step id -> process group, from the environment
    srun gives its tasks (SLURM_STEP_ID). Processes of the session's own group (the batch
    script, srun itself) are the batch step's."""
    found: dict[str, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            data = Path(f"/proc/{name}/stat").read_bytes()
            fields = data[data.rfind(b")") + 2 :].split()
            pgid, session = int(fields[2]), int(fields[3])
        except (OSError, IndexError, ValueError):
            continue
        if session != sid or pgid == sid or pgid in found.values():
            continue
        step = _environ_value(int(name), b"SLURM_STEP_ID")
        if step is not None:
            found[step] = pgid
    return found


def _environ_value(pid: int, key: bytes) -> str | None:
    try:
        data = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    for item in data.split(b"\0"):
        name, equals, value = item.partition(b"=")
        if equals and name == key:
            return value.decode(errors="replace")
    return None


class NodeGather:
    """The samples of one node's jobs (module doc)."""

    def __init__(self, plugins: Plugins, node: str, settings: GatherSettings) -> None:
        self.plugins = plugins
        self.node = node
        self.settings = settings
        self.active = plugins.acct_gather_active()
        #: job id -> (session id, what to call to end the whole job as OUT_OF_MEMORY).
        self._jobs: dict[int, tuple[int, Callable[[], object]]] = {}
        #: Jobs whose batch step was ended for its memory.
        self.out_of_memory: set[int] = set()
        self._task: asyncio.Task[None] | None = None

    def start(
        self, job_id: int, sid: int, mem_limit_mib: int | None, kill: Callable[[], object]
    ) -> None:
        """Follow a job that started here (``kill`` ends it at once)."""
        if not self.active:
            return
        self._jobs[job_id] = (sid, kill)
        limit = mem_limit_mib * 1024 * 1024 if mem_limit_mib else None
        self.plugins.acct_gather_job_start(job_id, sid, limit, self.node)

    def run(self, report: StepReport) -> None:
        """Start sampling every JobAcctGatherFrequency seconds (on the running loop)."""
        if self.active and self.settings.frequency > 0 and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(report))

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _loop(self, report: StepReport) -> None:
        while True:
            await asyncio.sleep(self.settings.frequency)
            now = asyncio.get_running_loop().time()
            for job_id in list(self._jobs):
                try:
                    await self.sample(job_id, report, now)
                except Exception:  # a plugin's failure must not stop the daemon's sampling
                    logger.exception("acct_gather failed job_id=%d", job_id)

    async def sample(self, job_id: int, report: StepReport, now: float) -> None:
        """Sample one job (jobs sampled together share ``now``) and end the steps over
        their memory."""
        held = self._jobs.get(job_id)
        if held is None:
            return
        sid, kill = held
        self.plugins.acct_gather_sample(job_id, now)
        for step in self.plugins.acct_gather_over_memory(job_id):
            if step == "batch":
                if job_id not in self.out_of_memory:
                    logger.warning("job_id=%d exceeded its memory limit: killed (OOM)", job_id)
                    self.out_of_memory.add(job_id)
                    kill()
                continue
            group = step_groups(sid).get(step)
            if group is None:
                continue
            logger.warning(
                "job_id=%d step=%s exceeded its memory limit: killed (OOM)", job_id, step
            )
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGKILL)
            usage = self.plugins.acct_gather_usage(job_id)
            await report(job_id, step, {step: usage[step]} if step in usage else {})

    def usage(self, job_id: int) -> dict[str, StepUsage]:
        """A running job's figures, sampled now (sstat)."""
        if not self.active or job_id not in self._jobs:
            return {}
        self.plugins.acct_gather_sample(job_id, asyncio.get_running_loop().time())
        return self.plugins.acct_gather_usage(job_id)

    def end(self, job_id: int) -> dict[str, StepUsage]:
        """A job's final figures; the job is forgotten."""
        if self._jobs.pop(job_id, None) is None:
            return {}
        usage = self.plugins.acct_gather_usage(job_id)
        self.plugins.acct_gather_job_end(job_id)
        return usage
