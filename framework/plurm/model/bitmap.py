"""Node sets as bitmaps over the node table, as Slurm keeps them.

Bit i of a mask is the i-th node of the node table (``Cluster.node_index``). A Python int is
the bitmap: and, or, and-not and bit counts are single operations however many nodes there
are, where a set of names costs a step per node.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import overload

__all__ = ["NodeBitmap", "mask_names"]

#: Each byte's eight bits, lowest first, as booleans: a mask's bytes through it select the
#: table's names at C speed (``itertools.compress``).
_BYTE_BITS = tuple(tuple(bool(byte >> bit & 1) for bit in range(8)) for byte in range(256))


def mask_names(mask: int, table: Sequence[str]) -> tuple[str, ...]:
    """The names of the nodes set in ``mask``, in node-table order.

    Only the span from the lowest set bit to the highest is read: a partition high in the
    table costs as its own width. Where at least one node in eight of the span is set, the
    mask's bytes select the names in C; a sparser mask is read set bit by set bit."""
    if not mask:
        return ()
    low = (mask & -mask).bit_length() - 1
    mask >>= low
    span = mask.bit_length()
    if mask.bit_count() * 8 < span:
        bits = format(mask, "b")[::-1]  # bits[i] is bit i (of the shifted mask)
        names = []
        index = bits.find("1")
        while index >= 0:
            names.append(table[low + index])
            index = bits.find("1", index + 1)
        return tuple(names)
    selectors = itertools.chain.from_iterable(
        map(_BYTE_BITS.__getitem__, mask.to_bytes((span + 7) // 8, "little"))
    )
    return tuple(itertools.compress(table[low : low + span], selectors))


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
