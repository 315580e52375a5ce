"""A sorted list for the pending-job indexes, fast when entries come in order.

A queue's entries mostly arrive in order and leave from the front: under priority/basic
every new job's key is larger than those filed before it (lower priority, later submit,
higher id), and the job at the head is the one that starts. :class:`ArrivalSorted` keeps a
plain list in order with the place of its first live entry: an entry larger than the last
is appended, the first is dropped by moving that place on, and only an entry out of order
(a requeued job, a priority recalculation) is inserted or deleted in the middle, by
``bisect``. Every operation is then a C-level list operation instead of the pure-Python
bookkeeping of a general sorted container.

An insertion or deletion in the middle moves the entries after it, which costs more than
``sortedcontainers.SortedList``'s once a list holds some ten thousand entries (2x at 50,000:
a multifactor recalculation re-files every pending job). So a list of more than
:data:`GENERAL_ABOVE` entries that takes or loses one out of order (not at its ends) is kept
in a ``SortedList`` from then on, until it shrinks to a quarter of that. Both forms hold the
same entries in the same order; the property test ``tests/framework/test_arrival_sorted.py``
checks both against a ``SortedList``.

Entries must be totally ordered and distinct (the indexes file ``(key, job id, job)``:
the job id settles ties before the job would be compared).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator
from typing import Any, Generic, Protocol, TypeVar

from sortedcontainers import SortedList

__all__ = ["GENERAL_ABOVE", "ArrivalSorted"]


class _Ordered(Protocol):
    def __lt__(self, other: Any, /) -> bool: ...


T = TypeVar("T", bound=_Ordered)

#: How many dropped entries the front may hold before the list is compacted (also never
#: more than the live entries): dropping the first entry costs no move of the others.
_SLACK = 64

#: Past how many entries a list that takes an entry out of order is kept in a SortedList.
GENERAL_ABOVE = 8192


class ArrivalSorted(Generic[T]):
    """Distinct entries in ascending order (module doc)."""

    __slots__ = ("_entries", "_general", "_head")

    #: (a class attribute, so that a test can lower it)
    general_above = GENERAL_ABOVE

    def __init__(self) -> None:
        self._entries: list[T] = []
        #: The place of the first live entry: those before it were removed.
        self._head = 0
        #: The entries when the list is large and takes entries out of order (then
        #: ``_entries`` is empty).
        self._general: SortedList[T] | None = None

    def add(self, entry: T) -> None:
        general = self._general
        if general is not None:
            general.add(entry)
            return
        entries = self._entries
        if len(entries) == self._head or entries[-1] < entry:
            entries.append(entry)
        elif len(entries) - self._head > self.general_above:
            self._general = SortedList(itertools.islice(entries, self._head, None))
            self._general.add(entry)
            entries.clear()
            self._head = 0
        else:
            bisect.insort(entries, entry, lo=self._head)

    def remove(self, entry: T) -> None:
        """Remove ``entry``; ValueError if it is not in the list."""
        general = self._general
        if general is not None:
            general.remove(entry)
            if len(general) * 4 < self.general_above:
                self._entries = list(general)
                self._general = None
            return
        entries, head = self._entries, self._head
        index = bisect.bisect_left(entries, entry, lo=head)
        if index == len(entries) or entries[index] != entry:
            raise ValueError(f"{entry!r} is not in the list")
        if index != head:
            if len(entries) - head > self.general_above:
                self._general = SortedList(itertools.islice(entries, head, None))
                self._general.remove(entry)
                entries.clear()
                self._head = 0
            else:
                del entries[index]
            return
        head += 1
        if head == len(entries):
            entries.clear()
            head = 0
        elif head > _SLACK and head * 2 > len(entries):
            del entries[:head]
            head = 0
        self._head = head

    def clear(self) -> None:
        self._entries.clear()
        self._head = 0
        self._general = None

    def __len__(self) -> int:
        if self._general is not None:
            return len(self._general)
        return len(self._entries) - self._head

    def __bool__(self) -> bool:
        general = self._general
        return bool(general) if general is not None else len(self._entries) > self._head

    def __iter__(self) -> Iterator[T]:
        """The entries in order (the list must not change while it is read)."""
        if self._general is not None:
            return iter(self._general)
        if self._head:
            return itertools.islice(self._entries, self._head, None)
        return iter(self._entries)

    def __getitem__(self, index: int) -> T:
        if self._general is not None:
            return self._general[index]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("index out of range")
        return self._entries[self._head + index]

    def __repr__(self) -> str:
        return f"ArrivalSorted({list(self)!r})"

    def __eq__(self, other: Any) -> bool:  # (for tests)
        return isinstance(other, ArrivalSorted) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]
