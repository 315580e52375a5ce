"""Who may do what in plurmctld, from the verified uid of a message.

* root and ``SlurmUser`` (and the user the controller itself runs as) may do everything;
* a user with ``AdminLevel=Administrator`` in accounts.conf may do what they may
  (Slurm's "super user": partition and node updates, shutdown);
* ``AdminLevel=Operator`` may act on every job (cancel, signal, suspend, resume, requeue,
  update) but not change partitions or nodes;
* any other user acts only on their own jobs, and never suspends or resumes.

``PrivateData=jobs`` hides other users' jobs from a user who is not an operator: squeue,
scontrol show job, sacct and the REST API show them only their own.
"""

from __future__ import annotations

import os
import pwd

from plurm.conf.model import SlurmConfig
from plurm.controller.access import slurm_user_uid

__all__ = ["Access"]


class Access:
    """The controller's access rules for one configuration."""

    def __init__(self, config: SlurmConfig) -> None:
        self.config = config
        self._slurm_uids = frozenset({0, os.getuid(), slurm_user_uid(config)})
        self.private_jobs = "jobs" in config.private_data

    def _level(self, uid: int) -> str | None:
        levels = self.config.admin_levels
        if not levels:
            return None
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:
            return None
        return levels.get(name.lower())

    def slurm_user(self, uid: int) -> bool:
        """root, SlurmUser, or the controller's own user."""
        return uid in self._slurm_uids

    def administrator(self, uid: int) -> bool:
        """Slurm's super user: root, SlurmUser, AdminLevel=Administrator."""
        return self.slurm_user(uid) or self._level(uid) == "Administrator"

    def operator(self, uid: int) -> bool:
        """May act on every job: an administrator or AdminLevel=Operator."""
        return self.slurm_user(uid) or self._level(uid) in ("Operator", "Administrator")

    def sees_all_jobs(self, uid: int) -> bool:
        """Whether ``uid`` sees every user's jobs (PrivateData=jobs hides them otherwise)."""
        return not self.private_jobs or self.operator(uid)
