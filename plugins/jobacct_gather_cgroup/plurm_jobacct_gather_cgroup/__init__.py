"""jobacct_gather/cgroup: each job in a cgroup v2 of its own, its figures from the cgroup.

Where the node daemon can make one, every job gets ``<cgroup2 mount><daemon's cgroup>/
plurm_<node>/job_<id>`` with the memory and cpu controllers; the job's processes are moved
into it when it starts (the processes it forks later are born there). The batch step's
figures come from the cgroup: MaxRSS from ``memory.peak`` (or the largest
``memory.current`` sampled, on kernels without it), CPU times from ``cpu.stat``, pages from
``memory.stat``'s ``pgmajfault``; cgroup v2 has no virtual memory figure, so MaxVMSize is 0
as with Slurm's plugin on cgroup v2. srun's steps are not cgroups of their own here: their
figures come from /proc (:class:`~plurm.gather.sampler.ProcessGather`), and the job's
cgroup, so its batch step's figures, includes them.

With ``JobAcctGatherParams=OverMemoryKill`` and a memory limit, the cgroup's
``memory.max`` is the limit: the kernel ends what goes over it, and a job whose cgroup
counts an ``oom_kill`` ends OUT_OF_MEMORY.

Where no such cgroup can be made (no cgroup v2, the memory controller not delegated, no
permission), the plugin says so once, in the daemon's log, and samples /proc as
jobacct_gather/linux does.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from plurm._markers import hookimpl
from plurm.gather.sampler import ProcessGather
from plurm.model.usage import StepUsage
from plurm.registry import PluginContext

__all__ = ["CgroupGather", "CgroupTree", "cgroup2_mount", "parse_flat"]

logger = logging.getLogger(__name__)


def cgroup2_mount(mountinfo: str | None = None) -> Path | None:
    """Where the cgroup v2 hierarchy is mounted (from /proc/self/mountinfo), None when it
    is not."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return None
    for line in mountinfo.splitlines():
        before, dash, after = line.partition(" - ")
        if dash and after.split()[:1] == ["cgroup2"]:
            fields = before.split()
            if len(fields) >= 5:
                return Path(fields[4])
    return None


def own_cgroup() -> str:
    """This process's cgroup v2 path (``/`` when it is the root)."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:] or "/"
    except OSError:
        pass
    return "/"


def parse_flat(text: str) -> dict[str, int]:
    """A cgroup's flat keyed file (``cpu.stat``, ``memory.events``, ``memory.stat``)."""
    found = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            found[key] = int(value)
    return found


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


@attrs.frozen
class CgroupTree:
    """This node's folder of job cgroups."""

    base: Path

    @classmethod
    def probe(cls, node: str, mount: Path | None = None) -> CgroupTree | str:
        """The node's folder, made with the memory and cpu controllers for its children;
        or why it cannot be."""
        mount = mount if mount is not None else cgroup2_mount()
        if mount is None:
            return "no cgroup v2 hierarchy is mounted"
        parent = mount / own_cgroup().lstrip("/")
        base = parent / f"plurm_{node}"
        try:
            base.mkdir(exist_ok=True)
        except OSError as error:
            return f"cannot make {base}: {error.strerror}"
        with contextlib.suppress(OSError):
            (parent / "cgroup.subtree_control").write_text("+memory +cpu")
        controllers = (_read(base / "cgroup.controllers") or "").split()
        if "memory" not in controllers:
            with contextlib.suppress(OSError):
                base.rmdir()
            offered = " ".join(controllers) or "none"
            return (
                f"the memory controller is not available in {parent} (its children get: {offered})"
            )
        try:
            (base / "cgroup.subtree_control").write_text(
                "+memory" + (" +cpu" if "cpu" in controllers else "")
            )
        except OSError as error:
            return f"cannot enable the memory controller under {base}: {error.strerror}"
        return cls(base)

    def job(self, job_id: int) -> Path:
        return self.base / f"job_{job_id}"


