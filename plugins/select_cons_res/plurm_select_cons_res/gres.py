"""Generic resources (GPUs) for cons_res/cons_tres: which units each job holds on each node.

Only jobs that ask for generic resources come here; a job without them costs one attribute
read in ``select_job_test``. Each (name, type) of a node's ``Gres=`` is a range of unit
indexes, in the order the node line lists them (the device indexes gres.conf's files get,
in order). A job holds units on its nodes from its start to its end.

What a job holds counts against a usage only while the job is in it: a copy of the usage
without a preemption candidate (Slurm's simulate-and-test loop, ``preempt``) frees the
candidate's units too, so the loop finds the victims that hold a node's GPUs. A suspended
job keeps its units (Slurm releases only the cores of a suspended job), so a job that needs
them cannot start on top of it.

With ``--gres-flags=enforce-binding`` a job may only take units whose gres.conf ``Cores``
meet the cores it is given on the node; the placement is tested first and a node where the
bound units are not free enough fails the test (Slurm chooses the cores near the free GPUs
instead; Plurm does not move the cores).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from plurm.conf.model import GresConfig, GresCount
from plurm.model.gres import GresAsk
from plurm_select_cons_res.steps import Placement, Tester
from plurm_select_cons_res.usage import Usage

__all__ = ["GresState", "GresTester", "Held"]

#: (name, type) -> unit indexes, on one node.
Held = dict[tuple[str, str | None], tuple[int, ...]]


class GresState:
    """The units every job holds, by job and by node."""

    def __init__(self, gres: GresConfig) -> None:
        self.counts: Mapping[str, tuple[GresCount, ...]] = gres.counts
        self.devices = gres.devices
        #: job id -> node -> what it holds there.
        self.held: dict[int, dict[str, Held]] = {}
        #: node -> the jobs holding units there.
        self.on_node: dict[str, set[int]] = {}
        # node -> (name, type) -> first unit index, worked out once per node
        self._ranges: dict[str, list[tuple[str, str | None, int, int]]] = {}

    def ranges(self, node: str) -> list[tuple[str, str | None, int, int]]:
        """(name, type, first index, count) of each Gres= entry of ``node``."""
        known = self._ranges.get(node)
        if known is None:
            known = []
            first: dict[str, int] = {}
            for count in self.counts.get(node, ()):
                start = first.get(count.name, 0)
                known.append((count.name, count.type, start, count.count))
                first[count.name] = start + count.count
            self._ranges[node] = known
        return known

    def used(self, node: str, usage: Usage | None) -> dict[tuple[str, str | None], set[int]]:
        """The units held on ``node`` by the jobs of ``usage`` (all jobs when None)."""
        used: dict[tuple[str, str | None], set[int]] = {}
        for job_id in self.on_node.get(node, ()):
            if usage is not None and job_id not in usage.allocations:
                continue
            for key, indexes in self.held[job_id][node].items():
                used.setdefault(key, set()).update(indexes)
        return used

    def choose(
        self,
        node: str,
        need: Sequence[GresAsk],
        usage: Usage | None,
        cores: Collection[int] | None = None,
        *,
        idle: bool = False,
    ) -> Held | None:
        """Units for ``need`` on ``node``, the lowest free indexes first (those bound to
        ``cores`` only, when given); None when there are not enough."""
        used = {} if idle else self.used(node, usage)
        taken: dict[tuple[str, str | None], set[int]] = {}
        chosen: Held = {}
        ranges = self.ranges(node)
        for ask in sorted(need, key=lambda a: a.type is None):  # typed asks first
            wanted = ask.count
            picked: list[int] = []
            for name, gtype, start, count in ranges:
                if name != ask.name or (ask.type is not None and gtype != ask.type):
                    continue
                busy = used.get((name, gtype), set()) | taken.get((name, gtype), set())
                if count - len(busy) <= 0:
                    continue
                for index in range(start, start + count):
                    if len(picked) == wanted:
                        break
                    if index in busy or not self._bound(node, index, cores):
                        continue
                    picked.append(index)
                    taken.setdefault((name, gtype), set()).add(index)
                    key = (name, gtype)
                    chosen[key] = (*chosen.get(key, ()), index)
                if len(picked) == wanted:
                    break
            if len(picked) < wanted:
                return None
        return chosen

    def _bound(self, node: str, index: int, cores: Collection[int] | None) -> bool:
        if cores is None:
            return True
        devices = self.devices.get(node, ())
        if index >= len(devices):
            return True
        bound = devices[index].cores
        return bound is None or not bound.isdisjoint(cores)

    def hold(self, job_id: int, held: Mapping[str, Held]) -> None:
        self.release(job_id)
        self.held[job_id] = dict(held)
        for node in held:
            self.on_node.setdefault(node, set()).add(job_id)

    def release(self, job_id: int, nodes: Collection[str] | None = None) -> None:
        held = self.held.get(job_id)
        if held is None:
            return
        for node in list(held) if nodes is None else [n for n in nodes if n in held]:
            self.on_node.get(node, set()).discard(job_id)
            del held[node]
        if not held or nodes is None:
            del self.held[job_id]


class GresTester:
    """A :class:`Tester` that also needs ``need`` of each node: it tests only the nodes
    where the units are free in the usage tested (so a copy without a candidate frees
    the candidate's units), and with binding checks each chosen node's bound units.

    The nodes where the units are free with every job's units counted are found once;
    a usage without some jobs (the preemption loop's copies) only adds nodes those jobs
    hold units on, so only those are looked at again."""

    def __init__(
        self, inner: Tester, state: GresState, need: tuple[GresAsk, ...], binding: bool
    ) -> None:
        self.inner = inner
        self.state = state
        self.need = need
        self.binding = binding
        self._base: tuple[Sequence[str], list[str], set[str]] | None = None

    def fit(self, nodes: Sequence[str], usage: Usage) -> list[str]:
        """The nodes with the job's share free in ``usage``, in the order given."""
        state, need = self.state, self.need
        allocations = usage.allocations
        if not allocations:  # an idle cluster
            return [n for n in nodes if state.choose(n, need, None, idle=True) is not None]
        known = self._base
        if known is None or known[0] is not nodes:
            base = [n for n in nodes if state.choose(n, need, None) is not None]
            known = self._base = (nodes, base, set(base))
        _, base, base_set = known
        touched: set[str] = set()
        for job_id, held in state.held.items():
            if job_id not in allocations:
                touched.update(held)
        if not touched:
            return base
        return [
            n
            for n in nodes
            if n in base_set or (n in touched and state.choose(n, need, usage) is not None)
        ]

    def test(
        self,
        needs: object,
        nodes: Sequence[str],
        partition: str,
        usage: Usage,
        suspend: Collection[int] | None = None,
    ) -> Placement | None:
        fit = self.fit(nodes, usage)
        placed = self.inner.test(needs, fit, partition, usage, suspend)  # type: ignore[arg-type]
        if placed is None or not self.binding:
            return placed
        for node, cores in placed.cores.items():
            if self.state.choose(node, self.need, usage, cores) is None:
                return None
        return placed
