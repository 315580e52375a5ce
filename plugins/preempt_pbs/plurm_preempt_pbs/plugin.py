"""preempt/pbs's hook implementations (the rules are in :mod:`plurm_preempt_pbs.policy`).

* **Who may preempt whom.** A job may preempt a running job (a suspended one has given its
  resources away already: ``preempt_candidates`` leaves it out) whose preempt priority is
  strictly lower than its own, both worked out now (soft-limit statuses change as jobs start
  and end), and, when the preemptor gives ``preempt_targets`` (and ``preempt_targets_enable``
  is on), only one in a queue it names.
* **Victim order.** Lowest preempt priority first; then, with ``preempt_sort:
  min_time_since_start``, the most recently started first, else the longest running first.
* **How.** Each victim's ladder (``preempt_methods``) is ``preempt_order``'s letters for
  its percent of walltime left: S suspends it and gives its resources to the preemptor (no
  gang scheduling; it resumes as soon as they are free), C requeues it keeping its work, R
  requeues it, D cancels it; a method that does not apply to the job (C and R to a job that
  may not be requeued) falls through to the next. Victims the preemptor does not need
  after all are dropped (the trim pass).
* **Queue order.** Higher preempt priority first, then jobs preempted earlier first, then
  the scheduler's own order.
* slurm.conf's PreemptMode is not used: the methods come from ``preempt_order``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from plurm import HOOK_API_VERSION, hookimpl
from plurm.conf.model import SlurmConfig
from plurm.conf.values import PreemptBase, PreemptMode
from plurm.errors import ConfError, ConfValueError, raise_collected
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobState
from plurm.model.select import Candidate, PreemptMethod
from plurm.registry import PluginContext
from plurm_preempt_pbs import policy
from plurm_preempt_pbs.config import PbsConfig, load

__all__ = ["PbsPreemption"]

_METHODS = {
    "S": PreemptMethod.SUSPEND,
    "C": PreemptMethod.CHECKPOINT,
    "R": PreemptMethod.REQUEUE,
    "D": PreemptMethod.CANCEL,
}
_MODES = {"S": PreemptBase.SUSPEND, "C": PreemptBase.REQUEUE, "R": PreemptBase.REQUEUE}
#: The start times the victim key orders by fit in this many bits (seconds since 1970 do
#: until the year 2106; simulated times are far smaller).
_TIME_BITS = 32
_TIME_MAX = (1 << _TIME_BITS) - 1


def conf_dir(config: SlurmConfig) -> Path:
    """The directory of slurm.conf, where PBS's files are read."""
    return Path(config.files[0]).parent if config.files else Path()


def _check_queues(pbs: PbsConfig, config: SlurmConfig) -> None:
    """Every queue qmgr.conf names must be a partition of slurm.conf."""
    partitions = {partition.name for partition in config.partitions}
    errors: list[ConfError] = []
    for queue in pbs.queues:
        if queue.name not in partitions:
            known = ", ".join(sorted(partitions)) or "none"
            errors.append(
                ConfValueError(
                    "queue",
                    queue.name,
                    f"a PBS queue is the slurm.conf partition of the same name, and there is "
                    f"no partition {queue.name!r} (partitions: {known})",
                    queue.location,
                )
            )
    raise_collected(errors)


class PbsPreemption:
    """PBS Professional's preemption policy."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.logger = logging.getLogger(context.logger_name)
        self.pbs: PbsConfig = load(conf_dir(context.config))
        _check_queues(self.pbs, context.config)
        self.levels = policy.Levels.build(self.pbs)

    # ------------------------------------------------------------------------ the rules

    def value(self, job: Job, cluster: Cluster) -> int:
        """``job``'s preempt priority now."""
        bits = policy.statuses(self.pbs, job, cluster)
        return self.levels.value(bits, policy.queue_priority(self.pbs, job))

    def _letters(self, job: Job, cluster: Cluster) -> str:
        return policy.methods(self.pbs, job, cluster)

    # -------------------------------------------------------------------------- hooks

    @hookimpl
    def preempt_enabled(self, cluster: Cluster) -> bool:
        return self.pbs.preemptive_sched

    @hookimpl
    def preempt_victims_fixed(self, cluster: Cluster) -> bool:
        return False  # soft-limit statuses and the walltime left change while jobs run

    @hookimpl
    def preempt_suspend_releases(self, cluster: Cluster) -> bool:
        return True  # S gives the victim's resources to the preemptor, no gang scheduling

    @hookimpl
    def preempt_trim_victims(self, cluster: Cluster) -> bool:
        return True

    @hookimpl
    def preempt_suspended_reserve(self, cluster: Cluster) -> bool:
        """sched_preempt_enforce_resumption: a suspended job is a top job, whose nodes no
        job queued after it may take while it waits to resume."""
        return self.pbs.sched_preempt_enforce_resumption

    @hookimpl
    def preempt_check_mode(self, mode: PreemptMode, config: SlurmConfig) -> str | None:
        if mode == PreemptMode():
            return None
        return (
            f"PreemptMode={mode} has no meaning with preempt/pbs, whose methods come from "
            "preempt_order in sched_config: leave PreemptMode out"
        )

    @hookimpl
    def preempt_preemptable(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        if not self.pbs.preemptive_sched:
            return False
        if self.pbs.preempt_targets_enable:
            targets = policy.job_targets(preemptor, self.pbs)
            if targets is not None and not targets.allows(preemptee):
                return False
        return self.value(preemptee, cluster) < self.value(preemptor, cluster)

    @hookimpl
    def preempt_candidates(
        self, preemptor: Job, candidates: Sequence[Candidate], cluster: Cluster
    ) -> Sequence[Candidate]:
        """Running jobs only: a job PBS suspended has given its resources away already.
        None of them once the scheduler has tried ``max_preempt_attempts`` times to preempt for
        ``preemptor`` (it has given up preempting for it while it waits)."""
        most = self.pbs.max_preempt_attempts
        if most is not None and preemptor.preempt_attempts >= most:
            return []
        return [c for c in candidates if c.job.state is JobState.RUNNING]

    @hookimpl
    def preempt_methods(self, job: Job, cluster: Cluster) -> Sequence[PreemptMethod]:
        return tuple(_METHODS[letter] for letter in self._letters(job, cluster))

    @hookimpl
    def preempt_mode(self, job: Job, cluster: Cluster) -> PreemptMode:
        letter = self._letters(job, cluster)[0]
        return PreemptMode(_MODES.get(letter, PreemptBase.CANCEL))

    @hookimpl
    def preempt_priority(self, job: Job, cluster: Cluster) -> int:
        start = min(max(int(job.start_time or 0), 0), _TIME_MAX)
        if self.pbs.preempt_sort == "min_time_since_start":
            start = _TIME_MAX - start  # the most recently started first
        return (self.value(job, cluster) << _TIME_BITS) + start

    @hookimpl
    def preempt_grace_time(self, job: Job, cluster: Cluster) -> int:
        return 0

    @hookimpl
    def preempt_requeue_delay(self, job: Job, cluster: Cluster) -> int:
        """A requeued (or checkpointed) victim is queued again at once, as PBS does, not
        held for Slurm's credential expiry."""
        return 0

    @hookimpl
    def preempt_job_preempt_check(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        """PBS's queue order between two pending jobs: the higher preempt priority first,
        then the one preempted earlier (a job never preempted last)."""
        mine, theirs = self.value(preemptor, cluster), self.value(preemptee, cluster)
        if mine != theirs:
            return mine > theirs
        first, second = preemptor.preempt_time, preemptee.preempt_time
        if first is None:
            return False
        return second is None or first < second
