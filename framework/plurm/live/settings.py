"""Where the live daemons live: the slurm.conf keys that place them, read as Slurm reads them.

``SlurmctldHost``/``SlurmctldPort`` (the first port of a range), ``SlurmdPort`` and a node
line's ``Port=`` (a range over the line's nodes), ``NodeAddr``/``NodeHostname``,
``StateSaveLocation``, ``SlurmdSpoolDir`` (``%n`` the node's name, ``%h`` its hostname) and
``SlurmdParameters=config_overrides``.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from plurm import hostlist
from plurm.conf.model import SlurmConfig
from plurm.errors import HostlistError, PlurmError

__all__ = ["LiveConfigError", "LiveSettings", "NodePlace", "find_conf"]

#: Slurm's defaults (slurm.conf(5)).
DEFAULT_CTLD_PORT = 6817
DEFAULT_SLURMD_PORT = 6818
DEFAULT_STATE_SAVE = "/var/spool/slurmctld"
DEFAULT_SPOOL = "/var/spool/slurmd"
DEFAULT_CONF = "/etc/slurm/slurm.conf"


class LiveConfigError(PlurmError):
    """A configuration that cannot place the live daemons (a port that is not a number, a
    node without an address)."""


def find_conf(explicit: str | None = None) -> Path:
    """The slurm.conf the commands and daemons read: ``-f``, else ``SLURM_CONF``, else
    /etc/slurm/slurm.conf, as Slurm's commands find theirs."""
    return Path(explicit or os.environ.get("SLURM_CONF") or DEFAULT_CONF)


@attrs.frozen
class NodePlace:
    """Where one node's ``plurmd`` listens, and its spool directory."""

    name: str
    hostname: str
    address: str
    port: int
    spool_dir: Path

    @property
    def url(self) -> str:
        return f"http://{_host(self.address)}:{self.port}"

    @property
    def bind(self) -> str:
        """The address this node's plurmd listens on."""
        return _host(self.address)


def _host(address: str) -> str:
    return "127.0.0.1" if address == "localhost" else address


def _port(text: str, key: str) -> int:
    word = text.strip()
    if not (word.isascii() and word.isdigit()) or len(word) > 5 or not 0 < int(word) < 65536:
        raise LiveConfigError(f"{key}={text}: not a port number (1-65535)")
    return int(word)


@attrs.frozen
class LiveSettings:
    """The daemons' addresses and directories for one configuration."""

    config: SlurmConfig
    ctld_address: str
    ctld_port: int
    state_save: Path
    config_overrides: bool
    nodes: dict[str, NodePlace]

    @property
    def ctld_url(self) -> str:
        return f"http://{_host(self.ctld_address)}:{self.ctld_port}"

    @property
    def ctld_address_bind(self) -> str:
        """The address plurmctld listens on."""
        return _host(self.ctld_address)

    @classmethod
    def from_config(cls, config: SlurmConfig) -> LiveSettings:
        extra = config.inactive
        if not config.control_hosts:
            raise LiveConfigError("SlurmctldHost is not set: no controller to reach")
        host = config.control_hosts[0]
        ctld_port = _port(
            extra.get("SlurmctldPort", str(DEFAULT_CTLD_PORT)).split("-")[0], "SlurmctldPort"
        )
        slurmd_port = _port(extra.get("SlurmdPort", str(DEFAULT_SLURMD_PORT)), "SlurmdPort")
        spool = extra.get("SlurmdSpoolDir", DEFAULT_SPOOL)
        parameters = {p.strip().lower() for p in extra.get("SlurmdParameters", "").split(",")}
        nodes: dict[str, NodePlace] = {}
        for spec in config.nodes:
            ports = [slurmd_port] * len(spec.names)
            if "Port" in spec.extra:
                ports = _node_ports(spec.extra["Port"], len(spec.names))
            for name, hostname, address, port in zip(
                spec.names, spec.hostnames, spec.addresses, ports, strict=True
            ):
                spool_dir = spool.replace("%n", name).replace("%h", hostname)
                nodes[name] = NodePlace(name, hostname, address, port, Path(spool_dir))
        return cls(
            config=config,
            ctld_address=host.address or host.name,
            ctld_port=ctld_port,
            state_save=Path(extra.get("StateSaveLocation", DEFAULT_STATE_SAVE)),
            config_overrides="config_overrides" in parameters,
            nodes=nodes,
        )


def _node_ports(text: str, count: int) -> list[int]:
    """A node line's Port: one port for every node, or a range with one port per node."""
    word = text.strip()
    if "-" not in word:
        return [_port(word, "Port")] * count
    try:
        ports = [_port(p, "Port") for p in hostlist.expand(word if "[" in word else f"[{word}]")]
    except HostlistError:
        raise LiveConfigError(f"Port={text}: not a port or a range of ports") from None
    if len(ports) != count:
        raise LiveConfigError(f"Port={text}: {len(ports)} ports for {count} nodes")
    return ports
