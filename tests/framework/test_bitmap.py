"""NodeBitmap: a node set as an int bitmap that reads as its node names."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plurm.model.bitmap import NodeBitmap, mask_names
from plurm.model.runs import (
    best_run,
    best_span,
    bitmap_of,
    consecutive_runs,
    consecutive_spans,
    set_bit_spans,
)

TABLE = ("n1", "n2", "n3", "n4", "n5")


def test_a_bitmap_reads_as_its_names_in_table_order() -> None:
    nodes = NodeBitmap(0b10101, TABLE)
    assert list(nodes) == ["n1", "n3", "n5"]
    assert len(nodes) == 3
    assert nodes[1] == "n3"
    assert nodes[-1] == "n5"
    assert nodes[:2] == ("n1", "n3")
    assert "n3" in nodes
    assert "n2" not in nodes
    assert nodes == ["n1", "n3", "n5"]
    assert nodes == ("n1", "n3", "n5")
    assert nodes == NodeBitmap(0b10101, TABLE)
    assert nodes != NodeBitmap(0b101, TABLE)
    assert hash(nodes) == hash(("n1", "n3", "n5"))
    assert NodeBitmap(0, TABLE) == ()
    assert mask_names(0b11000, TABLE) == ("n4", "n5")


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.booleans(), max_size=300), st.integers(1, 12))
def test_the_runs_of_set_bits_are_the_runs_of_consecutive_nodes(
    bits: list[bool], stretch: int
) -> None:
    """set_bit_spans finds every run of set bits, as a walk bit by bit does, with few runs
    (arithmetic per run) and with many (more than 32: a search over the bitmap written out)."""
    bits = [bit for bit in bits for _ in range(stretch)][:600]
    bitmap = sum(1 << index for index, bit in enumerate(bits) if bit)
    spans: list[tuple[int, int]] = []
    for index, bit in enumerate(bits):
        if bit and spans and spans[-1][1] == index:
            spans[-1] = (spans[-1][0], index + 1)
        elif bit:
            spans.append((index, index + 1))
    assert set_bit_spans(bitmap) == spans


@given(st.sets(st.integers(0, 60)))
def test_consecutive_places_split_into_runs(places: set[int]) -> None:
    """The runs of consecutive node-table places (each a range of positions in the list),
    and the names split the same way, against a walk that starts a run at each gap."""
    ordered = sorted(places)
    runs: list[list[int]] = []
    for place in ordered:
        if runs and place == runs[-1][-1] + 1:
            runs[-1].append(place)
        else:
            runs.append([place])
    assert [ordered[first:end] for first, end in consecutive_spans(ordered)] == runs
    index = {f"n{place}": place for place in ordered}
    assert consecutive_runs(list(index), index) == [[f"n{p}" for p in run] for run in runs]
    assert consecutive_spans([]) == [] and consecutive_spans([3, 4, 6]) == [(0, 2), (2, 3)]


def test_runs_of_set_bits_few_and_many() -> None:
    assert set_bit_spans(0) == []
    assert set_bit_spans(0b1110110) == [(1, 3), (4, 7)]
    assert set_bit_spans(1 << 5000) == [(5000, 5001)]
    many = int("01" * 40, 2)  # 40 runs of one bit: the written-out search
    assert set_bit_spans(many) == [(index, index + 1) for index in range(0, 80, 2)]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    st.lists(st.lists(st.integers(0, 6), min_size=1, max_size=5), min_size=1, max_size=8),
    st.integers(-2, 30),
    st.integers(0, 4),
)
def test_the_best_span_is_the_best_run(
    runs: list[list[int]], want_slots: int, want_nodes: int
) -> None:
    """best_span (runs as index ranges with slot totals) picks the run best_run (runs of
    names) picks: the enough run with the fewest slots, else the one with the most; the
    first on ties."""
    slots: dict[str, int] = {}
    named: list[list[str]] = []
    spans: list[tuple[int, int]] = []
    for run in runs:
        first = len(slots)
        named.append([f"n{first + offset}" for offset in range(len(run))])
        slots.update(zip(named[-1], run, strict=True))
        spans.append((first, len(slots)))
    totals = [sum(run) for run in runs]
    best, enough = best_run(named, slots, want_slots, want_nodes)
    assert best_span(spans, totals, want_slots, want_nodes) == (named.index(best), enough)


_WIDE = tuple(f"w{index:04d}" for index in range(700))


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    st.integers(0, 699),
    st.integers(0, 700),
    st.sampled_from([1, 2, 3, 8, 9, 40]),
    st.integers(0, 2**64 - 1),
)
def test_a_mask_reads_as_its_names_dense_or_sparse_anywhere_in_the_table(
    low: int, width: int, every: int, noise: int
) -> None:
    """Names of masks of every density (one node in ``every``, perturbed), in any span of a
    wide table: the same as reading the bits one by one."""
    width = min(width, len(_WIDE) - low)
    mask = 0
    for offset in range(0, width, every):
        if not noise >> (offset % 64) & 1 or every > 8:
            mask |= 1 << (low + offset)
    expected = tuple(name for index, name in enumerate(_WIDE) if mask >> index & 1)
    assert mask_names(mask, _WIDE) == expected
    assert mask_names(mask, list(_WIDE)) == expected


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 6000), max_size=40))
def test_a_bitmap_of_positions_sets_those_bits(positions: list[int]) -> None:
    """bitmap_of sets the bits at the positions given (repeats alike), whether few (ORs)
    or many (a byte buffer)."""
    bitmap = bitmap_of(positions)
    assert bitmap == sum(1 << position for position in set(positions))
    assert bitmap_of(sorted(set(positions))) == bitmap
