"""slurm.conf (and qos.conf, accounts.conf, gres.conf), read as Slurm 22.05 reads them, into frozen
typed values.

The data path, one stage a module:

``source``  physical lines -> logical lines (comments, continuation, escapes)
``syntax``  the lark grammar (slurm.lark) -> Include and key=value statements with positions
``reader``  statements -> raw settings and records (one global per line, DEFAULT merging,
            duplicates, Include resolution), each value checked against its key (``keys``)
``build``   raw -> :class:`SlurmConfig` with defaults, aliases, topology and Nodes= resolved
``qos``     qos.conf -> :class:`QosSpec` records
``accounts`` accounts.conf -> :class:`AccountSpec` and :class:`Association` records
``gres``    GresTypes, nodes' Gres= and gres.conf -> :class:`GresConfig` (devices per node)
``plurmconf`` plurm.conf (Plurm's own settings, which Slurm never reads) -> PreemptGuards

Use :func:`load` for a file on disk and :func:`parse_text` for text in hand. Both raise only
:class:`~plurm.errors.ConfError` subclasses, with every error found in one pass.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from plurm.conf.model import (
    AccountSpec,
    Association,
    ConfNotice,
    ControlHost,
    DownNodesSpec,
    NodeSetSpec,
    NodeSpec,
    PartitionSpec,
    PreemptParameters,
    QosSpec,
    SchedulerParameters,
    SlurmConfig,
)
from plurm.conf.values import (
    OverSubscribe,
    OverSubscribeKind,
    PreemptBase,
    PreemptMode,
    SelectTypeParameters,
)
from plurm.errors import ConfError, ConfIncludeError, raise_collected
from plurm.inputfile import MAX_CONF_BYTES, read_text

__all__ = [
    "AccountSpec",
    "Association",
    "ConfIncludeError",
    "ConfNotice",
    "ControlHost",
    "DownNodesSpec",
    "NodeSetSpec",
    "NodeSpec",
    "OverSubscribe",
    "OverSubscribeKind",
    "PartitionSpec",
    "PreemptBase",
    "PreemptMode",
    "PreemptParameters",
    "QosSpec",
    "SchedulerParameters",
    "SelectTypeParameters",
    "SlurmConfig",
    "default_path",
    "load",
    "parse_text",
]


def default_path() -> Path:
    """Where Slurm looks: ``$SLURM_CONF``, else /etc/slurm/slurm.conf."""
    return Path(os.environ.get("SLURM_CONF") or "/etc/slurm/slurm.conf")


def load(path: str | os.PathLike[str] | None = None) -> SlurmConfig:
    """Read slurm.conf at ``path`` (default :func:`default_path`) and qos.conf and
    accounts.conf beside it."""
    main = Path(path) if path is not None else default_path()
    try:
        text = read_text(main, limit=MAX_CONF_BYTES)
    except OSError as error:
        raise ConfIncludeError(f"cannot read {main}: {error.strerror or error}", None) from None
    return parse_text(text, path=main)


def parse_text(
    text: str,
    *,
    path: str | os.PathLike[str] = "slurm.conf",
    qos_text: str | None = None,
    accounts_text: str | None = None,
    plurm_text: str | None = None,
    gres_text: str | None = None,
) -> SlurmConfig:
    """Parse slurm.conf ``text`` as if it were the file ``path`` (Includes resolve beside it).

    ``qos_text`` stands for qos.conf, ``accounts_text`` for accounts.conf, ``plurm_text``
    for plurm.conf (Plurm's own settings) and ``gres_text`` for gres.conf; when None, the
    file beside ``path`` is read if present.
    """
    # The parser (lark and its grammar) loads here, not with the package: a command that
    # finds its configuration in the cache (plurm.conf.cache) never needs it.
    from plurm.conf.accounts import read_accounts
    from plurm.conf.build import build_config
    from plurm.conf.gres import gres_types, read_gres_conf
    from plurm.conf.plurmconf import read_plurm_conf
    from plurm.conf.qos import read_qos
    from plurm.conf.reader import read_config

    main = Path(path)
    raw = read_config(main, text=text)
    config, errors = build_config(raw)
    qos_path = main.parent / "qos.conf"
    if qos_text is None and qos_path.exists():
        qos_text = _companion(qos_path)
    qos, qos_errors, qos_notices = read_qos(str(qos_path), qos_text or "")
    accounts_path = main.parent / "accounts.conf"
    if accounts_text is None and accounts_path.exists():
        accounts_text = _companion(accounts_path)
    accounts, associations, default_accounts, admin_levels, account_errors = read_accounts(
        str(accounts_path), accounts_text or "", {spec.name for spec in qos}
    )
    plurm_path = main.parent / "plurm.conf"
    if plurm_text is None and plurm_path.exists():
        plurm_text = _companion(plurm_path)
    plurm_settings, plurm_errors = read_plurm_conf(str(plurm_path), plurm_text or "")
    gres_path = main.parent / "gres.conf"
    if gres_text is None and gres_path.exists():
        gres_text = _companion(gres_path)
    gres_errors: list[ConfError] = []
    gres_notices: list[ConfNotice] = []
    if config is not None and (gres_text or any(spec.gres for spec in config.nodes)):
        gres, gres_errors, gres_notices, drains = read_gres_conf(
            str(gres_path), gres_text or "", gres_types(config.inactive), config.nodes
        )
        config = attrs.evolve(config, gres=gres, down_nodes=config.down_nodes + drains)
    errors = errors + qos_errors + account_errors + plurm_errors + gres_errors
    raise_collected(errors)
    assert config is not None
    files = config.files + ((str(qos_path),) if qos_text else ())
    files += (str(accounts_path),) if accounts_text else ()
    files += (str(plurm_path),) if plurm_text else ()
    files += (str(gres_path),) if gres_text else ()
    return attrs.evolve(
        config,
        qos=qos,
        qos_file=bool(qos_text),
        accounts=accounts,
        associations=associations,
        default_accounts=default_accounts,
        admin_levels=admin_levels,
        notices=config.notices + tuple(qos_notices) + tuple(gres_notices),
        files=files,
        **plurm_settings,  # type: ignore[arg-type]
    )


def _companion(path: Path) -> str:
    """qos.conf, accounts.conf or plurm.conf beside slurm.conf, read with the same caps."""
    try:
        return read_text(path, limit=MAX_CONF_BYTES)
    except OSError as error:
        raise ConfIncludeError(f"cannot read {path}: {error.strerror or error}", None) from None
