"""How sacct and sstat print what a step used (jobacct_gather's figures), as Slurm 22.05
prints them: sizes with Slurm's exact unit conversion, CPU times as ``MM:SS.mmm`` or
``HH:MM:SS``."""

from __future__ import annotations

from collections.abc import Callable

from plurm.model.acct import StepRecord

__all__ = ["USAGE_FIELDS", "cpu_time", "size_text", "usage_value"]


def cpu_time(seconds: float) -> str:
    """CPU times (TotalCPU, AveCPU): ``MM:SS.mmm`` under an hour when there are
    milliseconds, else ``00:MM:SS``, ``HH:MM:SS``, ``D-HH:MM:SS``."""
    whole = int(seconds)
    millis = round((seconds - whole) * 1000)
    if millis >= 1000:
        whole, millis = whole + 1, 0
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours:02d}:{minutes:02d}:{secs:02d}"
    if millis:
        return f"{minutes:02d}:{secs:02d}.{millis:03d}"
    return f"00:{minutes:02d}:{secs:02d}"


def size_text(value: float) -> str:
    """A size or count as sacct and sstat print usage (Slurm's exact conversion): divided
    by 1024 only while it divides exactly, so a RSS in bytes prints in K (``204800K``), a
    whole number of MiB in M, and 0 as ``0``."""
    number = round(value)
    letters = ["", "K", "M", "G", "T", "P", "E"]
    unit = 0
    while number and number % 1024 == 0 and unit < len(letters) - 1:
        number //= 1024
        unit += 1
    return f"{number}{letters[unit]}"


def usage_value(name: str) -> Callable[[StepRecord], str | int | None]:
    """How sacct and sstat print usage field ``name`` of a step (None: not gathered)."""
    attribute = USAGE_FIELDS[name]

    def value(step: StepRecord) -> str | int | None:
        raw = getattr(step, attribute)
        if raw is None:
            return None
        if name.endswith("Node"):
            return str(raw)
        if name.endswith("Task"):
            return int(raw)
        if name in ("AveCPU", "MinCPU"):
            return cpu_time(int(raw))  # whole seconds, as Slurm keeps them
        if name in ("TotalCPU", "UserCPU", "SystemCPU"):
            return cpu_time(float(raw))
        if name in ("AveRSS", "AveVMSize"):
            return size_text(round(float(raw) / 1024) * 1024)  # averages in whole KiB
        return size_text(float(raw))

    return value


#: sacct's usage fields and the StepRecord attribute each prints.
USAGE_FIELDS = {
    "MaxRSS": "max_rss",
    "MaxRSSNode": "max_rss_node",
    "MaxRSSTask": "max_rss_task",
    "AveRSS": "ave_rss",
    "MaxVMSize": "max_vmsize",
    "MaxVMSizeNode": "max_vmsize_node",
    "MaxVMSizeTask": "max_vmsize_task",
    "AveVMSize": "ave_vmsize",
    "MaxPages": "max_pages",
    "MaxPagesNode": "max_pages_node",
    "MaxPagesTask": "max_pages_task",
    "AvePages": "ave_pages",
    "MinCPU": "min_cpu",
    "MinCPUNode": "min_cpu_node",
    "MinCPUTask": "min_cpu_task",
    "AveCPU": "ave_cpu",
    "TotalCPU": "total_cpu",
    "UserCPU": "user_cpu",
    "SystemCPU": "system_cpu",
}
