"""The account and QOS a job gets at submission, and the checks slurmdbd accounting makes.

With ``AccountingStorageType=accounting_storage/slurmdbd`` Slurm charges each job to an
account: its ``-A`` (lower-cased, as slurmdbd stores names), else its user's default
account. Its QOS is its ``--qos``, else the association's default QOS, else ``normal``.
``AccountingStorageEnforce`` decides what is refused (observed on 22.05, recorded in
tests/data/oracle/cli, scenario ``accounting``):

* ``associations`` (implied by ``qos`` and ``limits``): a user with no association with
  that account -> "Invalid account or account/partition combination specified";
* ``qos``: a QOS that does not exist, or that the association may not use ->
  "Invalid qos specification".

A QOS that does not exist is refused whenever Plurm has a QOS table (slurmdbd, or a
qos.conf). Without slurmdbd a job has no account beyond its ``-A`` and, without a qos.conf
either, no QOS at all (Slurm shows ``(null)`` and accepts any --qos).
"""

from __future__ import annotations

import attrs

from plurm.conf.model import SlurmConfig
from plurm.model.cluster import DEFAULT_QOS
from plurm.model.job import JobRequest

__all__ = ["Charge", "Refused", "charge"]


class Refused(Exception):
    """The submission is refused; the message is Slurm's."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@attrs.frozen
class Charge:
    """The account and QOS a job is given (None: none, shown as ``(null)``)."""

    account: str | None
    qos: str | None


def charge(config: SlurmConfig, request: JobRequest) -> Charge:
    """The account and QOS ``request`` gets under ``config``; :class:`Refused` if it may
    not be submitted."""
    account = request.account.lower() if request.account else None
    if not config.accounting:
        if request.qos is not None and config.qos_file and config.qos_spec(request.qos) is None:
            raise Refused("Invalid qos specification")
        qos = (request.qos or DEFAULT_QOS) if config.qos_file else None
        return Charge(account, qos)
    enforce = config.accounting_enforce
    account = account or config.default_accounts.get(request.user)
    association = config.association(request.user, account) if account else None
    if association is None and "associations" in enforce:
        raise Refused("Invalid account or account/partition combination specified")
    qos = request.qos or (association.default_qos if association else None) or DEFAULT_QOS
    if config.qos_spec(qos) is None:
        raise Refused("Invalid qos specification")
    if "qos" in enforce and association is not None and qos not in association.qos:
        raise Refused("Invalid qos specification")
    return Charge(account, qos)
