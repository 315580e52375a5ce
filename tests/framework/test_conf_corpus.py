"""Real-world slurm.conf files (../shared/conf-corpus) get Slurm 22.05's verdict.

Each accepted file must also give the node counts Slurm gave, NodeName line by line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plurm import conf
from plurm.errors import ConfError
from tests.conftest import SHARED

CORPUS = SHARED / "conf-corpus"
VERDICTS: dict[str, Any] = (
    json.loads((CORPUS / "verdicts.json").read_text()) if CORPUS.is_dir() else {}
)

pytestmark = pytest.mark.skipif(not VERDICTS, reason="../shared/conf-corpus is not beside the repo")


def test_the_corpus_is_all_there() -> None:
    assert len(VERDICTS) == 30
    assert sum(v["slurm_22_05"] == "accepted" for v in VERDICTS.values()) == 12


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_corpus_file_gets_slurms_verdict(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    verdict = VERDICTS[name]
    monkeypatch.chdir(tmp_path)  # relative PluginDir entries must not resolve into the repo
    try:
        config = conf.load(CORPUS / name)
    except ConfError as error:
        assert verdict["slurm_22_05"] == "rejected", f"Slurm accepts {name}; Plurm said:\n{error}"
        return
    assert verdict["slurm_22_05"] == "accepted", "Slurm said: " + " | ".join(verdict["errors"])
    counts = {spec.expression: len(spec.names) for spec in config.nodes}
    assert counts == verdict["nodes"]


ACCEPTED = sorted(name for name, v in VERDICTS.items() if v["slurm_22_05"] == "accepted")


@pytest.mark.parametrize("name", ACCEPTED)
def test_every_accepted_corpus_file_replays_a_session(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever plugins Slurm accepts there (jobacct_gather/linux and cgroup are real
    plugins; ProctrackType, TaskPlugin, MpiDefault, ... load as explicit no-ops),
    ``plurm simulate`` replays a session on it and exits 0. A job is submitted, or sbatch
    refuses it with Slurm's own message (no default partition, a partition of no nodes)."""
    from plurm.cli.main import main

    monkeypatch.chdir(tmp_path)
    session = tmp_path / "session"
    session.write_text("0 sbatch -N1 --wrap='sleep 30'\n2 squeue\n40 sinfo\n")
    assert main(["simulate", "--conf", str(CORPUS / name), str(session)]) == 0
    transcript = capsys.readouterr().out
    assert "[t=2s] $ squeue" in transcript and "[t=40s] $ sinfo" in transcript
    submitted = "Submitted batch job 1" in transcript
    assert submitted or "sbatch: error: Batch job submission failed: " in transcript
    if submitted:
        squeue = transcript.split("[t=2s] $ squeue\n", 1)[1].split("[t=40s]", 1)[0]
        assert squeue.splitlines()[1].split()[0] == "1"  # the job is listed, not lost


def test_most_accepted_corpus_files_start_the_job(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusals above are the exception: most corpus clusters run the job (of the 12,
    3 have no default partition, one's partition names no node, and one's partition is
    made of NodeSets of no node, where the job waits with reason PartitionConfig)."""
    from plurm.cli.main import main

    monkeypatch.chdir(tmp_path)
    session = tmp_path / "session"
    session.write_text("0 sbatch -N1 --wrap='sleep 30'\n2 squeue -h -o %T\n")
    running = 0
    for name in ACCEPTED:
        assert main(["simulate", "--conf", str(CORPUS / name), str(session)]) == 0
        running += capsys.readouterr().out.rstrip().endswith("RUNNING")
    assert running >= 7
