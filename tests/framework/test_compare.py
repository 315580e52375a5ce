"""plurm compare: runs are the replays they stand for, whatever executes them."""

from __future__ import annotations

import contextlib
import csv
import json
import random
from collections.abc import Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from plurm import conf
from plurm.cli.main import main
from plurm.errors import CompareError
from plurm.manager import Plugins
from plurm.sim import compare as compare_module
from plurm.sim.compare import (
    Comparison,
    Run,
    RunResult,
    open_executor,
    parse_run_option,
    run_runs,
)
from plurm.sim.metrics import summarize
from plurm.sim.trace import TraceMapping, replay
from plurm.workload import clean, parse_swf
from tests.conftest import REPO
from tests.framework.test_trace_replay import CONF as TRACE_REPLAY_CONF

# The cluster of the trace-replay tests: 4 one-CPU nodes, "urgent" requeues "batch".
CONF = TRACE_REPLAY_CONF

MAP = """[high_priority]
fraction = 0.2
partition = "urgent"
seed = 3
"""


def _trace_text(jobs: int = 60) -> str:
    """A busy little workload on 4 one-CPU nodes: wide and narrow jobs, short and long, so that
    backfill and preemption both have something to do."""
    rng = random.Random(5)
    lines = ["; MaxProcs: 4"]
    submit = 0
    for number in range(1, jobs + 1):
        submit += rng.randint(0, 120)
        run = rng.randint(20, 900)
        procs = rng.choice((1, 1, 2, 3, 4))
        requested = run + rng.randint(0, 600)
        fields = [number, submit, -1, run, procs, -1, -1, procs, requested]
        fields += [-1, 1, 1, 1, 1, 1, 1, -1, -1]
        lines.append(" ".join(str(value) for value in fields))
    return "\n".join(lines) + "\n"


COMPARISON = """title = "test"
trace = "t.swf"
conf = "slurm.conf"
map = "map.toml"

[[run]]
name = "backfill"

[[run]]
name = "builtin"
set = { SchedulerType = "sched/builtin" }

[[run]]
name = "cancel"
set = { PreemptMode = "CANCEL", SchedulerParameters = "bf_window=60,bf_resolution=60" }
"""


@pytest.fixture
def setup(tmp_path: Path) -> Path:
    (tmp_path / "slurm.conf").write_text(CONF)
    (tmp_path / "map.toml").write_text(MAP)
    (tmp_path / "t.swf").write_text(_trace_text())
    (tmp_path / "compare.toml").write_text(COMPARISON)
    return tmp_path


def _direct(directory: Path, extra: str) -> dict[str, Any]:
    """The summary of a plain replay of the conf with ``extra`` lines, read from its own file."""
    path = directory / "direct" / "slurm.conf"
    path.parent.mkdir(exist_ok=True)
    path.write_text(CONF + extra)
    config = conf.load(path)
    trace = clean(parse_swf(_trace_text()))
    mapping = TraceMapping.load(directory / "map.toml")
    return summarize(replay(trace, config, mapping), total_cpus=4)


def _run_all(setup: Path, executor: Executor) -> list[RunResult]:
    comparison = Comparison.load(setup / "compare.toml")
    return run_runs(comparison.runs, comparison.read_trace(), executor)


@pytest.fixture(scope="module")
def pool_results(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[RunResult]]:
    """The comparison, run on process pools of 1 and 2 workers."""
    directory = tmp_path_factory.mktemp("pool")
    (directory / "slurm.conf").write_text(CONF)
    (directory / "map.toml").write_text(MAP)
    (directory / "t.swf").write_text(_trace_text())
    (directory / "compare.toml").write_text(COMPARISON)
    results = {}
    for workers in (1, 2):
        with open_executor("process", workers) as executor:
            results[workers] = _run_all(directory, executor)
    return results


