"""preempt/lsf's hook implementations: LSF's queue relations, victim order, run-time
guards and suspension (see the package docstring for the rules)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from plurm import HOOK_API_VERSION, hookimpl
from plurm.conf.model import SlurmConfig
from plurm.conf.values import PreemptBase, PreemptMode
from plurm.errors import ConfError, raise_collected
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState
from plurm.model.select import Candidate, PreemptMethod
from plurm.registry import PluginContext
from plurm_preempt_lsf.config import Guard, LsfConfig, LsfQueue, load

__all__ = ["LsfPreemption"]

#: A partition that lsb.queues does not define: LSF's defaults (PRIORITY 1, no PREEMPTION).
_PLAIN = LsfQueue(name="")

_SUSPEND = (PreemptMethod.SUSPEND,)
_REQUEUE = (PreemptMethod.REQUEUE,)
_CANCEL = (PreemptMethod.CANCEL,)


def conf_dir(context: PluginContext) -> Path:
    """The directory of slurm.conf, where LSF's files are read."""
    files = context.config.files
    return Path(files[0]).parent if files else Path()


class LsfPreemption:
    """LSF's queue-based preemption policy."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.logger = logging.getLogger(context.logger_name)
        self.lsf: LsfConfig = load(conf_dir(context))
        partitions = {part.name for part in context.config.partitions}
        raise_collected(
            [
                ConfError(
                    f"queue {queue.name} is no partition of slurm.conf "
                    "(an LSF queue is the partition of the same name)",
                    queue.location,
                )
                for queue in self.lsf.queues
                if queue.name not in partitions
            ]
        )
        self._queues = {queue.name: queue for queue in self.lsf.queues}

    # ----------------------------------------------------------------------------- rules

    def queue(self, job: Job) -> LsfQueue:
        return self._queues.get(job.partition, _PLAIN)

    def _queue_preempts(self, mine: LsfQueue, theirs: LsfQueue) -> bool:
        """Whether a job of ``mine`` may preempt one of ``theirs``, by the queues alone: a
        preemptive queue preempts the lower queues it lists (all lower ones without a
        list); a preemptable queue is preempted by the higher queues it lists (all higher
        ones without a list), preemptive or not."""
        if mine.name == theirs.name or mine.priority <= theirs.priority:
            return False
        if mine.preemptive and (
            not mine.preemptive_targets
            or any(target.queue == theirs.name for target in mine.preemptive_targets)
        ):
            return True
        return theirs.preemptable and (
            not theirs.preemptable_by or mine.name in theirs.preemptable_by
        )

    def run_limit(self, job: Job) -> int | None:
        """The job's run limit in seconds: its time limit (its -t, or its queue's RUNLIMIT,
        which became its time limit at submission), else its queue's RUNLIMIT (a job
        submitted before the queue had one)."""
        if job.time_limit is not None:
            return job.time_limit * 60
        return self.queue(job).run_limit

    def _guard(self, queue: LsfQueue, name: str) -> Guard | None:
        own: Guard | None = getattr(queue, name)
        return own if own is not None else getattr(self.lsf.params, name)

    def protected(self, job: Job, now: float) -> bool:
        """Whether the NO_PREEMPT_* guards or MAX_JOB_PREEMPT keep ``job`` from being a
        victim (the queue's settings over lsb.params's). The run-time guards need a run
        limit, as LSF's do."""
        queue = self.queue(job)
        most = queue.max_job_preempt
        if most is None:
            most = self.lsf.params.max_job_preempt
        if most is not None and job.preemptions >= most:  # (the core's count, persisted)
            return True
        limit = self.run_limit(job)
        if limit is None:
            return False
        ran = job.run_time(now)
        run_guard = self._guard(queue, "no_preempt_run_time")
        if run_guard is not None:
            seconds = run_guard.seconds(limit)
            if seconds is not None and ran >= seconds:
                return True
        finish_guard = self._guard(queue, "no_preempt_finish_time")
        if finish_guard is not None:
            seconds = finish_guard.seconds(limit)
            if seconds is not None and limit - ran <= seconds:
                return True
        return False

    def methods(self, job: Job) -> tuple[PreemptMethod, ...]:
        """Suspend, unless the victim's queue ends preempted jobs (TERMINATE_WHEN=PREEMPT)
        or requeues them (JOB_CONTROLS=SUSPEND[brequeue ...])."""
        queue = self.queue(job)
        if "PREEMPT" in queue.terminate_when:
            return _CANCEL
        action = queue.job_controls_suspend
        if action is not None and "brequeue" in action.lower():
            return _REQUEUE
        return _SUSPEND

    # ----------------------------------------------------------------------------- hooks

    @hookimpl
    def plurm_job_default_time_limit(
        self, request: JobRequest, partition: str, cluster: Cluster
    ) -> int | None:
        """A job without -t gets its queue's RUNLIMIT (the default, else the maximum) as
        its time limit, as LSF kills a job at its queue's run limit."""
        queue = self._queues.get(partition)
        if queue is None or queue.run_limit is None:
            return None
        return -(-queue.run_limit // 60)

    @hookimpl
    def preempt_enabled(self, cluster: Cluster) -> bool:
        return any(queue.preemptive or queue.preemptable for queue in self.lsf.queues)

    @hookimpl
    def preempt_suspend_releases(self, cluster: Cluster) -> bool:
        return True  # the preemptor takes the victim's slots; the victim resumes when free

    @hookimpl
    def preempt_trim_victims(self, cluster: Cluster) -> bool:
        # MINI_JOB, OPTIMAL_MINI_JOB: preempt just enough jobs for a parallel preemptor
        return bool(self.lsf.params.preempt_for & {"MINI_JOB", "OPTIMAL_MINI_JOB"})

    @hookimpl
    def preempt_suspended_counts(self, job: Job, scope: str, cluster: Cluster) -> bool:
        """With preemption, LSF never counts a suspended job against its user's own total
        (a user's association here); against a user group's total (an account above) only
        unless PREEMPT_FOR has GROUP_MAX. (GROUP_JLP, USER_JLP and HOST_JLU are per
        processor or per host: accounts.conf has no such limits.)"""
        if scope == "user":
            return False
        return "GROUP_MAX" not in self.lsf.params.preempt_for

    @hookimpl
    def preempt_check_mode(self, mode: PreemptMode, config: SlurmConfig) -> str | None:
        return None  # LSF's files say how jobs are preempted; PreemptMode is not read

    @hookimpl
    def preempt_preemptable(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        if not self._queue_preempts(self.queue(preemptor), self.queue(preemptee)):
            return False
        return not self.protected(preemptee, cluster.now)

    @hookimpl
    def preempt_methods(self, job: Job, cluster: Cluster) -> tuple[PreemptMethod, ...]:
        return self.methods(job)

    @hookimpl
    def preempt_mode(self, job: Job, cluster: Cluster) -> PreemptMode:
        method = self.methods(job)[0]
        if method is PreemptMethod.CANCEL:
            return PreemptMode(PreemptBase.CANCEL)
        if method is PreemptMethod.REQUEUE:
            return PreemptMode(PreemptBase.REQUEUE)
        return PreemptMode(PreemptBase.SUSPEND)

    @hookimpl
    def preempt_priority(self, job: Job, cluster: Cluster) -> int:
        return self.queue(job).priority  # lower queues first (preempt_candidates refines it)

    @hookimpl
    def preempt_candidates(
        self, preemptor: Job, candidates: Sequence[Candidate], cluster: Cluster
    ) -> list[Candidate]:
        """Queue preference (+N of the preemptor's PREEMPTIVE list, highest first), then
        the lower queue priority, then the least run time (PREEMPT_FOR=LEAST_RUN_TIME) or
        the least-loaded host (fewest running jobs on the victim's busiest node)."""
        mine = self.queue(preemptor)
        now = cluster.now
        if "LEAST_RUN_TIME" in self.lsf.params.preempt_for:

            def last(candidate: Candidate) -> float:
                return candidate.job.run_time(now)

        else:
            load: dict[str, int] = {}
            for job in cluster.jobs_unordered(JobState.RUNNING):
                for name in job.nodes:
                    load[name] = load.get(name, 0) + 1

            def last(candidate: Candidate) -> float:
                return max((load.get(name, 0) for name in candidate.job.nodes), default=0)

        def key(candidate: Candidate) -> tuple[int, int, float, int]:
            theirs = self.queue(candidate.job)
            return (
                -mine.preference(theirs.name),
                theirs.priority,
                last(candidate),
                candidate.job_id,
            )

        return sorted(candidates, key=key)

    @hookimpl
    def preempt_grace_time(self, job: Job, cluster: Cluster) -> int:
        return 0

    @hookimpl
    def preempt_requeue_delay(self, job: Job, cluster: Cluster) -> int:
        """A requeued (or checkpointed) victim is queued again at once, as LSF does, not
        held for Slurm's credential expiry."""
        return 0

    @hookimpl
    def preempt_job_preempt_check(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        """LSF schedules its queues in PRIORITY order: a job of a higher queue goes ahead
        (whether or not it may preempt the other)."""
        return self.queue(preemptor).priority > self.queue(preemptee).priority
