"""preempt/pbs's parsers: sched_config and qmgr.conf in PBS's own syntax, PBS's defaults,
and located errors (file, line, column, "did you mean") for anything PBS would refuse."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plurm.errors import ConfError, ConfIncludeError, ConfKeyError, ConfSyntaxError, ConfValueError

pytest.importorskip("plurm_preempt_pbs")

from plurm_preempt_pbs.config import PbsConfig, load, parse
from plurm_preempt_pbs.values import OrderRange, SoftLimits


def _error(sched: str = "", qmgr: str = "") -> ConfError:
    with pytest.raises(ConfError) as caught:
        parse(sched, qmgr)
    return caught.value


def test_empty_files_give_pbs_defaults() -> None:
    config = parse("", "")
    assert config == PbsConfig()
    assert config.preemptive_sched is True
    assert config.preempt_queue_prio == 150
    assert config.preempt_prio == (frozenset({"express_queue"}), frozenset({"normal_jobs"}))
    assert str(config.preempt_order) == "SCR"
    assert config.preempt_sort == "min_time_since_start"
    assert config.max_preempt_attempts is None
    assert config.sched_preempt_enforce_resumption is False
    assert config.preempt_targets_enable is True


def test_the_seed_articles_configuration() -> None:
    # The Altair article's own steps: sched_config, the qmgr settings and the two queues.
    sched = "preemptive_sched:           true ALL\n"
    qmgr = "\n".join(
        [
            'qmgr -c "set sched preempt_queue_prio = 150"',
            "qmgr -c \"set sched preempt_prio = 'express_queue, normal_jobs'\"",
            'qmgr -c "set sched preempt_order = S"',
            'qmgr -c "set sched preempt_sort = min_time_since_start"',
            "create queue expressq queue_type=execution,started=true,enabled=true,priority=200",
            "create queue normalq queue_type=execution,started=true,enabled=true",
        ]
    )
    config = parse(sched, qmgr)
    assert str(config.preempt_order) == "S"
    assert config.preempt_order.methods(90) == "S"
    expressq, normalq = config.queues
    assert (expressq.name, expressq.priority) == ("expressq", 200)
    assert (normalq.name, normalq.priority) == ("normalq", 0)
    assert config.inactive["qmgr.conf queue expressq queue_type"] == "execution"


def test_preempt_order_percent_ranges() -> None:
    config = parse('preempt_order: "SCR 80 SC 50 S"\n', "")
    order = config.preempt_order
    assert order.ranges == (
        OrderRange("SCR", 100, 81),
        OrderRange("SC", 80, 51),
        OrderRange("S", 50, 0),
    )
    # The reference's worked example: walltime 10 h, after 1 h, 3 h and 6 h.
    assert [order.methods(p) for p in (90, 70, 40)] == ["SCR", "SC", "S"]
    assert order.methods(81) == "SCR" and order.methods(80) == "SC"
    assert order.methods(None) == "SCR"  # no walltime: the first range
    assert str(order) == "SCR 80 SC 50 S"


def test_preempt_prio_levels_joined_with_plus() -> None:
    config = parse(
        'preempt_prio: "express_queue, normal_jobs, server_softlimits+queue_softlimits"\n', ""
    )
    assert config.preempt_prio == (
        frozenset({"express_queue"}),
        frozenset({"normal_jobs"}),
        frozenset({"server_softlimits", "queue_softlimits"}),
    )


def test_soft_limits_on_server_and_queues() -> None:
    qmgr = "\n".join(
        [
            'set server max_run_soft = "[o:PBS_ALL=10], [u:PBS_GENERIC=2]"',
            "set server max_run_soft += [u:alice=5]",
            "set server max_group_run_soft = 4",
            "set queue workq max_run_soft = [g:PBS_GENERIC=3]",
            "set queue workq max_run_soft += [p:proj=1]",
        ]
    )
    config = parse("", qmgr)
    assert config.server_max_run_soft == SoftLimits(
        overall=10, generic_user=2, users={"alice": 5}, generic_group=4
    )
    assert config.server_max_run_soft.user_limit("alice") == 5
    assert config.server_max_run_soft.user_limit("bob") == 2
    workq = config.queue("workq")
    assert workq is not None
    assert workq.max_run_soft == SoftLimits(generic_group=3, projects={"proj": 1})
    assert workq.max_run_soft.project_limit("proj") == 1
    assert workq.max_run_soft.project_limit(None) is None


def test_default_preempt_targets_of_queues_and_server() -> None:
    config = parse(
        "",
        'set queue express resources_default.preempt_targets = "queue=normal,queue=scav"\n'
        "set server resources_default.preempt_targets = NONE\n",
    )
    express = config.queue("express")
    assert express is not None
    assert express.default_preempt_targets == "queue=normal,queue=scav"
    assert config.server_default_preempt_targets == "NONE"


def test_qmgr_wins_over_sched_config_and_unset_restores() -> None:
    sched = "preempt_queue_prio: 100\nmax_preempt_attempts: 4\n"
    qmgr = "set sched preempt_queue_prio = 120\nunset sched max_preempt_attempts, preempt_sort\n"
    config = parse(sched, qmgr)
    assert config.preempt_queue_prio == 120
    assert config.max_preempt_attempts is None
    assert config.preempt_sort is None  # unset: the longest-running job first


def test_preempt_targets_enable_on_server_or_sched() -> None:
    assert parse("", "set server preempt_targets_enable = false").preempt_targets_enable is False
    assert parse("", "set sched preempt_targets_enable = f").preempt_targets_enable is False
    assert parse("", "s s preempt_targets_enable=True").preempt_targets_enable is True


def test_named_server_and_abbreviations() -> None:
    config = parse("", "s server pbs01 scheduling = True\ns q q1 Priority=-5\n")
    assert config.queue("q1") is not None and config.queue("q1").priority == -5  # type: ignore[union-attr]


def test_print_server_output_loads() -> None:
    qmgr = """#
