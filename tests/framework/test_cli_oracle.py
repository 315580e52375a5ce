"""Plurm's commands against real Slurm 22.05's recorded output (tests/data/oracle/cli).

Each scenario of ``records.json`` is replayed in the simulator: the state-changing commands at
their recorded times, then every recorded command, whose stdout, stderr and exit status must
match Slurm's after the run-to-run noise listed in the README is masked.  Records Plurm does
not match yet are listed, each with its reason, in ``known_gaps.toml``; they are strict xfails,
so a gap that closes must leave the list.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from plurm.errors import PlurmError
from plurm.testing.cluster import build_cluster

DATA = Path(__file__).parent.parent / "data" / "oracle" / "cli"
RECORDS: list[dict[str, Any]] = json.loads((DATA / "records.json").read_text())
GAPS = tomllib.loads((DATA / "known_gaps.toml").read_text())

#: The part of the recording harness's header that changes behaviour (README: harness header).
HEADER = "ClusterName=oracle\nSlurmctldHost=localhost\nKillWait=2\nReturnToService=2\n"

#: What the recorder set up for its scenarios with slurmdbd (record_cli.py passes the QOS
#: commands, /work/shared/oracle/oracle.py adds the accounting keys to the header and runs
#: ``sacctmgr add cluster oracle``, ``add account acct`` and ``add user root account=acct``):
#: the same keys, and the same QOS, account and association in Plurm's qos.conf and
#: accounts.conf. (``add cluster`` made the account root and root's association in it,
#: which Plurm's accounts.conf always has.)
ACCOUNTING = {
    "accounting": (
        "AccountingStorageType=accounting_storage/slurmdbd\n"
        "AccountingStorageHost=localhost\n"
        "AccountingStoragePort=16819\n"
        "AccountingStorageEnforce=associations,limits,qos\n",
        "QOS=high Priority=100\n",  # sacctmgr add qos high priority=100
        "Account=acct\nUser=root Account=acct\n",
    ),
}

#: The script files record_cli.py writes into the working directory.
SCRIPTS = {
    "job.sh": "#!/bin/sh\nsleep 300\n",
    "batch.sh": (
        "#!/bin/sh\n#SBATCH -N 1\n#SBATCH -t 10\n#SBATCH -p active\n#SBATCH -J scripted\n"
        "#SBATCH --mem=100\nsleep 300\n"
    ),
    "noshebang.sh": "sleep 1\n",
}

RECORDED_WORKDIR = "/tmp/slurm-oracle/work"

#: What differs between two runs of real Slurm (README: "What varies between runs").
NOISE = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"), "<TIMESTAMP>"),
    (re.compile(r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$", re.M), "<DATE>"),
    (re.compile(r"AllocNode:Sid=\S+"), "AllocNode:Sid=<HOST>"),
    (re.compile(r"(CPULoad|FreeMem|Port|NodeAddr|NodeHostName|LastBusyTime)=\S+"), r"\1=<X>"),
    (re.compile(r"\bOS=.*"), "OS=<X>"),  # the node's OS line, not a job's QOS=
    # elapsed times drift by a second between runs
    (re.compile(r"(?<!ExitCode=)\b\d+(-\d\d)?:\d\d(:\d\d)?\b"), "<ELAPSED>"),
]


def mask(text: str) -> str:
    for pattern, replacement in NOISE:
        text = pattern.sub(replacement, text)
    return text


def unordered(command: str) -> bool:
    """Slurm breaks ties in these listings differently from run to run (README): squeue -S,
    sinfo -N and -R, and sinfo formats without %P, whose lines came out drng, idle, down in
    three runs (trials/reqnode.out) but idle, drng, down in record down/025."""
    if " -S" in command or command.startswith(("sinfo -N", "sinfo -R")):
        return True
    return command.startswith("sinfo") and " -o" in command and "%P" not in command


def comparable(command: str, stdout: str) -> str | list[str]:
    masked = mask(stdout)
    return sorted(masked.splitlines()) if unordered(command) else masked


#: How record_cli.py wrote that it killed a node's slurmd.
KILLED_SLURMD = re.compile(r"kill -TERM <pid of slurmd -N (\S+)>")


def simulated(command: str) -> str:
    """The recorded command as the simulator runs it: with an empty standard input, as
    ``< /dev/null`` gave Slurm's, and a killed slurmd as the simulator's ``slurmd stop``."""
    killed = KILLED_SLURMD.fullmatch(command)
    if killed:
        return f"slurmd stop {killed.group(1)}"
    return command.removesuffix(" < /dev/null")


@functools.cache
def replay(scenario: str, workdir: Path) -> dict[str, tuple[str, str, int]]:
    """Every record of ``scenario`` run in one simulated cluster: name -> (out, err, status)."""
    records = [r for r in RECORDS if r["scenario"] == scenario]
    workdir.mkdir(exist_ok=True)
    for name, text in SCRIPTS.items():
        (workdir / name).write_text(text)
    keys, qos, accounts = ACCOUNTING.get(scenario, ("", None, None))
    cluster = build_cluster(
        HEADER + keys + records[0]["config"], workdir, qos_text=qos, accounts_text=accounts
    )
    results = {}
    done = 0  # how many of the cumulative steps_before have been carried out
    for record in records:
        for step in record["steps_before"][done:]:
            cluster.run_until(step["at"])
            cluster.command(simulated(step["cmd"]))
        done = len(record["steps_before"])
        cluster.run_until(record["at"])
        result = cluster.command(simulated(record["command"]))
        # the recording ran in this working directory
        stdout, stderr = (
            text.replace(str(workdir), RECORDED_WORKDIR) for text in (result.stdout, result.stderr)
        )
        results[record["name"]] = (stdout, stderr, result.status)
        later = [r["steps_before"] for r in records if len(r["steps_before"]) > done]
        if later and later[0][done] == {"at": record["at"], "cmd": record["command"]}:
            done += 1  # this record's command was itself a state-changing step
    return results


def _param(record: dict[str, Any]) -> Any:
    gap = GAPS["records"].get(record["name"]) or GAPS["scenarios"].get(record["scenario"])
    marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
    return pytest.param(record, id=record["name"], marks=marks)


@pytest.mark.parametrize("record", [_param(r) for r in RECORDS])
def test_command_output_matches_real_slurm(
    record: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    scenario = record["scenario"]
    try:
        results = replay(scenario, tmp_path_factory.getbasetemp() / f"cli-{scenario}")
    except PlurmError as error:
        pytest.fail(f"scenario {scenario} does not build: {error}")
    stdout, stderr, status = results[record["name"]]
    command = record["command"]
    assert (status, mask(stderr)) == (record["exit"], mask(record["stderr"])), command
    assert comparable(command, stdout) == comparable(command, record["stdout"]), command


def test_known_gaps_name_real_records() -> None:
    names = {r["name"] for r in RECORDS}
    scenarios = {r["scenario"] for r in RECORDS}
    assert set(GAPS["records"]) <= names
    assert set(GAPS["scenarios"]) <= scenarios
