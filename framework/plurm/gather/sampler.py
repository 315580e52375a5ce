"""A jobacct_gather plugin's node hooks over :mod:`.procfs` and :mod:`.tally`, for plugins
to subclass (jobacct_gather/linux is this and nothing more).

Every ``JobAcctGatherFrequency`` seconds plurmd samples its jobs through the hooks: the
processes of every job are read from /proc (one scan for all the jobs sampled at the same
moment) and added to the job's :class:`~plurm.gather.tally.JobTally`. With
``JobAcctGatherParams=OverMemoryKill`` a step whose RSS on the node goes over the job's
memory limit is named, once, to be ended OUT_OF_MEMORY.

In a simulation there are no processes: :func:`acct_gather_poll` takes what the job is
simulated to use (``JobRequest.sim_mem_per_cpu``, a trace's used memory, times its CPUs on
its batch host) and, with OverMemoryKill, names a job over its limit (:mod:`plurm.sim.gather`
ends it OUT_OF_MEMORY).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from plurm._markers import HOOK_API_VERSION, hookimpl
from plurm.gather.memlimit import batch_host_cpus, memory_limit
from plurm.gather.procfs import ProcStat, scan
from plurm.gather.tally import JobTally
from plurm.model.job import Job
from plurm.model.usage import GatherSettings, StepUsage
from plurm.registry import PluginContext

__all__ = ["ProcessGather"]


class ProcessGather:
    """Hook implementations that sample each job's processes in /proc (module doc); a
    plugin subclasses it."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.logger = logging.getLogger(context.logger_name)
        self.settings = GatherSettings.from_config(context.config.inactive)
        self.jobs: dict[int, JobTally] = {}
        #: Steps already named over their memory, by job.
        self._named: dict[int, set[str]] = {}
        self._scanned_at: float | None = None
        self._scan: dict[int, list[ProcStat]] = {}
        #: Simulation: the largest memory each job was polled at (MiB on its batch host),
        #: and the jobs found over their limit.
        self._simulated: dict[int, int] = {}
        self._sim_over: set[int] = set()

    # ---- on a node

    @hookimpl
    def acct_gather_job_start(
        self, job_id: int, sid: int, mem_limit: int | None, node: str
    ) -> None:
        self.jobs[job_id] = JobTally(job_id, sid, mem_limit, node)
        self._named[job_id] = set()

    @hookimpl
    def acct_gather_sample(self, job_id: int, now: float) -> None:
        tally = self.jobs.get(job_id)
        if tally is None:
            return
        if self._scanned_at != now or tally.sid not in self._scan:
            # one scan of /proc for every job sampled at this moment
            self._scan = scan({job.sid for job in self.jobs.values()})
            self._scanned_at = now
        tally.add(self._scan.get(tally.sid, ()))

    @hookimpl
    def acct_gather_usage(self, job_id: int) -> Mapping[str, StepUsage] | None:
        tally = self.jobs.get(job_id)
        return None if tally is None else tally.usage()

    @hookimpl
    def acct_gather_over_memory(self, job_id: int) -> list[str] | None:
        tally = self.jobs.get(job_id)
        if tally is None and job_id in self._sim_over:
            self._sim_over.discard(job_id)
            return ["batch"]
        if tally is None or not self.settings.over_memory_kill:
            return None
        named = self._named[job_id]
        over = [step for step in tally.over_limit() if step not in named]
        for step in over:
            self.logger.warning(
                "job_id=%d step=%s exceeded memory limit (%d > %d), being killed",
                job_id,
                step,
                tally.step_rss[step],
                tally.mem_limit or 0,
            )
        named.update(over)
        return over

    @hookimpl
    def acct_gather_job_end(self, job_id: int) -> None:
        self.jobs.pop(job_id, None)
        self._named.pop(job_id, None)
        self._scanned_at = None

    # ---- in a simulation: no processes, what the job is simulated to use

    @hookimpl
    def acct_gather_poll(self, job: Job, now: float) -> None:
        per_cpu = job.request.sim_mem_per_cpu
        if per_cpu is None or not job.nodes:
            return
        config = self.context.config
        cpus = batch_host_cpus(job, config)
        used = per_cpu * cpus
        self._simulated[job.job_id] = max(used, self._simulated.get(job.job_id, 0))
        if self.settings.over_memory_kill:
            limit = memory_limit(job, cpus, config)
            if limit is not None and used > limit:
                self._sim_over.add(job.job_id)

    @hookimpl
    def acct_gather_stat_job(self, job: Job) -> dict[str, float] | None:
        used = self._simulated.get(job.job_id)
        return None if used is None else {"max_rss_mib": float(used)}
