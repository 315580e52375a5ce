"""Node sets as bitmaps over the node table, as Slurm keeps them.

Bit i of a mask is the i-th node of the node table (``Cluster.node_index``). A Python int is
the bitmap: and, or, and-not and bit counts are single operations however many nodes there
are, where a set of names costs a step per node.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

__all__ = ["NodeBitmap", "mask_names"]


def mask_names(mask: int, table: Sequence[str]) -> tuple[str, ...]:
    """The names of the nodes set in ``mask``, in node-table order."""
    bits = format(mask, "b")[::-1]  # bits[i] is bit i
    names = []
    index = bits.find("1")
    while index >= 0:
        names.append(table[index])
        index = bits.find("1", index + 1)
    return tuple(names)


class NodeBitmap(Sequence[str]):
    """A set of nodes carried as a bitmap (``mask``) over the node table ``table``.

    It reads as the tuple of its node names in node-table order, built on first use, so code
    that wants names sees an ordinary sequence (and compares equal to one with the same
    names); code that knows bitmaps reads ``mask`` and never builds the names. The core
    passes the node lists of hot hooks (``select_job_test``, the backfill view) this way.
    """

    __slots__ = ("_names", "_table", "mask")

    def __init__(self, mask: int, table: Sequence[str]) -> None:
        self.mask = mask
        self._table = table
        self._names: tuple[str, ...] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        names = self._names
        if names is None:
            names = self._names = mask_names(self.mask, self._table)
        return names

    def __len__(self) -> int:
        return self.mask.bit_count()

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        return self.names[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NodeBitmap) and other._table is self._table:
            return other.mask == self.mask
        if isinstance(other, Sequence) and not isinstance(other, str):
            return self.names == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.names)

    def __repr__(self) -> str:
        return f"NodeBitmap({list(self.names)!r})"
