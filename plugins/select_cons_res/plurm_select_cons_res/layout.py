"""What one node offers: its cores (the units rows count), CPUs per core, sockets, memory.

SelectTypeParameters decides the unit. With CR_Core and CR_Socket a unit is a core and a job
gets whole cores (a core's threads all count as the job's CPUs); CR_Socket then rounds a job
up to whole sockets. With CR_CPU every CPU is its own unit (threads are allocated one by one).
CR_Memory counts memory only: CPUs are not consumable and jobs share them freely.
"""

from __future__ import annotations

import enum

import attrs

from plurm.conf.model import NodeSpec, PartitionSpec, SlurmConfig
from plurm.conf.values import CrBase

__all__ = ["Layout", "Resource", "Unit", "core_mask", "core_set", "layout_of"]


class Unit(enum.Enum):
    """What a job is given whole: a CPU, a core, a socket, or nothing (memory only)."""

    CPU = "cpu"
    CORE = "core"
    SOCKET = "socket"
    NONE = "none"


#: What Slurm 22.05's consumable-resource plugins use when SelectTypeParameters is not set.
DEFAULT_BASE = CrBase.CORE_MEMORY

_UNITS = {
    CrBase.CPU: Unit.CPU,
    CrBase.CPU_MEMORY: Unit.CPU,
    CrBase.CORE: Unit.CORE,
    CrBase.CORE_MEMORY: Unit.CORE,
    CrBase.SOCKET: Unit.SOCKET,
    CrBase.SOCKET_MEMORY: Unit.SOCKET,
    CrBase.MEMORY: Unit.NONE,
}


@attrs.frozen
class Resource:
    """The cluster's consumable resource: the unit and whether memory counts."""

    unit: Unit
    memory: bool

    @classmethod
    def of(cls, config: SlurmConfig) -> Resource:
        base = config.select_type_parameters.base or DEFAULT_BASE
        return cls(_UNITS[base], base.memory)

    def for_partition(self, part: PartitionSpec) -> Unit:
        """A partition's own SelectTypeParameters may narrow cores to sockets or back."""
        override = part.select_type_parameters
        if override is None or override.base is None or self.unit not in (Unit.CORE, Unit.SOCKET):
            return self.unit
        return _UNITS[override.base]


@attrs.frozen
class Layout:
    """One node as the plugin counts it. Cores are numbered 0..cores-1, socket by socket."""

    cores: int
    cpus_per_core: int
    cores_per_socket: int
    cpus: int
    memory: int
    #: Every core of the node (made once: a test reads it for each node it looks at), and
    #: as a core bitmask (bit i: core i).
    all_cores: frozenset[int] = attrs.field(init=False, eq=False, repr=False)
    all_mask: int = attrs.field(init=False, eq=False, repr=False)
    #: A job's task slots on the node by how many of its cores are free, per (exclusive,
    #: CPUs per task): filled by the tests as they first need each (``steps``).
    slot_counts: dict[tuple[bool, int], tuple[int, ...]] = attrs.field(
        init=False, factory=dict, eq=False, repr=False
    )

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "all_cores", frozenset(range(self.cores)))
        object.__setattr__(self, "all_mask", (1 << self.cores) - 1)

    def sockets(self) -> list[frozenset[int]]:
        """The cores of each socket, in order."""
        step = self.cores_per_socket
        return [
            frozenset(range(first, min(first + step, self.cores)))
            for first in range(0, self.cores, step)
        ]

    def cpus_of(self, cores: int) -> int:
        return min(self.cpus, cores * self.cpus_per_core)


def layout_of(spec: NodeSpec, unit: Unit) -> Layout:
    """The layout of a node of ``spec`` under the cluster's unit."""
    cpus = spec.cpus
    if unit is Unit.CPU:
        per_socket = max(1, cpus // max(1, spec.sockets))
        return Layout(cpus, 1, per_socket, cpus, spec.real_memory)
    cores = max(1, spec.sockets * spec.cores_per_socket)
    if cpus < cores:  # CPUs counted per socket or per core: one CPU is one unit
        cores = cpus
    per_socket = max(1, cores // max(1, spec.sockets))
    return Layout(cores, max(1, cpus // cores), per_socket, cpus, spec.real_memory)


#: Core sets by core bitmask and back, remembered: a few sets recur job after job. Each is
#: emptied when it reaches ``_KEPT`` entries.
_SETS: dict[int, frozenset[int]] = {}
_MASKS: dict[frozenset[int], int] = {}
_KEPT = 4096


def core_mask(cores: frozenset[int]) -> int:
    """The core bitmask of ``cores`` (bit i: core i)."""
    mask = _MASKS.get(cores)
    if mask is None:
        mask = 0
        for core in cores:
            mask |= 1 << core
        if len(_MASKS) >= _KEPT:
            _MASKS.clear()
        _MASKS[cores] = mask
    return mask


def core_set(mask: int) -> frozenset[int]:
    """The cores of the core bitmask ``mask``."""
    cores = _SETS.get(mask)
    if cores is None:
        cores = frozenset(index for index in range(mask.bit_length()) if mask >> index & 1)
        if len(_SETS) >= _KEPT:
            _SETS.clear()
        _SETS[mask] = cores
    return cores
