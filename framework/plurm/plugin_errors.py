"""Errors raised inside a plugin's hook, told in one message instead of a traceback.

The core calls hooks directly on its hot paths (see :class:`plurm.manager._Hook`), so it
does not wrap each call; when an exception reaches the top of a run, :func:`explain` walks
its traceback for the outermost frame that is a registered hook implementation and names
the plugin's type string, its distribution, the hook, the simulated time and the ids of the
jobs the hook was given. ``plurm simulate`` prints that, writes what it has, and exits 1
(``--debug`` shows the traceback too).
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from types import CodeType
from typing import Any

import pluggy

from plurm.errors import PlurmError
from plurm.model.cluster import Cluster
from plurm.model.job import Job
from plurm.registry import LoadedPlugin

__all__ = ["PluginHookError", "explain"]


class PluginHookError(PlurmError):
    """A plugin's hook raised: which plugin, which hook, when, and for which jobs."""

    def __init__(
        self,
        type_string: str,
        distribution: str,
        hook: str,
        now: float | None,
        job_ids: Sequence[int],
        error: BaseException,
    ) -> None:
        when = f" at t={now:g}s" if now is not None else ""
        jobs = f" (job{'s' if len(job_ids) > 1 else ''} {', '.join(map(str, job_ids))})"
        text = (
            f"plugin {type_string} ({distribution}) failed in hook {hook}{when}"
            f"{jobs if job_ids else ''}: {type(error).__name__}: {error}"
        )
        super().__init__(text)
        self.type_string = type_string
        self.distribution = distribution
        self.hook = hook
        self.now = now
        self.job_ids = tuple(job_ids)
        self.error = error
        #: A trace replay's records as far as it got (set by the replay).
        self.records: list[Any] | None = None


def _code(function: object) -> CodeType | None:
    function = getattr(function, "__func__", function)
    code = getattr(function, "__code__", None)
    return code if isinstance(code, CodeType) else None


def explain(
    error: BaseException,
    manager: pluggy.PluginManager,
    loaded: Sequence[LoadedPlugin],
    now: float | None = None,
) -> PluginHookError | None:
    """``error`` as a :class:`PluginHookError` when it was raised inside a hook
    implementation of a plugin registered on ``manager``; None otherwise. ``now`` is the
    time to report when the hook was given no cluster."""
    if isinstance(error, PluginHookError):
        return error
    where: dict[CodeType, tuple[str, str]] = {}
    for name, caller in vars(manager.hook).items():
        if not isinstance(caller, pluggy.HookCaller):
            continue
        for impl in caller.get_hookimpls():
            code = _code(impl.function)
            if code is not None:
                where[code] = (str(manager.get_name(impl.plugin)), name)
    for frame, _ in traceback.walk_tb(error.__traceback__):
        found = where.get(frame.f_code)
        if found is None:
            continue
        type_string, hook = found
        names = frame.f_code.co_varnames[: frame.f_code.co_argcount]
        arguments = [frame.f_locals.get(name) for name in names]
        job_ids = [a.job_id for a in arguments if isinstance(a, Job)]
        clusters = [a for a in arguments if isinstance(a, Cluster)]
        when = clusters[0].now if clusters else now
        distribution = next(
            (p.distribution for p in loaded if p.type_string == type_string), "not installed"
        )
        return PluginHookError(type_string, distribution, hook, when, job_ids, error)
    return None
