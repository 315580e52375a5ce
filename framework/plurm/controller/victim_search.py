"""The search for a cheaper set of preemption victims than select's (Slurm's) own.

Select removes a preemptor's candidates in order until the job fits: Slurm's choice. When a
plugin gives each candidate a cost (``preempt_victim_cost``: 1 per victim for
``PreemptParameters=victims=fewest``, the work thrown away for ``least_lost_work``), the
core looks for a set of candidates with a lower summed cost with which the job still
starts now. Each set is tried as a dry run of select (``select_job_test`` RUN_NOW with that
set as the only candidates), as the Kubernetes scheduler's preemption tries its victims on
a copy of the node: every select plugin places the job its own way (idle resources first,
then the candidates it needs), so the search works alike for whole nodes and shared ones,
every PreemptMode and gang scheduling. Select's answer for a set may take only part of it;
the set's cost is that of the victims select actually took.

The search, in order:

1. Select's victims (Slurm's set) are the answer to beat; first each of them is left out in
   turn, the most costly first, and dropped when the job still starts without it.
2. The pool: every candidate when there are at most :data:`EXACT_CANDIDATES`; else the
   victims of step 1 and the candidates of lowest cost per CPU among the first
   :data:`READ_LIMIT` in Slurm's order (the rest are not read), up to
   :data:`EXACT_CANDIDATES` in all.
3. Every subset of the pool cheaper than the best answer so far, cheapest first (ties:
   the subset whose candidates come first in Slurm's order), is tried until one lets the
   job start: the first that does is the cheapest. Only subsets of no more candidates
   than Slurm's set are tried: no objective takes more victims than Slurm. A subset of
   one that failed is not tried (removing fewer jobs does not make room). At most
   :data:`MAX_TESTS` dry runs and :data:`MAX_SUBSETS` subsets per decision.

The search is exact (its answer is a cheapest set of all candidates) when the pool holds
every candidate and neither bound was reached; otherwise it returns the best set it found,
never worse than Slurm's (it starts from Slurm's set, trimmed).

Each candidate ends with a :class:`CandidateStatus`, the grounds a future
``scontrol explain`` can report.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Mapping, Sequence

import attrs

from plurm.model.select import Candidate, SelectResult, SelectStatus

__all__ = [
    "EXACT_CANDIDATES",
    "MAX_SUBSETS",
    "MAX_TESTS",
    "READ_LIMIT",
    "CandidateStatus",
    "VictimChoice",
    "choose_victims",
]

#: The largest pool searched subset by subset (2**12 subsets at most).
EXACT_CANDIDATES = 12
#: How many candidates, in Slurm's order, a bounded search reads to pick its pool from.
READ_LIMIT = 64
#: The most dry runs of select one decision makes.
MAX_TESTS = 256
#: The most subsets of the pool one decision ranks.
MAX_SUBSETS = 4096


class CandidateStatus(enum.Enum):
    """What became of one candidate in the search."""

    #: A victim of the chosen set.
    TAKEN = "taken"
    #: Searched, and left alone: the chosen set did without it.
    NOT_NEEDED = "not needed"
    #: Beyond the bounded search's pool: never tried (not taken).
    NOT_SEARCHED = "not searched"


@attrs.frozen
class VictimChoice:
    """The outcome of one search: select's answer for the chosen set (its nodes and
    victims), whether the set is a cheapest one over every candidate, the chosen cost and
    Slurm's, the dry runs made, and each searched candidate's status by job id."""

    result: SelectResult
    exact: bool
    cost: float
    slurm_cost: float
    tests: int
    statuses: Mapping[int, CandidateStatus] = attrs.field(factory=dict)


def _fits(result: SelectResult, allowed: set[int]) -> bool:
    return result.status is SelectStatus.SUCCESS and set(result.victims) <= allowed


def choose_victims(
    slurm: SelectResult,
    candidates: Sequence[Candidate],
    cost_of: Callable[[Candidate], float],
    test: Callable[[Sequence[Candidate]], SelectResult],
) -> VictimChoice:
    """The cheapest set of ``candidates`` (in Slurm's order) found that lets the job start,
    given select's answer ``slurm`` with them, each candidate's cost (``cost_of``) and a
    dry run of select with a list of candidates (``test``)."""
    order: dict[int, int] = {}
    read: list[Candidate] = []
    chosen = set(slurm.victims)
    complete = True
    for index, candidate in enumerate(candidates):
        if index >= READ_LIMIT and chosen <= order.keys():
            complete = False
            break
        order[candidate.job_id] = index
        read.append(candidate)
    costs = {c.job_id: cost_of(c) for c in read}
    by_id = {c.job_id: c for c in read}
    tests = 0

    def key(victims: Sequence[int]) -> tuple[float, tuple[int, ...]]:
        return (sum(costs[v] for v in victims), tuple(sorted(order[v] for v in victims)))

    def trial(members: Sequence[Candidate]) -> SelectResult:
        nonlocal tests
        tests += 1
        return test(sorted(members, key=lambda c: order[c.job_id]))

    # 1. Slurm's set, trimmed: the most costly victim first.
    best = slurm
    for victim_id in sorted(slurm.victims, key=lambda v: (-costs[v], -order[v])):
        if victim_id not in best.victims or len(best.victims) < 2:
            continue
        rest = [by_id[v] for v in best.victims if v != victim_id]
        answer = trial(rest)
        if _fits(answer, {c.job_id for c in rest}):
            best = answer
    # 2. The pool.
    if len(read) <= EXACT_CANDIDATES and complete:
        pool = read
    else:
        complete = False
        pool = [by_id[v] for v in best.victims]
        others = sorted(
            (c for c in read if c.job_id not in best.victims),
            key=lambda c: (costs[c.job_id] / _size(c), order[c.job_id]),
        )
        pool += others[: max(0, EXACT_CANDIDATES - len(pool))]
        pool.sort(key=lambda c: order[c.job_id])
    # 3. Cheaper subsets of the pool, cheapest first.
    best_key = key(best.victims)
    subsets, bounded = _cheaper_subsets(pool, costs, best_key[0], len(slurm.victims))
    subsets.sort(key=lambda members: key([c.job_id for c in members]))
    failed: list[int] = []  # bitmasks of pool positions of subsets that did not fit
    position = {c.job_id: i for i, c in enumerate(pool)}
    exact = complete and not bounded
    for members in subsets:
        members_key = key([c.job_id for c in members])
        if members_key >= best_key:
            break
        mask = sum(1 << position[c.job_id] for c in members)
        if any(mask & ~bad == 0 for bad in failed):
            continue
        if tests >= MAX_TESTS:
            exact = False
            break
        answer = trial(members)
        if _fits(answer, {c.job_id for c in members}):
            best, best_key = answer, key(answer.victims)
            break
        failed.append(mask)
    taken = set(best.victims)
    searched = {c.job_id for c in pool} | set(slurm.victims)
    statuses = {
        c.job_id: CandidateStatus.TAKEN
        if c.job_id in taken
        else CandidateStatus.NOT_NEEDED
        if c.job_id in searched or exact
        else CandidateStatus.NOT_SEARCHED
        for c in read
    }
    return VictimChoice(
        result=best,
        exact=exact,
        cost=best_key[0],
        slurm_cost=key(slurm.victims)[0],
        tests=tests,
        statuses=statuses,
    )


def _cheaper_subsets(
    pool: Sequence[Candidate], costs: Mapping[int, float], bound: float, most: int
) -> tuple[list[list[Candidate]], bool]:
    """The non-empty subsets of ``pool`` of at most ``most`` candidates costing at most
    ``bound`` (ties are ranked by the caller), at most :data:`MAX_SUBSETS` of them; and
    whether that cap cut them."""
    found: list[list[Candidate]] = []
    for size in range(1, min(len(pool), most) + 1):
        cheapest = sorted(costs[c.job_id] for c in pool)[:size]
        if sum(cheapest) > bound:
            break  # (every larger subset costs more too: costs are never negative)
        for members in itertools.combinations(pool, size):
            if sum(costs[c.job_id] for c in members) <= bound:
                if len(found) >= MAX_SUBSETS:
                    return found, True
                found.append(list(members))
    return found, False


def _size(candidate: Candidate) -> int:
    """How much a candidate frees, roughly: the CPUs it asked for, at least one per node."""
    job = candidate.job
    return max(job.request.cpus, len(job.nodes), 1)
