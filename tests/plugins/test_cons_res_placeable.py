"""select/cons_res's node choice: the rounds on position ranges, and "would it place the
job?" without choosing.

``choose_nodes`` finds the runs of consecutive usable nodes and their slots once and keeps
them as position ranges; ``_rounds`` below is the same choice on lists of names, summing
each run again at every round, as it was first written: the two choose the same nodes in
the same order.

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

from plurm.model.runs import best_run, consecutive_runs
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
    if not needs.contiguous:
        assert chosen == _rounds(names, caps, needs)
    assert placeable(names, caps, needs, _INDEX) == (chosen is not None)
    if needs.max_nodes is None:
        rounds = choose_nodes(names, caps, attrs.evolve(needs, max_nodes=len(names)), _INDEX)
        assert chosen == rounds


def _rounds(names: list[str], caps: dict[str, int], needs: Needs) -> list[str] | None:
    """The rounds as choose_nodes first wrote them, on lists of names (runs found and their
    slots summed again at every round): required nodes first, then the best run each round;
    at most one node owed, the run's smallest node that holds the rest alone."""
    usable = [name for name in names if caps.get(name, 0) > 0]
    if any(name not in usable for name in needs.required):
        return None
    chosen = sorted(needs.required, key=_INDEX.__getitem__)
    most = max(needs.max_nodes if needs.max_nodes is not None else len(usable), needs.min_nodes)
    want_nodes = needs.min_nodes - len(chosen)
    want_tasks = needs.tasks - sum(caps[name] for name in chosen)
    if len(chosen) > most:
        return None
    runs = consecutive_runs([name for name in usable if name not in chosen], _INDEX)
    while runs and (want_nodes > 0 or want_tasks > 0) and len(chosen) < most:
        best, _ = best_run(runs, caps, want_tasks, want_nodes)
        runs.remove(best)
        if want_nodes <= 1:
            fitting = [name for name in best if caps[name] >= want_tasks]
            if fitting:
                single = min(fitting, key=caps.__getitem__)
                chosen.append(single)
                want_nodes -= 1
                want_tasks -= caps[single]
                continue
        for name in best:
            if (want_nodes <= 0 and want_tasks <= 0) or len(chosen) >= most:
                break
            chosen.append(name)
            want_nodes -= 1
            want_tasks -= caps[name]
    return None if want_nodes > 0 or want_tasks > 0 else chosen
