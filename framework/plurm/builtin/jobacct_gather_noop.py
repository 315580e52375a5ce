"""jobacct_gather/linux and jobacct_gather/cgroup: accepted, with no effect in Plurm.

Slurm's gatherers sample each task's usage from /proc or the cgroup tree. A simulated job
has no processes to sample, so these load as explicit no-ops: a configuration that names
them (most real ones do) replays as it is, and the first load of each says so once in the
log. The job records keep no usage figures, as with jobacct_gather/none.
"""

from __future__ import annotations

import logging

from plurm._markers import HOOK_API_VERSION
from plurm.registry import PluginContext

__all__ = ["NoEffectGather"]

logger = logging.getLogger(__name__)
_told: set[str] = set()


class NoEffectGather:
    """Implements no hook; tells once per type string that it gathers nothing."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        if context.type_string not in _told:
            _told.add(context.type_string)
            logger.info(
                "plugin=%s effect=none reason=%s",
                context.type_string,
                "no processes to sample: jobs keep no usage figures, as with jobacct_gather/none",
            )
