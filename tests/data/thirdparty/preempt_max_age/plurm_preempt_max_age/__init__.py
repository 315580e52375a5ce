"""preempt/max_age: a guard that spares a victim once it has run ``max_age`` seconds.

Listed in plurm.conf (``PreemptGuards=preempt/max_age``) beside any PreemptType policy; set
``PreemptParameters=max_age=SECONDS`` in slurm.conf (default 3600).
"""

from __future__ import annotations

from plurm import HOOK_API_VERSION, hookimpl
from plurm.params import PluginOption

__all__ = ["MaxAge"]


class MaxAge:
    PLURM_HOOK_API = HOOK_API_VERSION
    PLURM_OPTIONS = (
        PluginOption(
            "max_age", kind="int", default=3600, help="seconds after which a job is no victim"
        ),
    )

    def __init__(self, context):
        self.max_age = context.options["max_age"]

    @hookimpl
    def preempt_veto(self, preemptor, preemptee, cluster):
        return preemptee.run_time(cluster.now) >= self.max_age
