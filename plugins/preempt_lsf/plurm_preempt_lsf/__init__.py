"""preempt/lsf: IBM Spectrum LSF's queue-based preemption, configured in LSF's own files.

The plugin reads ``lsb.queues`` and ``lsb.params`` beside slurm.conf
(:mod:`plurm_preempt_lsf.config`); an LSF queue is the partition of the same name (a
partition lsb.queues does not define is a queue of PRIORITY 1 without PREEMPTION).

* **Who preempts whom.** A job may preempt a job of a lower-PRIORITY queue when its queue is
  ``PREEMPTIVE`` (every lower queue, or only those it lists) or the victim's queue is
  ``PREEMPTABLE`` (by every higher queue, or only those it lists). Never within a queue.
* **Guards.** ``NO_PREEMPT_RUN_TIME`` (the victim ran this long) and
  ``NO_PREEMPT_FINISH_TIME`` (it ends within this), in minutes or as a percentage of its run
  limit, protect a victim with a run limit (its ``sbatch -t``, else its queue's RUNLIMIT);
  the queue's setting wins over lsb.params's. ``MAX_JOB_PREEMPT`` caps how often one job is
  preempted (the job's own count, ``Job.preemptions``, which survives a restart).
* **Victim order.** The preemptor queue's preference (``PREEMPTIVE[q+N]``, highest first),
  then the lower queue priority, then the least run time with
  ``PREEMPT_FOR=LEAST_RUN_TIME``, else the least-loaded host (fewest running jobs on the
  victim's nodes).
* **Action.** Suspend: the preemptor takes the victim's resources at once (no gang
  scheduling); the victim resumes as soon as they are free, not necessarily when the
  preemptor ends (hook ``preempt_suspend_releases``). ``TERMINATE_WHEN=PREEMPT`` cancels
  instead, ``JOB_CONTROLS=SUSPEND[brequeue ...]`` requeues (the job is queued again at
  once: hook ``preempt_requeue_delay``). ``PREEMPT_FOR=MINI_JOB`` (or
  ``OPTIMAL_MINI_JOB``) drops victims not needed after all.
* **Limits.** A suspended job never counts against its own association's limits in
  accounts.conf (LSF's user total), nor, with ``PREEMPT_FOR=GROUP_MAX``, against those of
  the accounts above it (a user group's total); hook ``preempt_suspended_counts``.
* slurm.conf's PreemptMode is not read and may be omitted. The other ``PREEMPT_FOR``
  slot-limit words (per processor, per host) have no effect: accounts.conf has no such
  limits.
"""

from __future__ import annotations

from plurm_preempt_lsf.plugin import LsfPreemption

__all__ = ["LsfPreemption"]
