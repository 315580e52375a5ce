"""Which candidates must go for a job to fit: Slurm's simulate-and-test loop.

* **CANCEL and REQUEUE candidates.** On a copy of the usage, remove the candidates one by one
  in the order given (their cores and memory) until the job fits. Then reorder and walk again
  from a fresh copy, at most ``reorder_count`` times (PreemptParameters, default 1): with
  ``strict_order`` the candidate that made the job fit goes first and the others keep their
  order; otherwise it goes first, the candidates removed before it follow by how many of the
  chosen nodes they hold, and the untried ones come last. The victims are the candidates
  removed in the last walk that hold one of the chosen nodes.
* **SUSPEND candidates under preempt/qos.** Remove the SUSPEND candidates' cores (a
  suspended job keeps its memory) one by one until the job fits; then the job is placed for
  real in its partition's extra row, on top of the jobs to suspend. No victims are returned:
  gang scheduling time-slices or suspends them.
* **SUSPEND candidates of a policy whose suspension releases resources**
  (``preempt_suspend_releases``, no gang scheduling): they go in the removal loop, in their
  order among the others; removing one frees its cores, not its memory, as the admin
  suspension the core then makes of it does.
* Otherwise SUSPEND candidates of lower PriorityTier partitions need no simulation: the
  tiers step of every test already places a job on top of them (see ``steps``), and gang
  suspends them.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from plurm.conf.model import PreemptParameters
from plurm.conf.values import PreemptBase
from plurm.model.select import Candidate, Candidates
from plurm_select_cons_res.needs import Needs
from plurm_select_cons_res.steps import Placement, Tester
from plurm_select_cons_res.usage import Usage

__all__ = ["Preemption", "preempt_by_removal", "preempt_by_suspension"]

_REMOVABLE = (PreemptBase.CANCEL, PreemptBase.REQUEUE)


@attrs.frozen
class Preemption:
    placement: Placement
    victims: tuple[int, ...]


def _walk(
    tester: Tester,
    needs: Needs,
    nodes: Sequence[str],
    partition: str,
    usage: Usage,
    order: Sequence[Candidate],
) -> tuple[Placement, list[Candidate]] | None:
    """Remove candidates in ``order`` until the job fits: the placement and those removed
    (a SUSPEND one only leaves its row: it keeps its memory). The removals are a dry run
    of ``usage`` itself, undone at the end (the reference tester walks a copy)."""
    if getattr(tester, "reference", False):
        return _steps(tester, needs, nodes, partition, usage.copy(), order)
    with usage.dry_run() as trial:
        return _steps(tester, needs, nodes, partition, trial, order)


def _steps(
    tester: Tester,
    needs: Needs,
    nodes: Sequence[str],
    partition: str,
    trial: Usage,
    order: Sequence[Candidate],
) -> tuple[Placement, list[Candidate]] | None:
    removed: list[Candidate] = []
    for candidate in order:
        if candidate.mode is PreemptBase.SUSPEND:
            trial.unplace(candidate.job_id)
        else:
            trial.remove(candidate.job_id)
        removed.append(candidate)
        placed = tester.test(needs, nodes, partition, trial)
        if placed is not None:
            return placed, removed
    return None


def _holds(candidate: Candidate, usage: Usage, nodes: Sequence[str]) -> int:
    """How many of ``nodes`` the candidate holds."""
    allocation = usage.allocations.get(candidate.job_id)
    return len(set(allocation.nodes).intersection(nodes)) if allocation is not None else 0


def _reorder(
    order: Sequence[Candidate],
    removed: Sequence[Candidate],
    placement: Placement,
    usage: Usage,
    params: PreemptParameters,
) -> list[Candidate]:
    decisive = removed[-1]
    if params.strict_order:
        return [decisive, *(c for c in order if c is not decisive)]
    weight = {c.job_id: _holds(c, usage, placement.nodes) for c in removed}
    weight[decisive.job_id] = 99999
    return sorted(order, key=lambda c: -weight.get(c.job_id, 0))


def preempt_by_removal(
    tester: Tester,
    needs: Needs,
    nodes: Sequence[str],
    partition: str,
    usage: Usage,
    candidates: Sequence[Candidate],
    params: PreemptParameters,
    *,
    suspend_releases: bool = False,
) -> Preemption | None:
    """The CANCEL/REQUEUE loop (and SUSPEND with ``suspend_releases``); None when removing
    them all is not enough."""
    # Read only as far as the walks go: a reordering moves only candidates already tried
    # (the untried ones keep their place, last), so the unread ones are never needed.
    removable = (*_REMOVABLE, PreemptBase.SUSPEND) if suspend_releases else _REMOVABLE
    order = Candidates(
        c
        for c in candidates
        if c.mode in removable
        and c.job_id in usage.allocations
        and (c.mode is not PreemptBase.SUSPEND or usage.in_rows(c.job_id))
    )
    found = _walk(tester, needs, nodes, partition, usage, order)
    if found is None:
        return None
    placement, removed = found
    for _ in range(max(0, params.reorder_count)):
        tried = order.read()
        reordered = _reorder(tried, removed, placement, usage, params)
        if reordered == tried:
            break
        ahead = order.reordered(reordered)
        again = _walk(tester, needs, nodes, partition, usage, ahead)
        if again is None:
            break
        order = ahead
        placement, removed = again
    victims = tuple(c.job_id for c in removed if _holds(c, usage, placement.nodes))
    return Preemption(placement, victims)


def preempt_by_suspension(
    tester: Tester,
    needs: Needs,
    nodes: Sequence[str],
    partition: str,
    usage: Usage,
    candidates: Sequence[Candidate],
) -> Placement | None:
    """preempt/qos with SUSPEND: the placement in the extra row, or None."""
    trial = usage.copy()
    suspend: list[int] = []
    for candidate in candidates:
        if candidate.mode is not PreemptBase.SUSPEND or not trial.in_rows(candidate.job_id):
            continue
        trial.unplace(candidate.job_id)
        suspend.append(candidate.job_id)
        if tester.test(needs, nodes, partition, trial) is not None:
            return tester.test(needs, nodes, partition, usage, suspend=suspend)
    return None
