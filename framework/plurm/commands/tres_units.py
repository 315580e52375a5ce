"""Memory in TRES strings (``scontrol show job``'s ``TRES=``, a node's ``CfgTRES`` and
``AllocTRES``, ``squeue -O tres-alloc``), as Slurm 22.05 writes it: MiB divided by 1024 as
long as the division is exact, with the unit's letter (``1000M``, ``2G``, ``1536M``,
``1T``)."""

from __future__ import annotations

__all__ = ["tres_memory"]

_LETTERS = ("M", "G", "T", "P", "E")


def tres_memory(mib: int) -> str:
    """``mib`` MiB as a TRES string writes it."""
    unit = 0
    while mib and mib % 1024 == 0 and unit < len(_LETTERS) - 1:
        mib //= 1024
        unit += 1
    return f"{mib}{_LETTERS[unit]}"
