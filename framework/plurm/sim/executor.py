"""An executor that runs nothing: jobs take their simulated run time, suspension pauses it,
and every signal is recorded.

A job's run time is ``JobRequest.sim_runtime`` (from ``--sim-runtime``, ``--wrap='sleep N'``
or its time limit, as the sbatch command decides); None runs until killed. With
``JobRequest.sim_wall_clock`` (a ``sleep``) suspension does not pause it: the job ends at its
start plus the run time, or at its resume when it was stopped past that. (A job that gang
suspends as it starts races its launch on Slurm, and its sleep may begin only at the first
resume; the deadline here counts from the start: tests/data/scenarios/PREEMPTION.md.)

Killing takes time on a real node: slurmstepd waits for the processes, then slurmd reports
the end, and only then are the nodes free. :class:`Teardown` holds those delays as measured
on Slurm 22.05 (tests/data/scenarios/PREEMPTION.md). A batch script runs on the job's first
node (its batch host); the job's other nodes run nothing unless it runs job steps, so a
killed job without steps frees them almost at once (tests/data/oracle/cli: linear/178,
requeue/015), reported through ``on_release``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from plurm.model.job import Job, JobState
from plurm.sim.engine import SimClock, SimTimer

SIGKILL = 9
SIGTERM = 15
#: A shell's exit status when the command it waits for was killed by SIGTERM (128 + 15).
TERMINATED = 128 + SIGTERM

__all__ = ["SimExecutor", "Teardown"]


@attrs.frozen
class Teardown:
    """Seconds between a job's processes dying and the executor reporting the job's end.

    Measured on Slurm 22.05 with KillWait=5: a batch job that dies at SIGTERM frees its
    node 3.68-3.78 s after the kill (``after_term``); one that ignores SIGTERM frees it
    8.35 s after the kill, i.e. ``after_kill`` after the SIGKILL that KillWait later ends
    it. A job step (``srun``) killed by SIGTERM makes its batch script exit 143 about 3 s
    later (``step_exit``). A job that ends by itself is reported at once. The nodes of a
    killed job other than its batch host, where a job without steps runs nothing, are
    free ``other_nodes`` after the kill: within the second of the kill in every 22.05
    recording (the squeue right after ``scontrol requeue`` lists the batch host only).
    """

    after_term: float = 3.7
    after_kill: float = 3.35
    step_exit: float = 3.0
    other_nodes: float = 0.0


class SimExecutor:
    """Implements :class:`plurm.controller.runtime.Executor` on a :class:`SimClock`."""

    def __init__(self, clock: SimClock, teardown: Teardown | None = None) -> None:
        self.clock = clock
        self.teardown = teardown if teardown is not None else Teardown()
        self.on_end: Callable[[int, int, int], None] = lambda job_id, code, signal: None
        #: Called with a killed job's id and the nodes its processes are gone from, before
        #: its end (Controller.nodes_released).
        self.on_release: Callable[[int, tuple[str, ...]], None] = lambda job_id, nodes: None
        self._remaining: dict[int, float | None] = {}
        self._since: dict[int, float] = {}
        #: Wall-clock jobs: when their command ends by itself, suspended or not.
        self._deadline: dict[int, float] = {}
        self._timers: dict[int, SimTimer] = {}
        #: Every signal each job received: (time, signal name).
        self.signals: dict[int, list[tuple[float, str]]] = {}
        #: Nodes whose slurmd is stopped: they answer no ping.
        self.stopped_slurmd: set[str] = set()
        #: Told when a slurmd starts again (it registers) and when one stops.
        self.on_register: Callable[[str], None] = lambda name: None
        self.on_silence: Callable[[], None] = lambda: None
        #: Told of every job that starts (jobacct_gather's polls, when a plugin samples).
        self.on_start: Callable[[Job], None] | None = None
        #: Told of a job ended for its memory (Controller.job_ended as OUT_OF_MEMORY).
        self.on_out_of_memory: Callable[[int], None] = lambda job_id: None

    def ping(self, names: Sequence[str]) -> frozenset[str]:
        return frozenset(name for name in names if name not in self.stopped_slurmd)

    def stop_slurmd(self, name: str) -> None:
        """The node's slurmd dies (its jobs' processes run on, unheard of)."""
        self.stopped_slurmd.add(name)
        self.on_silence()

    def start_slurmd(self, name: str) -> None:
        """The node's slurmd starts again and registers with the controller."""
        if name in self.stopped_slurmd:
            self.stopped_slurmd.discard(name)
            self.on_register(name)

    def _record(self, job: Job, signal: str) -> None:
        self.signals.setdefault(job.job_id, []).append((self.clock.now(), signal))

    def _arm(self, job: Job) -> None:
        remaining = self._remaining.get(job.job_id)
        self._since[job.job_id] = self.clock.now()
        if remaining is None:
            return
        job_id = job.job_id
        code = job.request.sim_exit_code
        end = self.clock.now() + remaining
        deadline = self._deadline.get(job_id)
        if deadline is not None:
            # A stopped sleep wakes when continued if its deadline passed meanwhile.
            end = max(self.clock.now(), deadline)
        self._timers[job_id] = self.clock.call_at(end, lambda: self._ended(job_id, code))

    def _disarm(self, job: Job) -> None:
        timer = self._timers.pop(job.job_id, None)
        if timer is not None:
            self.clock.cancel(timer)
        remaining = self._remaining.get(job.job_id)
        if remaining is not None:
            ran = self.clock.now() - self._since.get(job.job_id, self.clock.now())
            self._remaining[job.job_id] = max(0.0, remaining - ran)

    def _ended(self, job_id: int, code: int, signal: int = 0) -> None:
        self._timers.pop(job_id, None)
        self._remaining.pop(job_id, None)
        self._deadline.pop(job_id, None)
        self.on_end(job_id, code, signal)

    def start(self, job: Job) -> None:
        runtime = job.request.sim_runtime
        if runtime is not None and job.checkpointed:
            runtime = max(0.0, runtime - job.checkpointed)  # CHECKPOINT kept the work done
        self._remaining[job.job_id] = runtime
        self._deadline.pop(job.job_id, None)
        if job.request.sim_wall_clock and runtime is not None:
            self._deadline[job.job_id] = self.clock.now() + runtime
        self._arm(job)
        if self.on_start is not None:
            self.on_start(job)

    def ends_by(self, job: Job) -> float | None:
        """When the job's command ends by itself, as its timer says. None for a job that
        runs steps: a signal to its steps alone ends its script a moment after the steps
        die, which can be later than that."""
        timer = self._timers.get(job.job_id)
        if timer is None or job.request.runs_steps:
            return None
        return timer.when

    def out_of_memory(self, job: Job) -> None:
        """The job went over its memory limit: it is SIGKILLed now and ends OUT_OF_MEMORY,
        as slurmstepd ends it."""
        self._record(job, "KILL (OOM)")
        self._disarm(job)
        job_id = job.job_id
        self._stopped(job_id)

        def ended() -> None:
            self._timers.pop(job_id, None)
            self._remaining.pop(job_id, None)
            self.on_out_of_memory(job_id)

        self._timers[job_id] = self.clock.call_at(self.clock.now(), ended)

    def suspend(self, job: Job) -> None:
        self._record(job, "STOP")
        self._disarm(job)

    def resume(self, job: Job) -> None:
        self._record(job, "CONT")
        self._arm(job)

    def signal(
        self, job: Job, signal: str, *, steps_only: bool = False, batch_only: bool = False
    ) -> None:
        """Record the signal; SIGKILL ends the job, so does SIGTERM unless it traps it.

        With ``steps_only`` a signal reaches the job only if it runs steps (``srun``); a
        step killed by SIGTERM makes its script exit 143 shortly after. With ``batch_only``
        it reaches the batch shell alone, which a TERM or KILL ends as it ends the job.
        """
        scope = " (steps)" if steps_only else " (batch)" if batch_only else ""
        self._record(job, f"{signal}{scope}")
        number = {"KILL": SIGKILL, "TERM": SIGTERM}.get(signal)
        if number is None or (number == SIGTERM and job.request.ignore_sigterm):
            return
        job_id = job.job_id
        if steps_only:
            if not job.request.runs_steps or job_id not in self._remaining:
                return
            self._disarm(job)
            self._stopped(job_id)
            self._later(job_id, self.teardown.step_exit, TERMINATED, 0)
            return
        self._disarm(job)
        self._stopped(job_id)
        self.clock.call_at(self.clock.now(), lambda: self._ended(job_id, 0, number))

    def _stopped(self, job_id: int) -> None:
        """The job's command is dying: nothing of its own run time is left."""
        self._remaining[job_id] = 0.0
        self._deadline.pop(job_id, None)

    def _later(self, job_id: int, delay: float, code: int, signal: int) -> None:
        self._timers[job_id] = self.clock.call_at(
            self.clock.now() + delay, lambda: self._ended(job_id, code, signal)
        )

    def kill(self, job: Job, kill_wait: int) -> None:
        """A job dies at SIGTERM, as a shell script running ``sleep`` does, unless it
        ignores SIGTERM; then SIGKILL ends it ``kill_wait`` seconds later. Its end is
        reported after the :class:`Teardown` delay; the release of its other nodes, if it
        runs no steps there, right after the kill."""
        self._disarm(job)
        job_id = job.job_id
        self._stopped(job_id)
        others = job.nodes[1:]
        if others and not job.request.runs_steps:
            self.clock.call_at(
                self.clock.now() + self.teardown.other_nodes,
                lambda: self.on_release(job_id, others),
            )
        if job.state is JobState.SUSPENDED:
            self._record(job, "KILL")
            self._later(job_id, self.teardown.after_kill, 0, SIGKILL)
            return
        self._record(job, "CONT")
        self._record(job, "TERM")
        if not job.request.ignore_sigterm:
            self._later(job_id, self.teardown.after_term, 0, SIGTERM)
            return

        def sigkill() -> None:
            self._record(job, "KILL")
            self._later(job_id, self.teardown.after_kill, 0, SIGKILL)

        self._timers[job_id] = self.clock.call_at(self.clock.now() + kill_wait, sigkill)
