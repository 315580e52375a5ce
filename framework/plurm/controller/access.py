"""Who may use a partition, as slurmctld checks it when a job is submitted.

``RootOnly``: only root (and SlurmUser) may submit. ``AllowGroups``: the job's user must
belong to one of the groups (root and SlurmUser always may). ``AllowAccounts`` and
``DenyAccounts``, ``AllowQos`` and ``DenyQos``: the job's account and QOS (checked when the
job has one; without accounting it has neither). Each refusal is Slurm's own text; the
controller raises it as a RequestError, so ``sbatch`` prints "Batch job submission failed:
..." in simulation and live alike.

:func:`coordinated_accounts`: the accounts a user coordinates (accounts.conf's
``Coordinators``), each with its sub-accounts, as slurmdbd hands them to slurmctld; a
coordinator may act on the jobs charged to them as their owner may.
"""

from __future__ import annotations

import grp
import pwd
from collections.abc import Iterable

from plurm.conf.model import AccountSpec, PartitionSpec, SlurmConfig
from plurm.model.job import JobRequest

__all__ = [
    "ACCESS_DENIED",
    "BAD_ACCOUNT",
    "BAD_GROUP",
    "BAD_QOS",
    "coordinated_accounts",
    "in_group",
    "partition_refusal",
    "slurm_user_uid",
]

ACCESS_DENIED = "Access/permission denied"
BAD_GROUP = "User's group not permitted to use this partition"
BAD_ACCOUNT = "Invalid account or account/partition combination specified"
BAD_QOS = "Invalid qos specification"


def slurm_user_uid(config: SlurmConfig) -> int:
    """SlurmUser's uid (a name or a number; root, 0, when this machine does not know it)."""
    name = config.slurm_user
    if name.isdigit():
        return int(name)
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return 0


def in_group(user: str, gid: int, group: str) -> bool:
    """Whether ``user`` (primary group ``gid``) belongs to ``group``, as this machine's
    group database says; a group this machine does not know holds only users whose primary
    group has its name (a simulated user's)."""
    try:
        entry = grp.getgrnam(group)
    except KeyError:
        return False
    return entry.gr_gid == gid or user in entry.gr_mem


def partition_refusal(
    spec: PartitionSpec,
    request: JobRequest,
    account: str | None,
    qos: str | None,
    slurm_uid: int = 0,
) -> str | None:
    """Why the request may not use the partition (Slurm's words), or None."""
    privileged = request.uid in (0, slurm_uid)
    if spec.root_only and not privileged:
        return ACCESS_DENIED
    if spec.allow_groups is not None and not privileged:
        named = request.group in spec.allow_groups
        if not named and not any(in_group(request.user, request.gid, g) for g in spec.allow_groups):
            return BAD_GROUP
    if account is not None:
        if spec.allow_accounts is not None and account not in spec.allow_accounts:
            return BAD_ACCOUNT
        if spec.deny_accounts is not None and account in spec.deny_accounts:
            return BAD_ACCOUNT
    if qos is not None:
        if spec.allow_qos is not None and qos not in spec.allow_qos:
            return BAD_QOS
        if spec.deny_qos is not None and qos in spec.deny_qos:
            return BAD_QOS
    return None


def coordinated_accounts(accounts: Iterable[AccountSpec], user: str) -> frozenset[str]:
    """The accounts ``user`` coordinates: those naming it in ``Coordinators`` and every
    account below them."""
    children: dict[str, list[str]] = {}
    named: list[str] = []
    for spec in accounts:
        if spec.parent is not None:
            children.setdefault(spec.parent, []).append(spec.name)
        if user in spec.coordinators:
            named.append(spec.name)
    found: set[str] = set()
    while named:
        name = named.pop()
        if name not in found:
            found.add(name)
            named.extend(children.get(name, ()))
    return frozenset(found)
