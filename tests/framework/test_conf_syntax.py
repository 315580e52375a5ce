"""slurm.conf's language, rule by rule: positions, includes, records, defaults, values."""

from __future__ import annotations

from pathlib import Path

import pytest

from plurm import conf
from plurm.conf import OverSubscribe, OverSubscribeKind, PreemptBase, PreemptMode
from plurm.errors import (
    ConfError,
    ConfErrorGroup,
    ConfIncludeError,
    ConfKeyError,
    ConfSyntaxError,
    ConfValueError,
)
from plurm.params import check_options

HEAD = "ClusterName=test\nSlurmctldHost=head\n"
NODES = "NodeName=n[1-3] CPUs=2\n"


def load(tmp_path: Path, text: str, **files: str) -> conf.SlurmConfig:
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    return conf.load(path)


def error_of(tmp_path: Path, text: str, **files: str) -> ConfError:
    with pytest.raises(ConfError) as caught:
        load(tmp_path, text, **files)
    return caught.value


# ----------------------------------------------------------------------------- positions


def test_error_names_file_line_column_and_shows_a_caret(tmp_path: Path) -> None:
    error = error_of(tmp_path, HEAD + "KillWait=soon\n")
    assert isinstance(error, ConfValueError)
    assert error.location is not None
    assert (error.location.line, error.location.column) == (3, 10)
    assert str(error) == (
        f'{tmp_path / "slurm.conf"}:3:10: KillWait=soon: "soon" is not a valid number\n'
        "    KillWait=soon\n"
        "             ^"
    )


def test_position_survives_continuation_lines(tmp_path: Path) -> None:
    text = HEAD + NODES + "PartitionName=p Nodes=n1 \\\n  MaxTime=1 \\\n  Bogus=2\n"
    error = error_of(tmp_path, text)
    assert isinstance(error, ConfKeyError)
    assert error.location is not None
    assert (error.location.line, error.location.column) == (6, 3)
    assert error.location.text == "  Bogus=2"


def test_continuation_joins_without_a_space(tmp_path: Path) -> None:
    config = load(tmp_path, HEAD + "NodeName=n[1-\\\n3]\nPartitionName=p Nodes=n\\\n[1-2]\n")
    assert config.node_names == ("n1", "n2", "n3")
    assert config.partition("p").nodes == ("n1", "n2")


def test_comments_and_escaped_hash(tmp_path: Path) -> None:
    config = load(tmp_path, HEAD + NODES + "PartitionName=p Nodes=ALL QOS=a\\#b # real comment\n")
    assert config.partition("p").qos == "a#b"


def test_every_bad_line_is_reported_in_one_pass(tmp_path: Path) -> None:
    error = error_of(tmp_path, HEAD + "Bogus=1\nKillWait=x\nA B\n")
    assert isinstance(error, ConfErrorGroup)
    assert [e.location.line for e in error.errors if e.location] == [3, 4, 5]
    assert {type(e) for e in error.errors} == {ConfKeyError, ConfValueError, ConfSyntaxError}


def test_empty_value_needs_quotes(tmp_path: Path) -> None:
    error = error_of(tmp_path, HEAD + "JobCompLoc=\n")
    assert isinstance(error, ConfSyntaxError)
    assert 'Key=""' in error.message
    load(tmp_path, HEAD + 'JobCompLoc=""\n')


def test_one_global_key_per_line(tmp_path: Path) -> None:
    error = error_of(tmp_path, HEAD + "KillWait=5 MinJobAge=10\n")
    assert isinstance(error, ConfSyntaxError)
    assert error.location is not None and error.location.column == 12


def test_spaces_around_equals_and_quoted_values(tmp_path: Path) -> None:
    config = load(tmp_path, HEAD + 'SelectTypeParameters    = CR_Memory\nJobCompLoc="a b"\n')
    assert str(config.select_type_parameters) == "CR_Memory"
    assert config.inactive["JobCompLoc"] == "a b"


