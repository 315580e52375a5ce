"""sbatch's generic resource options, read into a typed :class:`GresRequest`.

``--gres=NAME[:TYPE][:COUNT][,...]`` (``none`` for nothing) asks each node for COUNT
(default 1; Slurm's ``K``/``M``/``G`` suffixes); ``--gpus=[TYPE:]N`` asks the whole job for N
GPUs, ``--gpus-per-node=[TYPE:]N`` each node and ``--gpus-per-task=[TYPE:]N`` each task;
``--cpus-per-gpu=N`` and ``--mem-per-gpu=SIZE`` size the CPUs and memory by the GPUs;
``--gres-flags=enforce-binding`` keeps a job on the cores gres.conf binds its GPUs to
(``disable-binding`` is accepted and is the default).

The refusals are Slurm 22.05's: a malformed specification, or a name that GresTypes does
not list or no node has, is "Invalid generic resource (gres) specification" (slurmctld's
answer, exit 1); a bad number is sbatch's own usage error (exit 255);
``--cpus-per-gpu`` with ``--cpus-per-task``, and ``--mem-per-gpu`` with ``--mem`` or
``--mem-per-cpu``, are refused as sbatch refuses them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from plurm.commands.base import CommandError
from plurm.conf.model import SlurmConfig
from plurm.model.gres import GresAsk, GresRequest
from plurm.numbers import INT32_MAX, is_digits

__all__ = ["GRES_OPTION_NAMES", "gres_request"]

#: The option names (sbatch.OPTIONS keys) this module reads.
GRES_OPTION_NAMES = (
    "gres",
    "gpus",
    "gpus_per_node",
    "gpus_per_task",
    "gpus_per_socket",
    "cpus_per_gpu",
    "mem_per_gpu",
    "gres_flags",
)

_INVALID = "sbatch: error: Invalid generic resource (gres) specification"
_COUNT = re.compile(r"([0-9]{1,19})([kmgtp]?)", re.IGNORECASE | re.ASCII)
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_MEMORY = re.compile(r"([0-9]{1,20})([KMGTkmgt]?)[Bb]?", re.ASCII)
_MEMORY_UNITS = {"": 1, "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


def _invalid() -> CommandError:
    return CommandError(_INVALID, 1)


def _count(text: str) -> int:
    match = _COUNT.fullmatch(text)
    if match is None:
        raise _invalid()
    value: int = int(match.group(1)) * 1024 ** _POWERS[match.group(2).lower()]
    if value < 1 or value >= (1 << 63):
        raise _invalid()
    return value


def _gres_words(text: str) -> tuple[GresAsk, ...]:
    """--gres: NAME[:TYPE][:COUNT], comma separated."""
    asks: list[GresAsk] = []
    for word in text.split(","):
        word = word.strip()
        if not word or word.lower() == "none":
            continue
        parts = word.split(":")
        if len(parts) > 3 or not parts[0]:
            raise _invalid()
        name, gtype, count = parts[0].lower(), None, 1
        if len(parts) == 3:
            gtype, count = parts[1], _count(parts[2])
        elif len(parts) == 2:
            if parts[1][:1].isdigit():
                count = _count(parts[1])
            else:
                gtype = parts[1]
        if gtype == "":
            raise _invalid()
        asks.append(GresAsk(name, gtype, count))
    return tuple(asks)


def _gpu_words(text: str) -> tuple[GresAsk, ...]:
    """--gpus*: [TYPE:]N, comma separated."""
    asks: list[GresAsk] = []
    for word in text.split(","):
        parts = word.strip().split(":")
        if len(parts) > 2 or not parts[-1] or (len(parts) == 2 and not parts[0]):
            raise _invalid()
        asks.append(GresAsk("gpu", parts[0] if len(parts) == 2 else None, _count(parts[-1])))
    return tuple(asks)


def _positive(option: str, text: str) -> int:
    if not is_digits(text) or not 1 <= int(text) <= INT32_MAX:
        raise CommandError(f'sbatch: error: Invalid numeric value "{text}" for --{option}.', 255)
    return int(text)


def gres_request(
    values: Mapping[str, str | None], config: SlurmConfig
) -> tuple[tuple[str, ...], GresRequest | None]:
    """The options as given (for display) and the typed request (None without any)."""
    if not any(name in values for name in GRES_OPTION_NAMES):
        return (), None
    shown: list[str] = []
    per_node = _gres_words(str(values.get("gres") or ""))
    shown += [word for word in str(values.get("gres") or "").split(",") if word and word != "none"]
    per_job: tuple[GresAsk, ...] = ()
    per_task: tuple[GresAsk, ...] = ()
    for option in ("gpus", "gpus_per_node", "gpus_per_task", "gpus_per_socket"):
        if option not in values:
            continue
        shown.append(f"{option.replace('_', '-')}={values[option]}")
        asks = _gpu_words(str(values[option]))
        if option == "gpus":
            per_job += asks
        elif option == "gpus_per_task":
            per_task += asks
        else:  # per socket: Plurm models one socket's worth as a node's (see docs/gres.md)
            per_node += asks
    cpus_per_gpu = None
    if "cpus_per_gpu" in values:
        cpus_per_gpu = _positive("cpus-per-gpu", str(values["cpus_per_gpu"]))
        if "cpus_per_task" in values:
            raise CommandError(  # (and the request is then refused as a bad GRES one)
                "sbatch: error: --cpus-per-gpu is mutually exclusive with --cpus-per-task\n"
                + _INVALID,
                1,
            )
    mem_per_gpu = None
    if "mem_per_gpu" in values:
        if "mem" in values or "mem_per_cpu" in values:
            raise CommandError(
                "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.", 1
            )
        match = _MEMORY.fullmatch(str(values["mem_per_gpu"]))
        if match is None:
            raise CommandError("sbatch: error: Invalid --mem-per-gpu specification", 255)
        mem_per_gpu = max(1, int(int(match.group(1)) * _MEMORY_UNITS[match.group(2).upper()]))
    binding = False
    if "gres_flags" in values:
        word = str(values["gres_flags"]).strip().lower()
        if word not in ("enforce-binding", "disable-binding"):
            raise CommandError("sbatch: error: Invalid gres-flags specification", 255)
        binding = word == "enforce-binding"
    request = GresRequest(per_node, per_job, per_task, cpus_per_gpu, mem_per_gpu, binding)
    names = request.names
    known = {count.name for counts in config.gres.counts.values() for count in counts}
    if any(name not in known for name in names):
        raise _invalid()
    if not names:
        return tuple(shown), None  # --gres=none, --gres-flags alone: nothing asked
    return tuple(shown), request
