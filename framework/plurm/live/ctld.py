"""plurmctld: the controller daemon.

It runs the simulator's :class:`~plurm.controller.Controller`, unchanged, on one asyncio
event loop: the wall clock (:mod:`.wallclock`) drives its timers and
:class:`~plurm.live.executor.LiveExecutor` carries its decisions to the nodes' ``plurmd``.
Everything that reaches it, a command's request, a node's report, a timer, runs to the end
on that one thread, as one event; after each event the daemon commits the jobs the event
changed to the state store (SQLite, :mod:`.store`) and only then sends the messages the
controller decided. A job is therefore committed before ``sbatch`` prints its id, and a
state change before any node acts on it. On restart (without ``-c``) it reloads its jobs;
the nodes' daemons, which keep their jobs running meanwhile, register again and report what
still runs and what ended.

Usage (Slurm's flags): ``plurmctld [-D] [-c] [-v...] [-f slurm.conf]``.
"""

from __future__ import annotations

import argparse
import asyncio
import grp
import logging
import pwd
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs

from plurm import conf
from plurm._markers import hookimpl
from plurm.commands.client import LocalClient, alloc_cpus
from plurm.commands.gres_display import tracked
from plurm.controller import Controller, RequestError
from plurm.live.access import Access
from plurm.live.admission import check_request
from plurm.live.codec import (
    CodecError,
    query_from_dict,
    record_to_dict,
    request_from_dict,
    step_to_dict,
)
from plurm.live.daemon import common_flags, run_daemon
from plurm.live.executor import LiveExecutor
from plurm.live.inprocess import run_command
from plurm.live.restapi import add_rest_routes
from plurm.live.rpc import AsyncRpc, Caller, RpcError, Signer, rpc_routes
from plurm.live.settings import LiveSettings, find_conf
from plurm.live.snapshot import view_to_dict
from plurm.live.stepbook import StepBook
from plurm.live.store import CONTROLLER_STARTS, StateStore
from plurm.live.wallclock import WallClock
from plurm.manager import DAEMON_ROLES, Plugins
from plurm.model.acct import records_from_jobs
from plurm.model.cluster import Cluster
from plurm.model.job import Job, JobRequest, JobState
from plurm.model.usage import StepUsage, UsageError

__all__ = ["ControllerDaemon", "main"]

logger = logging.getLogger(__name__)

#: Seconds between the checks for silent nodes and for jobs past MinJobAge.
HOUSEKEEPING = 1.0
#: Seconds between purges of jobs past MinJobAge (slurmctld's is a minute too).
PURGE_INTERVAL = 60.0
#: The states of a finished job.
FINISHED_STATES = tuple(state for state in JobState if state.finished)
#: The store's value holding the priority plugin's own state (its usage).
PRIORITY_STATE = "priority_state"
#: How many of its start times plurmctld keeps in its store.
MAX_STARTS = 100


class _Observer:
    """Notes every job whose state changes, for the next commit."""

    def __init__(self, dirty: dict[int, Job]) -> None:
        self.dirty = dirty

    @hookimpl
    def plurm_job_state_changed(
        self, job: Job, old: JobState, new: JobState, cluster: Cluster
    ) -> None:
        self.dirty[job.job_id] = job


