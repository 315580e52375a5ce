"""Slurm plugins that have nothing to do in Plurm, loaded as explicit no-ops.

Slurm 22.05 loads a plugin for each of many keys whose work Plurm has no counterpart for in
simulation: process tracking (``ProctrackType``), task binding (``TaskPlugin``), MPI
(``MpiDefault``), interconnects (``SwitchType``), energy, profile, interconnect and
filesystem sampling (``AcctGather*Type``), job completion logs (``JobCompType``), network
topology (``TopologyPlugin``), credentials (``CredType``), launching (``LaunchType``),
prolog/epilog (``PrEpPlugins``) and job containers (``JobContainerType``). So that a
slurm.conf Slurm accepts keeps loading, each type string Slurm 22.05 ships for those keys is
an entry point of the ``plurm`` distribution naming one of the two factories here:

* :class:`NoEffect` for a plugin that does something in Slurm: it says once, when it is
  loaded, that it does nothing here (one warning line per plugin per run);
* :class:`Inert` for one that does nothing in Slurm either (the ``*/none`` plugins) or whose
  effect the core itself carries out (``AccountingStorageType``): it loads silently.

A type string no installed distribution provides is refused (``plurm conf check`` names
it), as slurmctld refuses to start without the plugin.
"""

from __future__ import annotations

import logging

from plurm._markers import HOOK_API_VERSION
from plurm.registry import PluginContext

__all__ = ["Inert", "NoEffect"]

logger = logging.getLogger(__name__)


class NoEffect:
    """Implements no hook, and warns once that the plugin it stands for does nothing."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        logger.warning(
            "plugin=%s has no effect in Plurm's simulation; loaded as a no-op",
            context.type_string,
        )


class Inert:
    """Implements no hook, silently: a ``*/none`` plugin, or one the core stands in for."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