class CgroupGather(ProcessGather):
    """The plugin object (module doc)."""

    def __init__(self, context: PluginContext) -> None:
        super().__init__(context)
        self.tree: CgroupTree | None = None
        self.unavailable: str | None = None
        #: Each job's cgroup and the largest memory.current sampled.
        self.cgroups: dict[int, Path] = {}
        self.peaks: dict[int, int] = {}
        self._oom_named: set[int] = set()

    def _ready(self, node: str) -> CgroupTree | None:
        if self.tree is None and self.unavailable is None:
            found = CgroupTree.probe(node)
            if isinstance(found, str):
                self.unavailable = found
                self.logger.warning(
                    "jobacct_gather/cgroup: no cgroup per job on node %s: %s; sampling "
                    "each process's /proc figures instead",
                    node,
                    found,
                )
            else:
                self.tree = found
        return self.tree

    @hookimpl
    def acct_gather_job_start(
        self, job_id: int, sid: int, mem_limit: int | None, node: str
    ) -> None:
        super().acct_gather_job_start(job_id, sid, mem_limit, node)
        tree = self._ready(node)
        if tree is None:
            return
        path = tree.job(job_id)
        try:
            path.mkdir(exist_ok=True)
            if mem_limit and self.settings.over_memory_kill:
                (path / "memory.max").write_text(str(mem_limit))
                with contextlib.suppress(OSError):
                    (path / "memory.swap.max").write_text("0")
            _move(path, self.jobs[job_id].sid)
        except OSError as error:
            self.logger.warning("job_id=%d: cannot use cgroup %s: %s", job_id, path, error)
            return
        self.cgroups[job_id] = path
        self.peaks[job_id] = 0

    @hookimpl
    def acct_gather_sample(self, job_id: int, now: float) -> None:
        super().acct_gather_sample(job_id, now)
        path = self.cgroups.get(job_id)
        if path is not None:
            current = (_read(path / "memory.current") or "0").strip()
            if current.isdigit():
                self.peaks[job_id] = max(self.peaks[job_id], int(current))

    @hookimpl
    def acct_gather_usage(self, job_id: int) -> Mapping[str, StepUsage] | None:
        figures = super().acct_gather_usage(job_id)
        path = self.cgroups.get(job_id)
        if figures is None or path is None:
            return figures
        figures = dict(figures)
        peak = (_read(path / "memory.peak") or "").strip()
        rss = max(self.peaks.get(job_id, 0), int(peak) if peak.isdigit() else 0)
        cpu = parse_flat(_read(path / "cpu.stat") or "")
        pages = parse_flat(_read(path / "memory.stat") or "").get("pgmajfault", 0)
        node = self.jobs[job_id].node
        user, system = cpu.get("user_usec", 0) / 1e6, cpu.get("system_usec", 0) / 1e6
        total = cpu.get("usage_usec", 0) / 1e6
        figures["batch"] = StepUsage(
            max_rss=rss,
            max_rss_node=node,
            ave_rss=float(rss),
            max_vmsize=0,
            max_vmsize_node=node,
            max_pages=pages,
            max_pages_node=node,
            ave_pages=float(pages),
            min_cpu=total,
            min_cpu_node=node,
            ave_cpu=total,
            total_cpu=total,
            user_cpu=user,
            system_cpu=system,
        )
        return figures

    @hookimpl
    def acct_gather_over_memory(self, job_id: int) -> list[str] | None:
        over = list(super().acct_gather_over_memory(job_id) or ())
        path = self.cgroups.get(job_id)
        if path is not None and job_id not in self._oom_named:
            events = parse_flat(_read(path / "memory.events") or "")
            if events.get("oom_kill", 0) > 0:
                self._oom_named.add(job_id)
                if "batch" not in over:
                    over.append("batch")
        return over

    @hookimpl
    def acct_gather_job_end(self, job_id: int) -> None:
        super().acct_gather_job_end(job_id)
        self.peaks.pop(job_id, None)
        self._oom_named.discard(job_id)
        path = self.cgroups.pop(job_id, None)
        if path is not None:
            with contextlib.suppress(OSError):
                path.rmdir()


def _move(path: Path, sid: int) -> None:
    """Move every process of session ``sid`` into cgroup ``path``."""
    for pid in _session(sid):
        with contextlib.suppress(ProcessLookupError, OSError):
            (path / "cgroup.procs").write_text(str(pid))


def _session(sid: int) -> Iterable[int]:
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                data = Path(f"/proc/{name}/stat").read_bytes()
                if int(data[data.rfind(b")") + 2 :].split()[3]) == sid:
                    yield int(name)
