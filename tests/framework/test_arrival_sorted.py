"""plurm.controller.ordered.ArrivalSorted against sortedcontainers.SortedList, the reference:
the same entries in the same order after any sequence of adds and removes, whether the
entries come in order (a queue under priority/basic) or not (requeues, recalculations)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sortedcontainers import SortedList

from plurm.controller.ordered import ArrivalSorted

#: An operation: add a key (as a (key, id) entry, as the queue files them), or remove the
#: n-th live entry (modulo the length; ignored when empty).
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(-50, 200)),
        st.tuples(st.just("add_next"), st.integers(0, 3)),
        st.tuples(st.just("remove"), st.integers(0, 10_000)),
        st.tuples(st.just("remove_first"), st.just(0)),
    ),
    max_size=400,
)


@settings(max_examples=300, deadline=None)
@given(_ops)
def test_it_holds_what_a_sorted_list_holds(ops: list[tuple[str, int]]) -> None:
    ours: ArrivalSorted[tuple[int, int]] = ArrivalSorted()
    reference: SortedList[tuple[int, int]] = SortedList()
    next_id = 0
    last_key = 0
    for op, value in ops:
        if op in ("add", "add_next"):
            # add_next: a key at least the last one (the in-order arrivals of a queue)
            key = value if op == "add" else last_key + value
            last_key = max(last_key, key)
            entry = (key, next_id)
            next_id += 1
            ours.add(entry)
            reference.add(entry)
        elif reference:
            index = 0 if op == "remove_first" else value % len(reference)
            entry = reference[index]
            ours.remove(entry)
            reference.remove(entry)
        assert list(ours) == list(reference)
        assert len(ours) == len(reference) and bool(ours) == bool(reference)
        if reference:
            assert ours[0] == reference[0] and ours[-1] == reference[-1]


def test_a_long_run_from_the_front_compacts_and_stays_in_order() -> None:
    ours: ArrivalSorted[tuple[int, int]] = ArrivalSorted()
    for number in range(1000):
        ours.add((number, number))
    for number in range(900):
        ours.remove((number, number))
        assert ours[0] == (number + 1, number + 1)
    assert list(ours) == [(n, n) for n in range(900, 1000)]
    ours.add((5, 5000))  # out of order: before the others
    assert ours[0] == (5, 5000) and len(ours) == 101


def test_removing_what_is_not_there_is_an_error() -> None:
    ours: ArrivalSorted[tuple[int, int]] = ArrivalSorted()
    ours.add((1, 1))
    with pytest.raises(ValueError, match="not in the list"):
        ours.remove((2, 2))
    with pytest.raises(IndexError):
        ours[1]
    ours.remove((1, 1))
    assert not ours and list(ours) == []
