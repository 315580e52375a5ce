"""sstat: what a running job's steps use, sampled now on the job's node, as Slurm 22.05's
sstat prints it.

``sstat -j JOBID[.STEP][,...] [-o FIELDS] [-p|-P] [-n] [-a] [-e]``. Without a step, the
lowest numbered step running is shown (the batch step when srun runs none), or every
running step with ``--allsteps``; ``JOBID.batch`` names the batch step. The figures come
from the jobacct_gather plugin on the job's batch host, through the controller; with
``jobacct_gather/none`` the usage fields are empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from plurm.commands.base import SIMULATED, CommandError, CommandResult, Invocation
from plurm.commands.client import ClusterClient
from plurm.commands.options import Option, parse_options
from plurm.commands.usagefmt import usage_value
from plurm.controller import RequestError
from plurm.model.acct import StepRecord

__all__ = ["DEFAULT_FIELDS", "FIELDS", "format_steps", "run"]

OPTIONS = (
    Option("jobs", "j", ("jobs",)),
    Option("format", "o", ("format", "fields")),
    Option("parsable", "p", ("parsable",), takes_value=False),
    Option("parsable2", "P", ("parsable2",), takes_value=False),
    Option("noheader", "n", ("noheader",), takes_value=False),
    Option("allsteps", "a", ("allsteps",), takes_value=False),
    Option("helpformat", "e", ("helpformat",), takes_value=False),
)

#: sstat's fields and their widths (sacct's widths for the same fields).
FIELDS: dict[str, int] = {
    "AveCPU": 10,
    "AveCPUFreq": 10,
    "AveDiskRead": 12,
    "AveDiskWrite": 12,
    "AvePages": 10,
    "AveRSS": 10,
    "AveVMSize": 10,
    "ConsumedEnergy": 14,
    "JobID": 12,
    "MaxDiskRead": 12,
    "MaxDiskReadNode": 15,
    "MaxDiskReadTask": 15,
    "MaxDiskWrite": 12,
    "MaxDiskWriteNode": 16,
    "MaxDiskWriteTask": 16,
    "MaxPages": 8,
    "MaxPagesNode": 12,
    "MaxPagesTask": 12,
    "MaxRSS": 10,
    "MaxRSSNode": 10,
    "MaxRSSTask": 10,
    "MaxVMSize": 10,
    "MaxVMSizeNode": 14,
    "MaxVMSizeTask": 14,
    "MinCPU": 10,
    "MinCPUNode": 10,
    "MinCPUTask": 10,
    "NTasks": 8,
    "Nodelist": 20,
    "TotalCPU": 10,
}

#: What sstat prints without ``--format`` (the usage fields of Slurm's default list).
DEFAULT_FIELDS = (
    "JobID",
    "MaxVMSize",
    "MaxVMSizeNode",
    "MaxVMSizeTask",
    "AveVMSize",
    "MaxRSS",
    "MaxRSSNode",
    "MaxRSSTask",
    "AveRSS",
    "MaxPages",
    "MaxPagesNode",
    "MaxPagesTask",
    "AvePages",
    "MinCPU",
    "MinCPUNode",
    "MinCPUTask",
    "AveCPU",
    "NTasks",
)


def _fields(text: str) -> list[tuple[str, int]]:
    chosen = []
    for spec in text.split(","):
        spec = spec.strip()
        if not spec:
            continue
        name, _, width = spec.partition("%")
        found = next((f for f in FIELDS if f.lower() == name.lower()), None)
        if found is None:
            found = next((f for f in FIELDS if name and f.lower().startswith(name.lower())), None)
        if found is None:
            raise CommandError(f'sstat: error: Invalid field requested: "{name}"')
        size = FIELDS[found]
        if width:
            try:
                size = int(width)
            except ValueError:
                raise CommandError(f"sstat: error: Invalid field width: {width}") from None
        chosen.append((found, size))
    return chosen


def _cell(name: str, step: StepRecord) -> str:
    if name == "JobID":
        return f"{step.job_id}.{step.step}"
    if name == "NTasks":
        return str(step.ntasks)
    if name == "Nodelist":
        return ",".join(step.nodes)
    try:
        shown = usage_value(name)
    except KeyError:
        return ""  # a field Plurm does not gather (disk, energy, frequency)
    value = shown(step)
    return "" if value is None else str(value)


def format_steps(
    steps: Sequence[StepRecord],
    fields: Sequence[tuple[str, int]],
    *,
    delimiter: str | None = None,
    trailing: bool = False,
    header: bool = True,
) -> str:
    """sstat's lines for ``steps``: fixed columns, or ``delimiter``-separated."""
    lines = []

    def line(cells: list[str]) -> str:
        if delimiter is None:
            return "".join(cell + " " for cell in cells) + "\n"
        return delimiter.join(cells) + (delimiter if trailing else "") + "\n"

    def fit(text: str, width: int) -> str:
        size = abs(width)
        if len(text) > size:
            text = text[: size - 1] + "+"
        return text.rjust(size) if width > 0 else text.ljust(size)

    if header:
        if delimiter is None:
            lines.append(line([fit(name, width) for name, width in fields]))
            lines.append(line(["-" * abs(width) for _, width in fields]))
        else:
            lines.append(line([name for name, _ in fields]))
    for step in steps:
        cells = [_cell(name, step) for name, _ in fields]
        if delimiter is None:
            cells = [fit(cell, width) for cell, (_, width) in zip(cells, fields, strict=True)]
        lines.append(line(cells))
    return "".join(lines)


