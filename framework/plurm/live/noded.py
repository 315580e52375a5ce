"""plurmd: the node daemon. One per node; several may run on one host, each on its own port.

It registers with ``plurmctld`` with the CPUs and memory it really has, sends a heartbeat
every second, and runs the batch jobs the controller launches on it as real processes
(:mod:`.launcher`): suspend, resume, signal and kill them as told, and report each job's end
(exit code, or the signal that ended it). Ends are kept in the spool directory until the
controller acknowledges them, so a job that ends while the controller is down is reported
when it comes back (the daemon registers again when a heartbeat finds the controller
restarted). The jobs keep running whatever happens to the controller.

The processes of the jobs it started are noted in ``<spool>/running.json`` (pid, session
and start time). A daemon that starts finds there what a killed predecessor left running:
those jobs were lost with it (the controller requeues them or ends them NODE_FAIL), and it
kills them, by pid and session, after checking each process's start time.

Usage (Slurm's flags): ``plurmd -N NodeName [-D] [-f slurm.conf] [-v...]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from plurm import conf
from plurm.errors import PlurmError
from plurm.gather.procfs import start_time
from plurm.live.daemon import common_flags, run_daemon
from plurm.live.gather import NodeGather
from plurm.live.jobenv import JobEnvInfo, expand_pattern, job_environment
from plurm.live.launcher import Launcher, LaunchError, LaunchSpec, RunningJob, session_pids
from plurm.live.rpc import MAX_ID, AsyncRpc, Caller, RpcError, Signer, rpc_routes
from plurm.live.settings import LiveSettings, find_conf
from plurm.manager import Plugins
from plurm.model.usage import SIG_OOM, GatherSettings, StepUsage, UsageError

__all__ = ["NodeDaemon", "main"]

logger = logging.getLogger(__name__)

#: Seconds between heartbeats.
HEARTBEAT = 1.0


def real_memory() -> int:
    """This host's memory in MiB, as slurmd reports RealMemory."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return 1


