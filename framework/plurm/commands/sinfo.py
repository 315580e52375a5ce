"""sinfo: partitions and node states, one line per partition and group of alike nodes.

Formats follow Slurm 22.05 (tests/data/oracle/cli): the partition column is as wide as the
longest partition name (with the default partition's ``*``) and at least 9; within a
partition, groups come in Slurm's order of states (drng, drain, mix, alloc, idle, down).
"""

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

__all__ = ["node_states", "run"]

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
_SPEC = re.compile(r"%(\.?)(\d*)([A-Za-z])")
# Slurm lists a partition's groups by descending state code; these are their places.
_STATE_RANK = {"drng": 0, "drain": 1, "mix": 2, "alloc": 3, "idle": 4, "down": 5}


def node_states(controller: Controller) -> dict[str, str]:
    """Each node's compact state: down, drain/drng, else idle, mix or alloc by its CPUs."""
    cluster = controller.cluster
    alloc = controller.plugins.select_node_alloc(cluster)
    states = {}
    for name in cluster.config.node_names:
        used = alloc.get(name, 0)
        if name in cluster.node_down:
            base = cluster.node_down[name][0]
            if base is NodeState.DRAIN:
                states[name] = "drng" if used else "drain"
            else:
                states[name] = base.compact
        elif used <= 0:
            states[name] = "idle"
        elif used >= cluster.node(name).cpus:
            states[name] = "alloc"
        else:
            states[name] = "mix"
    return states


def _render(fmt: str, row: dict[str, str] | None, errors: list[str]) -> str:
    """One line of ``fmt``; unknown specifications go to ``errors`` and print as written."""
    out = []
    position = 0
    while position < len(fmt):
        match = _SPEC.match(fmt, position) if fmt[position] == "%" else None
        if match is None or match.group(3) not in _HEADERS:
            if fmt[position] == "%":
                letter = fmt[position + 1 : position + 2]
                line = f"Invalid node format specification: {letter}\n"
                if line not in errors:
                    errors.append(line)
            out.append(fmt[position])
            position += 1
            continue
        dot, width, letter = match.groups()
        position = match.end()
        text = _HEADERS[letter] if row is None else row.get(letter, "")
        if width and int(width):
            size = int(width)
            if row is not None and letter == "P" and text.endswith("*"):
                text = text[:-1][: size - 1] + "*"  # the default's mark survives the cut
            text = text[:size]  # sinfo cuts every field, times included
            text = text.rjust(size) if dot else text.ljust(size)
        out.append(text)
    return "".join(out) + "\n"


def _avail(state: str) -> str:
    return {"UP": "up", "DOWN": "down", "DRAIN": "drain"}.get(state, "inactive")


def run(argv: Sequence[str], controller: Controller, cwd: Path) -> CommandResult:
    found, rest = parse_options("sinfo", argv, OPTIONS)
    if rest:
        raise CommandError(f"sinfo: error: Unrecognized option: {rest[0]}")
    values = dict(found)
    cluster = controller.cluster
    states = node_states(controller)
    default = cluster.default_partition()
    wanted = str(values["partition"]).split(",") if "partition" in values else None
    parts = [
        part
        for part in cluster.partitions.values()
        if (part.name in wanted if wanted is not None else not part.hidden)
    ]

    def shown(name: str) -> str:
        return name + ("*" if default is not None and name == default.name else "")

    width = max([9, *(len(shown(part.name)) for part in parts)])
    rows = []
    if "node" in values:
        node_width = max([9, *(len(name) for name in cluster.config.node_names)])
        fmt = str(values.get("format", f"%{node_width}N %.6D %.{width}P %6t"))
        for name in cluster.config.node_names:
            for part in parts:
                if name in part.nodes:
                    rows.append(
                        {
                            "N": name,
                            "D": "1",
                            "P": shown(part.name),
                            "t": states[name],
                            "T": states[name],
                        }
                    )
    else:
        summarize = "summarize" in values
        default_fmt = f"%{width}P %.5a %.10l " + ("%.16F %N" if summarize else "%.6D %.6t %N")
        fmt = str(values.get("format", default_fmt))
        for part in parts:
            groups: dict[str, list[str]] = {}
            for node in part.nodes:
                groups.setdefault(states[node], []).append(node)
            common = {
                "P": shown(part.name),
                "a": _avail(part.state),
                "l": sinfo_limit(part.max_time),
            }
            if summarize or not groups:
                allocated = sum(1 for n in part.nodes if states[n] in ("alloc", "mix", "drng"))
                idle = sum(1 for n in part.nodes if states[n] == "idle")
                other = len(part.nodes) - allocated - idle
                rows.append(
                    common
                    | {
                        "D": str(len(part.nodes)),
                        "t": "n/a",
                        "T": "n/a",
                        "N": hostlist.compress(part.nodes) if part.nodes else "",
                        "F": f"{allocated}/{idle}/{other}/{len(part.nodes)}",
                    }
                )
                continue
            for state in sorted(groups, key=lambda s: _STATE_RANK.get(s, 9)):
                nodes = groups[state]
                rows.append(
                    common
                    | {
                        "D": str(len(nodes)),
                        "t": state,
                        "T": state,
                        "N": hostlist.compress(nodes),
                        "c": str(sum(cluster.node(n).cpus for n in nodes)),
                    }
                )
    errors: list[str] = []
    out = [] if "noheader" in values else [_render(fmt, None, errors)]
    out += [_render(fmt, row, errors) for row in rows]
    return CommandResult(0, "".join(out), "".join(errors))
