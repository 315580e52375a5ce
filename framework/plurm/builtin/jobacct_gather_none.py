"""jobacct_gather/none: gathers nothing (Slurm's default)."""

from __future__ import annotations

from plurm._markers import HOOK_API_VERSION
from plurm.registry import PluginContext


class NoGather:
    """Implements no hook: nothing is sampled, stat_job answers None."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
