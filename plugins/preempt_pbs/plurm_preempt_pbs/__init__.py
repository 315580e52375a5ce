"""preempt/pbs: PBS Professional's preemption, configured in PBS's own files.

The plugin reads ``sched_config`` and ``qmgr.conf`` beside slurm.conf
(:mod:`plurm_preempt_pbs.config`); a PBS queue is the partition of the same name.
"""

from __future__ import annotations

from plurm_preempt_pbs.plugin import PbsPreemption

__all__ = ["PbsPreemption"]
