"""What the controller needs from its driver: a clock with timers, and an executor.

The simulator drives the controller with a simulated clock (an event heap) and an executor
that only pretends to run jobs; the live daemons will drive the same controller with the wall
clock and real processes. The controller calls nothing else from the outside world.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from plurm.model.job import Job

__all__ = ["Executor", "Timer", "TimerHandle"]


class TimerHandle(Protocol):
    """Something :meth:`Timer.cancel` accepts."""


class Timer(Protocol):
    """The controller's clock."""

    def now(self) -> float:
        """Seconds since the clock's epoch."""
        ...

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        """Call ``callback`` at time ``when`` (never before ``now()``); ties run in the order
        they were scheduled."""
        ...

    def cancel(self, handle: TimerHandle) -> None:
        """Forget a callback that has not run yet."""
        ...


class Executor(Protocol):
    """Runs, pauses and stops jobs' processes, and reaches the nodes' slurmd. Each method
    returns at once; when a job's processes end, for whatever reason, the executor calls
    ``Controller.job_ended`` later, from a timer callback, never from inside one of these
    calls. After a kill it may first call ``Controller.nodes_released`` for nodes the job's
    processes are already gone from (slurmd frees each node as its teardown ends; the batch
    host's takes longest). A slurmd that starts calls ``Controller.node_registered``; one
    that stops calls ``Controller.nodes_may_be_silent``, which a real cluster learns only
    from its pings."""

    def ping(self, names: Sequence[str]) -> frozenset[str]:
        """The nodes among ``names`` whose slurmd answers a ping now."""
        ...

    def start(self, job: Job) -> None:
        """Launch the job on ``job.nodes``."""
        ...

    def ends_by(self, job: Job) -> float | None:
        """A time by which the job's running processes will have ended by themselves,
        whatever the controller does to them short of suspending them (a suspended job's
        end is asked again when it resumes); None when the driver cannot tell, as with real
        processes. The simulator knows each job's run time: the controller arms no
        time-limit check that the job's own end comes before."""
        ...

    def suspend(self, job: Job) -> None:
        """Stop the job's processes (SIGTSTP, then SIGSTOP)."""
        ...

    def resume(self, job: Job) -> None:
        """Continue them (SIGCONT)."""
        ...

    def signal(
        self, job: Job, signal: str, *, steps_only: bool = False, batch_only: bool = False
    ) -> None:
        """Send ``signal`` (a name such as "TERM") to the job's processes; with
        ``steps_only``, to its job steps (srun) but not its batch script; with
        ``batch_only``, to its batch shell alone (sbatch --signal=B:...)."""
        ...

    def kill(self, job: Job, kill_wait: int) -> None:
        """End the job's processes as slurmd does: SIGCONT and SIGTERM, then SIGKILL
        ``kill_wait`` seconds later if they still run; a suspended job gets SIGKILL at once.
        Its end is reported, with the signal that ended it, once its nodes are clean (the
        controller shows it COMPLETING until then)."""
        ...