def test_each_run_is_the_replay_of_its_configuration(
    setup: Path, pool_results: dict[int, list[RunResult]]
) -> None:
    results = pool_results[2]
    assert [result.name for result in results] == ["backfill", "builtin", "cancel"]
    assert all(result.ok for result in results)
    summaries = [result.summary for result in results]
    assert summaries[0] == _direct(setup, "")
    assert summaries[1] == _direct(setup, "SchedulerType=sched/builtin\n")
    assert summaries[2] == _direct(
        setup, "PreemptMode=CANCEL\nSchedulerParameters=bf_window=60,bf_resolution=60\n"
    )
    # The configurations really differ in what they did.
    assert summaries[0] is not None and summaries[1] is not None and summaries[2] is not None
    assert summaries[0]["wait_mean"] != summaries[1]["wait_mean"]
    assert summaries[0]["preemptions"]["requeue"] > 0
    assert summaries[2]["preemptions"]["requeue"] == 0
    assert summaries[2]["preemptions"]["cancel"] > 0


def test_the_worker_count_changes_nothing(pool_results: dict[int, list[RunResult]]) -> None:
    one, two = pool_results[1], pool_results[2]
    assert [(r.name, r.summary, r.jobs_csv, r.error) for r in one] == [
        (r.name, r.summary, r.jobs_csv, r.error) for r in two
    ]


def test_the_dask_executor_gives_the_same_results(
    setup: Path, pool_results: dict[int, list[RunResult]]
) -> None:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        results = _run_all(setup, client.get_executor())
    assert [(r.name, r.summary, r.jobs_csv) for r in results] == [
        (r.name, r.summary, r.jobs_csv) for r in pool_results[1]
    ]


def test_the_command_on_a_local_dask_cluster(
    setup: Path, pool_results: dict[int, list[RunResult]]
) -> None:
    pytest.importorskip("distributed")
    out = setup / "out"
    argv = ["compare", str(setup / "compare.toml"), "--out", str(out), "--quiet"]
    assert main([*argv, "--executor", "dask", "--workers", "1"]) == 0
    document = json.loads((out / "compare.json").read_text())
    assert [run["summary"] for run in document["runs"]] == [r.summary for r in pool_results[1]]


def test_the_command_writes_the_table_and_each_run(
    setup: Path, capsys: pytest.CaptureFixture[str], pool_results: dict[int, list[RunResult]]
) -> None:
    out = setup / "out"
    assert main(["compare", str(setup / "compare.toml"), "--out", str(out), "--workers", "2"]) == 0
    printed = capsys.readouterr().out
    assert "| | backfill | builtin | cancel |" in printed
    assert "| mean wait (s) |" in printed
    rows = list(csv.reader((out / "compare.csv").open()))
    assert rows[0] == ["metric", "backfill", "builtin", "cancel"]
    by_metric = {row[0]: row[1:] for row in rows[1:]}
    summaries = [r.summary for r in pool_results[1]]
    assert by_metric["wait_mean"] == [repr(s["wait_mean"]) for s in summaries if s is not None]
    assert by_metric["preemptions.cancel"][2] != "0"
    markdown = (out / "compare.md").read_text()
    assert markdown.startswith("# test\n")
    assert "| builtin | `" in markdown and "SchedulerType=sched/builtin |" in markdown
    for name, summary in zip(("backfill", "builtin", "cancel"), summaries, strict=True):
        assert json.loads((out / name / "summary.json").read_text()) == summary
        assert (out / name / "jobs.csv").read_text() == next(
            r.jobs_csv for r in pool_results[1] if r.name == name
        )


def test_the_command_line_form_is_the_file_form(
    setup: Path, pool_results: dict[int, list[RunResult]]
) -> None:
    out = setup / "inline"
    argv = ["compare", "--trace", str(setup / "t.swf"), "--conf", str(setup / "slurm.conf")]
    argv += ["--map", str(setup / "map.toml"), "--run", "backfill", "--run"]
    argv += ["builtin:SchedulerType=sched/builtin", "--run"]
    argv += ["cancel:PreemptMode=CANCEL,SchedulerParameters=bf_window=60,bf_resolution=60"]
    assert main([*argv, "--out", str(out), "--quiet", "--workers", "1"]) == 0
    document = json.loads((out / "compare.json").read_text())
    assert [run["summary"] for run in document["runs"]] == [r.summary for r in pool_results[1]]