def test_keys_are_case_insensitive_but_names_are_not(tmp_path: Path) -> None:
    config = load(
        tmp_path, "clustername=test\nSLURMCTLDHOST=h\nnodename=N1\npartitionname=P nodes=N1\n"
    )
    assert config.node_names == ("N1",)
    assert config.partition("P").nodes == ("N1",)


# ----------------------------------------------------------------------------- keys


def test_unknown_key_suggests_the_closest(tmp_path: Path) -> None:
    error = error_of(tmp_path, HEAD + "PreemtMode=CANCEL\n")
    assert isinstance(error, ConfKeyError)
    assert error.suggestion == "PreemptMode"


def test_unknown_sub_key_names_its_record(tmp_path: Path) -> None:
    error = error_of(tmp_path, HEAD + "NodeName=n1 CPU=4\n")
    assert isinstance(error, ConfKeyError)
    assert (error.record, error.suggestion) == ("NodeName", "CPUs")


def test_inactive_keys_are_reported_once_each(tmp_path: Path) -> None:
    config = load(tmp_path, HEAD + NODES + "SlurmctldTimeout=300\nSlurmctldTimeout=200\n")
    assert config.inactive == {"SlurmctldTimeout": "200"}
    assert "KillWait" not in config.inactive


def test_unused_scheduler_options_are_reported(tmp_path: Path) -> None:
    config = load(
        tmp_path, HEAD + "SchedulerParameters=bf_window=60,nohold_on_prolog_fail,bf_busy_nodes\n"
    )
    assert config.scheduler_parameters.bf_window == 60
    assert config.inactive["SchedulerParameters"] == "nohold_on_prolog_fail,bf_busy_nodes"


def test_down_nodes_lines(tmp_path: Path) -> None:
    config = load(
        tmp_path, HEAD + NODES + "DownNodes=n[1-2] State=DRAIN Reason=maint\nDownNodes=n3\n"
    )
    assert config.node_state("n1") == ("DRAIN", "maint")
    assert config.node_state("n3") == ("DOWN", "Set in slurm.conf")


def test_duplicate_scalar_warns_and_the_last_wins(tmp_path: Path) -> None:
    config = load(tmp_path, HEAD + "KillWait=5\nKillWait=7\n")
    assert config.kill_wait == 7
    assert any("specified more than once" in str(n) for n in config.notices)


def test_removed_key_gives_slurms_message(tmp_path: Path) -> None:
    error = error_of(tmp_path, HEAD + "AccountingStorageLoc=/x\n")
    assert "has been removed" in error.message


def test_missing_clustername_and_controller_are_reported_against_the_file(tmp_path: Path) -> None:
    error = error_of(tmp_path, "NodeName=n1\n")
    messages = [e.message for e in error.errors]
    assert messages == ["ClusterName needs to be specified", "No SlurmctldHost defined."]
    assert all(e.location is not None and e.location.line == 0 for e in error.errors)


# ----------------------------------------------------------------------------- includes


def test_include_any_case_relative_to_the_including_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.conf").write_text("include b.conf\n")
    (tmp_path / "sub" / "b.conf").write_text(NODES)
    config = load(tmp_path, HEAD + "INCLUDE sub/a.conf\n")
    assert len(config.node_names) == 3
    assert [Path(f).name for f in config.files] == ["slurm.conf", "a.conf", "b.conf"]


def test_include_percent_c_is_the_lower_case_cluster_name(tmp_path: Path) -> None:
    config = load(
        tmp_path, "ClusterName=Big\nSlurmctldHost=h\nInclude %c.conf\n", **{"big.conf": NODES}
    )
    assert config.cluster_name == "big" and len(config.node_names) == 3


def test_missing_include_names_the_chain(tmp_path: Path) -> None:
    error = error_of(tmp_path, HEAD + "Include a.conf\n", **{"a.conf": "Include nowhere.conf\n"})
    assert isinstance(error, ConfIncludeError)
    assert error.location is not None and error.location.file.endswith("a.conf")
    assert [Path(p).name for p in error.chain] == ["slurm.conf", "a.conf"]
    assert "No such file" in error.message


