"""sinfo: partitions and node states, one line per partition and state group."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from plurm import hostlist
from plurm.commands.base import CommandError, CommandResult
from plurm.commands.options import Option, parse_options
from plurm.commands.timefmt import sinfo_limit
from plurm.controller import Controller
from plurm.model.node import NodeState

__all__ = ["DEFAULT_FORMAT", "node_states", "run"]

DEFAULT_FORMAT = "%9P %.5a %.10l %.6D %.6t %N"
NODE_FORMAT = "%N %.6D %9P %.6t"

OPTIONS = (
    Option("noheader", "h", ("noheader",), takes_value=False),
    Option("format", "o", ("format",)),
    Option("node", "N", ("Node",), takes_value=False),
    Option("partition", "p", ("partition",)),
    Option("summarize", "s", ("summarize",), takes_value=False),
)

_HEADERS = {
    "P": "PARTITION",
    "a": "AVAIL",
    "l": "TIMELIMIT",
    "D": "NODES",
    "t": "STATE",
    "T": "STATE",
    "N": "NODELIST",
    "F": "NODES(A/I/O/T)",
    "c": "CPUS",
}
_SPEC = re.compile(r"%(\.?)(\d*)([A-Za-z%])")


def node_states(controller: Controller) -> dict[str, NodeState]:
    """Each node's state: down or drained, else idle, mixed or allocated by its CPUs."""
    cluster = controller.cluster
    alloc = controller.plugins.select_node_alloc(cluster)
    states = {}
    for name in cluster.config.node_names:
        if name in cluster.node_down:
            states[name] = cluster.node_down[name][0]
            continue
        used = alloc.get(name, 0)
        if used <= 0:
            states[name] = NodeState.IDLE
        elif used >= cluster.node(name).cpus:
            states[name] = NodeState.ALLOCATED
        else:
            states[name] = NodeState.MIXED
    return states


def _render(fmt: str, row: dict[str, str] | None) -> str:
    out = []
    position = 0
    for match in _SPEC.finditer(fmt):
        out.append(fmt[position : match.start()])
        dot, width, letter = match.groups()
        position = match.end()
        if letter == "%":
            out.append("%")
            continue
        if letter not in _HEADERS:
            raise CommandError(f"sinfo: error: Invalid node format specification: {letter}")
        text = _HEADERS[letter] if row is None else row.get(letter, "")
        if width:
            text = text[: int(width)]
            text = text.rjust(int(width)) if dot else text.ljust(int(width))
        out.append(text)
    out.append(fmt[position:])
    return "".join(out) + "\n"


def run(argv: Sequence[str], controller: Controller, cwd: Path) -> CommandResult:
    found, rest = parse_options("sinfo", argv, OPTIONS)
    if rest:
        raise CommandError(f"sinfo: error: Unrecognized option: {rest[0]}")
    values = dict(found)
    cluster = controller.cluster
    states = node_states(controller)
    default = cluster.default_partition()
    wanted = str(values["partition"]).split(",") if "partition" in values else None
    rows = []
    for part in cluster.partitions.values():
        if wanted is not None and part.name not in wanted:
            continue
        if part.hidden and wanted is None:
            continue
        name = part.name + ("*" if default is not None and part.name == default.name else "")
        groups: dict[str, list[str]] = {}
        for node in part.nodes:
            groups.setdefault(states[node].compact, []).append(node)
        if not groups:
            groups = {"n/a": []}
        for state, nodes in groups.items():
            allocated = sum(
                1 for n in part.nodes if states[n] in (NodeState.ALLOCATED, NodeState.MIXED)
            )
            idle = sum(1 for n in part.nodes if states[n] is NodeState.IDLE)
            other = len(part.nodes) - allocated - idle
            rows.append(
                {
                    "P": name,
                    "a": part.state.lower() if part.state != "INACTIVE" else "inact",
                    "l": sinfo_limit(part.max_time),
                    "D": str(len(nodes)),
                    "t": state,
                    "T": state,
                    "N": hostlist.compress(nodes) if nodes else "",
                    "F": f"{allocated}/{idle}/{other}/{len(part.nodes)}",
                    "c": str(sum(cluster.node(n).cpus for n in nodes)),
                }
            )
    fmt = str(values.get("format", DEFAULT_FORMAT))
    out = [] if "noheader" in values else [_render(fmt, None)]
    out += [_render(fmt, row) for row in rows]
    return CommandResult(0, "".join(out))
