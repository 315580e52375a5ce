"""jobacct_gather in a simulation: every ``JobAcctGatherFrequency`` seconds each running job
is polled through the plugin (``acct_gather_poll``, on what the job is simulated to use: a
trace's used memory), which may then name the job to end OUT_OF_MEMORY
(``acct_gather_over_memory``), as plurmd does with real processes (:mod:`plurm.live.gather`).

Built only when a loaded plugin samples: a replay with ``jobacct_gather/none`` schedules
nothing and calls nothing.
"""

from __future__ import annotations

import logging

from plurm.conf.model import SlurmConfig
from plurm.controller import Controller
from plurm.manager import Plugins
from plurm.model.job import Job, JobState
from plurm.model.usage import OOM_SIGNAL, GatherSettings
from plurm.sim.engine import SimClock
from plurm.sim.executor import SimExecutor

__all__ = ["SimGather"]

logger = logging.getLogger(__name__)


class SimGather:
    """Polls a simulation's running jobs (module doc)."""

    def __init__(
        self,
        config: SlurmConfig,
        plugins: Plugins,
        clock: SimClock,
        executor: SimExecutor,
        controller: Controller,
    ) -> None:
        self.plugins = plugins
        self.clock = clock
        self.executor = executor
        self.controller = controller
        self.frequency = GatherSettings.from_config(config.inactive).frequency
        if self.frequency > 0:
            executor.on_start = self._started
        executor.on_out_of_memory = self._ended

    def _started(self, job: Job) -> None:
        attempt = job.restarts
        self.clock.call_at(self.clock.now() + self.frequency, lambda: self._poll(job, attempt))

    def _poll(self, job: Job, attempt: int) -> None:
        if job.restarts != attempt or not job.state.holds_resources:
            return  # ended, or requeued (its next run polls anew)
        if job.state is JobState.RUNNING:
            self.plugins.acct_gather_poll(job, self.clock.now())
            if "batch" in self.plugins.acct_gather_over_memory(job.job_id):
                logger.info("job_id=%d exceeded its memory limit: OUT_OF_MEMORY", job.job_id)
                self.executor.out_of_memory(job)
                return
        self.clock.call_at(self.clock.now() + self.frequency, lambda: self._poll(job, attempt))

    def _ended(self, job_id: int) -> None:
        self.controller.job_ended(job_id, 0, OOM_SIGNAL, out_of_memory=True)
