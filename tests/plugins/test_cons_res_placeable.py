"""select/cons_res's node choice answers "would it place the job?" without choosing.

Without required nodes, contiguity or a node limit, ``choose_nodes``'s rounds may take every
usable node, so they place the job exactly when all the usable nodes together hold its tasks
and minimum node count: ``placeable`` (the gang steps' room question) answers from those two
sums, and ``choose_nodes`` refuses at once when they fall short. The reference here is the
rounds themselves, run with a node limit of every node (which never binds, but turns the
shortcut off).
"""

from __future__ import annotations

import attrs
from hypothesis import example, given, settings
from hypothesis import strategies as st

from plurm_select_cons_res.needs import Needs, Sharing
from plurm_select_cons_res.placement import choose_nodes, placeable

_NAMES = [f"n{i}" for i in range(12)]
_INDEX = {name: i for i, name in enumerate(_NAMES)}


@st.composite
def _cases(draw: st.DrawFn) -> tuple[list[str], dict[str, int], Needs]:
    names = sorted(draw(st.sets(st.sampled_from(_NAMES), min_size=1)), key=_INDEX.__getitem__)
    caps = {name: draw(st.integers(0, 4)) for name in names}
    required = draw(st.one_of(st.just(()), st.lists(st.sampled_from(names), max_size=2)))
    needs = Needs(
        tasks=draw(st.integers(1, 30)),
        cpus_per_task=1,
        min_nodes=draw(st.integers(1, 8)),
        max_nodes=draw(st.one_of(st.none(), st.integers(1, 12))),
        required=tuple(dict.fromkeys(required)),
        contiguous=draw(st.booleans()),
        sharing=Sharing.ONE_ROW,
    )
    return names, caps, needs


@given(_cases())
@example(  # all the usable nodes hold exactly the tasks: placed
    (
        ["n0", "n1", "n3"],
        {"n0": 2, "n1": 0, "n3": 3},
        Needs(5, 1, 2, None, (), False, Sharing.ONE_ROW),
    )
)
@example(  # one slot short
    (
        ["n0", "n1", "n3"],
        {"n0": 2, "n1": 0, "n3": 3},
        Needs(6, 1, 2, None, (), False, Sharing.ONE_ROW),
    )
)
@example(  # slots enough, one node short
    (
        ["n0", "n1", "n3"],
        {"n0": 2, "n1": 0, "n3": 3},
        Needs(2, 1, 3, None, (), False, Sharing.ONE_ROW),
    )
)
@settings(max_examples=500, deadline=None)
def test_placeable_and_the_early_refusal_answer_as_the_rounds(
    case: tuple[list[str], dict[str, int], Needs],
) -> None:
    names, caps, needs = case
    chosen = choose_nodes(names, caps, needs, _INDEX)
    assert placeable(names, caps, needs, _INDEX) == (chosen is not None)
    if needs.max_nodes is None:
        rounds = choose_nodes(names, caps, attrs.evolve(needs, max_nodes=len(names)), _INDEX)
        assert chosen == rounds
