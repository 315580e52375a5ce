"""A job no node of its partition could ever hold is refused at submission, and kept as a
FAILED job (reason BadConstraints) that used up its job id, as slurmctld 22.05 does.

The evidence is tests/data/oracle/cli/trials/misc.out (misc/002 to misc/016: select/cons_res,
CR_Core, four 2-CPU nodes; partition q has two of them), replayed here command for command
and compared with what Slurm printed, wall-clock times and paths aside.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from plurm.testing.cluster import TestCluster
from tests.conftest import REPO

EVIDENCE = REPO / "tests" / "data" / "oracle" / "cli" / "trials" / "misc.out"

CONF = """\
ClusterName=oracle
SlurmctldHost=localhost
SelectType=select/cons_res
SelectTypeParameters=CR_Core
NodeName=c[1-4] CPUs=2 RealMemory=1000
PartitionName=p Nodes=c[1-4] Default=YES MaxTime=60
PartitionName=q Nodes=c[1-2]
"""

_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
_PATHS = re.compile(r"^   (WorkDir|StdErr|StdOut)=.*$|AllocNode:Sid=\S+", re.M)


def recorded() -> dict[str, tuple[str, int, str]]:
    """misc.out's records by name: (command, exit status, output)."""
    records: dict[str, tuple[str, int, str]] = {}
    blocks = re.split(r"^===== ", EVIDENCE.read_text(), flags=re.M)[1:]
    for block in blocks:
        head, _, body = block.partition("\n")
        found = re.fullmatch(r"(\S+) @[\d.]+ \$ (.*)  -> (\d+)", head)
        assert found, head
        records[found[1]] = (found[2], int(found[3]), body)
    return records


def masked(text: str) -> str:
    return _PATHS.sub("", _TIME.sub("T", text))


def test_what_no_node_could_hold_is_refused_and_kept_as_failed(
    make_cluster: Callable[..., TestCluster],
) -> None:
    records = recorded()
    cluster = make_cluster(CONF)
    for name in (
        "misc/002",
        "misc/004",
        "misc/005",
        "misc/006",
        "misc/007",
        "misc/008",
        "misc/009",
    ):
        command, status, output = records[name]
        result = cluster.command(command)
        assert result.status == status, (name, result.stderr)
        shown = result.stdout + "".join(f"ERR: {line}" for line in result.stderr.splitlines(True))
        assert shown.replace("ERR: sbatch: error: Batch", "sbatch: error: Batch") == (
            output.replace("ERR: sbatch: error: Batch", "sbatch: error: Batch")
        ), name
    cluster.run_until(3)
    command, _, output = records["misc/010"]
    assert cluster.command(command).stdout == output
    for name in ("misc/013", "misc/014"):  # scontrol show job 4 and 5, two of the refused
        command, _, output = records[name]
        shown = cluster.command(command).stdout
        assert masked(shown) == masked(output), name
        # kept with its --begin as its eligible time, an hour after its submission
        submit, eligible = (
            datetime.fromisoformat(re.search(rf"{key}=(\S+)", shown)[1])  # type: ignore[index]
            for key in ("SubmitTime", "EligibleTime")
        )
        assert (eligible - submit).total_seconds() == 3600
    command, _, output = records["misc/016"]
    assert cluster.command(command).stdout == output


def test_memory_no_node_has_is_refused_with_slurmctlds_reason(
    make_cluster: Callable[..., TestCluster],
) -> None:
    """--mem beyond every node's RealMemory (memory counted, CR_Core_Memory): slurmctld's
    "Memory specification can not be satisfied" comes first, as users report it; a job
    whose per-CPU memory fits no node as a whole is refused with the plain message."""
    cluster = make_cluster(CONF.replace("CR_Core", "CR_Core_Memory"))
    refused = cluster.command("sbatch -p p --mem=5000 --wrap='sleep 300'")
    assert refused.status == 1
    assert refused.stderr == "sbatch: error: Memory specification can not be satisfied\n" + (
        "sbatch: error: Batch job submission failed: Requested node configuration is not "
        "available\n"
    )
    assert cluster.command("sbatch -p p --mem=500 --wrap='sleep 300'").status == 0
    refused = cluster.command("sbatch -p p -N1 -n2 --mem-per-cpu=600 --wrap='sleep 300'")
    assert refused.status == 1 and refused.stderr.count("\n") == 1
    cluster.settle()
    assert [cluster.job(i).state.name for i in (1, 2, 3)] == ["FAILED", "RUNNING", "FAILED"]
