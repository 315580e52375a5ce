"""How the commands show generic resources, in Slurm 22.05's forms.

* TRES strings (``scontrol show job``'s ``TRES=``, ``squeue -O tres-alloc``, a node's
  ``CfgTRES``/``AllocTRES``) end with ``gres/gpu=N`` for each GRES that
  ``AccountingStorageTRES`` tracks (``gres/gpu``, or a type: ``gres/gpu:a100``); Slurm tracks
  no GRES by default, and then shows none.
* ``scontrol show job`` shows what the job asked for after ``Power=``: ``CpusPerTres=``,
  ``MemPerTres=``, ``TresPerJob=``, ``TresPerNode=`` and ``TresPerTask=``, each
  ``gres:gpu[:type]:N``.
* A node's GRES in use, as recorded on 22.05 (tests/data/gres): typed, with the unit
  indexes, ``gpu:a100:2(IDX:0-1)`` (``gpu:v100:0(IDX:N/A)`` when none is); untyped, the
  count alone, ``gpu:2``; ``gpu:0`` for each of ``GresTypes`` on a node without GRES.

Nothing here runs for a job or a node without GRES.
"""

from __future__ import annotations

from collections.abc import Iterable

from plurm.conf.gres import gres_types
from plurm.conf.model import SlurmConfig
from plurm.model.gres import GresAsk, GresHeld
from plurm.model.job import Job

__all__ = [
    "gpus_asked",
    "gres_used",
    "job_gres_tres",
    "node_gres_tres",
    "per_gpu_memory",
    "tracked",
    "tres_per_lines",
]


def tracked(config: SlurmConfig) -> tuple[str, ...]:
    """The GRES AccountingStorageTRES tracks: ``gpu`` or ``gpu:a100``, lower-case."""
    words = config.inactive.get("AccountingStorageTRES", "").split(",")
    return tuple(
        word.strip().lower()[5:] for word in words if word.strip().lower().startswith("gres/")
    )


def _tres(counts: Iterable[tuple[str, str | None, int]], config: SlurmConfig) -> str:
    names = tracked(config)
    if not names:
        return ""
    totals: dict[str, int] = {}
    for name, gtype, count in counts:
        for key in (name, f"{name}:{gtype}" if gtype else None):
            if key is not None and key in names:
                totals[key] = totals.get(key, 0) + count
    return "".join(f",gres/{key}={totals[key]}" for key in names if key in totals)


def job_gres_tres(job: Job, config: SlurmConfig, allocated: bool) -> str:
    """``,gres/gpu=N`` for the TRES string of a job: what it holds, or (pending) asks."""
    if allocated and job.gres_alloc:
        return _tres(((u.name, u.type, len(u.indexes)) for u in job.gres_alloc), config)
    request = job.request.gres_request
    if request is None:
        return ""
    share = request.node_share(
        job.request.min_nodes, job.request.tasks, job.request.ntasks_per_node
    )
    nodes = max(1, job.request.min_nodes)
    return _tres(((a.name, a.type, a.count * nodes) for a in share), config)


def gpus_asked(job: Job) -> int:
    """The GPUs a job asks for in all (each node's share times its -N)."""
    request = job.request.gres_request
    if request is None:
        return 0
    share = request.node_share(
        job.request.min_nodes, job.request.tasks, job.request.ntasks_per_node
    )
    return sum(ask.count for ask in share if ask.name == "gpu") * max(1, job.request.min_nodes)


def per_gpu_memory(job: Job, allocated: bool) -> int:
    """MiB a ``--mem-per-gpu`` job holds (or, pending, asks for): that times its GPUs; 0
    without ``--mem-per-gpu`` (or with ``--mem``/``--mem-per-cpu``, which sbatch refuses
    beside it)."""
    request = job.request.gres_request
    if request is None or request.mem_per_gpu is None:
        return 0
    if job.request.mem_per_node is not None or job.request.mem_per_cpu is not None:
        return 0
    if allocated:
        gpus = sum(len(u.indexes) for u in job.gres_alloc if u.name == "gpu")
    else:
        gpus = gpus_asked(job)
    return request.mem_per_gpu * gpus


def node_gres_tres(node: str, config: SlurmConfig, jobs: Iterable[Job] | None) -> str:
    """``,gres/gpu=N`` for a node's CfgTRES (``jobs`` None) or AllocTRES (the jobs on it)."""
    if jobs is None:
        counts = config.gres.counts.get(node, ())
        return _tres(((c.name, c.type, c.count) for c in counts), config)
    held = [u for job in jobs for u in job.gres_alloc if u.node == node]
    return _tres(((u.name, u.type, len(u.indexes)) for u in held), config)


def _spec(ask: GresAsk) -> str:
    return f"gres:{ask.name}:{ask.type}:{ask.count}" if ask.type else f"gres:{ask.name}:{ask.count}"


def tres_per_lines(job: Job) -> list[list[str]]:
    """scontrol show job's lines for what the job asked of generic resources."""
    request = job.request.gres_request
    if request is None:
        return []
    lines: list[list[str]] = []
    if request.cpus_per_gpu is not None:
        lines.append([f"CpusPerTres=gres:gpu:{request.cpus_per_gpu}"])
    if request.mem_per_gpu is not None:
        lines.append([f"MemPerTres=gres:gpu:{request.mem_per_gpu}"])
    for key, asks in (
        ("TresPerJob", request.per_job),
        ("TresPerNode", request.per_node),
        ("TresPerTask", request.per_task),
    ):
        if asks:
            lines.append([f"{key}={','.join(_spec(ask) for ask in asks)}"])
    return lines


def _ranges(indexes: Iterable[int]) -> str:
    ordered = sorted(set(indexes))
    parts: list[str] = []
    start = previous = ordered[0]
    for index in ordered[1:]:
        if index != previous + 1:
            parts.append(f"{start}-{previous}" if previous > start else str(start))
            start = index
        previous = index
    parts.append(f"{start}-{previous}" if previous > start else str(start))
    return ",".join(parts)


def gres_used(node: str, config: SlurmConfig, jobs: Iterable[Job]) -> str:
    """A node's GRES in use, as sinfo's GRES_USED and scontrol -d's GresUsed show them:
    ``gpu:a100:1(IDX:0),gpu:v100:0(IDX:N/A)`` for typed units, ``gpu:1`` for untyped ones,
    ``gpu:0`` (each name of ``GresTypes``) on a node without GRES, ``(null)`` without
    ``GresTypes``."""
    counts = config.gres.counts.get(node, ())
    if not counts:
        return ",".join(f"{name}:0" for name in gres_types(config.inactive)) or "(null)"
    held: list[GresHeld] = [u for job in jobs for u in job.gres_alloc if u.node == node]
    words = []
    for count in counts:
        indexes = {
            i for u in held if u.name == count.name and u.type == count.type for i in u.indexes
        }
        if not count.type:
            words.append(f"{count.name}:{len(indexes)}")
            continue
        where = _ranges(sorted(indexes)) if indexes else "N/A"
        words.append(f"{count.name}:{count.type}:{len(indexes)}(IDX:{where})")
    return ",".join(words)
