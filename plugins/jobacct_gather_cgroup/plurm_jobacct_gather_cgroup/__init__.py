"""jobacct_gather/cgroup: each job in a memory cgroup of its own, its figures from the cgroup.

Where the node daemon can make one, every job gets ``<cgroup2 mount><daemon's cgroup>/
plurm_<node>/job_<id>`` with the memory and cpu controllers; the job's session leader is
moved into it before the script runs (plurmd holds it until then), so every process of the
job is born there. The batch step's
figures come from the cgroup: MaxRSS from ``memory.peak`` (or the largest
``memory.current`` sampled, on kernels without it), CPU times from ``cpu.stat``, pages from
``memory.stat``'s ``pgmajfault``; cgroup v2 has no virtual memory figure, so MaxVMSize is 0
as with Slurm's plugin on cgroup v2. srun's steps are not cgroups of their own here: their
figures come from /proc (:class:`~plurm.gather.sampler.ProcessGather`), and the job's
cgroup, so its batch step's figures, includes them.

With ``JobAcctGatherParams=OverMemoryKill`` and a memory limit, the cgroup's
``memory.max`` is the limit: the kernel ends what goes over it, and a job whose cgroup
counts an ``oom_kill`` ends OUT_OF_MEMORY.

On a machine whose memory controller is bound to a cgroup v1 hierarchy (a "hybrid"
layout: cgroup v2 mounted without it), the job's cgroup is made there, as Slurm's
cgroup/v1 does: ``memory.limit_in_bytes`` is the limit, MaxRSS is
``memory.max_usage_in_bytes`` (or the largest ``memory.usage_in_bytes`` sampled), an
``oom_kill`` count in ``memory.oom_control`` ends the job OUT_OF_MEMORY; the CPU times
come from /proc (cpuacct is another hierarchy).

Where no such cgroup can be made (no cgroup v2 nor v1 memory hierarchy, the memory
controller not delegated, no permission), the plugin says so once, in the daemon's log,
with each reason, and samples /proc as jobacct_gather/linux does.
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

__all__ = ["CgroupGather", "CgroupTree", "cgroup2_mount", "memory_v1_mount", "parse_flat"]

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


def memory_v1_mount(mountinfo: str | None = None) -> tuple[Path, str] | None:
    """Where a cgroup v1 hierarchy with the memory controller is mounted, and the path of
    the hierarchy at that mount (from /proc/self/mountinfo); None when there is none."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return None
    for line in mountinfo.splitlines():
        before, dash, after = line.partition(" - ")
        words = after.split()
        if dash and words[:1] == ["cgroup"] and len(words) >= 3:
            fields = before.split()
            if "memory" in words[2].split(",") and len(fields) >= 5:
                return Path(fields[4]), fields[3]
    return None


