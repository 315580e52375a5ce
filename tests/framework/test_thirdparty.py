"""Third-party plugins as an outside author ships them: separate packages under
tests/data/thirdparty/, installed with pip into a temporary target (one install for the
module), found through their entry points.

* preempt/mirror answers as partition_prio does, written apart from it: the same jobs.csv as
  partition_prio on 2,000 SDSC-SP2 jobs under select linear and cons_res, with and without
  gang scheduling; without its capability answer (``preempt_by_partition``) cons_res under
  gang places jobs otherwise, which is what the capability hook is for.
* preempt/max_age, a guard with a declared option: plurm conf check shows and checks it;
  stacked on partition_prio on the trace, it spares exactly the victims past max_age.
* preempt/faulty, whose hook raises: plurm simulate stops with one message and writes what
  it has.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from plurm import conf
from plurm.manager import Plugins
from plurm.registry import Registry
from plurm.sim.metrics import write_jobs_csv
from plurm.sim.trace import TraceMapping, Transition, replay
from plurm.workload import CleanedTrace, clean, read_swf
from tests.conftest import REPO, SHARED
from tests.support.cli import plurm

THIRDPARTY = REPO / "tests" / "data" / "thirdparty"
PACKAGES = ("preempt_mirror", "preempt_max_age", "preempt_faulty")
TRACE = SHARED / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz"
SDSC = (REPO / "conf" / "sdsc-sp2" / "slurm.conf").read_text()
JOBS = 2000


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The packages installed with pip into a temporary target, put on sys.path."""
    where = tmp_path_factory.mktemp("thirdparty")
    build = tmp_path_factory.mktemp("sources")
    sources = []
    for name in PACKAGES:  # a copy: pip leaves build/ and egg-info beside the sources
        copy = build / name
        shutil.copytree(THIRDPARTY / name, copy)
        sources.append(str(copy))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(where),
            *sources,
        ],
        check=True,
        capture_output=True,
    )
    sys.path.insert(0, str(where))
    yield where
    sys.path.remove(str(where))


def _plurm(target: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(target), str(REPO)]))
    return plurm(*args, cwd=cwd, env=env)


def _variant(select: str, mode: str, preempt: str) -> str:
    text = SDSC.replace("PreemptMode=REQUEUE", f"PreemptMode={mode}")
    text = text.replace("preempt/partition_prio", preempt)
    if select == "cons_res":  # four cores a node, so that jobs share nodes
        text = text.replace(
            "SelectType=select/linear", "SelectType=select/cons_res\nSelectTypeParameters=CR_Core"
        )
        text = text.replace("NodeName=n[001-128] CPUs=1", "NodeName=n[001-032] CPUs=4")
    return text


@pytest.fixture(scope="module")
def trace() -> CleanedTrace:
    if not TRACE.exists():
        pytest.skip(f"{TRACE} is not here")
    cleaned = clean(read_swf(str(TRACE)))
    return attrs.evolve(cleaned, jobs=cleaned.jobs[:JOBS])


MAPPING = TraceMapping.from_dict(
    {"processors_as": "tasks", "high_priority": {"fraction": 0.05, "partition": "high", "seed": 7}},
    "sdsc-sp2 map",
)


def _jobs_csv(trace: CleanedTrace, text: str, tmp_path: Path) -> str:
    (tmp_path / "slurm.conf").write_text(text)
    stream = io.StringIO()
    write_jobs_csv(replay(trace, conf.load(tmp_path / "slurm.conf"), MAPPING), stream)
    return stream.getvalue()


@pytest.mark.parametrize("select", ["linear", "cons_res"])
@pytest.mark.parametrize("mode", ["REQUEUE", "SUSPEND,GANG"])
def test_a_third_party_policy_answering_as_partition_prio_gives_its_jobs_csv(
    target: Path, trace: CleanedTrace, select: str, mode: str, tmp_path: Path
) -> None:
    shipped = _jobs_csv(trace, _variant(select, mode, "preempt/partition_prio"), tmp_path)
    mirror = _jobs_csv(trace, _variant(select, mode, "preempt/mirror"), tmp_path)
    assert shipped.count("\n") == JOBS + 1
    rows = list(csv.DictReader(io.StringIO(shipped)))
    counts = ("preempted_requeue", "preempted_cancel", "preempted_suspend", "suspended")
    assert sum(float(row[k]) for row in rows for k in counts) > 0  # the policy had work
    assert mirror == shipped


def test_without_the_capability_answer_cons_res_under_gang_places_otherwise(
    target: Path, trace: CleanedTrace, tmp_path: Path
) -> None:
    """Why select asks: a mirror that does not say it chooses victims by partition gets
    other placements under cons_res with gang (what comparing PreemptType's name gave any
    third-party policy before)."""
    from plurm_preempt_mirror import Mirror

    class Silent(Mirror):
        preempt_by_partition = None  # no answer: the hook's default, False

    text = _variant("cons_res", "SUSPEND,GANG", "preempt/silent")
    (tmp_path / "slurm.conf").write_text(text)
    config = conf.load(tmp_path / "slurm.conf")
    registry = Registry(factories={"preempt/silent": Silent})
    import plurm.sim.trace as trace_module

    load = Plugins.load
    try:
        trace_module.Plugins.load = classmethod(  # type: ignore[method-assign,assignment]
            lambda cls, config, extra=(): load(config, registry=registry, extra=extra)
        )
        stream = io.StringIO()
        write_jobs_csv(replay(trace, config, MAPPING), stream)
    finally:
        trace_module.Plugins.load = load  # type: ignore[method-assign]
    shipped = _jobs_csv(
        trace, _variant("cons_res", "SUSPEND,GANG", "preempt/partition_prio"), tmp_path
    )
    assert stream.getvalue() != shipped


