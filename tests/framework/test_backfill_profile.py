"""The backfill plan's profile, compiled and in Python, side by side.

``plurm.builtin._backfill_profile`` (Cython) must answer every question as the reference
``PyProfile`` does, on random plans: the same openings in the same order, the same views
segment for segment (a pass that tries the next opening after select refuses one depends on
the splits), the same free nodes now. The README's install commands build it; a machine
without a C compiler runs the reference (``PLURM_PURE_PYTHON=1`` asks for it anywhere).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

from hypothesis import example, given, settings
from hypothesis import strategies as st

from plurm.builtin import backfill_profile
from plurm.builtin.backfill_profile import PyProfile

try:
    from plurm.builtin._backfill_profile import Profile as CProfile
except ImportError:  # pragma: no cover - see test_the_compiled_profile_is_built
    CProfile = None

_NOW = 1000.0


def test_the_compiled_profile_is_built_and_used() -> None:
    """The README's commands build the compiled profile (this machine has a C compiler),
    and sched/backfill uses it unless asked for the reference."""
    assert CProfile is not None, "plurm.builtin._backfill_profile was not built"
    if os.environ.get("PLURM_PURE_PYTHON", "") in ("", "0"):
        assert backfill_profile.Profile is CProfile
        assert backfill_profile.COMPILED


def test_plurm_pure_python_selects_the_reference() -> None:
    code = (
        "from plurm.builtin import backfill_profile as b, sched_backfill as s;"
        "print(b.Profile is b.PyProfile, s.Profile is b.PyProfile, b.COMPILED)"
    )
    env = {**os.environ, "PLURM_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "True", "False"]


# (width in nodes, nodes out of service at the top, a plan of operations)
_widths = st.sampled_from([1, 3, 8, 63, 64, 65, 130, 200])


@st.composite
def _plans(draw: st.DrawFn) -> tuple[int, dict[float, int], int | None, list[tuple]]:  # type: ignore[type-arg]
    width = draw(_widths)
    nodes = st.integers(0, (1 << width) - 1)
    everything = draw(st.one_of(st.just((1 << width) - 1), nodes))
    times = st.one_of(
        st.integers(0, 20).map(lambda minute: _NOW + 60 * minute),
        st.floats(_NOW, _NOW + 1500, allow_nan=False),
        st.just(math.inf),
    )
    # running jobs' ends: each node freed at one time at most (the pass gives each node to
    # its latest end), some of them at now or for ever
    ends: dict[float, int] = {}
    claimed = 0
    for when, mask in draw(st.lists(st.tuples(times, nodes), max_size=8)):
        mask &= ~claimed
        if mask:
            ends[when] = ends.get(when, 0) | mask
            claimed |= mask
    held = draw(st.one_of(st.none(), st.just(claimed)))
    usable = st.one_of(st.just(everything), nodes)
    durations = st.one_of(st.integers(1, 1800).map(float), st.just(math.inf))
    horizons = st.one_of(
        st.integers(0, 30).map(lambda minute: _NOW + 60 * minute),
        st.just(math.nextafter(_NOW, math.inf)),
    )
    reserve_starts = st.one_of(times.filter(lambda t: t != math.inf), st.just(_NOW))
    operations = _operations(usable, nodes, reserve_starts, durations, horizons, 6)
    return everything, ends, held, draw(st.lists(operations, max_size=30))


def _operations(
    usable: st.SearchStrategy[int],
    nodes: st.SearchStrategy[int],
    starts: st.SearchStrategy[float],
    durations: st.SearchStrategy[float],
    horizons: st.SearchStrategy[float],
    most: int,
) -> st.SearchStrategy[tuple]:  # type: ignore[type-arg]
    """Questions to a profile and reservations on it: openings of up to ``most`` nodes, all
    of them or the first few, with reservations made between two."""
    return st.one_of(
        st.tuples(st.just("reserve"), starts, durations, nodes),
        st.tuples(st.just("build_view"), usable),
        st.tuples(st.just("view"), usable),
        st.tuples(st.just("free_now")),
        st.tuples(
            st.just("openings"), usable, st.integers(0, most), durations, horizons,
            st.integers(0, 3), st.lists(st.tuples(starts, durations, nodes), max_size=2),
        ),
    )  # fmt: skip


def _run(profile_type: type, plan: tuple) -> list[object]:  # type: ignore[type-arg]
    everything, ends, held, operations = plan
    return _answers(profile_type(_NOW, everything, dict(ends), held), operations)


def _answers(profile: PyProfile, operations: list[tuple]) -> list[object]:  # type: ignore[type-arg]
    answers: list[object] = []
    for operation in operations:
        kind = operation[0]
        if kind == "reserve":
            _, start, duration, nodes = operation
            profile.reserve(start, start + duration, nodes)
        elif kind == "build_view":
            profile.build_view(operation[1])
        elif kind == "view":
            starts, frees, low = profile.view(operation[1])
            answers.append((list(map(float, starts)), list(frees), low))  # (a copy: it changes)
        elif kind == "free_now":
            answers.append(profile.free_now())
        else:
            _, usable, least, duration, horizon, stop_after, between = operation
            found = []
            for start, free in profile.openings(usable, least, duration, horizon):
                found.append((float(start), free))
                if stop_after and len(found) == stop_after:
                    break  # (the pass breaks out once select takes an opening)
                for start_at, length, nodes in between:  # as sharing and preempting do
                    profile.reserve(start_at, start_at + length, nodes)
            answers.append(found)
    return answers


@given(_plans())
@example(  # a window that fails on a segment holding exactly ``least`` nodes, which the
    # next start still finds (the search may skip only past a segment with fewer)
    (
        0b111,
        {},
        None,
        [
            ("reserve", _NOW, 60.0, 0b100),
            ("reserve", _NOW + 60, 60.0, 0b001),
            ("openings", 0b111, 2, 120.0, _NOW + 3600, 0, []),
        ],
    )
)
@settings(max_examples=400, deadline=None)
def test_the_compiled_profile_answers_as_the_reference(plan: tuple) -> None:  # type: ignore[type-arg]
    assert CProfile is not None
    assert _run(CProfile, plan) == _run(PyProfile, plan)


def test_views_wider_than_a_word_and_high_in_the_table() -> None:
    """Explicit cases: a view of nodes 100 to 229 (three words, shifted by 100) on a table
    of 300, with segments that free nodes below, inside and above it, a reservation taking
    part of it, and openings for sizes that fit before and after the reservation."""
    assert CProfile is not None
    span = ((1 << 130) - 1) << 100
    ends = {
        _NOW + 60: (1 << 10) | (1 << 120),
        _NOW + 120: ((1 << 30) - 1) << 150,
        _NOW + 180: 1 << 290,
        _NOW + 240: ((1 << 20) - 1) << 200,
    }
    everything = (1 << 300) - 1
    held = 0
    for mask in ends.values():
        held |= mask
    for profile_type in (PyProfile, CProfile):
        profile = profile_type(_NOW, everything & ~(((1 << 100) - 1) << 100), ends)
        assert profile.free_now() == everything & ~held & ~(((1 << 100) - 1) << 100)
    plan = (
        everything & ~(((1 << 100) - 1) << 100),
        ends,
        None,
        [
            ("openings", span, 31, 120.0, _NOW + 3600, 0, []),
            ("reserve", _NOW + 120, 600.0, ((1 << 10) - 1) << 150),
            ("openings", span, 40, 60.0, _NOW + 3600, 0, []),
            ("view", span),
            ("openings", span, 1, math.inf, math.nextafter(_NOW, math.inf), 0, []),
        ],
    )
    answers = _run(CProfile, plan)
    assert answers == _run(PyProfile, plan)
    first = answers[0]
    # 31 of its nodes are free from the second minute on: 220 to 229 now, 120 after one
    # minute, 150 to 179 after two (the segments' nodes count whether or not in service)
    assert isinstance(first, list) and first
    nodes = (((1 << 10) - 1) << 220) | (1 << 120) | (((1 << 30) - 1) << 150)
    assert first[0] == (_NOW + 120, nodes)


# ------------------------------------------------------------------ the plan from held jobs


@st.composite
def _held(draw: st.DrawFn) -> tuple[int, int, list[tuple[None, float | None, int]], list[tuple]]:  # type: ignore[type-arg]
    """A node table, bf_resolution, the jobs holding nodes (expected end, bitmap) and
    operations on the plan: nodes held by several jobs (suspended under running ones),
    ends before now, now, between and on resolution steps, and none."""
    count = draw(st.sampled_from([1, 7, 64, 65, 130, 300, 5120]))
    resolution = draw(st.sampled_from([1, 30, 60, 300]))
    # a job holds a run of nodes anywhere in the table, or any of them
    runs = st.tuples(st.integers(0, count - 1), st.integers(1, 40)).map(
        lambda run: ((1 << min(run[1], count - run[0])) - 1) << run[0]
    )
    masks = st.one_of(runs, st.integers(0, (1 << count) - 1))
    ends = st.one_of(
        st.none(),
        st.floats(_NOW - 600, _NOW + 7200, allow_nan=False),
        st.integers(-5, 60).map(lambda step: _NOW + 60 * step),
        st.just(_NOW),
    )
    held = draw(st.lists(st.tuples(st.none(), ends, masks), max_size=25))
    nodes = st.integers(0, (1 << count) - 1)
    usable = st.one_of(st.just((1 << count) - 1), nodes, runs)
    durations = st.one_of(st.integers(1, 7200).map(float), st.just(math.inf))
    horizons = st.one_of(
        st.integers(0, 120).map(lambda minute: _NOW + 60 * minute),
        st.just(math.nextafter(_NOW, math.inf)),
    )
    starts = st.one_of(st.just(_NOW), st.integers(1, 60).map(lambda minute: _NOW + 60 * minute))
    operations = _operations(usable, nodes, starts, durations, horizons, 40)
    return count, resolution, held, draw(st.lists(operations, max_size=12))


def _from_held(profile_type: type, plan: tuple) -> list[object]:  # type: ignore[type-arg]
    count, resolution, held, operations = plan
    profile, claimed = profile_type.of_held(_NOW, resolution, iter(held), count)
    first = [claimed, profile.everything, list(map(float, profile.starts)), profile.free_now()]
    return [*first, *_answers(profile, operations)]


@given(_held())
@example(  # on 5,120 nodes: a digit of the int across two words (nodes 60 to 69), nodes
    # high in the table, a job without an end, an end before now, two jobs on one node
    # (the later end keeps it), and a job whose nodes later ends hold already
    (
        5120,
        60,
        [
            (None, _NOW + 90, ((1 << 10) - 1) << 60),
            (None, None, 1 << 5000),
            (None, _NOW - 30, 1 << 3),
            (None, _NOW + 130, (1 << 3) | (1 << 64)),
            (None, _NOW + 3600, ((1 << 40) - 1) << 5070),
            (None, _NOW + 61, 1 << 64),
        ],
        [("openings", (1 << 5120) - 1, 5, 600.0, _NOW + 7200, 0, []), ("view", 1 << 64)],
    )
)
@settings(max_examples=300, deadline=None)
def test_the_compiled_plan_from_held_jobs_is_the_reference(plan: tuple) -> None:  # type: ignore[type-arg]
    """Profile.of_held makes the base in C words from the jobs' bitmaps; the reference in
    Python ints. The same nodes held, the same table, the same segments and openings."""
    assert CProfile is not None
    assert _from_held(CProfile, plan) == _from_held(PyProfile, plan)


def test_the_plan_from_held_jobs() -> None:
    """What of_held makes, by hand: ends round up to bf_resolution from now, a node goes
    to the latest end of the jobs on it, an end before now counts as now, a job without
    an end keeps its nodes out of the plan."""
    held = [
        (None, _NOW + 90, 0b0000_0011),  # rounds up to now + 120
        (None, _NOW + 100, 0b0000_0110),  # the same end: node 1 is in both
        (None, _NOW + 500, 0b0000_0100),  # node 2: until now + 540
        (None, _NOW - 5, 0b0001_0000),  # overdue: now
        (None, None, 0b1000_0000),  # no end
    ]
    for profile_type in (PyProfile, CProfile):
        profile, claimed = profile_type.of_held(_NOW, 60, iter(held), 8)
        assert claimed == 0b1001_0111
        assert profile.everything == 0b0111_1111
        assert list(map(float, profile.starts)) == [_NOW, _NOW, _NOW + 120, _NOW + 540]
        # free now: the nodes no job holds (3, 5, 6) and the overdue job's (4)
        assert profile.free_now() == 0b0111_1000
        assert profile.view(0b0111_1111)[1] == [0b0110_1000, 0b0111_1000, 0b0111_1011, 0b0111_1111]
