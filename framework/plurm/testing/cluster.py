"""A simulated cluster built from config text, job builders and a hook recorder.

Plugin authors use these through the pytest fixtures in :mod:`plurm.testing.plugin`::

    def test_my_select(make_cluster, job):
        cluster = make_cluster("NodeName=n[1-4] CPUs=4\\nPartitionName=p Nodes=ALL Default=YES",
                               plugins={"select/mine": MySelect})
        first = cluster.submit(job().nodes(2).runtime(60))
        cluster.run_until(1)
        assert cluster.job(first).nodes == ("n1", "n2")
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pluggy

from plurm import conf
from plurm.commands import CommandResult
from plurm.manager import Plugins
from plurm.model.job import Job, JobRequest, JobState
from plurm.registry import PluginContext, Registry
from plurm.sim.session import Simulation

__all__ = ["HookRecorder", "JobBuilder", "TestCluster", "build_cluster"]

#: Lines added in front of a test configuration that lacks them.
BASE_KEYS = {
    "ClusterName": "ClusterName=test",
    "SlurmctldHost": "SlurmctldHost=localhost",
}


@attrs.frozen
class JobBuilder:
    """Build a JobRequest step by step: ``JobBuilder().nodes(2).partition("hi").runtime(60)``."""

    request: JobRequest = JobRequest()

    def _with(self, **changes: Any) -> JobBuilder:
        return JobBuilder(attrs.evolve(self.request, **changes))

    def nodes(self, count: int, most: int | None = None) -> JobBuilder:
        """-N count (or count-most)."""
        return self._with(min_nodes=count, max_nodes=most if most is not None else count)

    def tasks(self, count: int) -> JobBuilder:
        return self._with(ntasks=count)

    def cpus_per_task(self, count: int) -> JobBuilder:
        return self._with(cpus_per_task=count)

    def partition(self, *names: str) -> JobBuilder:
        return self._with(partitions=names)

    def qos(self, name: str) -> JobBuilder:
        return self._with(qos=name)

    def account(self, name: str) -> JobBuilder:
        return self._with(account=name)

    def user(self, name: str) -> JobBuilder:
        return self._with(user=name)

    def runtime(self, seconds: float | None) -> JobBuilder:
        return self._with(sim_runtime=seconds)

    def time(self, minutes: int) -> JobBuilder:
        return self._with(time_limit=minutes)

    def mem(self, mib: int) -> JobBuilder:
        return self._with(mem_per_node=mib)

    def name(self, text: str) -> JobBuilder:
        return self._with(name=text)

    def requeue(self, flag: bool = True) -> JobBuilder:
        return self._with(requeue=flag)

    def exclusive(self) -> JobBuilder:
        return self._with(exclusive=True)

    def oversubscribe(self) -> JobBuilder:
        return self._with(oversubscribe=True)

    def nodelist(self, *names: str) -> JobBuilder:
        return self._with(nodelist=names)

    def exclude(self, *names: str) -> JobBuilder:
        return self._with(exclude=names)

    def build(self) -> JobRequest:
        return self.request


class HookRecorder:
    """Records every hook call of a plugin manager (pluggy's hook-call monitoring)."""

    def __init__(self, manager: pluggy.PluginManager) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

        def before(name: str, impls: object, kwargs: Mapping[str, Any]) -> None:
            self.calls.append((name, dict(kwargs)))

        def after(outcome: object, name: str, impls: object, kwargs: Mapping[str, Any]) -> None:
            return None

        self._undo = manager.add_hookcall_monitoring(before, after)

    def names(self) -> list[str]:
        """Hook names in call order."""
        return [name for name, _ in self.calls]

    def getcalls(self, name: str) -> list[dict[str, Any]]:
        """The arguments of every call of hook ``name``."""
        return [kwargs for hook, kwargs in self.calls if hook == name]

    def clear(self) -> None:
        self.calls.clear()

    def close(self) -> None:
        self._undo()


class TestCluster:
    """A controller on a simulated clock, driven directly or with command lines."""

    __test__ = False  # not a test class, whatever pytest thinks of the name

    def __init__(self, simulation: Simulation, workdir: Path) -> None:
        self.simulation = simulation
        self.workdir = workdir
        self.controller = simulation.controller
        self.config = simulation.config
        self.plugins = simulation.plugins

    @property
    def now(self) -> float:
        return self.simulation.clock.now()

    def submit(self, request: JobRequest | JobBuilder) -> int:
        """Submit a job now; its id."""
        if isinstance(request, JobBuilder):
            request = request.build()
        return self.controller.submit(request).job_id

    def run_until(self, when: float) -> None:
        """Let simulated time pass up to ``when``, running everything due."""
        self.simulation.run_until(when)

    def settle(self) -> float:
        """Let the scheduler act on what just happened: Slurm starts batch jobs on its next
        pass, about a second later, and so does Plurm. Runs to the next whole second, and
        on through the teardown of killed jobs (COMPLETING) and the pass their release
        triggers. To look inside those seconds, use :meth:`run_until` or :meth:`step`."""
        self.simulation.run_until(math.floor(self.now) + 1)
        completing = self.controller.cluster.jobs_unordered
        while any(completing(JobState.COMPLETING)) and self.step() is not None:
            self.simulation.run_until(math.floor(self.now) + 1)
        return self.now

    def step(self) -> float | None:
        """Run the next event(s) due; the new time, or None when nothing is left."""
        due = self.simulation.clock.next_time()
        if due is not None:
            self.simulation.run_until(due)
        return due

    def job(self, job_id: int) -> Job:
        return self.controller.cluster.job(job_id)

    def state(self, job_id: int) -> JobState:
        return self.job(job_id).state

    def states(self) -> dict[int, str]:
        """Every job's state name, by id."""
        return {job.job_id: job.state.name for job in self.controller.cluster.jobs.values()}

    def command(self, line: str) -> CommandResult:
        """Run a command line (sbatch, squeue, sinfo, scancel, scontrol, or the simulator's
        ``slurmd stop|start NODES``) now."""
        return self.simulation.command(shlex.split(line), self.workdir)

    def sbatch(self, options: str = "", wrap: str = "sleep 1000") -> int:
        """``sbatch --parsable OPTIONS --wrap=WRAP`` now; the job id. AssertionError with
        sbatch's message when it refuses the job."""
        result = self.command(f"sbatch --parsable {options} --wrap={shlex.quote(wrap)}")
        if result.status != 0:
            raise AssertionError(f"sbatch {options} refused: {result.stderr.strip()}")
        return int(result.stdout.strip())

    def signals(self, job_id: int) -> list[tuple[float, str]]:
        """The signals the simulated job received: (time, name)."""
        return list(self.simulation.executor.signals.get(job_id, []))


def build_cluster(
    conf_text: str,
    workdir: Path,
    *,
    plugins: Mapping[str, Callable[[PluginContext], object]] | None = None,
    observers: tuple[object, ...] = (),
    qos_text: str | None = None,
    accounts_text: str | None = None,
    plurm_text: str | None = None,
    files: Mapping[str, str] | None = None,
) -> TestCluster:
    """A cluster from slurm.conf text (ClusterName and SlurmctldHost are added when
    missing), with qos.conf, accounts.conf and plurm.conf beside it when their texts are
    given, and ``files`` (name -> text: a policy's own files, such as PBS's sched_config)
    beside it too. ``plugins`` maps type strings to factories that take the place of
    installed plugins; ``observers`` are registered too (lifecycle hooks, recorders)."""
    lines = conf_text.strip().splitlines()
    present = {line.split("=", 1)[0].strip().lower() for line in lines if "=" in line}
    header = [line for key, line in BASE_KEYS.items() if key.lower() not in present]
    path = workdir / "slurm.conf"
    path.write_text("\n".join([*header, *lines]) + "\n")
    if qos_text is not None:
        (workdir / "qos.conf").write_text(qos_text)
    if accounts_text is not None:
        (workdir / "accounts.conf").write_text(accounts_text)
    if plurm_text is not None:
        (workdir / "plurm.conf").write_text(plurm_text)
    for name, text in (files or {}).items():
        (workdir / name).write_text(text)
    config = conf.load(path)
    registry = Registry(factories=dict(plugins or {}))
    loaded = Plugins.load(config, registry=registry, extra=observers)
    return TestCluster(Simulation(config, loaded), workdir)
