"""The pluggy markers every Plurm plugin uses, and the hook-API version.

A plugin marks its hook implementations with :data:`hookimpl`::

    from plurm import hookimpl

    class MySelect:
        @hookimpl
        def select_job_test(self, job, nodes, mode, candidates, cluster):
            ...

and declares the hook-API version it was written against as ``PLURM_HOOK_API = (1, 0)`` on
its factory. The registry refuses a different major version (see :mod:`plurm.registry`).
"""

from __future__ import annotations

import pluggy

__all__ = ["HOOK_API_VERSION", "NAME", "hookimpl", "hookspec"]

#: The pluggy project name, and the prefix of every entry-point group (``plurm.select``, ...).
NAME = "plurm"
#: (major, minor) of the hook API. Minor versions only add hooks or optional arguments.
HOOK_API_VERSION = (1, 14)

hookspec = pluggy.HookspecMarker(NAME)
hookimpl = pluggy.HookimplMarker(NAME)
