"""Anti-thrash guards: ``PreemptParameters=max_job_preempt=N``, ``no_preempt_run_time=MIN[%]``
and ``no_preempt_finish_time=MIN[%]`` (Plurm's, with LSF's meanings), on any policy.

Each is a guard (``preempt_veto``) the core loads beside the PreemptType policy when
slurm.conf sets its option, as if plurm.conf's ``PreemptGuards`` named it:

* ``preempt/max_job_preempt``: a job preempted N times (suspended, requeued, checkpointed
  or cancelled for a preemptor) is not preempted again. The count is the core's
  (``Job.preemptions``), kept across requeues and controller restarts.
* ``preempt/no_preempt_run_time``: a job that has run MIN minutes, or MIN % of its time
  limit (a job without one is not protected by a percentage), is not preempted.
* ``preempt/no_preempt_finish_time``: a job with a time limit that will reach it within
  MIN minutes, or within MIN % of it, is not preempted (a job without one is not
  protected).

Run time is the job's own (``scontrol show job``'s RunTime: suspended stretches do not
count).
"""

from __future__ import annotations

import attrs

from plurm._markers import HOOK_API_VERSION, hookimpl
from plurm.errors import ConfValueError
from plurm.model.cluster import Cluster
from plurm.model.job import Job
from plurm.params import PluginOption
from plurm.registry import PluginContext

__all__ = ["FinishTimeGuard", "MaxJobPreempt", "RunGuard", "RunTimeGuard", "parse_run_guard"]


@attrs.frozen
class RunGuard:
    """A length of time as LSF's NO_PREEMPT_* take it: ``minutes``, or ``percent`` of the
    job's run limit (exactly one is set)."""

    minutes: int | None = None
    percent: int | None = None

    def seconds(self, limit: float | None) -> float | None:
        """The guard in seconds for a job whose run limit is ``limit`` seconds; None when
        it is a percentage and the job has no run limit."""
        if self.minutes is not None:
            return self.minutes * 60.0
        if limit is None or self.percent is None:
            return None
        return limit * self.percent / 100.0


def parse_run_guard(text: str) -> RunGuard:
    """``MIN`` (whole minutes) or ``PCT%`` (0 to 100); ValueError with the reason."""
    text = text.strip()
    if text.endswith("%"):
        number = text[:-1].strip()
        if not number.isdecimal() or int(number) > 100:
            raise ValueError(f"{text!r} is not a percentage from 0% to 100%")
        return RunGuard(percent=int(number))
    if not text.isdecimal():
        raise ValueError(f"{text!r} is not a number of minutes or a percentage (such as 50%)")
    return RunGuard(minutes=int(text))


def _limit(job: Job) -> float | None:
    """The job's time limit in seconds (None: it has none)."""
    return None if job.time_limit is None else job.time_limit * 60.0


class _TimeGuard:
    """A guard set by one ``MIN[%]`` option."""

    OPTION = ""

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        written = str(context.options.get(self.OPTION) or "")
        try:
            if not written:
                raise ValueError(f"{self.OPTION} needs a value ({self.OPTION}=MIN[%])")
            self.guard = parse_run_guard(written)
        except ValueError as error:
            raise ConfValueError(
                "PreemptParameters",
                f"{self.OPTION}={written}",
                str(error),
                context.config.preempt_parameters.locations.get(self.OPTION),
            ) from None


class RunTimeGuard(_TimeGuard):
    """``no_preempt_run_time``: spares jobs that have run long enough."""

    PLURM_HOOK_API = HOOK_API_VERSION
    OPTION = "no_preempt_run_time"
    PLURM_OPTIONS = (
        PluginOption(OPTION, kind="str", help="MIN[%]: a job that ran this long is not preempted"),
    )

    @hookimpl
    def preempt_veto(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        seconds = self.guard.seconds(_limit(preemptee))
        return seconds is not None and preemptee.run_time(cluster.now) >= seconds


class FinishTimeGuard(_TimeGuard):
    """``no_preempt_finish_time``: spares jobs close to their time limit."""

    PLURM_HOOK_API = HOOK_API_VERSION
    OPTION = "no_preempt_finish_time"
    PLURM_OPTIONS = (
        PluginOption(
            OPTION,
            kind="str",
            help="MIN[%]: a job this close to its time limit is not preempted",
        ),
    )

    @hookimpl
    def preempt_veto(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        limit = _limit(preemptee)
        if limit is None:
            return False
        seconds = self.guard.seconds(limit)
        return seconds is not None and limit - preemptee.run_time(cluster.now) <= seconds


class MaxJobPreempt:
    """``max_job_preempt``: spares jobs preempted N times already."""

    PLURM_HOOK_API = HOOK_API_VERSION
    PLURM_OPTIONS = (
        PluginOption(
            "max_job_preempt", kind="int", help="N: a job preempted N times is not preempted"
        ),
    )

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        most = context.options.get("max_job_preempt")
        if not isinstance(most, int) or most < 0:
            raise ConfValueError(
                "PreemptParameters",
                f"max_job_preempt={context.config.preempt_parameters.options.get('max_job_preempt')}",
                "max_job_preempt takes a whole number of 0 or more",
                context.config.preempt_parameters.locations.get("max_job_preempt"),
            )
        self.most = most

    @hookimpl
    def preempt_veto(self, preemptor: Job, preemptee: Job, cluster: Cluster) -> bool:
        return preemptee.preemptions >= self.most  # the core's count, kept across restarts