def test_conf_check_shows_and_checks_a_plugins_option(target: Path, tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(SDSC + "PreemptParameters=max_age=7200\n")
    (tmp_path / "plurm.conf").write_text("PreemptGuards=preempt/max_age\n")
    good = _plurm(target, "conf", "check", "slurm.conf", cwd=tmp_path)
    assert good.returncode == 0, good.stderr
    assert "# plurm.conf: PreemptGuards=preempt/max_age" in good.stdout
    assert "PreemptParameters max_age=7200 (preempt/max_age, int, default 3600)" in good.stdout
    (tmp_path / "slurm.conf").write_text(SDSC + "PreemptParameters=max_aeg=7200\n")
    bad = _plurm(target, "conf", "check", "slurm.conf", cwd=tmp_path)
    assert bad.returncode == 1
    line = SDSC.count("\n") + 1
    assert f"slurm.conf:{line}:19" in bad.stderr
    assert "unknown option max_aeg" in bad.stderr and "did you mean 'max_age'?" in bad.stderr


FAULTY = (
    "ClusterName=c\nSlurmctldHost=h\nPreemptType=preempt/faulty\nPreemptMode=REQUEUE\n"
    "JobRequeue=1\nNodeName=n[1-2] CPUs=1\n"
    "PartitionName=low Nodes=ALL Default=YES PriorityTier=1\n"
    "PartitionName=high Nodes=ALL PriorityTier=2\n"
)
SESSION = (
    "0 sbatch -N2 --wrap='sleep 300'\n2 squeue\n5 sbatch -N1 -p high --wrap='sleep 10'\n8 squeue\n"
)


def test_a_failing_hook_stops_a_session_with_one_message(target: Path, tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(FAULTY)
    (tmp_path / "session").write_text(SESSION)
    run = _plurm(target, "simulate", "--conf", "slurm.conf", "session", cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr == (
        "plurm: error: plugin preempt/faulty (plurm-preempt-faulty 0.1.0) failed in hook "
        "preempt_preemptable at t=6s (jobs 2, 1): ZeroDivisionError: division by zero\n"
    )
    # The transcript as far as it got: up to the command in whose second the hook failed.
    assert run.stdout.startswith("[t=0s] $ sbatch -N2")
    assert "[t=2s] $ squeue" in run.stdout and "[t=8s]" not in run.stdout
    debug = _plurm(target, "simulate", "--debug", "--conf", "slurm.conf", "session", cwd=tmp_path)
    assert debug.returncode == 1
    assert "Traceback" in debug.stderr and "tiers / 0" in debug.stderr
    assert debug.stderr.endswith(run.stderr)


def test_a_failing_hook_stops_a_trace_and_writes_its_jobs_so_far(
    target: Path, tmp_path: Path
) -> None:
    text = SDSC.replace("preempt/partition_prio", "preempt/faulty")
    (tmp_path / "slurm.conf").write_text(text)
    run = _plurm(
        target,
        "simulate",
        "--quiet",
        "--conf",
        "slurm.conf",
        "--trace",
        str(TRACE),
        "--map",
        str(REPO / "conf" / "sdsc-sp2" / "map.toml"),
        "--jobs",
        "500",
        "--out",
        "out",
        cwd=tmp_path,
    )
    assert run.returncode == 1
    assert "failed in hook preempt_preemptable at t=" in run.stderr
    assert "Traceback" not in run.stderr
    rows = (tmp_path / "out" / "jobs.csv").read_text().splitlines()
    assert rows[0].startswith("job_id") and 1 < len(rows) <= 501


def _victim_runs(transitions: list[Transition]) -> list[float]:
    """How long each preemption's victim had run (this stretch) when it was preempted."""
    started: dict[int, float] = {}
    ran: dict[int, float] = {}
    runs = []
    for step in transitions:
        if step.new == "RUNNING":
            started[step.job_id] = step.time
        elif step.old == "RUNNING":
            ran[step.job_id] = step.time - started[step.job_id]
        if step.preempted is not None:  # marked when the kill is over (COMPLETING ->)
            runs.append(ran[step.job_id])
    return runs


def test_a_guard_on_a_trace_spares_exactly_the_victims_it_vetoes(
    target: Path, trace: CleanedTrace, tmp_path: Path
) -> None:
    """preempt/max_age stacked on partition_prio (PreemptParameters=max_age=1800): without
    it some victims had run half an hour or more; with it none has, and younger victims
    are still preempted."""
    runs = {}
    for guarded in (False, True):
        work = tmp_path / str(guarded)
        work.mkdir()
        text = SDSC + ("PreemptParameters=max_age=1800\n" if guarded else "")
        (work / "slurm.conf").write_text(text)
        if guarded:
            (work / "plurm.conf").write_text("PreemptGuards=preempt/max_age\n")
        transitions: list[Transition] = []
        replay(trace, conf.load(work / "slurm.conf"), MAPPING, transitions=transitions)
        runs[guarded] = _victim_runs(transitions)
    assert any(run >= 1800 for run in runs[False])
    assert runs[True] and all(run < 1800 for run in runs[True])
