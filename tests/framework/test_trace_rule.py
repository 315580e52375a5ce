"""High priority by rule (``[high_priority.match]``) and the mapping given as command options."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plurm.cli.main import main
from plurm.errors import TraceError
from plurm.sim.rule import JobRule
from plurm.sim.trace import TraceMapping, replay
from plurm.workload import clean, parse_swf

from .test_trace_replay import CONF, _setup

# number submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue
# partition preceding think: users 1, 2, 3 (job 4 has no user: -1), 1 to 4 processors
TRACE = """; MaxProcs: 4
1 0 -1 100 1 -1 -1 1 200 -1 1 1 1 1 1 1 -1 -1
2 10 -1 50 2 -1 -1 2 60 -1 1 2 1 1 1 1 -1 -1
3 20 -1 30 3 -1 -1 3 120 -1 1 3 1 1 2 1 -1 -1
4 30 -1 30 4 -1 -1 4 3600 -1 1 -1 1 1 2 1 -1 -1
"""


def _numbers(mapping: TraceMapping, tmp_path: Path) -> list[int]:
    records = replay(clean(parse_swf(TRACE)), _setup(tmp_path), mapping)
    return [r.trace_number for r in records if r.high_priority]


@pytest.mark.parametrize(
    ("match", "expected"),
    [
        ({"user": 2}, [2]),
        ({"user": [1, 3]}, [1, 3]),
        ({"processors": {"min": 2}}, [2, 3, 4]),
        ({"processors": {"min": 2, "max": 3}}, [2, 3]),
        ({"requested_time": {"max": 120}}, [2, 3]),
        ({"queue": 2, "processors": {"max": 3}}, [3]),  # every condition must hold
        ({"user": [1, 2, 3, 4]}, [1, 2, 3]),  # -1 (no user) matches no number
        ({}, [1, 2, 3, 4]),  # no conditions: every job
    ],
)
def test_a_rule_marks_exactly_the_jobs_it_matches(
    tmp_path: Path, match: dict[str, object], expected: list[int]
) -> None:
    data = {"high_priority": {"partition": "urgent", "match": match}}
    mapping = TraceMapping.from_dict(data)
    assert mapping.high_priority_fraction == 1.0  # the default with a match table
    assert _numbers(mapping, tmp_path) == expected
    records = replay(clean(parse_swf(TRACE)), _setup(tmp_path), mapping)
    assert {r.partition for r in records if r.high_priority} <= {"urgent"}
    assert {r.partition for r in records if not r.high_priority} <= {"batch"}


def test_a_fraction_with_a_rule_narrows_the_same_seeded_sample(tmp_path: Path) -> None:
    """A draw is made for every job whatever the rule: the jobs a fraction alone marks,
    intersected with the rule, are the jobs both mark."""
    alone = TraceMapping.from_dict({"high_priority": {"fraction": 0.5, "seed": 3}})
    ruled = TraceMapping.from_dict(
        {"high_priority": {"fraction": 0.5, "seed": 3, "match": {"processors": {"min": 2}}}}
    )
    sampled = _numbers(alone, tmp_path)
    assert 0 < len(sampled) < 4  # the seed gives a real sample of this small trace
    assert _numbers(ruled, tmp_path) == [n for n in sampled if n >= 2]


@pytest.mark.parametrize(
    ("match", "message"),
    [
        ({"usr": 1}, "high_priority.match: unknown field 'usr'"),
        ({"user": "alice"}, r"high_priority.match.user: expected a whole number, got 'alice'"),
        ({"user": True}, "expected a whole number"),
        ({"user": []}, "an empty list matches no job"),
        ({"processors": {"least": 2}}, "unknown bound 'least'"),
        ({"processors": {}}, "a range needs min, max or both"),
        ({"processors": {"min": 5, "max": 2}}, "min 5 is greater than max 2"),
        ({"processors": {"min": 1.5}}, r"match.processors.min: expected a whole number"),
        ("user", "expected a table of fields"),
    ],
)
def test_bad_rules_say_where_they_are_wrong(match: object, message: str) -> None:
    with pytest.raises(TraceError, match=message) as caught:
        TraceMapping.from_dict({"high_priority": {"match": match}}, "m.toml")
    assert str(caught.value).startswith("m.toml: ")


def test_unknown_high_priority_keys_are_refused() -> None:
    with pytest.raises(TraceError, match="unknown high_priority key 'fractoin'"):
        TraceMapping.from_dict({"high_priority": {"fractoin": 0.1}})
    with pytest.raises(TraceError, match="high_priority must be a table"):
        TraceMapping.from_dict({"high_priority": 3})


@given(st.dictionaries(st.text(max_size=8), st.recursive(st.integers(), st.lists), max_size=3))
def test_any_rule_table_is_read_or_refused_with_a_trace_error(match: dict[str, object]) -> None:
    try:
        rule = JobRule.from_dict(match, "m.toml")
    except TraceError:
        return
    assert len(rule.conditions) == len(match)


# what a TOML document can hold: numbers (inf and nan too), strings, booleans, arrays, tables
_TOML = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.sampled_from(["1", "x", "tasks", "nodes", "batch", ""]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["1", "x", "min", "max", "user", "processors", "fraction"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)
_KEYS = ["partitions", "queues", "processors_as", "high_priority"]
_HIGH = ["fraction", "qos", "partition", "seed", "match"]


@given(
    st.dictionaries(st.sampled_from(_KEYS), _TOML, max_size=3),
    st.dictionaries(st.sampled_from(_HIGH), _TOML, max_size=4),
)
def test_any_mapping_document_is_read_or_refused_with_a_trace_error(
    data: dict[str, object], high: dict[str, object]
) -> None:
    """A mapping file of any shape gives a TraceMapping or a TraceError, never another
    exception; what it gives has the types the replay relies on."""
    if high:
        data = {**data, "high_priority": high}
    data = {k: v for k, v in data.items() if v is not None}  # TOML has no null
    try:
        mapping = TraceMapping.from_dict(data, "m.toml")
    except TraceError as error:
        assert str(error).startswith("m.toml: ")
        return
    assert all(isinstance(k, int) and isinstance(v, str) for k, v in mapping.partitions.items())
    assert all(isinstance(k, int) and isinstance(v, str) for k, v in mapping.queues.items())
    assert 0.0 <= mapping.high_priority_fraction <= 1.0
    assert isinstance(mapping.seed, int) and not isinstance(mapping.seed, bool)
    for value in (mapping.high_priority_qos, mapping.high_priority_partition):
        assert value is None or (isinstance(value, str) and value)


def _simulate(tmp_path: Path, *options: str) -> int:
    (tmp_path / "t.swf").write_text(TRACE)
    (tmp_path / "slurm.conf").write_text(CONF)
    argv = ["simulate", "--conf", str(tmp_path / "slurm.conf"), "--trace", str(tmp_path / "t.swf")]
    return main([*argv, *options, "--out", str(tmp_path / "out"), "--quiet", "--no-report"])


def _run(tmp_path: Path, *options: str) -> list[dict[str, str]]:
    assert _simulate(tmp_path, *options) == 0
    return list(csv.DictReader((tmp_path / "out" / "jobs.csv").open()))


def test_the_mapping_can_be_given_as_options(tmp_path: Path) -> None:
    rows = _run(tmp_path, "--map-queue", "2=normal", "--high-partition", "urgent",
                "--high-match", "user=1,3", "--high-match", "processors=2-")  # fmt: skip
    by_number = {row["trace_number"]: row for row in rows}
    assert [n for n, row in by_number.items() if row["high_priority"] == "True"] == ["3"]
    assert by_number["3"]["partition"] == "urgent"
    assert [row["qos"] for row in rows] == ["", "", "normal", "normal"]


def test_options_replace_or_add_to_the_mapping_file(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(
        '[partitions]\n1 = "urgent"\n[high_priority]\nfraction = 1.0\npartition = "batch"\n'
        "[high_priority.match]\nuser = 1\n"
    )
    rows = _run(tmp_path, "--map", str(tmp_path / "m.toml"), "--high-match", "queue=2")
    # the rule has both conditions now: no job has user 1 and queue 2
    assert [row["high_priority"] for row in rows] == ["False"] * 4
    assert {row["partition"] for row in rows} == {"urgent"}
    rows = _run(tmp_path, "--map", str(tmp_path / "m.toml"), "--high-fraction", "0")
    assert [row["high_priority"] for row in rows] == ["False"] * 4


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--map-partition", "1"], "--map-partition '1': expected KEY=VALUE"),
        (["--high-match", "user=a"], "expected numbers"),
        (["--high-match", "colour=1"], "unknown field 'colour'"),
        (["--high-fraction", "2"], "between 0 and 1"),
    ],
)
def test_bad_mapping_options_say_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    assert _simulate(tmp_path, *options) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # before it wrote anything


def test_an_error_names_the_file_or_the_options_it_comes_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "m.toml").write_text("[high_priority]\nqos = 5\n")
    assert _simulate(tmp_path, "--map", str(tmp_path / "m.toml")) == 1
    assert (
        f"{tmp_path / 'm.toml'}: high_priority.qos must be a name, not 5" in capsys.readouterr().err
    )
    (tmp_path / "m.toml").write_text('[high_priority]\nqos = "high"\n')
    assert _simulate(tmp_path, "--map", str(tmp_path / "m.toml"), "--high-fraction", "2") == 1
    error = capsys.readouterr().err
    assert "the command line: high_priority.fraction must be between 0 and 1" in error
    assert "m.toml" not in error


def test_the_report_says_which_mapping_options_were_given(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text('[high_priority]\npartition = "urgent"\n')
    (tmp_path / "t.swf").write_text(TRACE)
    (tmp_path / "slurm.conf").write_text(CONF)
    out = tmp_path / "report"
    argv = ["simulate", "--conf", str(tmp_path / "slurm.conf"), "--trace", str(tmp_path / "t.swf")]
    options = ["--map", str(tmp_path / "m.toml"), "--high-match", "user=2"]
    assert main([*argv, *options, "--out", str(out), "--quiet"]) == 0
    page = (out / "report.html").read_text()
    assert f"{tmp_path / 'm.toml'} with --high-match user=2" in page


def test_ranges_read_from_the_command_line_are_inclusive(tmp_path: Path) -> None:
    rows = _run(tmp_path, "--high-partition", "urgent", "--high-match", "requested_time=-120")
    assert [row["high_priority"] for row in rows] == ["False", "True", "True", "False"]
    assert math.isfinite(float(rows[0]["wait"]))