def test_jobs_limits_the_trace(setup: Path) -> None:
    comparison = Comparison.load(setup / "compare.toml").with_jobs(7)
    assert len(comparison.read_trace().jobs) == 7


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("base", ("base", ())),
        ("b:SchedulerType=sched/builtin", ("b", (("SchedulerType", "sched/builtin"),))),
        (
            "w:SchedulerParameters=bf_window=60,bf_continue,PreemptMode=SUSPEND,GANG",
            (
                "w",
                (
                    ("SchedulerParameters", "bf_window=60,bf_continue"),
                    ("PreemptMode", "SUSPEND,GANG"),
                ),
            ),
        ),
    ],
)
def test_run_options(option: str, expected: tuple[str, tuple[tuple[str, str], ...]]) -> None:
    assert parse_run_option(option) == expected


def test_a_run_option_without_a_value_is_refused() -> None:
    with pytest.raises(CompareError, match="'SchedulerType' is not Key=Value"):
        parse_run_option("x:SchedulerType")


BASE = {"trace": "t.swf", "conf": "slurm.conf"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"conf": "slurm.conf", "run": [{"name": "a"}]}, "c.toml: missing key 'trace'"),
        ({**BASE, "runs": []}, "c.toml: unknown key 'runs'"),
        ({**BASE}, "c.toml: no runs"),
        ({**BASE, "jobs": -1, "run": [{"name": "a"}]}, "jobs must be a whole number"),
        ({**BASE, "run": [{"set": {}}]}, "c.toml: run 1: missing key 'name'"),
        ({**BASE, "run": [{"name": "a", "sett": {}}]}, "c.toml: run 'a': unknown key 'sett'"),
        ({**BASE, "run": [{"name": "a/b"}]}, "run 'a/b': run name 'a/b' must start"),
        ({**BASE, "run": [{"name": "compare.md"}]}, "run name 'compare.md' must"),
        ({**BASE, "run": [{"name": "a"}, {"name": "a"}]}, "run name 'a' is used twice"),
        ({**BASE, "run": [{"name": "a"}, {"name": "A"}]}, r"twice \(as 'a' and 'A'\)"),
        ({**BASE, "run": [{"name": "a", "set": "X=1"}]}, "run 'a': set must be a table"),
        (
            {**BASE, "run": [{"name": "a", "set": {"JobRequeue": True}}]},
            "run 'a': set.JobRequeue = True: give the value as slurm.conf writes it",
        ),
        ({"trace": "t.swf", "run": [{"name": "a"}]}, "run 'a': no configuration"),
        ({**BASE, "run": [{"name": "a", "conf": "nope.conf"}]}, "run 'a': cannot read"),
        ({**BASE, "map": "nope.toml", "run": [{"name": "a"}]}, "cannot read the mapping"),
    ],
)
def test_bad_comparison_files_say_where(setup: Path, data: dict[str, Any], message: str) -> None:
    with pytest.raises(CompareError, match=message):
        Comparison.from_dict(data, source="c.toml", base_dir=setup)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"SchedulerTyp": "sched/builtin"}, "unrecognized key 'SchedulerTyp'"),
        ({"SchedulerType": "sched/nonesuch"}, "sched/nonesuch"),
        ({"JobRequeue": "maybe"}, "JobRequeue=maybe"),
    ],
)
def test_a_run_plurm_refuses_is_named_before_anything_runs(
    setup: Path, settings: dict[str, str], message: str
) -> None:
    data = {**BASE, "run": [{"name": "fine"}, {"name": "typo", "set": settings}]}
    comparison = Comparison.from_dict(data, source="c.toml", base_dir=setup)
    with pytest.raises(CompareError) as refused:
        comparison.check()
    assert str(refused.value).startswith("c.toml: run 'typo': its configuration is refused:\n")
    assert message in str(refused.value)


