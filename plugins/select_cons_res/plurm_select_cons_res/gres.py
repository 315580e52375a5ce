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
#: How many different needs ``GresState.free_everywhere`` remembers before it starts afresh.
_FREE_MEMO_NEEDS = 64


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
        # need -> node -> whether the need's units are free there with every job's counted
        # (entries of a node go when a job takes or gives back units there)
        self._free_for: dict[tuple[GresAsk, ...], dict[str, bool]] = {}
        #: Bumped whenever a job takes or gives back units.
        self.version = 0
        # need -> (the node list, version, the answer) of the last free_everywhere: the
        # same list (a remembered one) is asked about again at every dry run of a search
        self._free_lists: dict[tuple[GresAsk, ...], tuple[Sequence[str], int, list[str]]] = {}
        self._positions: tuple[Sequence[str], dict[str, int]] | None = None

    def free_everywhere(self, need: tuple[GresAsk, ...], nodes: Sequence[str]) -> list[str]:
        """The nodes of ``nodes`` (in their order) where ``need`` is free with every job's
        units counted: ``choose(node, need, None)`` succeeds, remembered per node."""
        last = self._free_lists.get(need)
        if last is not None and last[0] is nodes and last[1] == self.version:
            return last[2]
        known = self._free_for.get(need)
        if known is None:
            if len(self._free_for) >= _FREE_MEMO_NEEDS:
                self._free_for.clear()
            known = self._free_for[need] = {}
        found: list[str] = []
        for name in nodes:
            free = known.get(name)
            if free is None:
                free = known[name] = self.choose(name, need, None) is not None
            if free:
                found.append(name)
        if len(self._free_lists) >= _FREE_MEMO_NEEDS:
            self._free_lists.clear()
        self._free_lists[need] = (nodes, self.version, found)
        return found

    def positions(self, nodes: Sequence[str]) -> dict[str, int]:
        """Each node's place in ``nodes``, kept for the last list asked about."""
        known = self._positions
        if known is None or known[0] is not nodes:
            known = self._positions = (nodes, {name: i for i, name in enumerate(nodes)})
        return known[1]

    def absent_from(self, usage: Usage) -> set[str]:
        """The nodes where a job holding units has no allocation in ``usage``."""
        held = self.held
        absent: set[str] = set()
        for job_id in held.keys() - usage.allocations.keys():
            absent.update(held[job_id])
        return absent

    def _forget(self, nodes: Collection[str]) -> None:
        self.version += 1
        for known in self._free_for.values():
            for name in nodes:
                known.pop(name, None)

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
        self._forget(held)
        for node in held:
            self.on_node.setdefault(node, set()).add(job_id)

    def release(self, job_id: int, nodes: Collection[str] | None = None) -> None:
        held = self.held.get(job_id)
        if held is None:
            return
        gone = list(held) if nodes is None else [n for n in nodes if n in held]
        self._forget(gone)
        for node in gone:
            self.on_node.get(node, set()).discard(job_id)
            del held[node]
        if not held or nodes is None:
            del self.held[job_id]


class GresTester:
    """A :class:`Tester` that also needs ``need`` of each node: it tests only the nodes
    where the units are free in the usage tested (so a copy without a candidate frees
    the candidate's units), and with binding checks each chosen node's bound units.

    The nodes where the units are free with every job's units counted are found once
    (``GresState`` remembers them per node); a usage without some jobs (the preemption
    loop's copies) only adds nodes those jobs hold units on, so only those are looked at
    again: for a copy, the nodes of the jobs it dropped (``Usage.dropped``) and those its
    origin lacks. ``reference`` looks at every node and every job each time instead (what
    the tests compare with)."""

    def __init__(
        self,
        inner: Tester,
        state: GresState,
        need: tuple[GresAsk, ...],
        binding: bool,
        *,
        reference: bool = False,
    ) -> None:
        self.inner = inner
        self.state = state
        self.need = need
        self.binding = binding
        self.reference = reference
        self._base: tuple[Sequence[str], list[str], set[str], dict[str, int] | None] | None = None
        self._absent: tuple[Usage, set[str]] | None = None

    def _absent_nodes(self, usage: Usage) -> set[str]:
        """Nodes where a job holding units is not in ``usage`` (a superset)."""
        state = self.state
        origin = usage.origin
        known = self._absent
        if not self.reference and (
            origin is not None or (usage.dry and known is not None and known[0] is usage)
        ):
            # a copy, or a dry run of the usage known before it: what it lacks, and the
            # nodes of the jobs it dropped
            before = self._absent_nodes(origin) if origin is not None else known[1]  # type: ignore[index]
            absent = set(before)
            allocations = usage.allocations
            for job_id in usage.dropped:
                held = state.held.get(job_id)
                if held is not None and job_id not in allocations:
                    absent.update(held)
            return absent
        if usage.dry:  # not known before: worked out, not kept
            return state.absent_from(usage)
        if known is not None and known[0] is usage and not self.reference:
            return known[1]
        absent = state.absent_from(usage)
        self._absent = (usage, absent)
        return absent

    def knows_absent(self, usage: Usage, absent: set[str]) -> None:
        """Take ``absent`` as :meth:`_absent_nodes` of ``usage`` (worked out before for
        the same usage unchanged)."""
        self._absent = (usage, absent)

    def fit(self, nodes: Sequence[str], usage: Usage) -> list[str]:
        """The nodes with the job's share free in ``usage``, in the order given."""
        state, need = self.state, self.need
        allocations = usage.allocations
        if not allocations:  # an idle cluster
            return [n for n in nodes if state.choose(n, need, None, idle=True) is not None]
        known = self._base
        if known is None or known[0] is not nodes:
            if self.reference:
                base = [n for n in nodes if state.choose(n, need, None) is not None]
            else:
                base = state.free_everywhere(need, nodes)
            known = self._base = (nodes, base, set(base), None)
        _, base, base_set, position = known
        touched = self._absent_nodes(usage)
        if not touched:
            return base
        if self.reference:
            return [
                n
                for n in nodes
                if n in base_set or (n in touched and state.choose(n, need, usage) is not None)
            ]
        if position is None:
            position = state.positions(nodes)
            self._base = (nodes, base, base_set, position)
        extra = [
            n
            for n in touched
            if n in position and n not in base_set and state.choose(n, need, usage) is not None
        ]
        if not extra:
            return base
        return sorted((*base, *extra), key=position.__getitem__)

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
