"""preempt/lsf's parsers: lsb.queues and lsb.params in LSF's own syntax, LSF's defaults,
and located errors (file, line, column, "did you mean") for anything LSF would refuse."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plurm.errors import ConfError, ConfIncludeError, ConfKeyError, ConfSyntaxError, ConfValueError

pytest.importorskip("plurm_preempt_lsf.config")

from plurm_preempt_lsf.config import Guard, LsfConfig, LsfParams, Target, load, parse

# The reference's canonical example (pbs-lsf.md §2.1), as an lsb.queues file.
CANONICAL = """# Queues, highest priority first
Begin Queue
QUEUE_NAME   = high
PRIORITY     = 99
PREEMPTION   = PREEMPTIVE
DESCRIPTION  = "urgent work"
End Queue

Begin Queue
QUEUE_NAME   = medium
PRIORITY     = 10
PREEMPTION   = PREEMPTIVE[normal low+1]
End Queue

Begin Queue
QUEUE_NAME   = normal
PRIORITY     = 5
PREEMPTION   = PREEMPTIVE[low] \\
               PREEMPTABLE[high medium]
End Queue

Begin Queue
QUEUE_NAME   = low
PRIORITY     = 1
RUNLIMIT     = 60 2:00
End Queue
"""


def _error(queues: str = "", params: str = "") -> ConfError:
    with pytest.raises(ConfError) as caught:
        parse(queues, params)
    return caught.value


def test_empty_files_give_lsf_defaults() -> None:
    config = parse("", "")
    assert config == LsfConfig()
    assert config.params == LsfParams()
    assert config.params.preempt_for == frozenset()


def test_the_canonical_queue_relations() -> None:
    config = parse(CANONICAL, "")
    high, medium, normal, low = config.queues
    assert (high.name, high.priority, high.preemptive, high.preemptive_targets) == (
        "high",
        99,
        True,
        (),
    )
    assert medium.preemptive_targets == (Target("normal", 0), Target("low", 1))
    assert medium.preference("low") == 1 and medium.preference("normal") == 0
    assert normal.preemptive and normal.preemptable
    assert normal.preemptive_targets == (Target("low"),)
    assert normal.preemptable_by == ("high", "medium")
    assert not low.preemptive and not low.preemptable
    assert (low.run_limit_default, low.run_limit_max, low.run_limit) == (3600, 7200, 3600)
    assert config.queue("low") is low and config.queue("nope") is None
    assert config.inactive["lsb.queues high DESCRIPTION"] == "urgent work"
    assert str(normal.location) == "lsb.queues:15"


def test_the_chapters_preference_example() -> None:
    queues = """Begin Queue
QUEUE_NAME      = high_priority
PRIORITY        = 50
PREEMPTION      = PREEMPTIVE[low_q1+2   low_q2    low_q3]
End Queue
""" + "".join(
        f"Begin Queue\nQUEUE_NAME = {name}\nPRIORITY = 1\nEnd Queue\n"
        for name in ("low_q1", "low_q2", "low_q3")
    )
    high = parse(queues, "").queues[0]
    assert [(t.queue, t.preference) for t in high.preemptive_targets] == [
        ("low_q1", 2),
        ("low_q2", 0),
        ("low_q3", 0),
    ]


def test_params_and_queue_guards() -> None:
    params = """Begin Parameters
PREEMPT_FOR = LEAST_RUN_TIME GROUP_MAX mini_job
NO_PREEMPT_RUN_TIME = 50%
NO_PREEMPT_FINISH_TIME = 10
MAX_JOB_PREEMPT = 3
PREEMPT_JOBTYPE = EXCLUSIVE BACKFILL
DEFAULT_QUEUE = normal
MBD_SLEEP_TIME = 10
End Parameters
"""
    queues = """Begin Queue