def test_a_comparison_that_is_not_toml(setup: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (setup / "bad.toml").write_text("run = [")
    assert main(["compare", str(setup / "bad.toml"), "--out", str(setup / "o")]) == 1
    assert "bad.toml: not a valid TOML comparison" in capsys.readouterr().err


@contextlib.contextmanager
def _threads(
    kind: str, workers: int | None, address: str | None, security: object = None
) -> Iterator[Executor]:
    with ThreadPoolExecutor(max_workers=1) as executor:
        yield executor


def test_a_failing_run_is_reported_and_the_others_still_are(
    setup: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replay = compare_module.replay

    def replay_failing_builtin(
        trace: Any, config: conf.SlurmConfig, mapping: Any, **options: Any
    ) -> Any:
        if config.scheduler_type == "sched/builtin":
            raise RuntimeError("the simulator broke")
        return real_replay(trace, config, mapping, **options)

    # In-process threads, so that the patched replay is the one the runs call.
    monkeypatch.setattr("plurm.cli.compare.open_executor", _threads)
    monkeypatch.setattr(compare_module, "replay", replay_failing_builtin)
    out = setup / "out"
    assert main(["compare", str(setup / "compare.toml"), "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert "run 'builtin' failed" in captured.err and "the simulator broke" in captured.err
    assert "run backfill: done" in captured.err
    assert "| mean wait (s) |" in captured.out
    rows = {row[0]: row[1:] for row in csv.reader((out / "compare.csv").open())}
    assert rows["wait_mean"][1] == "" and rows["wait_mean"][0] != ""
    markdown = (out / "compare.md").read_text()
    assert "## Failed runs" in markdown and "RuntimeError: the simulator broke" in markdown
    assert (out / "backfill" / "summary.json").exists()
    assert not (out / "builtin").exists()
    page = (out / "compare.html").read_text()
    assert "<h2>Failed runs</h2>" in page and "RuntimeError: the simulator broke" in page


def test_a_worker_that_dies_fails_its_run_only(
    setup: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_run_one = compare_module.run_one

    def dying(run: Run, trace: Any, report: bool = True) -> RunResult:
        if run.name == "cancel":
            raise MemoryError()
        return real_run_one(run, trace, report)

    monkeypatch.setattr(compare_module, "run_one", dying)
    with ThreadPoolExecutor(max_workers=2) as executor:
        results = _run_all(setup, executor)
    assert [r.ok for r in results] == [True, True, False]
    assert results[2].error == "the worker failed: MemoryError"


def test_usage_errors(setup: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = str(setup / "compare.toml")
    for argv, message in [
        ([file, "--conf", "x"], "either FILE.toml or --trace"),
        (["--trace", "t.swf"], "give FILE.toml, or --trace, --conf and at least one --run"),
        ([file, "--workers", "0"], "--workers must be at least 1"),
        ([file, "--dask-scheduler", "tcp://x:1"], "--dask-scheduler needs --executor dask"),
    ]:
        assert main(["compare", *argv, "--out", str(setup / "o")]) == 1
        assert message in capsys.readouterr().err


def test_without_distributed_dask_asks_for_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)
    with (
        pytest.raises(CompareError, match=r"pip install 'plurm\[dask\]'"),
        open_executor("dask"),
    ):
        pass


def test_the_example_comparison_is_well_formed() -> None:
    comparison = Comparison.load(REPO / "conf" / "compare-sdsc" / "compare.toml")
    comparison.check()
    assert len(comparison.runs) >= 3
    assert Path(comparison.trace).name == "SDSC-SP2-1998-4.2-cln.swf.gz"


def test_the_pbs_lsf_comparison_is_well_formed() -> None:
    """conf/compare-pbs-lsf: each run's configuration loads with its policy's own files
    (qmgr.conf, lsb.queues) read beside its slurm.conf."""
    pytest.importorskip("plurm_preempt_pbs")
    pytest.importorskip("plurm_preempt_lsf")
    comparison = Comparison.load(REPO / "conf" / "compare-pbs-lsf" / "compare.toml")
    comparison.check()
    assert [run.name for run in comparison.runs] == [
        "slurm-partition-prio",
        "pbs-default",
        "lsf-default",
    ]
    policies = {}
    for run in comparison.runs:
        loaded = Plugins.load(run.config()).loaded
        policy = next(p for p in loaded if p.type_string.startswith("preempt/"))
        policies[policy.type_string] = policy.plugin
    assert sorted(policies) == ["preempt/lsf", "preempt/partition_prio", "preempt/pbs"]
    assert [Path(f).name for f in policies["preempt/pbs"].pbs.files] == ["qmgr.conf"]
    assert [q.name for q in policies["preempt/lsf"].lsf.queues] == ["urgent", "batch"]
