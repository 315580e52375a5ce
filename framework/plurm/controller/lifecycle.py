"""The job lifecycle: every change of a job's state (:meth:`~LifecycleMixin._set_state`),
the commands on a job (scancel, scontrol suspend, resume and requeue), a job lost with its
node, the executor's reports (a job's end, nodes released), and the actions: start, kill,
suspend, resume, and carrying out gang scheduling's decisions.

Part of :class:`~plurm.controller.controller.Controller` (see :mod:`.base`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from plurm.conf.values import PreemptBase
from plurm.controller.base import (
    _COMPLETED,
    _COMPLETING,
    _FAILED,
    _HOLDING,
    _NO_REASON,
    _PENDING,
    _RUNNING,
    _SUSPENDED,
    ControllerBase,
    RequestError,
    _Ending,
)
from plurm.model.job import Job, JobState, PendingReason
from plurm.model.select import GangDecision

__all__ = ["REQUEUE_DELAY", "LifecycleMixin"]

#: Seconds a requeued job waits (reason BeginTime) before it may start again: Slurm makes it
#: eligible one second after its job credential expires (CredExpire, 120 s), counted from the
#: whole second it went back to the queue (22.05: requeued at 07:44:54.326, eligible 07:46:55).
REQUEUE_DELAY = 121

#: The reason a finished job shows for its ending (squeue %r, scontrol Reason=).
_ENDING_REASONS = {
    JobState.FAILED: PendingReason.NON_ZERO_EXIT_CODE,
    JobState.OUT_OF_MEMORY: PendingReason.OUT_OF_MEMORY,
    JobState.TIMEOUT: PendingReason.TIME_LIMIT,
}


class LifecycleMixin(ControllerBase):
    """The controller's job lifecycle."""

    # ----------------------------------------------------------------------------- state

    def _set_state(self, job: Job, state: JobState) -> None:
        old = job.state
        if old is state:
            return
        if old is _PENDING:
            self._refusals.pop(job.job_id, None)
        self.cluster.set_state(job, state)
        if old is _RUNNING:
            del self._running_ends[job.job_id]
            self.plugins.priority_job_end(job, self.cluster)
        elif state is _RUNNING:
            self._running_ends[job.job_id] = (
                job,
                self._limit_end(job),
                self.cluster.mask_of(job.held_nodes),
            )
        if old is _PENDING or state is _PENDING:
            self._file(job)
        victims = self._victims
        if victims is not None and (old in _HOLDING) is not (state in _HOLDING):
            if state in _HOLDING:
                victims.add(job)
            else:
                victims.discard(job.job_id)
        self.plugins.plurm_job_state_changed(job, old, state, self.cluster)

    # ----------------------------------------------------------------------------- commands

    def cancel(self, job_id: int, task: int | None = None) -> None:
        """scancel: a pending job is cancelled at once, a running one is killed. An array's
        id cancels all of its tasks; ``task`` cancels that task of the array ``job_id``."""
        self._tick()
        jobs = self._cancel_targets(job_id, task)
        live = [job for job in jobs if not job.state.finished and job.state is not _COMPLETING]
        if not live:
            raise RequestError("Job/step already completing or completed")
        for job in live:
            if job.state is JobState.PENDING:
                job.end_time = self.now  # Slurm keeps the reason it was pending for
                self._waiting.pop(job.job_id, None)
                self._set_state(job, JobState.CANCELLED)
                self._request_pass()
            else:
                self._kill(job, _Ending(JobState.CANCELLED))

    def _job_for(self, job_id: int, unknown: str) -> Job:
        job = self.cluster.jobs.get(job_id)
        if job is None:
            raise RequestError(unknown)
        return job

    def suspend(self, job_id: int) -> None:
        """scontrol suspend: an admin suspension, which gang scheduling will not undo.

        As in Slurm, the job's priority drops to 0 until it is resumed; suspending it again,
        or taking over a gang suspension, succeeds silently.
        """
        self._tick()
        job = self._job_for(job_id, "Unexpected message received")
        if job.state is JobState.PENDING:
            raise RequestError("Job is pending execution")
        if job.state.finished or job.state is JobState.COMPLETING:
            raise RequestError("Job/step already completing or completed")
        if job.admin_suspended:
            return
        if job.state is JobState.RUNNING:
            self._suspend(job, indefinite=True)
        job.admin_suspended = True
        job.priority = 0
        self._apply(self.plugins.sched_gang_job_fini(job, self.cluster))
        self._request_pass()

    def resume(self, job_id: int) -> None:
        """scontrol resume: undo an admin suspension; the job is re-prioritized as if newly
        submitted, as Slurm's priority/basic does. A gang-suspended job is continued too
        (Slurm lets it run beside its preemptor until the gang scheduler next acts).

        Gang scheduling learns of the resumed job only at its next time slice, when Slurm's
        time slicer takes in the running jobs it does not know: until then the job runs
        beside the jobs gang scheduling resumed in its place (22.05: a hipri job resumed
        by scontrol ran with the two jobs under it until the slicer's tick, ~3 s later,
        which suspended them again)."""
        self._tick()
        job = self._job_for(job_id, "Unexpected message received")
        if job.state.finished or job.state is JobState.COMPLETING:
            raise RequestError("Job/step already completing or completed")
        if job.state is not JobState.SUSPENDED:
            raise RequestError("Job is not suspended")
        if job.preempt_suspended and not job.admin_suspended:
            # suspended by a preemption that released its resources: it takes them back
            job.preempt_suspended = False
            self._resume(job, indefinite=True)
            return
        job.preempt_suspended = False
        if not job.admin_suspended:
            self._resume(job, indefinite=False)
            return
        job.admin_suspended = False
        job.priority = self._new_priority(job)
        self._resume(job, indefinite=True)
        if self._gang:
            self._resumed_unseen.add(job.job_id)
            self._arm_timeslice()

    def requeue(self, job_id: int) -> None:
        """scontrol requeue: back to the queue, eligible again after the requeue delay. A
        finished job is requeued too, as in Slurm."""
        self._tick()
        job = self._job_for(job_id, "Invalid job id specified")
        if job.state is JobState.PENDING:
            raise RequestError("Job is pending execution")
        if job.state is JobState.COMPLETING:
            raise RequestError("Job/step already completing or completed")
        if job.state.finished:
            job.end_time = None
            job.exit_code = job.exit_signal = 0
            allocation = job.nodes
            self._back_to_queue(job)
            job.requeued_allocation = allocation
            return
        self._kill(job, _Ending(JobState.PENDING, requeue=True))

    def _back_to_queue(self, job: Job, delay: int = REQUEUE_DELAY) -> None:
        """A requeued job: pending with reason BeginTime until the requeue delay passes
        (``delay`` seconds after the whole second it went back; 0: eligible at once, with
        no reason). A job killed to be requeued had its restart counted at the kill."""
        job.nodes = ()
        job.start_time = None
        job.suspend_time = None
        job.pre_suspend_time = 0.0
        if not job.requeued:
            job.restarts += 1
        job.requeued = False
        job.requeue_delay = None
        if delay > 0:
            job.reason = PendingReason.BEGIN_TIME
            job.eligible_time = math.floor(self.now) + delay
        else:
            job.reason = PendingReason.NONE
            job.eligible_time = self.now
        self._set_state(job, JobState.PENDING)
        if delay > 0:
            self._pass_after(job.eligible_time)
        else:
            self._request_pass()

    def _node_failed(self, job: Job) -> None:
        """A job whose node went DOWN: its processes died with the node, so its resources
        are free at once (observed on 22.05: no COMPLETING). A requeueable job goes back to
        the queue (Restarts+1, BeginTime); any other ends NODE_FAIL, reason NodeDown."""
        self._ending.pop(job.job_id, None)
        self._cancel_limit(job.job_id)
        self.executor.signal(job, "KILL")  # its end report finds it no longer running
        self.plugins.select_job_fini(job, self.cluster)
        if job.requeue:
            self._back_to_queue(job)
        else:
            job.end_time = self.now
            job.reason = PendingReason.NODE_DOWN
            self._set_state(job, JobState.NODE_FAIL)
        self._apply(self.plugins.sched_gang_job_fini(job, self.cluster))

    # ----------------------------------------------------------------------------- executor

    def job_ended(
        self, job_id: int, exit_code: int = 0, signal: int = 0, *, out_of_memory: bool = False
    ) -> None:
        """The executor reports that a job's processes ended, with ``exit_code`` or killed
        by ``signal``, and its nodes are free again.

        A job the controller killed has shown COMPLETING since the kill; it now takes the
        state its ending says. A job that ended by itself (even in a preemption GraceTime)
        ends COMPLETED or FAILED by its exit, or OUT_OF_MEMORY when ``out_of_memory`` (its
        batch step was ended for going over its memory limit).
        """
        self._tick()
        job = self.cluster.job(job_id)
        if not job.state.holds_resources:
            return
        ending = self._ending.pop(job_id, None)
        if ending is not None and not ending.killed:
            ending = None
        self._cancel_limit(job_id)
        job.completing_nodes = None
        if (
            job.units is None
            and self.keep_finished_units
            and not (ending is not None and ending.requeue)
        ):
            # what it was given stays on the finished job: its TRES shows the cores (cpu=1
            # for -n1 on a 4-CPU node, as 22.05 showed in tests/data/gres)
            job.units = self.plugins.select_job_resources(job, self.cluster)
        self.plugins.select_job_fini(job, self.cluster)
        if ending is not None and ending.requeue:
            self._back_to_queue(job, REQUEUE_DELAY if ending.delay is None else ending.delay)
        else:
            if job.end_time is None or ending is None:
                job.end_time = self.now
            job.exit_code = exit_code
            job.exit_signal = signal
            if ending is not None:
                state = ending.state
            elif out_of_memory:
                state = JobState.OUT_OF_MEMORY
            else:
                state = _COMPLETED if exit_code == signal == 0 else _FAILED
            job.reason = _ENDING_REASONS.get(state, _NO_REASON)
            self._set_state(job, state)
        self._apply(self.plugins.sched_gang_job_fini(job, self.cluster))
        if ending is not None:
            # Observed on 22.05: the release of a killed job's nodes triggers a pass at once
            # (the preemptor starts then, off the 1 s grid).
            self._pass_at_time(self.now)
        else:
            self._request_pass()

    def nodes_released(self, job_id: int, nodes: Sequence[str]) -> None:
        """The executor reports that a completing job's processes are gone from ``nodes``,
        some of its nodes but not all: those are free at once, and the job, still
        COMPLETING, holds only the rest (squeue and scontrol list only those) until its end.

        Observed on 22.05 (tests/data/oracle/cli, linear/178, requeue/015): a killed
        multi-node batch job keeps only its batch host within a second of the kill, and
        another job may start on the other nodes meanwhile.
        """
        self._tick()
        job = self.cluster.job(job_id)
        held = job.completing_nodes
        if job.state is not JobState.COMPLETING or held is None:
            return
        released = set(nodes)
        gone = tuple(name for name in held if name in released)
        kept = tuple(name for name in held if name not in released)
        if not gone or not kept:  # all of them: that is the job's end, reported as such
            return
        job.completing_nodes = kept
        if job.units is None:
            # what it was given stays on the job (scontrol's TRES shows all of it)
            job.units = self.plugins.select_job_resources(job, self.cluster)
        self.plugins.select_job_resized(job, gone, self.cluster)
        self._apply(self.plugins.sched_gang_job_resized(job, self.cluster))
        self._pass_at_time(self.now)  # as for a release at the job's end

    # ----------------------------------------------------------------------------- actions

    def _start(self, job: Job, nodes: Iterable[str]) -> None:
        if job.array_pending:  # an array's record: it starts as its first task
            self._last_split = self._split_task(job)
        self._preempting.pop(job.job_id, None)
        job.nodes = self.cluster.in_table_order(nodes)
        job.requeued_allocation = ()
        job.start_time = self.now
        job.suspend_time = None
        job.pre_suspend_time = 0.0
        job.preempt_attempts = 0
        job.reason = _NO_REASON
        self._set_state(job, _RUNNING)
        if job.gres_alloc:
            job.gres_alloc = ()  # a requeued job's last GPUs: select chooses anew
        self.plugins.select_job_begin(job, self.cluster)
        if job.request.gres_request is not None:
            job.gres_alloc = self.plugins.select_job_gres(job, self.cluster)
        if self._limits is not None:
            self._limits.started(job)
        if self._gang or self._priority_period is not None:
            # its readers: gang scheduling, and the priority plugin's usage (Slurm charges
            # the CPUs allocated, not whole nodes); building it costs a set per start
            job.units = self.plugins.select_job_resources(job, self.cluster)
        elif job.units is not None:
            job.units = None  # a requeued finished job's last cores: asked of select anew
        self.executor.start(job)
        self._arm_limit(job)
        self._arm_timeslice()
        self._apply(self.plugins.sched_gang_job_start(job, self.cluster))

    def _kill(self, job: Job, ending: _Ending) -> None:
        """Kill the job's processes. It shows COMPLETING, holding its nodes, until the
        executor reports them gone (:meth:`nodes_released`, :meth:`job_ended`); its run
        time stops now. A requeued one shows 0 and, as on 22.05 (linear/182, requeue/016),
        already counts the restart."""
        ending.killed = True
        self._ending[job.job_id] = ending
        self._cancel_limit(job.job_id)
        job.completing_nodes = job.nodes
        if ending.state is JobState.TIMEOUT:
            job.reason = PendingReason.TIME_LIMIT  # shown from the kill on (backfill-window)
        if ending.requeue:
            if ending.checkpoint:
                job.checkpointed += job.run_time(self.now)  # the work done is kept
            job.start_time = None
            job.pre_suspend_time = 0.0
            job.restarts += 1
            job.requeued = True
            job.requeue_delay = ending.delay
        else:
            if job.state is _SUSPENDED:
                job.suspend_time = self.now  # stopped time does not count as run time
            job.end_time = self.now
        self.executor.kill(job, self.config.kill_wait)
        self._set_state(job, _COMPLETING)

    def _suspend(self, job: Job, *, indefinite: bool) -> None:
        job.pre_suspend_time = job.run_time(self.now)
        job.suspend_time = self.now
        self._set_state(job, _SUSPENDED)
        self._cancel_limit(job.job_id)
        self.executor.suspend(job)
        self.plugins.select_job_suspend(job, indefinite, self.cluster)

    def _resume(self, job: Job, *, indefinite: bool) -> None:
        job.suspend_time = self.now
        self._set_state(job, _RUNNING)
        self.executor.resume(job)
        self.plugins.select_job_resume(job, indefinite, self.cluster)
        self._arm_limit(job)

    def _apply(self, decision: GangDecision) -> None:
        """Carry out gang scheduling's decision. A job displaced under a higher tier's
        shadow (``decision.displaced_by`` names the job it was displaced by), when that job
        may preempt it, is preempted by it, suspended or not: whether the displacing job
        just started (select/cons_res places a preemptor on top of its victims without
        naming them; select/linear names them, and :meth:`_preempt` stamps them), or gang
        scheduling resumed it (its time slice, another job's end) or took it in (after
        scontrol resume). A job stopped only for its own partition's time slice, or one
        that starts under a shadow and is stopped at once, is suspended plainly.

        Slurm's PreemptTime (``preempt_time``) is set only at the displacing job's start:
        gang scheduling's later suspensions leave it as it was (22.05: records linear/186,
        191), so those count in ``preemptions`` and ``preempted_by`` only."""
        for job_id in decision.suspend:
            job = self.cluster.job(job_id)
            if job.state is JobState.RUNNING and job_id not in self._ending:
                self._suspend(job, indefinite=False)
        for job_id in decision.resume:
            job = self.cluster.job(job_id)
            if job.state is JobState.SUSPENDED and job_id not in self._ending:
                self._resume(job, indefinite=False)
        displaced_by = dict(decision.displaced_by) if decision.displaced_by else None
        for job_id in decision.preempt:
            # Under a higher tier's shadow: suspended, or cancelled/requeued by its mode.
            job = self.cluster.job(job_id)
            if not job.state.holds_resources or job_id in self._ending:
                continue
            mode = self.plugins.preempt_mode(job, self.cluster).base
            by = displaced_by.get(job_id) if displaced_by is not None else None
            if mode in (PreemptBase.CANCEL, PreemptBase.REQUEUE):
                # (killed under any shadow, as Slurm's gang does; by the job it names, if any)
                job.preempt_time = self.now
                job.preemptions += 1
                if by is not None:
                    job.preempted_by = by
                self._kill(job, self._preempt_ending(job, mode))
            elif job.state is JobState.RUNNING:
                preemptor = None if by is None else self.cluster.jobs.get(by)
                if (
                    preemptor is not None
                    and job.preempt_time != self.now
                    and self._preemption
                    and self.plugins.preempt_preemptable(preemptor, job, self.cluster)
                ):
                    if preemptor.start_time == self.now:
                        job.preempt_time = self.now
                    job.preemptions += 1
                    job.preempted_by = preemptor.job_id
                self._suspend(job, indefinite=False)
