"""sprio: the factors of each pending job's priority, as Slurm 22.05 prints them.

Formats are ``%[.][size]type`` fields with literal text between them: a size pads and cuts
(right-justified with ``.``, else left). Upper-case types are weighted values (the factor
times its weight, ``%.0f``), lower-case ones the factors themselves (``%.7f``). Without
``-o`` the columns are the job id and partition, the priority and site factor, then one
column per factor whose weight is not zero; ``-l`` gives every column, ``-n`` the
normalized ones, ``-w`` the weights alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from plurm.commands.base import SIMULATED, CommandError, CommandResult, Invocation
from plurm.commands.client import ClusterClient
from plurm.commands.options import Option, parse_options
from plurm.model.priority import PriorityFactors, PriorityWeights
from plurm.numbers import is_digits

__all__ = ["format_report", "run"]

OPTIONS = (
    Option("noheader", "h", ("noheader",), takes_value=False),
    Option("jobs", "j", ("jobs",)),
    Option("long", "l", ("long",), takes_value=False),
    Option("norm", "n", ("norm",), takes_value=False),
    Option("format", "o", ("format",)),
    Option("partition", "p", ("partition",)),
    Option("user", "u", ("user", "users")),
    Option("weights", "w", ("weights",), takes_value=False),
    Option("sort", "S", ("sort",)),
    Option("local", None, ("local",), takes_value=False),
)

#: -l (and -l -n) in 22.05: no account or QOS name columns yet (23.02 added them).
LONG = "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"
LONG_NORM = "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t"

#: The priority a job's 32 bits reach, which -n's priority is a fraction of.
_TOP = 0xFFFF_FFFF

_FIELD = re.compile(r"%(\.)?(\d*)([A-Za-z])")

_HEADS = {
    "i": "JOBID",
    "r": "PARTITION",
    "u": "USER",
    "o": "ACCOUNT",
    "y": "PRIORITY",
    "s": "SITE",
    "a": "AGE",
    "b": "ASSOC",
    "f": "FAIRSHARE",
    "j": "JOBSIZE",
    "p": "PARTITION",
    "q": "QOS",
    "n": "QOSNAME",
    "t": "TRES",
    "c": "CLUSTER",
}
#: Weighted factors: (attribute of PriorityFactors, attribute of PriorityWeights).
_FACTORS = {
    "a": ("age", "age"),
    "b": ("assoc", "assoc"),
    "f": ("fairshare", "fairshare"),
    "j": ("jobsize", "jobsize"),
    "p": ("part", "partition"),
    "q": ("qos_factor", "qos"),
}


def _default_format(weights: PriorityWeights, *, norm: bool, users: bool) -> str:
    parts = ["%.15i %9r"]
    if users:
        parts.append(" %.8u")
    parts.append(" %10y" if norm else " %.10Y %.10S")
    for letter, (_, weight) in _FACTORS.items():
        if getattr(weights, weight):
            parts.append(f" %10{letter}" if norm else f" %.10{letter.upper()}")
    if weights.tres:
        parts.append(" %20t" if norm else " %.20T")
    return "".join(parts)


def _cell(text: str, width: int, right: bool) -> str:
    if not width:
        return text
    return text.rjust(width)[:width] if right else text[:width].ljust(width)


def _whole(value: float) -> str:
    return f"{value:.0f}"


def _norm(value: float) -> str:
    return f"{value:.7f}"


def _total(job: PriorityFactors) -> float:
    """The priority the factors add up to (an administrator's own when set), at least 1."""
    if job.direct:
        return float(job.priority)
    total = job.site + job.age + job.assoc + job.fairshare + job.jobsize + job.part
    total += job.qos_factor + sum(value for _, value in job.tres) - job.nice
    return max(1.0, total)


def _job_text(letter: str, job: PriorityFactors, weights: PriorityWeights) -> str:
    lower = letter.lower()
    if letter == "i":
        return str(job.job_id)
    if letter == "r":
        return job.partition
    if letter == "u":
        return job.user
    if letter == "o":
        return job.account
    if letter == "n":
        return job.qos
    if letter == "N":
        return str(job.nice)
    if letter == "c":
        return ""
    if letter == "Y":
        return str(int(_total(job)))
    if letter == "y":
        return f"{_total(job) / _TOP:16.14f}"
    if letter == "S":
        return _whole(job.site)
    if lower in _FACTORS:
        if job.direct:
            return "0"
        attribute, weight_name = _FACTORS[lower]
        value = float(getattr(job, attribute))
        if letter.isupper():
            return _whole(value)
        weight = getattr(weights, weight_name)
        return _norm(value / weight if weight else 0.0)
    if lower == "t":
        if letter == "T":
            return ",".join(f"{name.upper()}={value:.0f}" for name, value in job.tres)
        by_name = dict(weights.tres)
        return ",".join(
            f"{name.upper()}={value / by_name[name] if by_name.get(name) else 0.0:.2f}"
            for name, value in job.tres
        )
    return ""


def _weight_text(letter: str, weights: PriorityWeights) -> str:
    lower = letter.lower()
    if letter == "i":
        return "Weights"
    if lower == "s":  # the site factor's weight: 1 (22.05's -w shows it so)
        return "1"
    if lower in _FACTORS:
        return str(getattr(weights, _FACTORS[lower][1]))
    if lower == "t":
        return ",".join(f"{name.upper()}={weight:g}" for name, weight in weights.tres)
    return ""


def _render(fmt: str, text_of: Callable[[str], str], *, header: bool = False) -> str:
    out = []
    position = 0
    for match in _FIELD.finditer(fmt):
        out.append(fmt[position : match.start()])
        position = match.end()
        right, width, letter = bool(match.group(1)), int(match.group(2) or 0), match.group(3)
        text = _HEADS.get(letter.lower(), "") if header else text_of(letter)
        if letter == "N" and header:
            text = "NICE"
        out.append(_cell(text, width, right))
    out.append(fmt[position:])
    return "".join(out) + "\n"


def format_report(
    weights: PriorityWeights,
    jobs: Sequence[PriorityFactors],
    fmt: str,
    *,
    header: bool = True,
    weights_only: bool = False,
) -> str:
    """sprio's lines for ``jobs`` (already selected, in order)."""
    lines = [_render(fmt, str, header=True)] if header else []
    if weights_only:
        lines.append(_render(fmt, lambda letter: _weight_text(letter, weights)))
        return "".join(lines)
    for job in jobs:
        lines.append(_render(fmt, lambda letter, job=job: _job_text(letter, job, weights)))  # type: ignore[misc]
    return "".join(lines)


def run(
    argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation = SIMULATED
) -> CommandResult:
    found, rest = parse_options("sprio", argv, OPTIONS)
    if rest:
        raise CommandError(f"sprio: error: Unrecognized option: {rest[0]}")
    values = dict(found)
    report = client.priorities()
    weights = report.weights
    if weights is None:
        return CommandResult(
            1,
            "",
            "You are not running a supported priority plugin\n"
            f"({client.config.priority_type}).\n"
            "Only 'priority/multifactor' is supported.\n",
        )
    norm = "norm" in values
    if "format" in values:
        fmt = str(values["format"])
    elif "long" in values:
        fmt = LONG_NORM if norm else LONG
    else:
        fmt = _default_format(weights, norm=norm, users="user" in values)
    jobs = list(report.jobs)
    if "jobs" in values:
        ids = set()
        for word in str(values["jobs"]).split(","):
            if not is_digits(word):
                raise CommandError(f"sprio: error: Invalid job id: {word}")
            ids.add(int(word))
        jobs = [job for job in jobs if job.job_id in ids]
    if "user" in values:
        names = set(str(values["user"]).split(","))
        jobs = [job for job in jobs if job.user in names]
    if "partition" in values:
        parts = set(str(values["partition"]).split(","))
        jobs = [job for job in jobs if job.partition in parts]
    header = "noheader" not in values
    if not jobs and ("jobs" in values or "user" in values) and "weights" not in values:
        return CommandResult(0, "Unable to find jobs matching user/id(s) specified\n")
    text = format_report(weights, jobs, fmt, header=header, weights_only="weights" in values)
    return CommandResult(0, text)