# Create queues and set their attributes.
#
create queue workq
set queue workq queue_type = Execution
set queue workq resources_default.walltime = 01:00:00
set queue workq enabled = True
set queue workq started = True
set server scheduling = True
set server default_queue = workq
set server log_events = 511
set server mail_from = adm
set server query_other_jobs = True
set server resources_default.ncpus = 1
set server default_chunk.ncpus = 1
set server scheduler_iteration = 600
set server flatuid = True
set server resv_enable = True
set server node_fail_requeue = 310
set server max_array_size = 10000
set server pbs_license_min = 0
set server pbs_license_max = 2147483647
set server pbs_license_linger_time = 31536000
set server eligible_time_enable = False
set server max_concurrent_provision = 5
set server max_job_sequence_id = 9999999
"""
    config = parse("", qmgr)
    assert config.queue("workq") is not None
    assert config.inactive["qmgr.conf server scheduling"] == "True"


def test_a_real_sched_config_loads() -> None:
    sched = """# PBS scheduler configuration
round_robin: False all
by_queue: True prime
by_queue: True non_prime
strict_ordering: false ALL
help_starving_jobs: true ALL
max_starve: 24:00:00
backfill_prime: false ALL
prime_exempt_anytime_queues: false
primetime_prefix: p_
nonprimetime_prefix: np_
node_sort_key: "sort_priority HIGH" ALL
provision_policy: "aggressive_provision"
sort_queues: true ALL
resources: "ncpus, mem, arch, host, vnode, aoe, eoe"
load_balancing: false ALL
smp_cluster_dist: pack
fair_share: false ALL
fairshare_usage_res: cput
fairshare_entity: euser
unknown_shares: 10
fairshare_decay_time: 24:00:00
fairshare_decay_factor: 0.5
preemptive_sched: true ALL
preempt_queue_prio:     150
preempt_prio: "express_queue, normal_jobs"
preempt_order: "SCR"
preempt_sort: min_time_since_start
dedicated_prefix: ded
log_filter: 3328
"""
    assert parse(sched, "") == PbsConfig()


@pytest.mark.parametrize(
    ("sched", "qmgr", "kind", "where", "words"),
    [
        (
            "preempt_ordr: SCR\n",
            "",
            ConfKeyError,
            "sched_config:1:1",
            "did you mean 'preempt_order'",
        ),
        (
            'preempt_order: "SCX"\n',
            "",
            ConfValueError,
            "sched_config:1:19",
            "'X' is not a preemption",
        ),
        ('preempt_order: "SCR 80 SC 90 S"\n', "", ConfValueError, "sched_config:1:27", "below"),
        ('preempt_order: "SCR 80"\n', "", ConfValueError, "sched_config:1:21", "followed by"),
        ('preempt_order: "SS"\n', "", ConfValueError, "sched_config:1:17", "twice"),
        (
            'preempt_prio: "express_queue, fairshare"\n',
            "",
            ConfValueError,
            "sched_config:1:31",
            "Plurm models no fairshare",
        ),
        (
            'preempt_prio: "express_queue, normal_job"\n',
            "",
            ConfValueError,
            "sched_config:1:31",
            "did you mean 'normal_jobs'",
        ),
        (
            'preempt_prio: "express_queue, starving_jobs, normal_jobs"\n',
            "",
            ConfValueError,
            "sched_config:1:31",
            "starving jobs",
        ),
        ("preemptive_sched: maybe ALL\n", "", ConfValueError, "sched_config:1:19", "boolean"),
        ("preemptive_sched: true prime\n", "", ConfValueError, "sched_config:1:24", "prime time"),
        ("preempt_sort: max_time\n", "", ConfValueError, "sched_config:1:15", "preempt_sort"),
        ("preempt_queue_prio: high\n", "", ConfValueError, "sched_config:1:21", "whole number"),
        ('preempt_prio: "express_queue\n', "", ConfSyntaxError, "sched_config:1:15", "unclosed"),
        ("preempt_order: SCR all extra\n", "", ConfSyntaxError, "sched_config:1:20", "quotes"),
        ("just words\n", "", ConfSyntaxError, "sched_config:1:1", "name: value"),
        ("", "set queue q priorty = 3", ConfKeyError, "qmgr.conf:1:13", "'priority'"),
        ("", "set queue q priority = 3000", ConfValueError, "qmgr.conf:1:24", "-1024 to 1024"),
        ("", "set sched preempt_prio = fairshare", ConfValueError, "qmgr.conf:1:26", "fairshare"),
        ("", "delete queue q", ConfSyntaxError, "qmgr.conf:1:1", "create, set and unset"),
        ("", "sett queue q priority = 1", ConfSyntaxError, "qmgr.conf:1:1", "unknown qmgr command"),
        ("", "set queu q priority = 1", ConfSyntaxError, "qmgr.conf:1:5", "unknown qmgr object"),
        ("", "set queue", ConfSyntaxError, "qmgr.conf:1:10", "queue's name"),
        ("", "set queue q priority 3", ConfSyntaxError, "qmgr.conf:1:22", "'='"),
        ("", "set queue q priority = 3 started = t", ConfSyntaxError, "qmgr.conf:1:26", "','"),
        ("", "set queue q priority = '3", ConfSyntaxError, "qmgr.conf:1:24", "unclosed"),
        ("", "set queue q max_run_soft = [u:x=y]", ConfValueError, "qmgr.conf:1:33", "whole"),
        ("", "set queue q max_run_soft = u:x=1", ConfValueError, "qmgr.conf:1:28", "entry"),
        ("", "set server max_run_soft = [o:bob=1]", ConfValueError, "qmgr.conf:1:27", "PBS_ALL"),
        ("", "set server max_run_res_soft.ncpus = 3", ConfValueError, "qmgr.conf:1:37", "soft"),
        ("", "create server", ConfSyntaxError, "qmgr.conf:1:8", "exists already"),
        (
            "",
            "set queue q resources_default.preempt_targets += queue=x",
            ConfValueError,
            "qmgr.conf:1:50",
            "NONE",
        ),
        ("", 'qmgr -c "set queue q priority = abc"', ConfValueError, "qmgr.conf:1:33", "priority"),
    ],
)
def test_bad_input_is_located(
    sched: str, qmgr: str, kind: type[ConfError], where: str, words: str
) -> None:
    error = _error(sched, qmgr)
    assert isinstance(error, kind), str(error)
    assert str(error.location) == where, str(error)
    assert words in str(error)
    assert "^" in str(error)


def test_every_error_is_reported_at_once() -> None:
    error = _error("preempt_ordr: S\npreempt_queue_prio: x\n", "set queue q priorty = 1\n")
    assert [str(e.location) for e in error.errors] == [
        "sched_config:1:1",
        "sched_config:2:21",
        "qmgr.conf:1:13",
    ]


def test_load_reads_both_files_beside_slurm_conf(tmp_path: Path) -> None:
    (tmp_path / "sched_config").write_text('preempt_order: "R 50 S"\n')
    (tmp_path / "qmgr.conf").write_text("set queue express priority = 200\n")
    config = load(tmp_path)
    assert str(config.preempt_order) == "R 50 S"
    assert config.queue("express") is not None
    assert config.files == (str(tmp_path / "sched_config"), str(tmp_path / "qmgr.conf"))
    assert load(tmp_path / "nowhere") == PbsConfig()


def test_load_names_the_file_in_errors(tmp_path: Path) -> None:
    (tmp_path / "qmgr.conf").write_text("# queues\nset queue q priorty = 1\n")
    with pytest.raises(ConfKeyError) as caught:
        load(tmp_path)
    assert str(caught.value.location) == f"{tmp_path / 'qmgr.conf'}:2:13"


def test_load_refuses_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "sched_config")
    with pytest.raises(ConfIncludeError, match="not a regular file"):
        load(tmp_path)


WORDS = st.sampled_from(
    [
        "preempt_order",
        "preempt_prio",
        "preemptive_sched",
        "preempt_queue_prio",
        "set",
        "unset",
        "create",
        "queue",
        "server",
        "sched",
        "priority",
        "max_run_soft",
        "qmgr -c",
        "[u:PBS_GENERIC=2]",
        "[o:PBS_ALL=",
        '"SCR 80 SC 50 S"',
        "express_queue+normal_jobs",
        "ALL",
        "prime",
        "true",
    ]
)
CHARACTERS = st.sampled_from([*"abqSCRD0123456789=:,+[]\"'# \t\n.-", "\r", "\x00", "é"])
TEXT = st.lists(st.one_of(WORDS, CHARACTERS), max_size=60).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sched=TEXT, qmgr=TEXT)
def test_any_input_gives_a_config_or_located_conf_errors(sched: str, qmgr: str) -> None:
    try:
        config = parse(sched, qmgr)
    except ConfError as error:
        for one in error.errors:
            assert one.location is not None
            assert one.location.line >= 1
            str(one)
    else:
        assert config.preempt_order.ranges
        for percent in (None, 0, 50, 100):
            assert set(config.preempt_order.methods(percent)) <= set("SCRD")