class NodeDaemon:
    """One node's daemon."""

    def __init__(self, config_path: Path, name: str) -> None:
        self.config = conf.load(str(config_path))
        self.settings = LiveSettings.from_config(self.config)
        if name not in self.settings.nodes:
            raise PlurmError(f"node {name} is not in {config_path}")
        self.name = name
        self.place = self.settings.nodes[name]
        self.signer = Signer(Plugins.load(self.config, roles=("auth",)))
        try:
            settings = GatherSettings.from_config(self.config.inactive)
        except UsageError as error:
            raise PlurmError(str(error)) from None
        self.gather = NodeGather(
            Plugins.load(self.config, roles=("jobacct_gather",)), name, settings
        )
        #: What each ended job's steps used, sent with its end: (job id, attempt) -> usage.
        self.usage: dict[tuple[int, int], dict[str, StepUsage]] = {}
        self.spool = self.place.spool_dir
        self.spool.mkdir(parents=True, exist_ok=True)
        self.launcher = Launcher(self.spool)
        #: (job id, attempt) of each job running here.
        self.jobs: dict[int, tuple[int, RunningJob]] = {}
        #: Jobs whose launch has begun and not finished: job id -> attempt. A registration
        #: reports them as running, so that a controller that restarted meanwhile does not
        #: take them for lost and start them again elsewhere.
        self.launching: dict[int, int] = {}
        #: Launches the controller disowned (a registration's ``kill``) before they finished.
        self._disowned: set[tuple[int, int]] = set()
        #: Ends not yet acknowledged: (job id, attempt) -> (exit code, signal).
        self.ended: dict[tuple[int, int], tuple[int, int]] = self._load_ended()
        self.registered = False
        self.stopping: asyncio.Event | None = None

    # ------------------------------------------------------------------ spool files

    def _load_ended(self) -> dict[tuple[int, int], tuple[int, int]]:
        try:
            items = json.loads((self.spool / "ended.json").read_text())
            return {(int(a), int(b)): (int(c), int(d)) for a, b, c, d in items}
        except (OSError, ValueError, TypeError):
            return {}

    def _save_ended(self) -> None:
        items = [[*key, *value] for key, value in self.ended.items()]
        _write_atomic(self.spool / "ended.json", json.dumps(items))

    def _save_running(self) -> None:
        items = {
            str(job_id): {
                "attempt": attempt,
                "pid": job.pid,
                "sid": job.sid,
                "start": start_time(job.pid),
            }
            for job_id, (attempt, job) in self.jobs.items()
        }
        _write_atomic(self.spool / "running.json", json.dumps(items))

    def kill_leftovers(self) -> int:
        """Kill what a predecessor left running (checked by start time); how many."""
        return self.kill_leftovers_in(self.spool)

    @staticmethod
    def kill_leftovers_in(spool: Path) -> int:
        """Kill the job processes noted in ``spool``'s running.json that still run (checked
        by start time, by pid and session, never by name); how many."""
        try:
            items = json.loads((spool / "running.json").read_text())
        except (OSError, ValueError):
            return 0
        killed = 0
        for item in items.values() if isinstance(items, dict) else ():
            try:
                pid, sid, start = int(item["pid"]), int(item["sid"]), item["start"]
            except (KeyError, TypeError, ValueError):
                continue
            if start is not None and start_time(pid) != start:
                continue  # gone, or a later process has its pid
            for member in session_pids(sid):
                try:
                    os.kill(member, signal.SIGKILL)
                    killed += 1
                except OSError:
                    pass
        _write_atomic(spool / "running.json", "{}")
        return killed

    # ------------------------------------------------------------------ serving

    async def serve(self) -> None:
        from aiohttp import web

        loop = asyncio.get_running_loop()
        self.stopping = asyncio.Event()
        self.rpc = AsyncRpc(self.signer, timeout=5.0)
        left = self.kill_leftovers()
        if left:
            logger.warning("killed %d processes a previous plurmd left running", left)
        app = web.Application(client_max_size=8 * 1024 * 1024)
        rpc_routes(
            app,
            self.signer,
            {
                "ping": self._ping,
                "launch": self._launch,
                "suspend": self._suspend,
                "resume": self._resume,
                "signal": self._signal,
                "kill": self._kill,
                "usage": self._usage,
            },
        )
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, self.place.bind, self.place.port).start()
        for name in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(name, self.stopping.set)
        logger.info("plurmd %s listening on %s:%d", self.name, self.place.bind, self.place.port)
        beat = loop.create_task(self._heartbeats())
        self.gather.run(self._step_report)
        try:
            await self.stopping.wait()
        finally:
            beat.cancel()
            self.gather.stop()
            await self.launcher.kill_all(0.0)
            self._save_running()
            await runner.cleanup()
            await self.rpc.close()
            logger.info("plurmd %s stopped", self.name)

    async def _heartbeats(self) -> None:
        while True:
            try:
                await self._beat()
            except RpcError as error:
                if self.registered:
                    logger.warning("controller unreachable: %s", error.message)
                self.registered = False
            await asyncio.sleep(HEARTBEAT)

    async def _beat(self) -> None:
        url = self.settings.ctld_url
        if not self.registered:
            reported = dict(self.ended)
            answer = await self.rpc.call(
                url,
                "register",
                {
                    "node": self.name,
                    "cpus": os.cpu_count() or 1,
                    "real_memory": real_memory(),
                    "jobs": self.reported_jobs(),
                    "ended": [[*key, *value] for key, value in reported.items()],
                },
            )
            self.registered = True
            for key in reported:
                self.ended.pop(key, None)
                self.usage.pop(key, None)
            self._save_ended()
            for job_id, attempt in answer.get("kill", []):
                self._kill_orphan(job_id, attempt)
            logger.info("registered with the controller")
            return
        answer = await self.rpc.call(url, "heartbeat", {"node": self.name})
        if not answer.get("registered"):
            self.registered = False
            return
        for (job_id, attempt), (code, number) in list(self.ended.items()):
            await self._report(job_id, attempt, code, number)

    def reported_jobs(self) -> list[list[int]]:
        """[job id, attempt] of each job running here or being launched."""
        running = {job_id: attempt for job_id, (attempt, _) in self.jobs.items()}
        running.update(self.launching)
        return [[job_id, attempt] for job_id, attempt in sorted(running.items())]

    def _kill_orphan(self, job_id: int, attempt: int) -> None:
        held = self.jobs.get(job_id)
        if held is not None and held[0] == attempt:
            logger.warning("job_id=%d not the controller's: killed", job_id)
            held[1].kill(0.0)
        elif self.launching.get(job_id) == attempt:
            self._disowned.add((job_id, attempt))  # killed once its launch is done

    async def _report(self, job_id: int, attempt: int, code: int, number: int) -> None:
        try:
            await self.rpc.call(
                self.settings.ctld_url,
                "job_ended",
                {
                    "node": self.name,
                    "job_id": job_id,
                    "attempt": attempt,
                    "exit_code": code,
                    "signal": number,
                    "usage": {
                        step: usage.to_dict()
                        for step, usage in self.usage.get((job_id, attempt), {}).items()
                    },
                },
            )
        except RpcError as error:
            logger.info("job_id=%d end not reported yet: %s", job_id, error.message)
            return
        self.usage.pop((job_id, attempt), None)
        if self.ended.pop((job_id, attempt), None) is not None:
            self._save_ended()

    async def _step_report(
        self, job_id: int, step: str, usage: StepUsage | None, out_of_memory: bool
    ) -> None:
        """Tell the controller what a finished srun step used, or that it was ended for
        its memory (best effort: the job's end carries every step's figures again)."""
        try:
            await self.rpc.call(
                self.settings.ctld_url,
                "step_usage",
                {
                    "node": self.name,
                    "job_id": job_id,
                    "step": step,
                    "usage": None if usage is None else usage.to_dict(),
                    "out_of_memory": out_of_memory,
                },
            )
        except RpcError as error:
            logger.warning("job_id=%d step=%s not reported: %s", job_id, step, error.message)

    # ------------------------------------------------------------------ handlers

    async def _ping(self, caller: Caller, message: dict[str, Any]) -> Any:
        return {"node": self.name, "registered": self.registered}

    def _check(self, caller: Caller) -> None:
        if caller.uid != 0 and caller.uid != os.getuid():
            raise RpcError("Access/permission denied", "auth", 403)

    async def _launch(self, caller: Caller, message: dict[str, Any]) -> Any:
        self._check(caller)
        try:
            spec, attempt = self._spec(message)
        except LaunchFieldError as error:
            raise RpcError(f"bad launch message: {error}") from None
        job_id = spec.job_id
        if (
            (job_id, attempt) in self.ended
            or (job_id in self.jobs and self.jobs[job_id][0] == attempt)
            or self.launching.get(job_id) == attempt
        ):
            return {"duplicate": True}
        self.launching[job_id] = attempt
        limit = message.get("mem_limit")

        def follow(job: RunningJob) -> None:  # before the script runs: in its cgroup at birth
            self.gather.start(
                job_id,
                job.sid,
                limit if type(limit) is int and limit > 0 else None,
                lambda: job.signal(signal.SIGKILL),
            )

        try:
            job = await self.launcher.launch(spec, follow)
        except LaunchError as error:
            self.gather.end(job_id)
            logger.error("%s", error)
            return {"error": error.reason}
        except BaseException:  # cancelled while the job started: it was killed
            self.gather.end(job_id)
            raise
        finally:
            if self.launching.get(job_id) == attempt:
                del self.launching[job_id]
        self.jobs[job_id] = (attempt, job)
        if (job_id, attempt) in self._disowned:
            self._disowned.discard((job_id, attempt))
            self._kill_orphan(job_id, attempt)
        self._save_running()
        asyncio.get_running_loop().create_task(self._watch(job_id, attempt, job))
        return {}

    def _spec(self, message: dict[str, Any]) -> tuple[LaunchSpec, int]:
        """The launch a message asks for; LaunchFieldError names a field that is missing or
        not of its type."""
        read = _Fields(message)
        job_id = read.number("job_id")
        attempt = read.number("attempt")
        info = JobEnvInfo(
            job_id=job_id,
            job_name=read.text("name"),
            user=read.text("user"),
            uid=read.number("uid", MAX_ID),
            gid=read.number("gid", MAX_ID),
            group=read.text("group"),
            partition=read.text("partition"),
            account=read.optional_text("account"),
            qos=read.optional_text("qos"),
            nodes=read.texts("nodes"),
            node_name=self.name,
            cpus_on_node=read.number("cpus_on_node"),
            ntasks=read.optional_number("ntasks"),
            cpus_per_task=read.number("cpus_per_task"),
            mem_per_node=read.optional_number("mem_per_node"),
            submit_dir=read.text("work_dir"),
            submit_host=read.text("submit_host"),
            cluster_name=read.text("cluster_name"),
            restart_count=read.number("restart_count"),
            time_limit=read.optional_number("time_limit"),
            base_env=dict(_pair(item) for item in read.texts("environment")),
            array_job_id=read.optional_number("array_job_id"),
            array_task_id=read.optional_number("array_task_id"),
            array_task_count=read.optional_number("array_task_count"),
            array_task_min=read.optional_number("array_task_min"),
            array_task_max=read.optional_number("array_task_max"),
            array_task_step=read.optional_number("array_task_step"),
            gpus=read.numbers("gpus") if "gpus" in message else None,
            cpus_per_gpu=read.number("cpus_per_gpu") if "cpus_per_gpu" in message else None,
            mem_per_gpu=read.number("mem_per_gpu") if "mem_per_gpu" in message else None,
        )

        def path(pattern: str | None) -> str | None:
            if pattern is None:
                return None
            return expand_pattern(
                pattern,
                job_id=job_id,
                job_name=info.job_name,
                user=info.user,
                node=self.name,
                array_job_id=info.array_job_id,
                array_task_id=info.array_task_id,
            )

        stdout = path(read.optional_text("stdout")) or f"slurm-{job_id}.out"
        spec = LaunchSpec(
            job_id=job_id,
            script=read.text("script").encode("utf-8", "surrogateescape"),
            argv=read.texts("args"),
            work_dir=info.submit_dir,
            stdout=stdout,
            stderr=path(read.optional_text("stderr")),
            open_mode="append" if read.text("open_mode") == "append" else "truncate",
            env=job_environment(info),
            uid=info.uid,
            gid=info.gid,
        )
        return spec, attempt

    async def _watch(self, job_id: int, attempt: int, job: RunningJob) -> None:
        end = await job.wait()
        held = self.jobs.get(job_id)
        if held is not None and held[1] is job:
            del self.jobs[job_id]
            self._save_running()
        self.usage[(job_id, attempt)] = self.gather.end(job_id, job.rusage, job.inherited_rss)
        number = end.signal
        if job_id in self.gather.out_of_memory:
            self.gather.out_of_memory.discard(job_id)
            number = SIG_OOM  # ended for its memory: Slurm's status for it
        self.ended[(job_id, attempt)] = (end.exit_code, number)
        self._save_ended()
        if self.registered:
            await self._report(job_id, attempt, end.exit_code, number)

    def _running(self, caller: Caller, message: dict[str, Any]) -> RunningJob | None:
        self._check(caller)
        job_id = _int(message, "job_id")
        attempt = _int(message, "attempt")
        held = self.jobs.get(job_id)
        if held is None or held[0] != attempt:
            return None
        return held[1]

    async def _suspend(self, caller: Caller, message: dict[str, Any]) -> Any:
        job = self._running(caller, message)
        if job is not None:
            await job.suspend()
        return {"known": job is not None}

    async def _resume(self, caller: Caller, message: dict[str, Any]) -> Any:
        job = self._running(caller, message)
        if job is not None:
            await job.resume()
        return {"known": job is not None}

    async def _signal(self, caller: Caller, message: dict[str, Any]) -> Any:
        job = self._running(caller, message)
        number = _int(message, "signal")
        if not 0 < number < 65:
            raise RpcError(f"no signal {number}")
        if job is not None:
            job.signal(
                number,
                steps_only=bool(message.get("steps_only")),
                batch_only=bool(message.get("batch_only")),
            )
        return {"known": job is not None}

    async def _usage(self, caller: Caller, message: dict[str, Any]) -> Any:
        """A running job's figures, sampled now (sstat through the controller)."""
        job = self._running(caller, message)
        if job is None:
            return {"known": False, "steps": {}}
        steps = self.gather.usage(job.job_id)
        return {"known": True, "steps": {step: usage.to_dict() for step, usage in steps.items()}}

    async def _kill(self, caller: Caller, message: dict[str, Any]) -> Any:
        job = self._running(caller, message)
        kill_wait = _int(message, "kill_wait")
        if job is not None:
            job.kill(float(kill_wait))
            return {"known": True}
        key = (_int(message, "job_id"), _int(message, "attempt"))
        return {"known": key in self.ended}


