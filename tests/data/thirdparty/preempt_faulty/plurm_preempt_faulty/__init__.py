"""preempt/faulty: a policy with a bug, as a plugin author might write one: the first time a
job might preempt another, ``preempt_preemptable`` divides by zero."""

from __future__ import annotations

from plurm import HOOK_API_VERSION, hookimpl
from plurm.conf.values import PreemptBase, PreemptMode

__all__ = ["Faulty"]


class Faulty:
    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context):
        self.context = context

    @hookimpl
    def preempt_preemptable(self, preemptor, preemptee, cluster):
        tiers = cluster.partition(preemptor.partition).priority_tier
        return tiers / 0 > 1

    @hookimpl
    def preempt_mode(self, job, cluster):
        return PreemptMode(PreemptBase.REQUEUE)

    @hookimpl
    def preempt_priority(self, job, cluster):
        return 0
