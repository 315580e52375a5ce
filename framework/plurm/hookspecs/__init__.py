"""Hook specifications, one module per plugin type, mirroring Slurm's plugin operation tables.

=================  =====================================  ======================
module             Slurm table                            entry-point group
=================  =====================================  ======================
``select``         ``select_p_*`` (select.h)              ``plurm.select``
``preempt``        ``preempt_p_*`` (preempt.h)            ``plurm.preempt``
``sched``          ``sched_p_*`` and gang.c's ``gs_*``    ``plurm.sched``
``auth``           ``auth_p_*`` (auth.h)                  ``plurm.auth``
``acct_gather``    ``jobacct_gather_p_*``                 ``plurm.acct_gather``
``priority``       ``priority_p_*`` (priority.h)          ``plurm.priority``
``lifecycle``      (none: default limits, job observers)  any plugin
=================  =====================================  ======================

Every spec has one docstring template: a summary, *When called*, the parameters, *Returns*,
*Purity*, the *Slurm equivalent*, and ``versionadded``. Exclusive hooks are ``firstresult``:
exactly one plugin implements them, and the registry checks that.
"""

from __future__ import annotations

from plurm.hookspecs import acct_gather, auth, lifecycle, preempt, priority, sched, select

#: All spec modules, registered on every plugin manager.
SPEC_MODULES = (select, preempt, sched, auth, acct_gather, priority, lifecycle)

__all__ = [
    "SPEC_MODULES",
    "acct_gather",
    "auth",
    "lifecycle",
    "preempt",
    "priority",
    "sched",
    "select",
]