class LaunchFieldError(PlurmError):
    """A message field that is missing or not of its type; the message names it."""


#: The largest count or id a message may carry (Slurm keeps them in 64 bits at most).
_INT_MAX = (1 << 63) - 1


class _Fields:
    """Typed reads of a message's fields: LaunchFieldError names a field that is missing or
    not of its type (a string holds no NUL: paths, names and arguments are C strings)."""

    def __init__(self, message: dict[str, Any]) -> None:
        self.message = message

    def _get(self, key: str) -> object:
        if key not in self.message:
            raise LaunchFieldError(f"{key}: missing")
        return self.message[key]

    def number(self, key: str, most: int = _INT_MAX) -> int:
        value = self._get(key)
        if type(value) is not int or not 0 <= value <= most:
            raise LaunchFieldError(f"{key}: not an integer from 0 to {most}")
        return value

    def optional_number(self, key: str) -> int | None:
        return None if self._get(key) is None else self.number(key)

    def text(self, key: str) -> str:
        return _string(key, self._get(key))

    def optional_text(self, key: str) -> str | None:
        return None if self._get(key) is None else self.text(key)

    def numbers(self, key: str) -> tuple[int, ...]:
        value = self._get(key)
        if type(value) is not list or any(
            type(item) is not int or not 0 <= item <= _INT_MAX for item in value
        ):
            raise LaunchFieldError(f"{key}: not a list of integers from 0 to {_INT_MAX}")
        return tuple(value)

    def texts(self, key: str) -> tuple[str, ...]:
        value = self._get(key)
        if type(value) is not list:
            raise LaunchFieldError(f"{key}: not a list of strings")
        return tuple(_string(key, item) for item in value)


def _string(key: str, value: object) -> str:
    if type(value) is not str or "\0" in value:
        raise LaunchFieldError(f"{key}: not a string (without NUL characters)")
    return value


def _int(message: dict[str, Any], key: str) -> int:
    value = message.get(key)
    if type(value) is not int:
        raise RpcError(f"{key} is not an integer")
    return value


def _pair(item: object) -> tuple[str, str]:
    name, _, value = str(item).partition("=")
    return name, value


def _write_atomic(path: Path, text: str) -> None:
    temporary = path.with_suffix(".tmp")
    with open(temporary, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plurmd", description="Plurm's node daemon")
    parser.add_argument("-N", metavar="NodeName", required=True, help="this daemon's node")
    common_flags(parser)
    args = parser.parse_args(argv)
    return run_daemon("plurmd", args, lambda: NodeDaemon(find_conf(args.f), args.N).serve)


if __name__ == "__main__":
    sys.exit(main())
