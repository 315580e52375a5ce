"""preempt/pbs's hook implementations (see the package docstring)."""

from __future__ import annotations

import logging
from pathlib import Path

from plurm import HOOK_API_VERSION
from plurm.registry import PluginContext
from plurm_preempt_pbs.config import PbsConfig, load

__all__ = ["PbsPreemption"]


def conf_dir(context: PluginContext) -> Path:
    """The directory of slurm.conf, where PBS's files are read."""
    files = context.config.files
    return Path(files[0]).parent if files else Path()


class PbsPreemption:
    """PBS's preemption policy."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.logger = logging.getLogger(context.logger_name)
        self.pbs: PbsConfig = load(conf_dir(context))