def own_cgroup(controller: str = "") -> str:
    """This process's cgroup path: cgroup v2's, or that of the v1 hierarchy holding
    ``controller`` (``/`` when it is the root)."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            wanted = controller in names.split(",") if controller else names == ""
            if wanted:
                return path or "/"
    except (OSError, ValueError):
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


#: The memory files of each cgroup version: the limit, the usage now, the peak usage,
#: and the file whose ``oom_kill`` counts the processes the kernel's OOM killer ended.
_FILES = {
    2: ("memory.max", "memory.current", "memory.peak", "memory.events"),
    1: (
        "memory.limit_in_bytes",
        "memory.usage_in_bytes",
        "memory.max_usage_in_bytes",
        "memory.oom_control",
    ),
}


@attrs.frozen
class CgroupTree:
    """This node's folder of job cgroups (cgroup ``version`` 2, or 1: the memory
    controller's v1 hierarchy)."""

    base: Path
    version: int = 2

    @property
    def limit_file(self) -> str:
        return _FILES[self.version][0]

    @property
    def current_file(self) -> str:
        return _FILES[self.version][1]

    @property
    def peak_file(self) -> str:
        return _FILES[self.version][2]

    @property
    def oom_file(self) -> str:
        return _FILES[self.version][3]

    @classmethod
    def probe(
        cls, node: str, mount: Path | None = None, mountinfo: str | None = None
    ) -> CgroupTree | str:
        """The node's folder: in cgroup v2 with the memory and cpu controllers for its
        children, else in the memory controller's v1 hierarchy; or why neither can be."""
        found = cls._probe_v2(node, mount if mount is not None else cgroup2_mount(mountinfo))
        if isinstance(found, CgroupTree):
            return found
        v1 = cls._probe_v1(node, memory_v1_mount(mountinfo))
        return v1 if isinstance(v1, CgroupTree) else f"cgroup v2: {found}; cgroup v1: {v1}"

    @classmethod
    def _probe_v1(cls, node: str, mounted: tuple[Path, str] | None) -> CgroupTree | str:
        if mounted is None:
            return "no hierarchy with the memory controller is mounted"
        mount, root = mounted
        own = own_cgroup("memory")
        if root != "/" and own.startswith(root):
            own = own[len(root) :]
        base = mount / own.lstrip("/") / f"plurm_{node}"
        try:
            base.mkdir(exist_ok=True)
        except OSError as error:
            return f"cannot make {base}: {error.strerror}"
        if not (base / "memory.limit_in_bytes").exists():
            with contextlib.suppress(OSError):
                base.rmdir()
            return f"{base} has no memory.limit_in_bytes"
        return cls(base, 1)

    @classmethod
    def _probe_v2(cls, node: str, mount: Path | None) -> CgroupTree | str:
        if mount is None:
            return "no hierarchy is mounted"
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
            if tree.version == 1:  # what the job used before it was moved moves with it
                with contextlib.suppress(OSError):
                    (path / "memory.move_charge_at_immigrate").write_text("1")
            if mem_limit and self.settings.over_memory_kill:
                (path / tree.limit_file).write_text(str(mem_limit))
                with contextlib.suppress(OSError):  # no swap beyond the limit
                    if tree.version == 2:
                        (path / "memory.swap.max").write_text("0")
                    else:
                        (path / "memory.memsw.limit_in_bytes").write_text(str(mem_limit))
            _move(path, self.jobs[job_id].sid)
        except OSError as error:
            self.logger.warning("job_id=%d: cannot use cgroup %s: %s", job_id, path, error)
            with contextlib.suppress(OSError):
                path.rmdir()
            return
        self.cgroups[job_id] = path
        self.peaks[job_id] = 0

    @hookimpl
    def acct_gather_sample(self, job_id: int, now: float) -> None:
        super().acct_gather_sample(job_id, now)
        path = self.cgroups.get(job_id)
        if path is not None and self.tree is not None:
            current = (_read(path / self.tree.current_file) or "0").strip()
            if current.isdigit():
                self.peaks[job_id] = max(self.peaks[job_id], int(current))

    @hookimpl
    def acct_gather_usage(self, job_id: int) -> Mapping[str, StepUsage] | None:
        figures = super().acct_gather_usage(job_id)
        path = self.cgroups.get(job_id)
        if figures is None or path is None or self.tree is None:
            return figures
        figures = dict(figures)
        peak = (_read(path / self.tree.peak_file) or "").strip()
        rss = max(self.peaks.get(job_id, 0), int(peak) if peak.isdigit() else 0)
        node = self.jobs[job_id].node
        if self.tree.version == 1:  # the memory hierarchy only: CPU times from /proc
            sampled = figures.get("batch") or StepUsage(
                max_rss_node=node, max_vmsize_node=node, max_pages_node=node, min_cpu_node=node
            )
            rss = max(rss, sampled.max_rss)
            figures["batch"] = attrs.evolve(sampled, max_rss=rss, ave_rss=float(rss))
            return figures
        cpu = parse_flat(_read(path / "cpu.stat") or "")
        pages = parse_flat(_read(path / "memory.stat") or "").get("pgmajfault", 0)
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
        if path is not None and self.tree is not None and job_id not in self._oom_named:
            killed = parse_flat(_read(path / self.tree.oom_file) or "").get("oom_kill", 0)
            if killed > 0:
                self.logger.warning(
                    "job_id=%d: detected %d oom-kill event(s) in %s: processes killed by "
                    "the cgroup out-of-memory handler",
                    job_id,
                    killed,
                    path,
                )
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
    """Move every process of session ``sid`` into cgroup ``path``; OSError when one that
    is still alive cannot be moved."""
    for pid in _session(sid):
        try:
            (path / "cgroup.procs").write_text(str(pid))
        except ProcessLookupError:  # gone meanwhile
            continue


def _session(sid: int) -> Iterable[int]:
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                data = Path(f"/proc/{name}/stat").read_bytes()
                if int(data[data.rfind(b")") + 2 :].split()[3]) == sid:
                    yield int(name)
