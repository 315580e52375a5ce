"""jobacct_gather/linux: what each job's processes use, sampled from /proc.

On a node, plurmd calls it for each job it runs (:mod:`plurm.live.gather`): every
``JobAcctGatherFrequency`` seconds the processes of every job are read from /proc and each
step's figures kept (:class:`plurm.gather.sampler.ProcessGather`, the core's sampler, which
this plugin is). With ``JobAcctGatherParams=OverMemoryKill`` a step whose RSS on the node
goes over the job's memory limit is ended OUT_OF_MEMORY.
"""

from __future__ import annotations

from plurm.gather.sampler import ProcessGather

__all__ = ["LinuxGather"]


class LinuxGather(ProcessGather):
    """The plugin object (module doc)."""
