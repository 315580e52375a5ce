"""preempt/lsf: IBM Spectrum LSF's queue-based preemption, configured in LSF's own files.

The plugin reads ``lsb.queues`` and ``lsb.params`` beside slurm.conf
(:mod:`plurm_preempt_lsf.config`); an LSF queue is the partition of the same name.
"""

from __future__ import annotations