QUEUE_NAME = normal
RUNLIMIT = 1:30
NO_PREEMPT_RUN_TIME = 20
MAX_JOB_PREEMPT = 1
TERMINATE_WHEN = PREEMPT
JOB_CONTROLS = SUSPEND[brequeue $LSB_JOBID]
r1m = 0.7/2.0
End Queue
"""
    config = parse(queues, params)
    assert config.params == LsfParams(
        preempt_for=frozenset({"LEAST_RUN_TIME", "GROUP_MAX", "MINI_JOB"}),
        no_preempt_run_time=Guard(percent=50),
        no_preempt_finish_time=Guard(minutes=10),
        max_job_preempt=3,
        preempt_jobtype=frozenset({"EXCLUSIVE", "BACKFILL"}),
    )
    normal = config.queues[0]
    assert normal.priority == 1  # LSF's default
    assert normal.run_limit == 90 * 60 and normal.run_limit_default is None
    assert normal.no_preempt_run_time == Guard(minutes=20)
    assert normal.max_job_preempt == 1
    assert normal.terminate_when == frozenset({"PREEMPT"})
    assert normal.job_controls_suspend == "brequeue $LSB_JOBID"
    assert config.inactive["lsb.params DEFAULT_QUEUE"] == "normal"


def test_guard_seconds() -> None:
    assert Guard(minutes=10).seconds(None) == 600
    assert Guard(percent=50).seconds(3600) == 1800
    assert Guard(percent=50).seconds(None) is None


@pytest.mark.parametrize(
    ("queues", "params", "kind", "where", "words"),
    [
        (
            "Begin Queue\nQUEUE_NAME=a\nPRIORTY = 3\nEnd Queue\n",
            "",
            ConfKeyError,
            "lsb.queues:3:1",
            "did you mean 'PRIORITY'",
        ),
        (
            "Begin Queue\nQUEUE_NAME=a\nPREEMPTION = PREMPTIVE\nEnd Queue\n",
            "",
            ConfValueError,
            "lsb.queues:3:14",
            "did you mean 'PREEMPTIVE'",
        ),
        (
            "Begin Queue\nQUEUE_NAME=a\nPREEMPTION = PREEMPTIVE[b+x]\nEnd Queue\n",
            "",
            ConfValueError,
            "lsb.queues:3:26",
            "positive whole number",
        ),
        (
            "Begin Queue\nQUEUE_NAME=a\nPREEMPTION = PREEMPTIVE[zz]\nEnd Queue\n",
            "",
            ConfValueError,
            "lsb.queues:3:25",
            "no queue 'zz'",
        ),
        (
            "Begin Queue\nQUEUE_NAME=a\nPREEMPTION = PREEMPTIVE[a\nEnd Queue\n",
            "",
            ConfValueError,
            "lsb.queues:3:24",
            "unclosed",
        ),
        (
            "Begin Queue\nQUEUE_NAME=a\nPREEMPTION = PREEMPTABLE[a+1]\nEnd Queue\n",
            "",
            ConfValueError,
            "lsb.queues:3:27",
            "no preference",
        ),
        (
            "Begin Queue\nQUEUE_NAME=a\nRUNLIMIT = 1:70\nEnd Queue\n",
            "",
            ConfValueError,
            "lsb.queues:3:12",
            "below 60",
        ),
        (
            "Begin Queue\nQUEUE_NAME=a\nRUNLIMIT = 90 30\nEnd Queue\n",
            "",
            ConfValueError,
            "lsb.queues:3:12",
            "above the maximum",
        ),
        (
            "Begin Queue\nQUEUE_NAME=a\nNO_PREEMPT_RUN_TIME=120%\nEnd Queue\n",
            "",
            ConfValueError,
            "lsb.queues:3:21",
            "percentage",
        ),
        (
            "Begin Queue\nQUEUE_NAME=a\nPRIORITY = -1\nEnd Queue\n",
            "",
            ConfValueError,
            "lsb.queues:3:12",
            "whole number",
        ),
        (
            "Begin Queue\nQUEUE_NAME=a\nPRIORITY = 1\npriority = 2\nEnd Queue\n",
            "",
            ConfValueError,
            "lsb.queues:4:1",
            "set twice",
        ),
        ("QUEUE_NAME=a\n", "", ConfSyntaxError, "lsb.queues:1:1", "outside"),
        ("Begin Queue\nQUEUE_NAME=a\n", "", ConfSyntaxError, "lsb.queues:1", "without End"),
        ("Begin Queue\nEnd Queue\n", "", ConfSyntaxError, "lsb.queues:1", "QUEUE_NAME"),
        ("Begin Queues\n", "", ConfSyntaxError, "lsb.queues:1:7", "Queue sections"),
        ("End Queue\n", "", ConfSyntaxError, "lsb.queues:1:1", "without Begin"),
        (
            "Begin Queue\nQUEUE_NAME=a\nPRIORITY 3\nEnd Queue\n",
            "",
            ConfSyntaxError,
            "lsb.queues:3:1",
            "KEY",
        ),
        (
            "Begin Queue\nQUEUE_NAME=a\nEnd Queue\nBegin Queue\nQUEUE_NAME=a\nEnd Queue\n",
            "",
            ConfValueError,
            "lsb.queues:5:12",
            "defined already",
        ),
        (
            "",
            "Begin Parameters\nPREEMPT_FOR = LEAST_RUNTIME\nEnd Parameters\n",
            ConfValueError,
            "lsb.params:2:15",
            "did you mean 'LEAST_RUN_TIME'",
        ),
        (
            "",
            "Begin Parameters\nMAX_JOB_PREEMT = 3\nEnd Parameters\n",
            ConfKeyError,
            "lsb.params:2:1",
            "did you mean 'MAX_JOB_PREEMPT'",
        ),
        (
            "",
            "Begin Parameters\nEnd Parameters\nBegin Parameters\nEnd Parameters\n",
            ConfSyntaxError,
            "lsb.params:3",
            "one Parameters section",
        ),
    ],
)
def test_bad_input_is_located(
    queues: str, params: str, kind: type[ConfError], where: str, words: str
) -> None:
    error = _error(queues, params)
    assert isinstance(error, kind), str(error)
    assert str(error.location) == where, str(error)
    assert words in str(error)


def test_a_continued_line_reports_the_physical_line() -> None:
    queues = "Begin Queue\nQUEUE_NAME = a\nPREEMPTION = PREEMPTIVE \\\n  PREMPTABLE\nEnd Queue\n"
    error = _error(queues)
    assert str(error.location) == "lsb.queues:4:3"


def test_load_reads_both_files_beside_slurm_conf(tmp_path: Path) -> None:
    (tmp_path / "lsb.queues").write_text(CANONICAL)
    (tmp_path / "lsb.params").write_text("Begin Parameters\nMAX_JOB_PREEMPT = 2\nEnd Parameters\n")
    config = load(tmp_path)
    assert [queue.name for queue in config.queues] == ["high", "medium", "normal", "low"]
    assert config.params.max_job_preempt == 2
    assert config.files == (str(tmp_path / "lsb.queues"), str(tmp_path / "lsb.params"))
    assert load(tmp_path / "nowhere") == LsfConfig()


def test_load_refuses_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "lsb.params")
    with pytest.raises(ConfIncludeError, match="not a regular file"):
        load(tmp_path)


WORDS = st.sampled_from(
    [
        "Begin Queue\n",
        "End Queue\n",
        "Begin Parameters\n",
        "End Parameters\n",
        "QUEUE_NAME = ",
        "PRIORITY = ",
        "PREEMPTION = ",
        "PREEMPTIVE",
        "PREEMPTABLE",
        "[low+2 high]",
        "RUNLIMIT = ",
        "NO_PREEMPT_RUN_TIME = ",
        "PREEMPT_FOR = ",
        "LEAST_RUN_TIME",
        "MAX_JOB_PREEMPT = ",
        "JOB_CONTROLS = SUSPEND[",
        "50%",
        "1:30",
        "low",
        "high",
    ]
)
CHARACTERS = st.sampled_from([*'abQ0123456789=:+[]%"# \t\n\\/', "\r", "\x00", "é"])
TEXT = st.lists(st.one_of(WORDS, CHARACTERS), max_size=60).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queues=TEXT, params=TEXT)
def test_any_input_gives_a_config_or_located_conf_errors(queues: str, params: str) -> None:
    try:
        config = parse(queues, params)
    except ConfError as error:
        for one in error.errors:
            assert one.location is not None
            assert one.location.line >= 1
            str(one)
    else:
        names = {queue.name for queue in config.queues}
        assert len(names) == len(config.queues)
        for queue in config.queues:
            assert {t.queue for t in queue.preemptive_targets} <= names
            assert set(queue.preemptable_by) <= names