def test_include_cycle_is_an_error(tmp_path: Path) -> None:
    error = error_of(
        tmp_path,
        HEAD + "Include a.conf\n",
        **{"a.conf": "Include b.conf\n", "b.conf": "Include a.conf\n"},
    )
    assert isinstance(error, ConfIncludeError)
    assert "circular" in error.message
    assert [Path(p).name for p in error.chain] == ["slurm.conf", "a.conf", "b.conf"]


def test_include_must_start_in_column_one(tmp_path: Path) -> None:
    error = error_of(tmp_path, HEAD + "  Include a.conf\n", **{"a.conf": NODES})
    assert isinstance(error, ConfSyntaxError)


# ----------------------------------------------------------------------------- records


def test_default_records_merge_and_apply_to_later_records_only(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        HEAD
        + "NodeName=DEFAULT CPUs=4 RealMemory=100\n"
        + "NodeName=a1\n"
        + "NodeName=DEFAULT Weight=5\n"
        + "NodeName=a2 CPUs=2\n"
        + "PartitionName=p Nodes=ALL\n",
    )
    first, second = config.nodes
    assert (first.cpus, first.real_memory, first.weight) == (4, 100, 1)
    assert (second.cpus, second.real_memory, second.weight) == (2, 100, 5)


def test_nodes_all_nodesets_and_table_order(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        HEAD
        + "NodeName=b[1-2] Features=big\nNodeName=s[1-3]\n"
        + "NodeSet=bigs Feature=big\n"
        + "PartitionName=all Nodes=ALL\nPartitionName=mix Nodes=s3,bigs,s1\n",
    )
    assert config.partition("all").nodes == ("b1", "b2", "s1", "s2", "s3")
    assert config.partition("mix").nodes == ("b1", "b2", "s1", "s3")


def test_duplicate_node_and_partition_are_errors(tmp_path: Path) -> None:
    error = error_of(
        tmp_path, HEAD + "NodeName=n[1-2]\nNodeName=n2\nPartitionName=p\nPartitionName=p\n"
    )
    assert [e.message for e in error.errors] == [
        "Duplicated NodeName n2",
        "Duplicated PartitionName p",
    ]


def test_legacy_aliases(tmp_path: Path) -> None:
    config = load(
        tmp_path, HEAD + "NodeName=n1 Procs=8\nPartitionName=p Nodes=n1 Shared=FORCE:2 Priority=3\n"
    )
    part = config.partition("p")
    assert config.node("n1").cpus == 8
    assert part.oversubscribe == OverSubscribe(OverSubscribeKind.FORCE, 2)
    assert (part.priority_tier, part.priority_job_factor) == (3, 3)


def test_topology_is_inferred_both_ways(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        HEAD
        + "NodeName=a Sockets=2 CoresPerSocket=4 ThreadsPerCore=2\n"
        + "NodeName=b CPUs=8 ThreadsPerCore=2\n",
    )
    a, b = config.node("a"), config.node("b")
    assert a.cpus == 16
    assert (b.sockets, b.cores_per_socket, b.threads_per_core) == (4, 1, 2)


# ----------------------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("30", 30),
        ("1:30", 2),
        ("2:00:00", 120),
        ("1-0", 1440),
        ("1-2:3", 1563),
        ("1-2:3:4", 1564),
        ("INFINITE", None),
        ("unlimited", None),
        ("-1", None),
        ("1:60:15", 121),
    ],
)
def test_time_strings(tmp_path: Path, text: str, minutes: int | None) -> None:
    config = load(tmp_path, HEAD + NODES + f"PartitionName=p Nodes=ALL MaxTime={text}\n")
    assert config.partition("p").max_time == minutes


