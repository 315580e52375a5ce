"""priority/multifactor against real Slurm 22.05: each scenario of tests/data/priority (recorded
with record_priority_oracle.py on the oracle) replayed in Plurm: the same states, nodes and
reasons at every snapshot (``squeue -t all -o '%i|%P|%T|%N|%r'``, the fields the oracle
records), and every ``sprio -l`` and ``sshare -a -l`` it showed, within Slurm's rounding.

What cannot match to the digit, and the margin each gets:

* the age factor: slurmctld's decay thread recalculates priorities every PriorityCalcPeriod
  counted from its own start, a few seconds before the scenario's first step; Plurm's counts
  from the simulation's start. A job's age at a recalculation differs by those seconds, so
  AGE (and PRIORITY) may differ by the age weight times ``AGE_SLACK`` seconds over
  PriorityMaxAge;
* usage: what the decay thread had charged by a show depends on the same phase, so sshare's
  RawUsage is not compared; NormUsage, EffectvUsage and LevelFS (ratios of usage charged at
  the same rates for about the same time) are, within ``USAGE_SLACK``;
* every other factor is cut to a whole number by sprio as by Slurm: one unit apart at most.
"""

from __future__ import annotations

import json
import math
import shlex
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plurm.testing import TestCluster
from tests.support.recordings import replay_recording

Make = Callable[..., TestCluster]

DATA = Path(__file__).resolve().parents[1] / "data" / "priority"

SCENARIOS = [
    "age-without-accounting",
    "age-older-first",
    "jobsize-large-first",
    "jobsize-favor-small",
    "qos-high-first",
    "fairtree-subaccounts",
]

#: Seconds the decay thread's phase may put the recorded ages off Plurm's.
AGE_SLACK = 6.0

#: How far usage ratios (NormUsage, EffectvUsage, LevelFS) may be apart, relative: Slurm
#: starts a job on its first scheduling pass, which may come a second after another job's,
#: and a second in the minute of usage charged moves the ratios by up to 2%.
USAGE_SLACK = 0.025

# ----------------------------------------------------------------------------- translation


def _fields(words: list[str]) -> dict[str, str]:
    return {k.lower(): v for k, _, v in (word.partition("=") for word in words)}


def accounting(commands: list[str]) -> tuple[str | None, str | None]:
    """accounts.conf and qos.conf for what the oracle's harness and the scenario's
    ``sacctmgr`` commands create in slurmdbd (None, None without accounting): the harness
    adds the account ``acct`` and root's association with it."""
    if not commands:
        return None, None
    accounts = ["Account=acct"]
    users: dict[str, dict[str, Any]] = {"root": {"accounts": ["acct"], "extra": {}}}
    qos: list[str] = []
    for command in commands:
        words = shlex.split(command)
        verb, kind = words[0], words[1]
        if verb == "add" and kind == "account":
            found = _fields(words[3:])
            line = f"Account={words[2]}"
            if "parent" in found:
                line += f" Parent={found['parent']}"
            if "fairshare" in found:
                line += f" Fairshare={found['fairshare']}"
            accounts.append(line)
        elif verb == "add" and kind == "user":
            found = _fields(words[3:])
            entry = users.setdefault(words[2], {"accounts": [], "extra": {}})
            entry["accounts"].append(found["account"])
        elif verb == "add" and kind == "qos":
            found = _fields(words[3:])
            qos.append(f"QOS={words[2]} Priority={found['priority']}")
        elif verb == "modify" and kind == "user":
            where = _fields(words[3 : words.index("set")])
            entry = users[where["name"]]
            if where["name"] == "root" and "root" not in entry["accounts"]:
                entry["accounts"].insert(0, "root")  # sacctmgr modifies every association
            entry["extra"].update(_fields(words[words.index("set") + 1 :]))
        else:
            raise ValueError(f"no translation for sacctmgr {command}")
    lines = list(accounts)
    for user, entry in users.items():
        line = f"User={user} Account={','.join(entry['accounts'])}"
        for key, value in entry["extra"].items():
            line += f" {key.upper() if key == 'qos' else key}={value}"
        lines.append(line)
    return "\n".join(lines) + "\n", ("\n".join(qos) + "\n") if qos else None


def _plurm_conf(scenario: dict[str, Any]) -> str:
    conf = str(scenario["conf"])
    if scenario.get("sacctmgr"):  # the harness's accounting lines
        conf = (
            "AccountingStorageType=accounting_storage/slurmdbd\n"
            "AccountingStorageEnforce=associations,limits,qos\n" + conf
        )
    return conf


# ----------------------------------------------------------------------------- parsing


def _table(text: str) -> tuple[list[str], list[list[str]]]:
    lines = text.splitlines()
    return lines[0].split(), [line.split() for line in lines[1:]]


