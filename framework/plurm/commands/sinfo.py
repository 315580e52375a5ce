"""sinfo: partitions and node states, one line per partition and group of alike nodes.

Formats follow Slurm 22.05 (tests/data/oracle/cli): the partition column is as wide as the
longest partition name (with the default partition's ``*``) and at least 9; within a
partition, groups come in Slurm's order of states (drng, drain, mix, alloc, idle, down).
``-O``/``--Format`` takes field names (plurm.commands.sinfo_long); a line then also parts
nodes whose GRES, GRES in use, allocated memory or host name differ when those are shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from plurm import hostlist
from plurm.commands.base import SIMULATED, CommandError, CommandResult, Invocation
from plurm.commands.client import ClusterClient, ClusterView, cpus_in_use, node_alloc_mem
from plurm.commands.gres_display import gres_used
from plurm.commands.options import Option, parse_options
from plurm.commands.sinfo_long import GROUPING, LongPiece, parse_long, render_long
from plurm.commands.timefmt import clock_time, date_line, sinfo_limit
from plurm.model.job import Job

__all__ = ["node_states", "run"]

OPTIONS = (
    Option("noheader", "h", ("noheader",), takes_value=False),
    Option("format", "o", ("format",)),
    Option("Format", "O", ("Format",)),
    Option("node", "N", ("Node",), takes_value=False),
    Option("partition", "p", ("partition",)),
    Option("summarize", "s", ("summarize",), takes_value=False),
    Option("states", "t", ("states",)),
    Option("exact", "e", ("exact",), takes_value=False),
    Option("long", "l", ("long",), takes_value=False),
    Option("list_reasons", "R", ("list-reasons",), takes_value=False),
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
    "C": "CPUS(A/I/O/T)",
    "m": "MEMORY",
    "s": "JOB_SIZE",
    "r": "ROOT",
    "h": "OVERSUBS",
    "g": "GROUPS",
    "z": "S:C:T",
    "d": "TMP_DISK",
    "w": "WEIGHT",
    "f": "AVAIL_FE",
    "E": "REASON",
    "u": "USER",
    "H": "TIMESTAMP",
    "G": "GRES",
}
# sinfo's long state names (%T), by compact name (%t).
_LONG_STATES = {
    "alloc": "allocated",
    "mix": "mixed",
    "drain": "drained",
    "drng": "draining",
    "futr": "future",
    "unk": "unknown",
}
_SPEC = re.compile(r"%(\.?)([0-9]*)([A-Za-z])", re.ASCII)
#: The widest field a format may ask for (Plurm's cap: sinfo would pad to any width).
MAX_WIDTH = 4096
# Slurm lists a partition's groups by descending state code; these are their places
# (a not-responding node, ``idle*`` or ``down*``, comes before all).
_STATE_RANK = {"drng": 0, "drain": 1, "mix": 2, "alloc": 3, "idle": 4, "down": 5}


def _rank(state: str) -> tuple[int, int]:
    return (0 if state.endswith("*") else 1, _STATE_RANK.get(state.rstrip("*"), 9))


def node_states(view: ClusterView) -> dict[str, str]:
    """Each node's compact state: drain or drng for a drained node (by whether jobs still
    hold it), down, else idle, mix or alloc by its CPUs in use; ``*`` marks a node that
    does not respond."""
    cluster = view.cluster
    alloc = cpus_in_use(view)
    states = {}
    for name in cluster.config.node_names:
        status = cluster.node_status(name, alloc.get(name, 0))
        state = ("drng" if status.in_use else "drain") if status.drain else status.base.compact
        states[name] = state + ("*" if status.not_responding else "")
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
        if width and (len(width) > 6 or int(width) > MAX_WIDTH):
            raise CommandError(f"sinfo: error: field width {width} is above {MAX_WIDTH}")
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


def _long_state(compact: str) -> str:
    base = compact.rstrip("*")
    return _LONG_STATES.get(base, base) + compact[len(base) :]


def _alike(values: Sequence[int]) -> str:
    """One number for a group of nodes: the value, or the smallest with ``+`` if they differ."""
    low = min(values)
    return f"{low}+" if any(value != low for value in values) else str(low)


def _answers_to(name: str, state: str, used: int, view: ClusterView) -> set[str]:
    """The states -t finds a node by: its own, and for a drained or draining node also
    ``drain`` and the state its jobs give it (Slurm lists a drained idle node under
    ``-t idle`` and a draining one under ``-t alloc``)."""
    names = {state.rstrip("*")}
    if state.rstrip("*") in ("drain", "drng"):
        names.add("drain")
        if used <= 0:
            names.add("idle")
        else:
            names.add("alloc" if used >= view.cluster.node(name).cpus else "mix")
    return names


def _wanted_states(text: str) -> set[str]:
    """-t/--states: compact or long names, any case, comma-separated."""
    names = {word.strip().lower() for word in text.split(",") if word.strip()}
    longs = {long: compact for compact, long in _LONG_STATES.items()}
    return {longs.get(name, name) for name in names}


def run(
    argv: Sequence[str], client: ClusterClient, cwd: Path, invocation: Invocation = SIMULATED
) -> CommandResult:
    found, rest = parse_options("sinfo", argv, OPTIONS)
    if rest:
        raise CommandError(f"sinfo: error: Unrecognized option: {rest[0]}")
    values = dict(found)
    view = client.view()
    cluster = view.cluster
    states = node_states(view)
    alloc = cpus_in_use(view)
    default = cluster.default_partition()
    if "list_reasons" in values:
        return _reasons(view, values)
    if "states" in values:
        wanted_states = _wanted_states(str(values["states"]))
        states = {
            n: s
            for n, s in states.items()
            if _answers_to(n, s, alloc.get(n, 0), view) & wanted_states
        }
    wanted = str(values["partition"]).split(",") if "partition" in values else None
    parts = [
        part
        for part in cluster.partitions.values()
        if (part.name in wanted if wanted is not None else not part.hidden)
    ]

    long_pieces: list[LongPiece] | None = None
    long_errors: list[str] = []
    if "Format" in values:
        long_pieces, long_errors = parse_long(str(values["Format"]))
    long_keys = {piece.key for piece in long_pieces or ()}
    holders: dict[str, list[Job]] = {}
    if long_keys & GROUPING:
        for job in cluster.allocated():
            for name in job.held_nodes:
                holders.setdefault(name, []).append(job)

    def shown(name: str) -> str:
        return name + ("*" if default is not None and name == default.name else "")

    def described(nodes: Sequence[str]) -> dict[str, str]:
        """The fields that describe a group of nodes (per-node values, CPU counts)."""
        specs = [cluster.node(n) for n in nodes]
        in_use = {n: min(alloc.get(n, 0), cluster.node(n).cpus) for n in nodes}
        used = sum(in_use.values())
        # the CPUs of a down or drained node that no job holds count as "other"
        other = sum(cluster.node(n).cpus - in_use[n] for n in nodes if n in cluster.node_down)
        total = sum(s.cpus for s in specs)
        reasons = [cluster.node_down[n].reason for n in nodes if n in cluster.node_down]
        return {
            "D": str(len(nodes)),
            "N": hostlist.compress(nodes),
            "t": states[nodes[0]],
            "T": _long_state(states[nodes[0]]),
            "c": _alike([s.cpus for s in specs]),
            "C": f"{used}/{total - used - other}/{other}/{total}",
            "m": _alike([s.real_memory for s in specs]),
            "z": _alike([s.sockets for s in specs])
            + f":{_alike([s.cores_per_socket for s in specs])}"
            + f":{_alike([s.threads_per_core for s in specs])}",
            "d": _alike([s.tmp_disk for s in specs]),
            "w": _alike([s.weight for s in specs]),
            "f": ",".join(specs[0].features) or "(null)",
            "E": next((r for r in reasons if r), "none"),
            "G": ",".join(specs[0].gres) or "(null)",
            "e": "N/A",
        } | (node_fields(nodes) if long_keys & GROUPING else {})

    def node_fields(nodes: Sequence[str]) -> dict[str, str]:
        """-O's fields of jobs' use and host names, computed only when shown."""
        return {
            "gresused": gres_used(nodes[0], cluster.config, holders.get(nodes[0], ())),
            "allocmem": str(node_alloc_mem(view, nodes[-1])),
            "n": hostlist.compress([host_of(n) for n in nodes]),
        }

    def host_of(name: str) -> str:
        spec = cluster.node(name)
        return spec.hostnames[spec.names.index(name)]

    def about(part_name: str) -> dict[str, str]:
        part = cluster.partition(part_name)
        most = "infinite" if part.max_nodes is None else str(part.max_nodes)
        least = max(1, part.min_nodes)
        return {
            "P": shown(part.name),
            "R": part.name,
            "a": _avail(part.state),
            "l": sinfo_limit(part.max_time),
            "s": str(least) if most == str(least) else f"{least}-{most}",
            "r": "yes" if part.root_only else "no",
            "h": str(part.oversubscribe),
            "g": ",".join(part.allow_groups) if part.allow_groups else "all",
        }

    width = max([9, *(len(shown(part.name)) for part in parts)])
    long = "long" in values
    rows = []
    if "node" in values:
        node_width = max([9, *(len(name) for name in cluster.config.node_names)])
        default_fmt = f"%{node_width}N %.6D %.{width}P " + (
            "%.11T %4c %.8z %.6m %.8d %.6w %.8f %20E" if long else "%6t"
        )
        fmt = str(values.get("format", default_fmt))
        for name in sorted(cluster.config.node_names, key=_by_name):
            for part in parts:
                if name in part.nodes and name in states:
                    rows.append(about(part.name) | described([name]))
    else:
        summarize = "summarize" in values
        if summarize:
            default_fmt = f"%{width}P %.5a %.10l %.16F %N"
        elif long:
            default_fmt = f"%{width}P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
        else:
            default_fmt = f"%{width}P %.5a %.10l %.6D %.6t %N"
        fmt = str(values.get("format", default_fmt))
        letters = set(re.findall(r"%\.?[0-9]*([A-Za-z])", fmt))
        if long_pieces is not None:
            letters = {piece.key for piece in long_pieces}
        # Without a partition column, a summary lists each node once, whatever its
        # partitions; other listings merge the partitions' lines that print alike.
        merged = "P" not in letters and len(parts) > 1
        listings = [(part, part.nodes) for part in parts]
        if merged and summarize:
            union = set().union(*(part.nodes for part in parts))
            listings = [(parts[0], cluster.in_table_order(union))]
        row_nodes: list[list[str]] = []
        for part, part_nodes in listings:
            groups: dict[tuple[object, ...], list[str]] = {}
            for node in part_nodes:
                if node not in states:
                    continue
                spec = cluster.node(node)
                # -e: only nodes with the same configuration share a line
                key: tuple[object, ...] = (states[node],)
                if "exact" in values:
                    key += (spec.cpus, spec.real_memory, spec.tmp_disk, spec.weight)
                # fields that part a group whenever they are shown (as sinfo matches them)
                key += tuple(described([node])[field] for field in sorted(GROUPING & letters))
                groups.setdefault(key, []).append(node)
            common = about(part.name)
            if summarize or not groups:
                listed = [n for n in part_nodes if n in states]  # -t may leave out some
                allocated = sum(1 for n in listed if states[n] in ("alloc", "mix", "drng"))
                idle = sum(1 for n in listed if states[n] == "idle")
                other = len(listed) - allocated - idle
                rows.append(
                    common
                    | {
                        "D": str(len(listed)),
                        "t": "n/a",
                        "T": "n/a",
                        "N": hostlist.compress(listed) if listed else "",
                        "F": f"{allocated}/{idle}/{other}/{len(listed)}",
                    }
                )
                continue
            for key in sorted(groups, key=lambda k: _rank(str(k[0]))):
                rows.append(common | described(groups[key]))
                row_nodes.append(groups[key])
        if merged and not summarize:
            rows = _merge_alike(
                rows, row_nodes, letters, lambda nodes: described(cluster.in_table_order(nodes))
            )
    errors: list[str] = []
    if long_pieces is not None:
        errors = long_errors
        out = [] if "noheader" in values else [render_long(long_pieces, None)]
        out += [render_long(long_pieces, row) for row in rows]
    else:
        out = [] if "noheader" in values else [_render(fmt, None, errors)]
        out += [_render(fmt, row, errors) for row in rows]
    if long and "noheader" not in values:
        out.insert(0, date_line(view.now) + "\n")
    return CommandResult(0, "".join(out), "".join(errors))


#: Fields that count or list a line's nodes, rather than describe them.
_AGGREGATES = frozenset("NDCF")


def _merge_alike(
    rows: list[dict[str, str]],
    row_nodes: list[list[str]],
    letters: set[str],
    described: Callable[[Sequence[str]], dict[str, str]],
) -> list[dict[str, str]]:
    """Lines that print the same but for their nodes, merged into the first of them (its
    place, its partition's fields) with the union of their nodes, which ``described``
    describes afresh (observed on 22.05: a format without %P lists a node once, unless a
    partition field such as %l differs)."""
    shown = sorted(letters - _AGGREGATES)
    merged: dict[tuple[str, ...], tuple[dict[str, str], list[str]]] = {}
    for row, nodes in zip(rows, row_nodes, strict=True):
        key = tuple(row.get(letter, "") for letter in shown)
        if key in merged:
            merged[key][1].extend(n for n in nodes if n not in merged[key][1])
        else:
            merged[key] = (row, list(nodes))
    return [row | described(nodes) for row, nodes in merged.values()]


def _reasons(view: ClusterView, values: dict[str, str | None]) -> CommandResult:
    """sinfo -R: down and drained nodes grouped by reason, the most recently set first."""
    cluster = view.cluster
    fmt = str(values.get("format") or "%20E %9u %19H %N")
    by_reason: dict[tuple[str, float], list[str]] = {}
    for name in cluster.config.node_names:
        condition = cluster.node_down.get(name)
        if condition is not None:
            key = (condition.reason or "none", condition.since)
            by_reason.setdefault(key, []).append(name)
    errors: list[str] = []
    out = [] if "noheader" in values else [_render(fmt, None, errors)]
    for (reason, since), nodes in sorted(by_reason.items(), key=lambda item: -item[0][1]):
        row = {"E": reason, "u": "root", "H": clock_time(since), "N": hostlist.compress(nodes)}
        out.append(_render(fmt, row, errors))
    return CommandResult(0, "".join(out), "".join(errors))


def _by_name(name: str) -> tuple[tuple[int, int | str], ...]:
    """sinfo -N's order: by node name, a run of digits compared as a number ("n2" before
    "n12"), as Slurm sorts node-oriented listings (``c1`` before ``g1`` whatever the
    node table's order, recorded in tests/data/gres/gpu-per-task)."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.findall(r"\d+|\D+", name)
    )