def test_integers_follow_c(tmp_path: Path) -> None:
    config = load(tmp_path, HEAD + "NodeName=n1 CPUs=010 RealMemory=2k\n")
    assert (config.node("n1").cpus, config.node("n1").real_memory) == (8, 2048)
    assert isinstance(error_of(tmp_path, HEAD + "NodeName=n1 CPUs=09\n"), ConfValueError)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("SUSPEND,GANG", PreemptMode(PreemptBase.SUSPEND, gang=True)),
        ("requeue", PreemptMode(PreemptBase.REQUEUE)),
        ("CANCEL,WITHIN", PreemptMode(PreemptBase.CANCEL, within=True)),
    ],
)
def test_preempt_modes(tmp_path: Path, mode: str, expected: PreemptMode) -> None:
    config = load(tmp_path, HEAD + f"PreemptType=preempt/qos\nPreemptMode={mode}\n")
    assert config.preempt_mode == expected


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND\n", "requires GANG"),
        ("PreemptMode=CANCEL\n", "values incompatible"),
        ("PreemptType=preempt/qos\nPreemptMode=OFF\n", "values incompatible"),
        ("PreemptType=preempt/qos\nPreemptMode=CANCEL,REQUEUE\n", "invalid"),
        ("PreemptType=preempt/qos\nPreemptMode=SUSPEND,GANG,WITHIN\n", "invalid"),
    ],
)
def test_preempt_mode_validity(tmp_path: Path, lines: str, message: str) -> None:
    assert message in str(error_of(tmp_path, HEAD + lines))


def test_preempt_parameters_and_legacy_spellings(tmp_path: Path) -> None:
    legacy = load(
        tmp_path, HEAD + "SchedulerParameters=preempt_youngest_first,preempt_reorder_count=3\n"
    )
    assert legacy.preempt_parameters.youngest_first and legacy.preempt_parameters.reorder_count == 3
    modern = load(tmp_path, HEAD + "PreemptParameters=strict_order,min_exempt_priority=5\n")
    assert modern.preempt_parameters.strict_order
    assert modern.preempt_parameters.min_exempt_priority == 5
    # An option Slurm does not know waits for the plugins, which may declare it
    # (plurm.params): with none declaring it, it is an error at its column.
    unknown = load(tmp_path, HEAD + "PreemptParameters=strict_order,fastest\n")
    errors = check_options(unknown, {})
    assert len(errors) == 1 and "unknown option fastest" in str(errors[0])
    assert errors[0].location is not None and errors[0].location.column == 32


def test_select_type_parameters(tmp_path: Path) -> None:
    config = load(tmp_path, HEAD + "SelectTypeParameters=cr_core_memory,CR_LLN\n")
    assert str(config.select_type_parameters) == "CR_Core_Memory,CR_LLN"
    assert "Bad SelectTypeParameter" in str(
        error_of(tmp_path, HEAD + "SelectTypeParameters=CR_CPU,CR_Core\n")
    )


# ----------------------------------------------------------------------------- qos.conf


def test_qos_conf_beside_slurm_conf(tmp_path: Path) -> None:
    qos = (
        "QOS=low Priority=10 PreemptMode=requeue GraceTime=60\n"
        "QOS=high Priority=100 Preempt=low,normal PreemptExemptTime=5:00 Flags=OverPartQOS\n"
    )
    config = load(tmp_path, HEAD + NODES, **{"qos.conf": qos})
    by_name = {q.name: q for q in config.qos}
    assert set(by_name) == {"low", "high", "normal"}
    assert by_name["low"].preempt_mode == PreemptMode(PreemptBase.REQUEUE)
    assert by_name["low"].grace_time == 60
    assert by_name["high"].preempt == ("low", "normal")
    assert by_name["high"].preempt_exempt_time == 300
    assert by_name["high"].flags == frozenset({"OverPartQOS"})
    assert by_name["normal"].preempt_mode is None


def test_qos_conf_errors_have_positions(tmp_path: Path) -> None:
    error = error_of(
        tmp_path, HEAD + NODES, **{"qos.conf": "QOS=a Preempt=ghost\nQOS=b Priorty=1\n"}
    )
    messages = {e.message.split(";")[0] for e in error.errors}
    assert "QOS a: Preempt names unknown QOS 'ghost'" in messages
    keyed = [e for e in error.errors if isinstance(e, ConfKeyError)]
    assert keyed and keyed[0].suggestion == "Priority"
    assert keyed[0].location is not None and keyed[0].location.line == 2
