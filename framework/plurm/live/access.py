"""Who may do what in plurmctld, from the verified uid of a message.

* root and ``SlurmUser`` (and the user the controller itself runs as) may do everything;
* a user with ``AdminLevel=Administrator`` in accounts.conf may do what they may
  (Slurm's "super user": partition and node updates, shutdown);
* ``AdminLevel=Operator`` may act on every job (cancel, signal, suspend, resume, requeue,
  update) but not change partitions or nodes;
* a coordinator of an account (accounts.conf's ``Coordinators``) may act on the jobs
  charged to it or to its sub-accounts as their owner may (cancel, signal, hold, release,
  requeue, update), never suspend or resume them;
* any other user acts only on their own jobs, and never suspends or resumes.

``PrivateData=jobs`` hides other users' jobs from a user who is neither an operator nor
the coordinator of their account: squeue, scontrol show job, sacct and the REST API show
them only their own (and their accounts').
"""

from __future__ import annotations

import os
import pwd

from plurm.conf.model import SlurmConfig
from plurm.controller.access import coordinated_accounts, slurm_user_uid

__all__ = ["Access"]


class Access:
    """The controller's access rules for one configuration."""

    def __init__(self, config: SlurmConfig) -> None:
        self.config = config
        self._slurm_uids = frozenset({0, os.getuid(), slurm_user_uid(config)})
        self.private_jobs = "jobs" in config.private_data
        self._has_coordinators = any(spec.coordinators for spec in config.accounts)

    def _name(self, uid: int) -> str | None:
        try:
            return pwd.getpwuid(uid).pw_name.lower()
        except KeyError:
            return None

    def _level(self, uid: int) -> str | None:
        levels = self.config.admin_levels
        if not levels:
            return None
        name = self._name(uid)
        return None if name is None else levels.get(name)

    def slurm_user(self, uid: int) -> bool:
        """root, SlurmUser, or the controller's own user."""
        return uid in self._slurm_uids

    def administrator(self, uid: int) -> bool:
        """Slurm's super user: root, SlurmUser, AdminLevel=Administrator."""
        return self.slurm_user(uid) or self._level(uid) == "Administrator"

    def operator(self, uid: int) -> bool:
        """May act on every job: an administrator or AdminLevel=Operator."""
        return self.slurm_user(uid) or self._level(uid) in ("Operator", "Administrator")

    def coordinated(self, uid: int) -> frozenset[str]:
        """The accounts ``uid`` coordinates (with their sub-accounts)."""
        if not self._has_coordinators:
            return frozenset()
        name = self._name(uid)
        return frozenset() if name is None else coordinated_accounts(self.config.accounts, name)

    def coordinator(self, uid: int, account: str | None) -> bool:
        """Whether ``uid`` coordinates ``account`` (a job without one has no coordinator)."""
        return account is not None and account in self.coordinated(uid)

    def may_act(self, uid: int, owner: int, account: str | None) -> bool:
        """Whether ``uid`` may cancel, signal, hold, requeue or update a job of ``owner``
        charged to ``account``: its owner, an operator, or the account's coordinator."""
        return uid == owner or self.operator(uid) or self.coordinator(uid, account)

    def sees_all_jobs(self, uid: int) -> bool:
        """Whether ``uid`` sees every user's jobs (PrivateData=jobs hides them otherwise)."""
        return not self.private_jobs or self.operator(uid)

    def sees(self, uid: int, owner: int, account: str | None) -> bool:
        """Whether ``uid`` sees a job of ``owner`` charged to ``account``."""
        return self.sees_all_jobs(uid) or uid == owner or self.coordinator(uid, account)