def _selection(text: str) -> list[tuple[int, str | None]]:
    chosen = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        job, _, step = item.partition(".")
        if not (job.isascii() and job.isdigit()):
            raise CommandError(f"sstat: error: Invalid job id: {item}")
        if step and step != "batch" and not (step.isascii() and step.isdigit()):
            raise CommandError(f"sstat: error: Invalid job step id: {item}")
        chosen.append((int(job), step or None))
    return chosen


def _step_order(step: StepRecord) -> tuple[int, int]:
    return (1, 0) if not isinstance(step.step, int) else (0, step.step)


def run(
    argv: Sequence[str],
    client: ClusterClient,
    cwd: Path,
    invocation: Invocation = SIMULATED,
) -> CommandResult:
    """Run sstat's command line."""
    found, rest = parse_options("sstat", argv, OPTIONS)
    values = dict(found)
    if "helpformat" in values:
        names = sorted(FIELDS)
        rows = [names[i : i + 4] for i in range(0, len(names), 4)]
        return CommandResult(0, "".join("".join(f"{n:<20}" for n in row) + "\n" for row in rows))
    if rest and "jobs" not in values:
        values["jobs"] = ",".join(rest)
    if not values.get("jobs"):
        raise CommandError("sstat: error: You must specify a job (-j JOBID[.STEP])")
    fields = _fields(str(values["format"])) if values.get("format") else None
    if fields is None:
        fields = [(name, FIELDS[name]) for name in DEFAULT_FIELDS]
    delimiter = "|" if "parsable" in values or "parsable2" in values else None
    shown: list[StepRecord] = []
    errors = []
    for job_id, step in _selection(str(values["jobs"])):
        try:
            steps = client.job_usage(job_id)
        except RequestError:  # no such job, or not the caller's
            steps = None
        if steps is None:
            errors.append(f"sstat: error: couldn't get steps for job {job_id}\n")
            continue
        steps = sorted((s for s in steps if s.state == "RUNNING"), key=_step_order)
        if step is not None:
            steps = [s for s in steps if s.step_key == step]
        elif "allsteps" not in values:
            steps = steps[:1]
        if not steps:
            errors.append(f"sstat: error: no steps running for job {job_id}\n")
        shown.extend(steps)
    text = format_steps(
        shown,
        fields,
        delimiter=delimiter,
        trailing="parsable" in values,
        header="noheader" not in values,
    )
    return CommandResult(1 if errors and not shown else 0, text, "".join(errors))
