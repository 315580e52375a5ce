"""plurm.controller.ordered.ArrivalSorted against sortedcontainers.SortedList, the reference:
the same entries in the same order after any sequence of adds and removes, whether the
entries come in order (a queue under priority/basic) or not (requeues, recalculations), in
its list form and, past ``general_above`` entries, its SortedList form, and across the
switches between them."""

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


@pytest.mark.parametrize("general_above", [8192, 8, 16])
@settings(max_examples=300, deadline=None)
@given(ops=_ops)
def test_it_holds_what_a_sorted_list_holds(general_above: int, ops: list[tuple[str, int]]) -> None:
    kind = type("Sized", (ArrivalSorted,), {"__slots__": (), "general_above": general_above})
    ours: ArrivalSorted[tuple[int, int]] = kind()
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


def test_a_large_list_out_of_order_becomes_general_and_comes_back_when_small() -> None:
    kind = type("Sized", (ArrivalSorted,), {"__slots__": (), "general_above": 8})
    ours: ArrivalSorted[tuple[int, int]] = kind()
    for number in range(12):
        ours.add((number, number))
    assert ours._general is None  # in order: a plain list however long
    ours.add((-1, 100))  # out of order, past 8 entries
    assert ours._general is not None and ours[0] == (-1, 100) and len(ours) == 13
    for entry in list(ours)[:12]:
        ours.remove(entry)
    assert ours._general is None and list(ours) == [(11, 11)]  # a quarter of 8: a list again
    ours.add((5, 200))
    assert list(ours) == [(5, 200), (11, 11)] and ours[-1] == (11, 11)


def test_a_large_list_losing_an_entry_in_the_middle_becomes_general() -> None:
    kind = type("Sized", (ArrivalSorted,), {"__slots__": (), "general_above": 8})
    ours: ArrivalSorted[tuple[int, int]] = kind()
    for number in range(12):
        ours.add((number, number))
    ours.remove((0, 0))  # the head: still a list
    assert ours._general is None
    ours.remove((5, 5))
    assert ours._general is not None
    assert list(ours) == [(n, n) for n in range(1, 12) if n != 5]