class ControllerDaemon:
    """One controller, its store, its executor and its RPC server."""

    def __init__(self, config_path: Path, *, clear: bool = False) -> None:
        self.config_path = config_path
        self.config = conf.load(str(config_path))
        self.settings = LiveSettings.from_config(self.config)
        self.dirty: dict[int, Job] = {}
        self.plugins = Plugins.load(self.config, roles=DAEMON_ROLES, extra=[_Observer(self.dirty)])
        self.signer = Signer(self.plugins)
        self.access = Access(self.config)
        self.settings.state_save.mkdir(parents=True, exist_ok=True)
        database = self.settings.state_save / "plurmctld.sqlite"
        if clear and database.exists():
            for suffix in ("", "-wal", "-shm"):
                Path(f"{database}{suffix}").unlink(missing_ok=True)
        self.store = StateStore(database)
        self.steps = StepBook(self.store, self.config)
        self.registered: set[str] = set()
        self.stopping: asyncio.Event | None = None
        self.submitted = 0
        #: The next job id when jobs were last saved (see commit).
        self.saved_next_id = 0
        #: The priority plugin's state as last saved (see :meth:`save_priority_state`).
        self.saved_priority_state: dict[str, Any] | None = None

    # ------------------------------------------------------------------ start

    async def serve(self, ready: Callable[[], None] = lambda: None) -> None:
        from aiohttp import web

        loop = asyncio.get_running_loop()
        self.stopping = asyncio.Event()
        self.start(loop)
        app = web.Application(client_max_size=8 * 1024 * 1024)
        rpc_routes(app, self.signer, self.handlers())
        add_rest_routes(app, self)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self.settings.ctld_address_bind, self.settings.ctld_port)
        await site.start()
        for name in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(name, self.stopping.set)
        logger.info(
            "plurmctld listening on %s:%d (cluster %s, %d nodes)",
            self.settings.ctld_address_bind,
            self.settings.ctld_port,
            self.config.cluster_name,
            len(self.settings.nodes),
        )
        ready()
        housekeeping = loop.create_task(self._housekeeping())
        try:
            await self.stopping.wait()
        finally:
            housekeeping.cancel()
            self.commit(everything=True)
            self.save_priority_state()
            await runner.cleanup()
            await self.rpc.close()
            self.store.close()
            logger.info("plurmctld stopped")

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Make the controller, on ``loop``'s clock, with the jobs the store has."""
        self.rpc = AsyncRpc(self.signer)
        self.clock = WallClock(loop, after=self.commit)
        self.executor = LiveExecutor(self.settings, self.rpc, loop)
        self.executor.after = self.commit
        self.controller = Controller(self.config, self.plugins, self.clock, self.executor)
        self.executor.controller = self.controller
        self.client = LocalClient(self.controller)
        self._restore()
        # When this controller started: its periodic passes (backfill, time limits, gang
        # slices) tick from then, and a replay of its history keeps that phase (trace export).
        starts = self.store.load_value(CONTROLLER_STARTS, [])
        starts = starts[-(MAX_STARTS - 1) :] if isinstance(starts, list) else []
        self.store.save_value(CONTROLLER_STARTS, [*starts, self.controller.started])
        self.saved_next_id = self.controller.next_job_id

    def _restore(self) -> None:
        state = self.store.load_value(PRIORITY_STATE)
        if isinstance(state, dict):  # the priority plugin's usage, before the jobs
            self.plugins.priority_state_load(state, self.controller.cluster)
            self.saved_priority_state = state
        jobs = self.store.load_jobs()
        next_id = self.store.next_job_id()
        if jobs or next_id is not None:
            self.controller.restore(jobs, next_id)
            logger.info("restored %d jobs, next job id %s", len(jobs), next_id)

    async def _housekeeping(self) -> None:
        last_purge = time.monotonic()
        while True:
            await asyncio.sleep(HOUSEKEEPING)
            self.executor.check_silence()
            self.commit()
            self.save_priority_state()
            if time.monotonic() - last_purge >= PURGE_INTERVAL:
                last_purge = time.monotonic()
                self.purge()

    def purge(self) -> list[int]:
        """Forget the jobs finished more than MinJobAge ago, in memory and in the state
        store, as slurmctld purges its job records (their accounting records stay, for
        sacct); the ids forgotten."""
        cluster = self.controller.cluster
        now = self.controller.now
        age = self.config.min_job_age
        gone = [
            job.job_id
            for state in FINISHED_STATES
            for job in cluster.jobs_unordered(state)
            if job.purged(now, age)
        ]
        if gone:
            self.commit()  # nothing of theirs is left unsaved
            for job_id in gone:
                cluster.remove_job(job_id)
            self.store.delete_jobs(gone)
            logger.info("purged %d jobs finished more than MinJobAge=%d s ago", len(gone), age)
        return gone

    def save_priority_state(self) -> None:
        """Save the priority plugin's own state (:func:`~plurm.hookspecs.priority.
        priority_state_save`) when it changed since it was last saved."""
        state = self.plugins.priority_state_save(self.controller.cluster)
        if state is not None and state != self.saved_priority_state:
            self.store.save_value(PRIORITY_STATE, state)
            self.saved_priority_state = state

    # ------------------------------------------------------------------ commit

    def commit(self, *, everything: bool = False) -> None:
        """Write the jobs changed since the last commit, then send what was decided."""
        controller = self.controller
        if everything:
            self.dirty.update(controller.cluster.jobs)
        if controller.next_job_id != self.saved_next_id:
            # jobs made without a state change: an array's records split off its tasks
            for job_id in range(self.saved_next_id, controller.next_job_id):
                job = controller.cluster.jobs.get(job_id)
                if job is not None:
                    self.dirty[job_id] = job
            self.saved_next_id = controller.next_job_id
        if self.dirty:
            jobs = list(self.dirty.values())
            self.dirty.clear()
            cpus = alloc_cpus(self.client.view())
            with self.store.transaction():
                self.store.save_jobs(jobs, next_job_id=controller.next_job_id)
                for record in records_from_jobs(
                    jobs, controller.now, alloc_cpus=cpus, gres_tracked=tracked(controller.config)
                ):
                    self.store.record_job(record)
                self.steps.settle(jobs, controller.now)
        self.executor.flush()

    # ------------------------------------------------------------------ handlers

    def handlers(self) -> dict[str, Callable[[Caller, dict[str, Any]], Awaitable[Any]]]:
        def event(
            handler: Callable[[Caller, dict[str, Any]], Any],
        ) -> Callable[[Caller, dict[str, Any]], Awaitable[Any]]:
            async def run(caller: Caller, message: dict[str, Any]) -> Any:
                try:
                    return handler(caller, message)
                finally:
                    self.commit()

            return run

        sync: dict[str, Callable[[Caller, dict[str, Any]], Any]] = {
            "ping": lambda caller, message: {"up": True, "registered": sorted(self.registered)},
            "view": self._view,
            "acct": self._acct,
            "submit": self._submit,
            "cancel": self._cancel,
            "hold": self._hold,
            "release": self._release,
            "suspend": self._job_verb("suspend", admin=True),
            "resume": self._job_verb("resume", admin=True),
            "requeue": self._job_verb("requeue"),
            "signal": self._signal,
            "update_partition": self._update_partition,
            "update_nodes": self._update_nodes,
            "update_job": self._update_job,
            "will_run": self._will_run,
            "token": self._token,
            "expected_starts": self._expected_starts,
            "explain": self._explain,
            "priorities": self._priorities,
            "register": self._register,
            "heartbeat": self._heartbeat,
            "job_ended": self._job_ended,
            "step_start": self._step_start,
            "step_end": self._step_end,
            "step_usage": self._step_usage,
            "shutdown": self._shutdown,
        }

        def command(caller: Caller, message: dict[str, Any]) -> Any:
            return run_command(self.config, sync, caller, message, _names)

        handlers = {name: event(handler) for name, handler in sync.items()}
        handlers["sstat"] = self._sstat
        handlers["command"] = event(command)
        return handlers

    def _view(self, caller: Caller, message: dict[str, Any]) -> Any:
        return view_to_dict(self.client.view(), self.jobs_for(caller.uid))

    def _acct(self, caller: Caller, message: dict[str, Any]) -> Any:
        try:
            query = query_from_dict(message.get("query"))
        except CodecError as error:
            raise RpcError(f"bad accounting query: {error}") from None
        self.commit()  # the records of jobs changed since the last event, first
        records = self.store.query(query)
        if not self.access.sees_all_jobs(caller.uid):  # PrivateData=jobs
            sees = self.access.sees
            records = [r for r in records if sees(caller.uid, r.uid, r.account)]
        return {"records": [record_to_dict(r) for r in records]}

    def statistics(self) -> dict[str, float]:
        """Counters for ``diag`` (slurmrestd's names)."""
        states = [job.state for job in self.controller.cluster.jobs.values()]
        return {
            "jobs_submitted": self.submitted,
            "jobs_started": sum(
                1 for job in self.controller.cluster.jobs.values() if job.start_time is not None
            ),
            "jobs_completed": states.count(JobState.COMPLETED),
            "jobs_canceled": states.count(JobState.CANCELLED),
            "jobs_failed": states.count(JobState.FAILED),
            "jobs_pending": states.count(JobState.PENDING),
            "jobs_running": states.count(JobState.RUNNING),
        }

    def jobs_for(self, uid: int) -> list[Job]:
        """The jobs ``uid`` may see: all visible ones, or with PrivateData=jobs only its
        own (and its accounts' as a coordinator) unless it is an operator."""
        jobs = self.visible_jobs()
        if self.access.sees_all_jobs(uid):
            return jobs
        sees = self.access.sees
        return [job for job in jobs if sees(uid, job.request.uid, job.account)]

    def visible_jobs(self) -> list[Job]:
        """The jobs the commands show: all but those finished longer than MinJobAge ago."""
        now = self.controller.now
        age = self.config.min_job_age
        return [job for job in self.controller.cluster.jobs.values() if not job.purged(now, age)]

    def _submit(self, caller: Caller, message: dict[str, Any]) -> Any:
        try:
            request = request_from_dict(message.get("request"))
        except CodecError as error:
            raise RpcError(f"bad job request: {error}") from None
        check_request(request)
        if caller.uid != 0 or request.uid == caller.uid:
            # the job runs as the one who asked, whatever the request says (root may
            # submit for another user, as sbatch --uid)
            request = attrs.evolve(
                request,
                uid=caller.uid,
                gid=caller.gid,
                user=_user_name(caller.uid),
                group=_group_name(caller.gid),
            )
        return {"job_id": self.submit_request(request)}

    def submit_request(self, request: JobRequest) -> int:
        """Queue a job whose request names its verified user; its id."""
        job = self.controller.submit(request)
        self.dirty[job.job_id] = job
        self.submitted += 1
        return job.job_id

    def _owned(self, caller: Caller, job_id: object, *, admin: bool = False) -> int:
        """A job the caller may act on: its own, its accounts' as a coordinator, or any
        for an operator; ``admin`` verbs (suspend, resume) are for operators only, as in
        Slurm."""
        if type(job_id) is not int:
            raise RpcError("job_id is not an integer")
        job = self.controller.job(job_id)
        access = self.access
        if not access.operator(caller.uid) and (
            admin or not access.may_act(caller.uid, job.request.uid, job.account)
        ):
            logger.warning(
                "Security violation: %s of job_id=%d by uid=%d refused",
                "admin verb" if admin else "job verb",
                job_id,
                caller.uid,
            )
            raise RequestError("Access/permission denied")
        return job_id

    def _job_verb(
        self, verb: str, *, admin: bool = False
    ) -> Callable[[Caller, dict[str, Any]], Any]:
        def run(caller: Caller, message: dict[str, Any]) -> Any:
            job_id = self._owned(caller, message.get("job_id"), admin=admin)
            getattr(self.client, verb)(job_id)
            self.dirty[job_id] = self.controller.job(job_id)
            return {}

        return run

    def _cancel(self, caller: Caller, message: dict[str, Any]) -> Any:
        job_id = self._owned(caller, message.get("job_id"))
        task = message.get("task")
        if task is not None and type(task) is not int:
            raise RpcError("task is not an integer")
        self.controller.cancel(job_id, task)
        return {}

    def _hold(self, caller: Caller, message: dict[str, Any]) -> Any:
        """scontrol hold or uhold: an administrator's hold is JobHeldAdmin, anyone
        else's (and uhold) JobHeldUser."""
        job_id = self._owned(caller, message.get("job_id"))
        user = message.get("user", False)
        if type(user) is not bool:
            raise RpcError("user is not true or false")
        self.controller.hold(job_id, admin=not user and self._is_admin(caller))
        self._touch(job_id)
        return {}

    def _release(self, caller: Caller, message: dict[str, Any]) -> Any:
        job_id = self._owned(caller, message.get("job_id"))
        self.controller.release(job_id, admin=self._is_admin(caller))
        self._touch(job_id)
        return {}

    def _touch(self, job_id: int) -> None:
        """Save the job (and every record of the array it names) at the next commit: a
        hold or release changes its priority and reason, not its state."""
        for job in self.controller.cluster.jobs.values():
            if job.job_id == job_id or job.array_job_id == job_id:
                self.dirty[job.job_id] = job

    def _signal(self, caller: Caller, message: dict[str, Any]) -> Any:
        job_id = self._owned(caller, message.get("job_id"))
        name = message.get("signal")
        if not isinstance(name, str):
            raise RpcError("signal is not a name")
        job = self.controller.job(job_id)
        if job.state is not JobState.RUNNING and job.state is not JobState.SUSPENDED:
            raise RequestError(
                "Job is pending execution"
                if job.state is JobState.PENDING
                else "Job/step already completing or completed"
            )
        self.client.signal(job_id, name)
        return {}

    def _step_start(self, caller: Caller, message: dict[str, Any]) -> Any:
        """srun asks for a step of its job (:mod:`.stepbook`)."""
        job_id = self._owned(caller, message.get("job_id"))
        return self.steps.start(self.controller.job(job_id), message, self.controller.now)

    def _step_end(self, caller: Caller, message: dict[str, Any]) -> Any:
        """srun reports its step's end: the highest exit code, or the signal of a task."""
        job_id = self._owned(caller, message.get("job_id"))
        step, code, number = message.get("step_id"), message.get("exit_code"), message.get("signal")
        if not all(type(v) is int and 0 <= v < 1 << 31 for v in (step, code, number)):
            raise RpcError("step_id, exit_code and signal must be integers")
        assert isinstance(step, int) and isinstance(code, int) and isinstance(number, int)
        job = self.controller.job(job_id)
        return {"recorded": self.steps.end(job, step, code, number, self.controller.now)}

    def _is_admin(self, caller: Caller) -> bool:
        """Whether the caller acts as an operator (holds it sets are administrators')."""
        return self.access.operator(caller.uid)

    def _admin(self, caller: Caller) -> None:
        """Root, SlurmUser and AdminLevel=Administrator only (Slurm's super user)."""
        if not self.access.administrator(caller.uid):
            raise RequestError("Access/permission denied")

    def _daemon(self, caller: Caller) -> None:
        """Messages only the node daemons send: root or SlurmUser only."""
        if not self.access.slurm_user(caller.uid):
            raise RequestError("Access/permission denied")

    def _update_partition(self, caller: Caller, message: dict[str, Any]) -> Any:
        self._admin(caller)
        from plurm.live.updates import partition_changes

        name = message.get("name")
        if not isinstance(name, str):
            raise RpcError("name is not a string")
        self.client.update_partition(name, partition_changes(message.get("changes")))
        return {}

    def _update_nodes(self, caller: Caller, message: dict[str, Any]) -> Any:
        self._admin(caller)
        names = message.get("names")
        state = message.get("state")
        reason = message.get("reason")
        if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise RpcError("names is not a list of node names")
        if state is not None and not isinstance(state, str):
            raise RpcError("state is not a string")
        if reason is not None and not isinstance(reason, str):
            raise RpcError("reason is not a string")
        self.client.update_nodes(names, state, reason)
        return {}

    def _update_job(self, caller: Caller, message: dict[str, Any]) -> Any:
        """scontrol update JobId=...: the controller checks who may change what; root and
        the daemon's own user (SlurmUser) are administrators."""
        from plurm.live.updates import job_changes

        job_id = message.get("job_id")
        if type(job_id) is not int:
            raise RpcError("job_id is not an integer")
        changes = job_changes(message.get("changes"))
        by_uid = 0 if self.access.operator(caller.uid) else caller.uid
        job = self.controller.cluster.jobs.get(job_id)
        if by_uid and job is not None and self.access.coordinator(by_uid, job.account):
            by_uid = job.request.uid  # a coordinator changes what the owner may
        self.controller.update_job(job_id, changes, by_uid=by_uid)
        self.dirty[job_id] = self.controller.job(job_id)
        return {}

    def _token(self, caller: Caller, message: dict[str, Any]) -> Any:
        """scontrol token: a token for the caller (or, for root and SlurmUser only, for the
        user named), from the auth plugin that makes them (auth/jwt)."""
        from plurm.errors import AuthError

        username, lifespan = message.get("username"), message.get("lifespan")
        if type(lifespan) is not int or not 0 < lifespan < 0xFFFFFFFE:
            raise RpcError("lifespan is not a number of seconds")
        own = _user_name(caller.uid)
        if username is None:
            username = own
        if not isinstance(username, str) or not username or len(username) > 256:
            raise RpcError("username is not a name")
        if username != own and not self.access.slurm_user(caller.uid):
            logger.warning(
                "attempt to retrieve a token for a different user=%s by uid=%d",
                username,
                caller.uid,
            )
            raise RequestError("Invalid user id")
        try:
            token = self.plugins.auth_token_create(username, lifespan)
        except AuthError as error:
            logger.error("token for %s refused: %s", username, error)
            raise RequestError("Unexpected error") from None
        if token is None:
            raise RequestError("Plugin not found")
        return {"token": token}

    def _will_run(self, caller: Caller, message: dict[str, Any]) -> Any:
        """sbatch --test-only: when and where the job would start; nothing is queued."""
        try:
            request = request_from_dict(message.get("request"))
        except CodecError as error:
            raise RpcError(f"bad job request: {error}") from None
        request = attrs.evolve(request, uid=caller.uid, gid=caller.gid, user=_user_name(caller.uid))
        answer = self.controller.will_run(request)
        return {
            "job_id": answer.job_id,
            "start": answer.start,
            "nodes": list(answer.nodes),
            "cpus": answer.cpus,
            "partition": answer.partition,
        }

    def _expected_starts(self, caller: Caller, message: dict[str, Any]) -> Any:
        starts = self.controller.expected_starts()
        return {"starts": {str(job_id): start for job_id, start in starts.items()}}

    def _explain(self, caller: Caller, message: dict[str, Any]) -> Any:
        """scontrol explain: the controller's facts on one job (plain JSON data)."""
        job_id = message.get("job_id")
        if type(job_id) is not int:
            raise RpcError("job_id is not an integer")
        return self.controller.explain(job_id)

    def _priorities(self, caller: Caller, message: dict[str, Any]) -> Any:
        from plurm.model.priority import report_to_dict

        return report_to_dict(self.controller.priority_report())

    # ------------------------------------------------------------------ nodes

    def _node(self, caller: Caller, message: dict[str, Any]) -> str:
        self._daemon(caller)
        name = message.get("node")
        if not isinstance(name, str):
            raise RpcError("node is not a node name")
        if name not in self.settings.nodes:
            raise RpcError(f"no node {name[:100]!r} in the configuration", "not_found", 404)
        return name

    def _register(self, caller: Caller, message: dict[str, Any]) -> Any:
        """A node's daemon starts (or finds the controller restarted): check what it has
        against its NodeName line, and reconcile the jobs it runs with ours."""
        from plurm.live.registration import register

        name = self._node(caller, message)
        self.executor.heard(name)
        answer = register(self.controller, self.settings, name, message)
        self.registered.add(name)
        return answer

    def _heartbeat(self, caller: Caller, message: dict[str, Any]) -> Any:
        name = self._node(caller, message)
        if name not in self.registered:
            return {"registered": False}
        self.executor.heard(name)
        if name in self.controller.cluster.not_responding:
            self.controller.node_registered(name)
        return {"registered": True}

    def _job_ended(self, caller: Caller, message: dict[str, Any]) -> Any:
        """A node reports a job's processes gone (exit code, or the signal that ended it)."""
        name = self._node(caller, message)
        from plurm.live.registration import check_end, job_ended

        job_id, attempt, code, number = check_end(
            [message.get(key) for key in ("job_id", "attempt", "exit_code", "signal")]
        )
        try:
            usage = _usage(message.get("usage"))
        except RpcError as error:
            # the end counts whatever its figures: a refused report would come back forever
            logger.warning("job_id=%d end from %s: %s (figures dropped)", job_id, name, error)
            usage = {}
        if not job_ended(self.controller, name, job_id, attempt, code, number):
            return {"stale": True}  # an attempt the controller has already settled
        job = self.controller.job(job_id)
        self.dirty[job_id] = job
        if usage:
            self.steps.record_usage(job, usage)
        return {}

    def _step_usage(self, caller: Caller, message: dict[str, Any]) -> Any:
        """A node's figures of a finished srun step, or its word that it ended a step for
        its memory (jobacct_gather's OverMemoryKill)."""
        self._node(caller, message)
        job_id, step = message.get("job_id"), message.get("step")
        oom = message.get("out_of_memory")
        if type(job_id) is not int or not isinstance(step, str) or type(oom) is not bool:
            raise RpcError("job_id must be an integer, step a name, out_of_memory a boolean")
        figures = message.get("usage")
        usage = {} if figures is None else _usage({step: figures})
        job = self.controller.job(job_id)
        if oom:
            return {"recorded": self.steps.out_of_memory(job, step, usage, self.controller.now)}
        self.steps.record_usage(job, usage)
        return {"recorded": bool(usage)}

    async def _sstat(self, caller: Caller, message: dict[str, Any]) -> Any:
        """sstat: a running job's figures, sampled now by its batch host's daemon."""
        job_id = self._owned(caller, message.get("job_id"))
        job = self.controller.job(job_id)
        if job.state not in (JobState.RUNNING, JobState.SUSPENDED) or not job.nodes:
            return {"running": False, "steps": {}, "records": []}
        host = job.nodes[0]
        answer = await self.rpc.call(
            self.settings.nodes[host].url, "usage", {"job_id": job_id, "attempt": job.restarts}
        )
        steps = answer.get("steps") if isinstance(answer, dict) else None
        records = [
            step_to_dict(step) for step in self.store.steps(job_id) if step.state == "RUNNING"
        ]
        return {"running": True, "node": host, "steps": steps or {}, "records": records}

    def _shutdown(self, caller: Caller, message: dict[str, Any]) -> Any:
        self._admin(caller)
        assert self.stopping is not None
        asyncio.get_running_loop().call_soon(self.stopping.set)
        return {}


def _usage(data: object) -> dict[str, StepUsage]:
    """The step figures of a node's report (none when it sent none)."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RpcError("usage is not a mapping of steps")
    try:
        return {str(step): StepUsage.from_dict(value) for step, value in data.items()}
    except UsageError as error:
        raise RpcError(f"bad usage: {error}") from None


def _names(caller: Caller) -> tuple[str, str]:
    return _user_name(caller.uid), _group_name(caller.gid)


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plurmctld", description="Plurm's controller daemon")
    common_flags(parser)
    parser.add_argument("-c", action="store_true", help="clear the saved state (start clean)")
    args = parser.parse_args(argv)
    return run_daemon(
        "plurmctld", args, lambda: ControllerDaemon(find_conf(args.f), clear=args.c).serve
    )


if __name__ == "__main__":
    sys.exit(main())
