"""What the preempt policy says about itself, for the other plugins to read.

The core asks the preempt plugin's capability hooks (``preempt_by_partition``,
``preempt_suspend_in_partition``, ``preempt_suspend_releases``) when the controller starts
and after a partition changes, and keeps the answers in
:attr:`Cluster.preempt_traits <plurm.model.cluster.Cluster>`. A select or sched plugin reads
them there instead of comparing ``PreemptType`` with a plugin's name, so a third-party policy
that answers as a shipped one does gets the same placements.
"""

from __future__ import annotations

import attrs

__all__ = ["PreemptTraits"]


@attrs.frozen
class PreemptTraits:
    """The preempt policy's answers to its capability hooks (False when unanswered)."""

    #: ``preempt_by_partition``: victims only in partitions of a strictly lower
    #: PriorityTier whose PreemptMode is not OFF (preempt/partition_prio's rule).
    by_partition: bool = False
    #: ``preempt_suspend_in_partition``: a job may suspend jobs of its own partition
    #: (preempt/qos), so partitions need a row more for the preemptor.
    suspend_in_partition: bool = False
    #: ``preempt_suspend_releases``: a job suspended by preemption gives up its resources
    #: to the preemptor (without gang scheduling) and resumes as soon as they are free;
    #: select simulates a SUSPEND candidate's removal as an admin suspension's.
    suspend_releases: bool = False
    #: ``preempt_suspended_reserve``: such a suspended job keeps its nodes from the pending
    #: jobs not queued ahead of it until it resumes.
    suspended_reserve: bool = False
