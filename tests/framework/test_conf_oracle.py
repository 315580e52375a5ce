"""slurm.conf verdicts and effective values against real Slurm 22.05.

``tests/data/oracle/conf_cases/cases.json`` holds 500 small configurations with what real
Slurm did with each: scontrol's verdict (the common config reader) and, for many, slurmctld's
verdict and the effective values ``scontrol show node|partition|config`` printed while it ran.
``tests/data/oracle/keys/slurm2205_keys.json`` holds every key 22.05 recognises with about 50
probe values each. Plurm must agree with both, except where listed below with the reason.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plurm import conf, hostlist
from plurm.conf import keys
from plurm.conf.values import format_time_limit
from plurm.errors import ConfError, raise_collected
from plurm.params import check_options
from plurm.registry import Registry
from tests.conftest import ORACLE

CASES: list[dict[str, Any]] = json.loads((ORACLE / "conf_cases" / "cases.json").read_text())
KEYS: dict[str, Any] = json.loads((ORACLE / "keys" / "slurm2205_keys.json").read_text())

# Where Plurm's verdict differs from scontrol's on purpose. scontrol runs only the common
# reader; slurmctld refuses these files at start-up, and so does Plurm, which is the controller.
SLURMCTLD_REFUSES = {
    "include_twice": "the same nodes defined twice (slurmctld: Duplicated NodeName)",
    "node_dup_same_name": "slurmctld: Duplicated NodeHostName",
    "node_dup_overlapping_ranges": "slurmctld: Duplicated NodeName",
    "node_name_bad_range": "slurmctld: Unable to create NodeAddr list from n[3-1]",
    "partition_dup_name": "slurmctld: duplicate entry for partition",
}
# Keys from Slurm 23.02+ that Plurm accepts although 22.05 does not know them.
LATER_SLURM_KEYS = {"preemptparams_known": "PreemptParameters arrived in Slurm 23.02"}


#: The installed plugins (read once: every case asks for their options).
_REGISTRY = Registry()


def _materialize(case: dict[str, Any], root: Path) -> Path:
    for relative, text in case["files"].items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, str):
            path.write_bytes(text.replace("{DIR}", str(root)).encode("utf-8", "surrogateescape"))
        else:
            path.write_bytes(bytes(text))
    (root / "cwd").mkdir(exist_ok=True)
    return root / case["main"]


def _load_case(
    case: dict[str, Any], root: Path, monkeypatch: pytest.MonkeyPatch
) -> conf.SlurmConfig:
    main = _materialize(case, root)
    # The recorder ran Slurm from an empty directory beside the files, so that relative
    # paths resolved against the working directory would fail there too.
    monkeypatch.chdir(root / "cwd")
    config = conf.load(main)
    # Plurm's verdict, as plurm conf check gives it: with the options the installed
    # plugins declare (PreemptParameters options no one declares are refused).
    raise_collected(check_options(config, _REGISTRY.declared_for(config)))
    return config


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_verdict_matches_slurm(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slurm_accepts = case["scontrol"]["exit"] == 0
    expected = slurm_accepts
    if case["name"] in SLURMCTLD_REFUSES:
        assert slurm_accepts and case["slurmctld"]["verdict"] == "exited"
        expected = False
    if case["name"] in LATER_SLURM_KEYS:
        expected = True
    try:
        _load_case(case, tmp_path, monkeypatch)
    except ConfError as error:
        assert not expected, f"Slurm accepts this file; Plurm said:\n{error}"
        for single in error.errors:
            assert single.location is not None
            assert single.location.file.startswith(str(tmp_path))
    else:
        assert expected, "Slurm refuses this file: " + " | ".join(case["scontrol"]["stderr"])


# ----------------------------------------------------------------------------- effective values


def _yes(flag: bool) -> str:
    return "YES" if flag else "NO"


def _limit(value: int | None) -> str:
    return "UNLIMITED" if value is None else str(value)


def _node_view(config: conf.SlurmConfig, name: str) -> dict[str, str]:
    """Our values for one node, spelled as ``scontrol show node`` spells them."""
    spec = config.node(name)
    index = spec.names.index(name)
    state, reason = config.node_state(name)
    shown_state = {"UNKNOWN": "UNKNOWN", "DOWN": "DOWN", "DRAIN": "UNKNOWN+DRAIN"}
    view = {"State": shown_state[state]} if state in shown_state else {}
    if reason is not None:
        view["Reason"] = reason
    return view | {
        "CPUTot": str(spec.cpus),
        "Boards": str(spec.boards),
        "Sockets": str(spec.sockets),
        "CoresPerSocket": str(spec.cores_per_socket),
        "ThreadsPerCore": str(spec.threads_per_core),
        "RealMemory": str(spec.real_memory),
        "TmpDisk": str(spec.tmp_disk),
        "Weight": str(spec.weight),
        "AvailableFeatures": ",".join(spec.features) or "(null)",
        "NodeAddr": spec.addresses[index],
        "NodeHostName": spec.hostnames[index],
    }


def _partition_view(config: conf.SlurmConfig, name: str) -> dict[str, str]:
    """Our values for one partition, spelled as ``scontrol show partition`` spells them."""
    part = config.partition(name)
    mode = part.preempt_mode if part.preempt_mode is not None else config.preempt_mode
    return {
        "Nodes": hostlist.compress(part.nodes) if part.nodes else "(null)",
        "TotalNodes": str(len(part.nodes)),
        "Default": _yes(part.default),
        "PriorityTier": str(part.priority_tier),
        "PriorityJobFactor": str(part.priority_job_factor),
        "OverSubscribe": str(part.oversubscribe),
        "PreemptMode": str(mode),
        "GraceTime": str(part.grace_time),
        "MaxTime": format_time_limit(part.max_time),
        "DefaultTime": (
            format_time_limit(part.default_time) if part.default_time_configured else "NONE"
        ),
        "State": part.state,
        "MaxNodes": _limit(part.max_nodes),
        "MinNodes": str(part.min_nodes),
        "Hidden": _yes(part.hidden),
        "RootOnly": _yes(part.root_only),
        "ExclusiveUser": _yes(part.exclusive_user),
        "LLN": _yes(part.lln),
        "ReqResv": _yes(part.req_resv),
        "QoS": part.qos or "N/A",
    }


def _effective_cases() -> Iterator[dict[str, Any]]:
    for case in CASES:
        effective = case.get("effective") or {}
        if case["scontrol"]["exit"] == 0 and (
            effective.get("nodes") or effective.get("partitions")
        ):
            yield case


EFFECTIVE = list(_effective_cases())


def test_effective_values_were_recorded() -> None:
    assert len(EFFECTIVE) >= 300


@pytest.mark.parametrize("case", EFFECTIVE, ids=[c["name"] for c in EFFECTIVE])
def test_effective_values_match_slurmctld(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _load_case(case, tmp_path, monkeypatch)
    recorded = case["effective"]
    for name, fields in (recorded.get("nodes") or {}).items():
        ours = _node_view(config, name)
        wanted = {key: fields[key] for key in ours if key in fields}
        assert {key: ours[key] for key in wanted} == wanted, f"node {name}"
    for name, fields in (recorded.get("partitions") or {}).items():
        ours = _partition_view(config, name)
        wanted = {key: fields[key] for key in ours if key in fields}
        assert {key: ours[key] for key in wanted} == wanted, f"partition {name}"


# ----------------------------------------------------------------------------- keys and probes


def test_every_key_slurm_recognises_is_recognised() -> None:
    for name, entry in KEYS["top"].items():
        if isinstance(entry, dict) and entry.get("recognised"):
            assert keys.top(name) is not None or keys.record_kind(name) is not None, name
    for section, kind in (
        ("node", "NodeName"),
        ("partition", "PartitionName"),
        ("nodeset", "NodeSet"),
        ("downnodes", "DownNodes"),
    ):
        table = keys.record_keys(kind)
        for name, entry in KEYS[section].items():
            if isinstance(entry, dict) and entry.get("recognised"):
                assert name.lower() in table, f"{kind} {name}"


def test_unknown_keys_are_refused_with_a_suggestion(tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text("ClusterName=c\nSlurmctldHost=h\nSelectTyp=select/linear\n")
    with pytest.raises(ConfError) as caught:
        conf.load(path)
    assert "did you mean 'SelectType'?" in str(caught.value)


_RECORD_LINE = {
    "node": "NodeName=z1 {key}={value}",
    "partition": "PartitionName=zp Nodes=n1 {key}={value}",
    "nodeset": "NodeSet=zs {key}={value}",
    "downnodes": "DownNodes=n1 {key}={value}",
}
# Probe results Plurm differs from on purpose, with the reason.
PROBE_DEVIATIONS = {
    ("top", "SlurmUser"): "Slurm looks the user up in this machine's passwd; Plurm does not",
    ("top", "SlurmdUser"): "Slurm looks the user up in this machine's passwd; Plurm does not",
    ("top", "NodeName"): "a second NodeName=n1: slurmctld (and Plurm) refuse the duplicate",
}
PROBED = [
    (section, name)
    for section in ("top", "node", "partition", "nodeset", "downnodes")
    for name, entry in KEYS[section].items()
    if isinstance(entry, dict) and entry.get("recognised") and entry.get("probes")
]


def _verdict_here(entry: dict[str, Any], text: str, recorded: bool) -> bool:
    """Slurm's verdict on this machine. A key whose directories must exist (PluginDir) was
    probed where Slurm was installed: a directory that exists there but not here (Slurm's
    own plugin directory) is one Slurm would refuse here too."""
    if "each must exist" not in entry.get("type", "") or not recorded:
        return recorded
    return all(os.path.isdir(d) for d in text.strip('"').split(":") if d)


@functools.cache
def _registry() -> Registry:
    return Registry()


@pytest.mark.parametrize(("section", "name"), PROBED, ids=[f"{s}-{n}" for s, n in PROBED])
def test_key_accepts_what_slurm_accepts(section: str, name: str, tmp_path: Path) -> None:
    entry = KEYS[section][name]
    context = entry.get("probe_context") or {}
    base = [
        line
        for line in KEYS["base_config"]
        if not any(line.startswith(omit) for omit in context.get("omit", []))
    ]
    base += context.get("extra", [])
    path = tmp_path / "slurm.conf"
    disagreements = []
    for value, result in entry["probes"].items():
        text = "" if value == "<empty>" else value
        if section == "top":
            line = f"{name}={text}"
        else:
            line = _RECORD_LINE[section].format(key=name, value=text)
        path.write_text("\n".join([*base, line]) + "\n")
        # Plurm's verdict is plurm conf check's: the file read, then the options of
        # SelectTypeParameters and PreemptParameters checked against the plugins it names.
        try:
            config = conf.load(path)
            raise_collected(check_options(config, _registry().declared_for(config)))
            accepted = True
        except ConfError:
            accepted = False
        if accepted != _verdict_here(entry, text, result["accepted"]):
            disagreements.append((value, result["accepted"]))
    if (section, name) in PROBE_DEVIATIONS:
        assert disagreements, "deviation listed but Plurm now agrees: remove it"
    else:
        assert disagreements == []
