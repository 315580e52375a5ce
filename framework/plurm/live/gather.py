"""plurmd's side of job accounting: the jobacct_gather plugin's samples of the jobs that run
on this node, and the steps it ends for their memory.

Every ``JobAcctGatherFrequency`` seconds (``task=N``; 0 samples only at a job's end and when
asked) each running job is sampled through the plugin, which then names the steps to end
OUT_OF_MEMORY (``JobAcctGatherParams=OverMemoryKill``, or a cgroup's ``memory.max``). A
batch step over its limit ends the whole job: its session is SIGKILLed and the job's end is
reported with Slurm's ``SIG_OOM`` status, which the controller turns into OUT_OF_MEMORY.
A numbered step (srun's tasks, a process group of their own in the job's session) is
SIGKILLed alone and reported OUT_OF_MEMORY at once; the job goes on. A numbered step whose
processes are gone is reported with its figures at the next sample (sacct shows a finished
step's figures while its job runs on); every step's figures go with the job's end too.

With ``jobacct_gather/none`` nothing is scheduled and nothing is called.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

import attrs

from plurm.manager import Plugins
from plurm.model.usage import GatherSettings, StepUsage

__all__ = ["INHERITED_SLACK", "NodeGather", "step_groups", "with_rusage"]

logger = logging.getLogger(__name__)

#: What the node sends when an srun step has ended (its processes are gone) or was ended
#: OUT_OF_MEMORY: (job id, step, its figures, whether it was ended for its memory).
StepReport = Callable[[int, str, StepUsage | None, bool], Awaitable[None]]


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
        #: The srun steps whose figures were sent, by job.
        self._reported: dict[int, set[str]] = {}

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
            self._reported.setdefault(job_id, set()).add(step)
            await report(job_id, step, self.plugins.acct_gather_usage(job_id).get(step), True)
        await self._ended_steps(job_id, sid, report)

    async def _ended_steps(self, job_id: int, sid: int, report: StepReport) -> None:
        """Send the figures of the srun steps whose processes are gone, once each, so that
        sacct shows a finished step's figures while its job runs on."""
        usage = self.plugins.acct_gather_usage(job_id)
        reported = self._reported.setdefault(job_id, set())
        steps = [step for step in usage if step != "batch" and step not in reported]
        if not steps:
            return
        live = step_groups(sid)
        for step in steps:
            if step not in live:
                reported.add(step)
                await report(job_id, step, usage[step], False)

    def usage(self, job_id: int) -> dict[str, StepUsage]:
        """A running job's figures, sampled now (sstat)."""
        if not self.active or job_id not in self._jobs:
            return {}
        self.plugins.acct_gather_sample(job_id, asyncio.get_running_loop().time())
        return self.plugins.acct_gather_usage(job_id)

    def end(
        self, job_id: int, rusage: resource.struct_rusage | None = None, inherited_rss: int = 0
    ) -> dict[str, StepUsage]:
        """A job's final figures (``rusage``: the batch script's, from its reaping;
        ``inherited_rss``: see :func:`with_rusage`); the job is forgotten. A batch step
        the plugin finds over its memory at the end (a cgroup whose limit the kernel
        enforced) ends the job OUT_OF_MEMORY."""
        self._reported.pop(job_id, None)
        if self._jobs.pop(job_id, None) is None:
            return {}
        if "batch" in self.plugins.acct_gather_over_memory(job_id):
            # ended over its memory since the last sample (a cgroup's limit: the kernel)
            self.out_of_memory.add(job_id)
        usage = dict(self.plugins.acct_gather_usage(job_id))
        self.plugins.acct_gather_job_end(job_id)
        if rusage is not None:
            steps = [figures for step, figures in usage.items() if step != "batch"]
            usage["batch"] = with_rusage(
                usage.get("batch"), rusage, steps, self.node, inherited_rss
            )
        return usage


#: What the forked child may add to the daemon's resident size before it execs the script
#: (bytes): a ``ru_maxrss`` no larger than the daemon's size plus this is the daemon's.
INHERITED_SLACK = 4 * 1024 * 1024


def with_rusage(
    batch: StepUsage | None,
    rusage: resource.struct_rusage,
    steps: list[StepUsage],
    node: str,
    inherited_rss: int = 0,
) -> StepUsage:
    """The batch step's figures completed with the script's own resource usage at its end
    (as slurmstepd adds a task's rusage): its largest process (``ru_maxrss``) bounds MaxRSS
    from below, and its CPU times, which count every child it waited for, less what srun's
    steps used, bound its CPU times from below. A job sampled never (it ended before the
    first period) still has figures.

    Linux carries a process's peak resident size across exec, so a script forked by a
    daemon whose peak size is ``inherited_rss`` bytes may report that much whatever it used:
    a ``ru_maxrss`` within :data:`INHERITED_SLACK` of it says nothing of the job and is left
    out (the samples speak alone then)."""
    batch = batch or StepUsage(
        max_rss_node=node, max_vmsize_node=node, max_pages_node=node, min_cpu_node=node
    )
    reaped = rusage.ru_maxrss * 1024
    if inherited_rss and reaped <= inherited_rss + INHERITED_SLACK:
        reaped = 0
    max_rss = max(batch.max_rss, reaped)
    user = max(batch.user_cpu, rusage.ru_utime - sum(step.user_cpu for step in steps))
    system = max(batch.system_cpu, rusage.ru_stime - sum(step.system_cpu for step in steps))
    total = user + system
    return attrs.evolve(
        batch,
        max_rss=max_rss,
        ave_rss=max(batch.ave_rss, float(max_rss)),
        max_pages=max(batch.max_pages, rusage.ru_majflt),
        ave_pages=max(batch.ave_pages, float(rusage.ru_majflt)),
        min_cpu=max(batch.min_cpu, total),
        ave_cpu=max(batch.ave_cpu, total),
        total_cpu=total,
        user_cpu=user,
        system_cpu=system,
    )