def _compare_sprio(got: str, wanted: str, scenario: dict[str, Any], where: str) -> None:
    got_lines, wanted_lines = got.splitlines(), wanted.splitlines()
    assert got_lines[0] == wanted_lines[0], where  # the header, to the byte
    header, wanted_rows = _table(wanted)
    _, got_rows = _table(got)
    assert [row[:3] for row in got_rows] == [row[:3] for row in wanted_rows], where
    conf = scenario["conf"]
    age_weight = _key(conf, "PriorityWeightAge", 0)
    max_age = _key(conf, "PriorityMaxAge", 0)
    age_slack = age_weight * AGE_SLACK / max_age if max_age else 0.0
    for got_row, wanted_row in zip(got_rows, wanted_rows, strict=True):
        for name, have, want in zip(header[3:], got_row[3:], wanted_row[3:], strict=False):
            slack = 1.0
            if name in ("AGE", "PRIORITY"):
                slack += age_slack
            assert abs(float(have) - float(want)) <= slack, (where, wanted_row[0], name)


def _key(conf: str, name: str, default: float) -> float:
    """A weight, or PriorityMaxAge in seconds (hh:mm:ss), from the scenario's conf."""
    for line in conf.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == name:
            if ":" in value:
                seconds = 0.0
                for part in value.split(":"):
                    seconds = seconds * 60 + float(part)
                return seconds
            return float(value)
    return default


def _share_rows(text: str) -> dict[tuple[str, str, int], dict[str, str]]:
    """sshare -a -l's rows by (account, user, depth), each as {column: cell}, cells cut at
    the fixed widths Slurm prints (empty cells stay empty)."""
    lines = text.splitlines()
    widths = [len(cell) for cell in lines[1].split()]
    names = lines[0].split()
    rows = {}
    for line in lines[2:]:
        cells, start = [], 0
        for width in widths:
            cells.append(line[start : start + width].strip())
            start += width + 1
        depth = len(line) - len(line.lstrip(" "))
        rows[(cells[0], cells[1], depth)] = dict(zip(names, cells, strict=True))
    return rows


def _close(have: str, want: str) -> bool:
    """Equal, or both numbers within USAGE_SLACK of each other (relative)."""
    if have == want:
        return True
    if not have or not want:
        return False
    return math.isclose(float(have), float(want), rel_tol=USAGE_SLACK, abs_tol=0.005)


def _compare_sshare(got: str, wanted: str, where: str) -> None:
    assert got.splitlines()[:2] == wanted.splitlines()[:2], where
    got_rows, wanted_rows = _share_rows(got), _share_rows(wanted)
    assert list(got_rows) == list(wanted_rows), where
    for key, want in wanted_rows.items():
        have = got_rows[key]
        for name in ("RawShares", "NormShares", "FairShare"):
            assert have[name] == want[name], (where, key, name)
        for name in ("NormUsage", "EffectvUsage", "LevelFS"):
            assert _close(have[name], want[name]), (where, key, name, have[name], want[name])


# ----------------------------------------------------------------------------- replay


def replay(make_cluster: Make, name: str, *, nodes_differ: frozenset[int] = frozenset()) -> None:
    """Replay scenario ``name`` and compare it with its recording at every step; the nodes
    of the jobs in ``nodes_differ`` (ordinals) are left out of the snapshots."""
    scenario = tomllib.loads((DATA / f"{name}.toml").read_text())
    recorded = json.loads((DATA / f"{name}.json").read_text())
    accounts, qos = accounting(scenario.get("sacctmgr", []))
    cluster = make_cluster(_plurm_conf(scenario), accounts_text=accounts, qos_text=qos)

    def compare(command: str, got: str, wanted: str, where: str) -> None:
        if command.startswith("sprio -l"):
            _compare_sprio(got, wanted, scenario, where)
        elif command.startswith("sshare"):
            _compare_sshare(got, wanted, where)
        else:
            assert got == wanted, where

    replay_recording(cluster, name, scenario, recorded, compare, nodes_differ=nodes_differ)


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_recorded_scenario_replays_as_slurm_ran_it(make_cluster: Make, name: str) -> None:
    replay(make_cluster, name)


def test_cons_res_splits_the_cpus_as_slurm_did(make_cluster: Make) -> None:
    """fairtree-uneven-split: the blockers ask -n6 and -n2 on two 4-CPU nodes. Slurm gave
    the -n6 job 4 CPUs of n1 and 2 of n2 (each node as full as it can be, in the order
    taken), so the -n2 job got n2's other 2; the priorities, sshare and every state agree
    too."""
    replay(make_cluster, "fairtree-uneven-split")


def test_the_translation_of_sacctmgr_commands() -> None:
    accounts, qos = accounting(
        [
            "add account chem fairshare=2 cluster=oracle",
            "add account chem1 parent=chem fairshare=3 cluster=oracle",
            "add user daemon account=chem1 cluster=oracle",
            "add qos hi priority=100",
            "modify user where name=root set qos=normal,hi",
        ]
    )
    assert accounts == (
        "Account=acct\nAccount=chem Fairshare=2\nAccount=chem1 Parent=chem Fairshare=3\n"
        "User=root Account=root,acct QOS=normal,hi\nUser=daemon Account=chem1\n"
    )
    assert qos == "QOS=hi Priority=100\n"
    assert accounting([]) == (None, None)
