"""Node health: the controller's pings, not-responding nodes, and ReturnToService.

Slurm's controller pings its nodes' slurmd every third of SlurmdTimeout. A node that does
not answer is flagged NOT_RESPONDING (sinfo's ``idle*``) and gets no new jobs; once it has
stayed silent for SlurmdTimeout it is set DOWN with reason "Not responding" (``down*``),
and its jobs are lost with it. Hearing from a node again (a ping answer, or its slurmd
registering when it starts) clears the flag and, as ReturnToService says, may bring a DOWN
node back into service (:func:`plurm.model.node.after_contact`).

The rounds, as modelled (deterministic, fitted to Slurm 22.05 with SlurmdTimeout=8, in
tests/data/oracle/cli/trials/ping.out and the ``down`` records):

- a round starts on a tick of the ping period (``SlurmdTimeout // 3`` seconds, counted from
  the controller's start) when no round is under way, and pings every node except those
  already DOWN and not responding (they come back by registering);
- if every node answers, the round's answers count at once; if one is silent, the
  controller waits MessageTimeout for it and takes the round's answers on the first tick
  after that wait: the silent nodes are flagged NOT_RESPONDING, and those flagged at least
  SlurmdTimeout earlier are set DOWN.

A slurmd killed at 4.2-5.0 s was flagged at 17.3-17.5 s and set DOWN at 30.0-30.1 s on
real Slurm, in four runs; this gives 18 s and 30 s. Admin-DOWN nodes came back (RTS=2)
with that same round's answers; here an idle cluster's round revives them earlier.

Rounds are timers only while one could change something (a node flagged or silent, a DOWN
node that an answer would bring back), so that an idle simulation ends.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from plurm.controller.runtime import Timer, TimerHandle
from plurm.model.cluster import Cluster
from plurm.model.node import NodeCondition, after_contact, not_responding_down

__all__ = ["NodeHealth"]

#: Less than any time step that matters: "strictly after" on a float clock.
_EPSILON = 1e-6


class Pinger(Protocol):
    """The part of the executor that reaches the nodes' slurmd."""

    def ping(self, names: Sequence[str]) -> frozenset[str]:
        """The nodes among ``names`` whose slurmd answers now."""
        ...


class NodeHealth:
    """Ping rounds and their consequences for one controller's cluster.

    ``set_condition(name, condition)`` is the controller's one way to change a node's
    condition: health takes a silent node DOWN through it (the controller fails or requeues
    its jobs) and brings a DOWN node back; ``changed()`` tells the controller that nodes
    came back, so that it schedules.
    """

    def __init__(
        self,
        cluster: Cluster,
        timer: Timer,
        pinger: Pinger,
        *,
        epoch: float,
        set_condition: Callable[[str, NodeCondition | None], None],
        changed: Callable[[], None],
    ) -> None:
        config = cluster.config
        self.cluster = cluster
        self.timer = timer
        self.pinger = pinger
        self.epoch = epoch
        self.timeout = config.slurmd_timeout
        #: Slurm pings every third of SlurmdTimeout; with SlurmdTimeout=0 it does not test
        #: nodes at all.
        self.interval = max(1, self.timeout // 3) if self.timeout else 0
        self.wait = config.message_timeout
        self.return_to_service = config.return_to_service
        self._set_condition = set_condition
        self._changed = changed
        #: When each silent node was first found silent.
        self._silent_since: dict[str, float] = {}
        self._timer: TimerHandle | None = None

    # ----------------------------------------------------------------------------- events

    def contact(self, names: Iterable[str]) -> None:
        """The controller heard from these nodes' slurmd (a registration, an answer)."""
        self._hear(names)
        self.wake()

    def _hear(self, names: Iterable[str]) -> None:
        cluster = self.cluster
        revived = False
        for name in names:
            self._silent_since.pop(name, None)
            if name in cluster.not_responding:  # idle* again idle: jobs may use it now
                cluster.set_responding(name, True)
                revived = True
            current = cluster.node_down.get(name)
            updated = after_contact(current, self.return_to_service)
            if updated is current:
                continue
            revived = True
            self._set_condition(name, updated)
        if revived:
            self._changed()

    def wake(self) -> None:
        """Something may need a ping round (a slurmd stopped, an admin set a node DOWN): the
        first at a tick after now (this tick's round, needed or not, is past)."""
        if self._timer is None and self._needed():
            self._arm(self._next_tick(self.timer.now() + _EPSILON))

    # ----------------------------------------------------------------------------- rounds

    def _pingable(self) -> list[str]:
        """Every node but those already DOWN and not responding."""
        down = self.cluster.node_down
        flagged = self.cluster.not_responding
        return [
            name
            for name in self.cluster.config.node_names
            if not (name in flagged and name in down and down[name].down)
        ]

    def _needed(self) -> bool:
        """Whether a round could change anything: a node to flag or to take DOWN, or a DOWN
        node that an answer would bring back."""
        if not self.interval:
            return False
        targets = self._pingable()
        if any(name in self._silent_since for name in targets):
            return True
        down = self.cluster.node_down
        rts = self.return_to_service
        if any(
            name in down and after_contact(down[name], rts) is not down[name] for name in targets
        ):
            return True
        return len(self.pinger.ping(targets)) < len(targets)

    def _next_tick(self, at: float) -> float:
        """The first tick of the ping period at or after ``at``."""
        # a hair below a whole tick counts as on it (float division of an exact tick)
        ticks = math.ceil((at - self.epoch) / self.interval - 1e-9)
        return self.epoch + ticks * self.interval

    def _arm(self, at: float) -> None:
        def run() -> None:
            self._timer = None
            self._round()

        self._timer = self.timer.call_at(at, run)

    def _round(self) -> None:
        now = self.timer.now()
        targets = self._pingable()
        answered = self.pinger.ping(targets)
        silent = [name for name in targets if name not in answered]
        if not silent:
            self.contact(answered)
            return
        # The controller waits MessageTimeout for the silent ones and takes the round's
        # answers on its first tick after that.
        done = self._next_tick(now + self.wait + _EPSILON)

        def collect() -> None:
            self._timer = None
            self._collect(answered, silent)

        self._timer = self.timer.call_at(done, collect)

    def _collect(self, answered: frozenset[str], silent: Sequence[str]) -> None:
        now = self.timer.now()
        again = self.pinger.ping(silent)  # a slurmd that came back has registered meanwhile
        cluster = self.cluster
        for name in silent:
            if name in again:
                continue
            since = self._silent_since.setdefault(name, now)
            cluster.set_responding(name, False)
            current = cluster.node_down.get(name)
            already_down = current is not None and current.down
            if self.timeout and now - since >= self.timeout and not already_down:
                self._set_condition(name, not_responding_down(current, now=now))
        self._hear(answered)
        if self._needed():  # the round that was waited for is over: the next one starts now
            self._arm(now)
