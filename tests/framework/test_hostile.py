"""Issue 31, "Hostile input": one test per class of failure, with the case the issue names
and the exact error text (Slurm's where it has one)."""

from __future__ import annotations

import gzip
import io
import json
import os
import shlex
from pathlib import Path

import pytest

from plurm import conf, hostlist
from plurm.cli.main import main
from plurm.conf.build import MAX_NODES
from plurm.errors import (
    CompareError,
    ConfError,
    HostlistError,
    InputFileError,
    NumberError,
    TraceError,
)
from plurm.inputfile import check_output_dir, gunzip, read_input
from plurm.numbers import INT32_MAX, parse_float, parse_time_limit, parse_uint
from plurm.sim.compare import parse_run_option
from plurm.sim.session import Simulation, parse_session
from plurm.sim.tomlfile import MAX_TOML_DEPTH, read_toml
from plurm.sim.trace import TraceMapping
from plurm.workload import parse_swf, read_swf

BASE = """\
ClusterName=c
SlurmctldHost=h
NodeName=n[1-3] CPUs=2 RealMemory=1000
PartitionName=p Nodes=n[1-3] Default=YES
"""

SWF = "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1\n"


def _run(argv: list[str], tmp_path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        status = main(argv, out, err)
    except SystemExit as exit_:
        status = int(exit_.code or 0)
    return status, out.getvalue(), err.getvalue()


def _session(tmp_path: Path, lines: str, conf_text: str = BASE) -> str:
    config = conf.parse_text(conf_text, path=tmp_path / "slurm.conf")
    simulation = Simulation(config)
    return simulation.run_lines(parse_session("s", lines), tmp_path)


# ------------------------------------------------------------------------- numbers and text


def test_numbers_are_ascii_length_capped_and_in_range() -> None:
    with pytest.raises(NumberError, match="is not a number"):
        parse_uint("٣")
    with pytest.raises(NumberError, match="too long"):
        parse_uint("9" * 5000)
    with pytest.raises(NumberError, match="out of range"):
        parse_uint(str(INT32_MAX + 1), maximum=INT32_MAX)
    for text in ("nan", "inf", "-inf", "1e999", "٣"):
        with pytest.raises(NumberError):
            parse_float(text)
    with pytest.raises(NumberError, match="out of range"):
        parse_time_limit("99999999999999")
    assert parse_time_limit("1-00:00:01") == 1441


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("sbatch -N ٣ --wrap true", 'sbatch: error: "٣" is not a valid node count'),
        ("sbatch -n 2147483648 --wrap true", 'Invalid numeric value "2147483648" for --ntasks.'),
        ("sbatch -c 99999999999 --wrap true", 'Invalid numeric value "99999999999"'),
        ("sbatch -t 99999999999999 --wrap true", "sbatch: error: Invalid --time specification"),
        (
            "sbatch --begin=25:99 --wrap true",
            "Invalid time specification (pos=0): 25:99\nsbatch: error: Invalid --begin",
        ),
        ("sbatch --begin=now+999999999999weeks --wrap true", "Invalid --begin specification"),
        (
            "sbatch --sim-runtime=nan --wrap true",
            "sbatch: error: Invalid --sim-runtime specification: nan",
        ),
        ("sbatch --sim-runtime=inf --wrap true", "Invalid --sim-runtime specification: inf"),
        ("scancel ²", "scancel: error: Invalid job id ²"),
        ("squeue -o %.99999999999i", "squeue: error: field width 99999999999 is above 4096"),
        ("sinfo -o %.99999999999P", "sinfo: error: field width 99999999999 is above 4096"),
    ],
)
def test_command_numbers(tmp_path: Path, line: str, expected: str) -> None:
    transcript = _session(tmp_path, f"0 {line}\n")
    assert expected in transcript
    assert "Submitted" not in transcript


def test_slurm_conf_numbers_past_python_int_limit_are_conf_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfError) as caught:
        conf.parse_text(BASE + "KillWait=" + "9" * 5000 + "\n", path=tmp_path / "slurm.conf")
    assert "KillWait=" in str(caught.value) and "is not a valid number" in str(caught.value)
    with pytest.raises(ConfError, match="number too large in range"):
        conf.parse_text(
            BASE.replace("n[1-3] CPUs", "m[1-" + "9" * 5000 + "] CPUs"),
            path=tmp_path / "slurm.conf",
        )


def test_node_topology_past_16_bits_is_refused(tmp_path: Path) -> None:
    text = BASE.replace("CPUs=2", "Sockets=256 CoresPerSocket=256 ThreadsPerCore=2")
    with pytest.raises(ConfError) as caught:
        conf.parse_text(text, path=tmp_path / "slurm.conf")
    assert "131072 CPUs (Sockets*CoresPerSocket*ThreadsPerCore) is more than a node may have " in (
        str(caught.value)
    )


def test_session_time_must_be_finite_ascii(tmp_path: Path) -> None:
    from plurm.sim.session import SessionError

    for word in ("nan", "inf", "٣", "1e999"):
        with pytest.raises(SessionError, match="a line starts with the time in seconds"):
            parse_session("s", f"{word} squeue\n")
    with pytest.raises(SessionError, match=r"past the last time a session may name \(1e\+07 s\)"):
        parse_session("s", "1e12 squeue\n")


def test_swf_field_past_32_bits(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match=r"field 5 .*: 99999999999 is larger than 4294967295"):
        parse_swf(SWF.replace(" 10 1 ", " 10 99999999999 ", 1), "t.swf")


# ------------------------------------------------------------------------- files


def test_special_files_are_refused_everywhere(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match=r"^is not a regular file \(a FIFO\)$"):
        read_input(fifo, limit=10)
    with pytest.raises(ConfError, match=r"cannot read .*fifo: is not a regular file \(a FIFO\)"):
        conf.load(fifo)
    with pytest.raises(TraceError, match=r"cannot read: is not a regular file \(a FIFO\)"):
        read_swf(fifo)
    with pytest.raises(TraceError, match=r"cannot read the mapping: is not a regular file"):
        read_toml(fifo, "mapping", TraceError)
    with pytest.raises(InputFileError, match=r"is not a regular file \(a device\)"):
        read_input("/dev/zero", limit=10)
    (tmp_path / "slurm.conf").write_text(BASE)
    status, _, err = _run(["simulate", "--conf", str(tmp_path / "slurm.conf"), str(fifo)], tmp_path)
    assert status == 1 and "is not a regular file (a FIFO)" in err
    transcript = _session(tmp_path, f"0 sbatch {fifo}\n")
    assert f"sbatch: error: Unable to open file {fifo}" in transcript


def test_size_cap(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * 101)
    with pytest.raises(InputFileError, match=r"^is larger than the cap of 100 bytes$"):
        read_input(big, limit=100)
    assert read_input(big, limit=101) == b"x" * 101


def test_gzip_bomb_stops_at_the_cap(tmp_path: Path) -> None:
    bomb = gzip.compress(b"0" * (8 << 20))
    assert len(bomb) < 20_000
    with pytest.raises(InputFileError, match=f"inflates past the cap of {1 << 20} bytes"):
        gunzip(bomb, limit=1 << 20)
    path = tmp_path / "t.swf.gz"
    path.write_bytes(bomb)
    with pytest.raises(TraceError, match="cannot read: inflates past the cap of 1048576 bytes"):
        read_swf(path, limit=1 << 20)
    two = gzip.compress(b"ab") + gzip.compress(b"cd")
    assert gunzip(two, limit=10) == b"abcd"
    with pytest.raises(EOFError):
        gunzip(gzip.compress(b"abc" * 1000)[:-12], limit=10_000)


def test_non_utf8_script_and_session_are_read_as_bytes(tmp_path: Path) -> None:
    script = tmp_path / "job.sh"
    script.write_bytes(b"#!/bin/sh\n# caf\xe9\nsleep 5\n")
    assert "Submitted batch job 1" in _session(tmp_path, f"0 sbatch {script}\n")
    session = tmp_path / "session"
    session.write_bytes(b"0 sinfo # caf\xe9\n")
    (tmp_path / "slurm.conf").write_text(BASE)
    status, out, _ = _run(
        ["simulate", "--conf", str(tmp_path / "slurm.conf"), str(session)], tmp_path
    )
    assert status == 0 and "PARTITION" in out


def test_out_that_is_a_file_fails_before_the_replay(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(BASE)
    (tmp_path / "t.swf").write_text(SWF)
    blocker = tmp_path / "out"
    blocker.write_text("")
    status, _out, err = _run(
        [
            "simulate", "--conf", str(tmp_path / "slurm.conf"), "--trace", str(tmp_path / "t.swf"),
            "--out", str(blocker / "sub"), "--quiet",
        ],
        tmp_path,
    )  # fmt: skip
    assert status == 1
    assert err == f"plurm: error: {blocker / 'sub'}: {blocker} is not a directory\n"
    with pytest.raises(InputFileError):
        check_output_dir(blocker)


# ------------------------------------------------------------------------- amplification


def test_include_cycle_spelled_two_ways(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.conf").write_text("Include ./../d/b.conf\n")
    (d / "b.conf").write_text("Include ../d/a.conf\n")
    with pytest.raises(ConfError) as caught:
        conf.parse_text(BASE + "Include d/a.conf\n", path=tmp_path / "slurm.conf")
    assert "Include ../d/a.conf: circular include" in str(caught.value)


def test_include_budget(tmp_path: Path) -> None:
    for level in range(24):
        (tmp_path / f"f{level}.conf").write_text(f"Include f{level + 1}.conf\n" * 2)
    (tmp_path / "f24.conf").write_text("")
    with pytest.raises(ConfError) as caught:
        conf.parse_text(BASE + "Include f0.conf\n", path=tmp_path / "slurm.conf")
    assert "more than 1024 includes in one configuration" in str(caught.value)


def test_total_node_cap_across_lines(tmp_path: Path) -> None:
    lines = "".join(f"NodeName=x{i}[0-1023][0-1023] CPUs=1\n" for i in range(2))
    with pytest.raises(ConfError) as caught:
        conf.parse_text(BASE + lines, path=tmp_path / "slurm.conf")
    assert f"more than {MAX_NODES} nodes in the configuration" in str(caught.value)


def test_deep_input_does_not_recurse(tmp_path: Path) -> None:
    assert hostlist.expand("n" + "[1]" * 10_000) == ["n" + "1" * 10_000]
    with pytest.raises(HostlistError, match="more than 1048576 hosts"):
        hostlist.expand("n" + "[1-2]" * 21)
    with pytest.raises(HostlistError, match="the names take more than 67108864 characters"):
        hostlist.expand("n" + "[1-2]" * 10_000)
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(
        TraceError, match=f"arrays and tables nest 5000 deep \\(at most {MAX_TOML_DEPTH}\\)"
    ):
        TraceMapping.load(deep)


# ------------------------------------------------------------------------- meaning


RECORDS = json.loads(
    (Path(__file__).parents[1] / "data" / "oracle" / "hostile" / "records.json").read_text()
)


def _recorded(label: str) -> list[dict[str, object]]:
    return [record for record in RECORDS if str(record["name"]).endswith("-" + label)]


@pytest.fixture(scope="module")
def oracle_cluster(tmp_path_factory: pytest.TempPathFactory) -> tuple[Simulation, Path]:
    """The recorded scenario's cluster, with its running job 1."""
    folder = tmp_path_factory.mktemp("oracle")
    text = "ClusterName=c\nSlurmctldHost=h\n" + str(RECORDS[0]["config"])
    simulation = Simulation(conf.parse_text(text, path=folder / "slurm.conf"))
    assert RECORDS[0]["command"] == "sbatch -t 10 --wrap='sleep 300'"
    assert simulation.command(shlex.split(str(RECORDS[0]["command"])), folder).status == 0
    simulation.run_until(2)
    return simulation, folder


@pytest.mark.parametrize(
    "record", _recorded("partupdate") + _recorded("signal"), ids=lambda r: str(r["command"])
)
def test_refusals_as_slurm_prints_them(
    oracle_cluster: tuple[Simulation, Path], record: dict[str, object]
) -> None:
    """scontrol update PartitionName=p State=BOGUS / PriorityTier=-5 / GraceTime=-1 and
    scancel -s BOGUS: Slurm 22.05's exact text and exit status (recorded)."""
    simulation, folder = oracle_cluster
    result = simulation.command(shlex.split(str(record["command"])), folder)
    assert (result.status, result.stdout, result.stderr) == (
        record["exit"],
        record["stdout"],
        record["stderr"],
    )


def test_partition_updates_were_refused(oracle_cluster: tuple[Simulation, Path]) -> None:
    simulation, folder = oracle_cluster
    result = simulation.command(["scontrol", "show", "partition", "p"], folder)
    for field in ("State=UP", "PriorityTier=1", "PriorityJobFactor=1", "GraceTime=0"):
        assert field in result.stdout


def test_qos_preemption_loop(tmp_path: Path) -> None:
    """slurmdbd refuses a QOS that would preempt itself, directly or through others, with
    "QOS Preemption loop detected" (recorded); Plurm refuses such a qos.conf with that text,
    once for each QOS on the loop."""
    refused = [r for r in _recorded("qos") if r["exit"] == 1]
    assert len(refused) == 3
    phrase = "QOS Preemption loop detected"
    assert all(f"sacctmgr: error: {phrase}\n" in str(r["stderr"]) for r in refused)
    qos = "QOS=a Preempt=b\nQOS=b Preempt=a\n"
    with pytest.raises(ConfError) as caught:
        conf.parse_text(BASE, path=tmp_path / "slurm.conf", qos_text=qos)
    assert str(caught.value).count(phrase) == 2
    assert f"qos.conf:1:1: QOS a: Preempt=b: {phrase}" in str(caught.value)
    for loop in ("QOS=a Preempt=a\n", "QOS=a Preempt=b\nQOS=b Preempt=c\nQOS=c Preempt=a\n"):
        with pytest.raises(ConfError, match=phrase):
            conf.parse_text(BASE, path=tmp_path / "slurm.conf", qos_text=loop)
    # c preempts a, and a preempts b: no loop, as slurmdbd accepted it.
    conf.parse_text(
        BASE, path=tmp_path / "slurm.conf", qos_text="QOS=a Preempt=b\nQOS=b\nQOS=c Preempt=a\n"
    )


def test_mapping_naming_an_unknown_partition(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(BASE)
    (tmp_path / "t.swf").write_text(SWF)
    (tmp_path / "map.toml").write_text('[partitions]\n1 = "nosuch"\n')
    status, _, err = _run(
        [
            "simulate", "--conf", str(tmp_path / "slurm.conf"), "--trace", str(tmp_path / "t.swf"),
            "--map", str(tmp_path / "map.toml"), "--quiet",
        ],
        tmp_path,
    )  # fmt: skip
    assert status == 1
    assert f"partitions.1: no partition 'nosuch' in {tmp_path / 'slurm.conf'} (it has: p)" in err


def test_compare_setting_with_a_newline() -> None:
    with pytest.raises(CompareError) as caught:
        parse_run_option("r:KillWait=5\nNodeName=evil")
    assert "holds '\\n'; a setting is one line of slurm.conf" in str(caught.value)


# ------------------------------------------------------------------------- losing output


def test_session_prints_as_it_runs(tmp_path: Path) -> None:
    config = conf.parse_text(BASE, path=tmp_path / "slurm.conf")
    simulation = Simulation(config)
    chunks: list[str] = []

    def boom(argv: object, cwd: object) -> object:
        raise RuntimeError("a command that breaks")

    lines = parse_session("s", "0 sinfo\n1 sinfo\n")
    original = simulation.command
    calls = iter([original, boom])
    simulation.command = lambda argv, cwd: next(calls)(argv, cwd)  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        simulation.run_lines(lines, tmp_path, write=chunks.append)
    assert "PARTITION" in "".join(chunks)  # the first line's output was not lost


def test_swf_bad_lines_are_skipped_by_default_and_strict_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "t.swf"
    good2 = SWF.replace("1 0 0", "3 5 0", 1)
    trace.write_text(SWF + "2 x 0\n" + good2)
    (tmp_path / "slurm.conf").write_text(BASE)
    out_dir = tmp_path / "out"
    argv = ["simulate", "--conf", str(tmp_path / "slurm.conf"), "--trace", str(trace), "--quiet"]
    status, _, _ = _run([*argv, "--out", str(out_dir), "--no-report"], tmp_path)
    err = capsys.readouterr().err
    assert status == 0
    assert f"{trace}:2:6: expected 18 fields, found 3" in err
    assert "plurm: 1 bad trace lines skipped (--strict refuses the trace)" in err
    assert '"skipped_lines": 1' in (out_dir / "summary.json").read_text()
    assert (out_dir / "jobs.csv").read_text().count("\n") == 3  # header and two jobs
    status, _, err = _run([*argv, "--strict"], tmp_path)
    assert status == 1 and "expected 18 fields, found 3" in err


def test_lenient_swf_drops_out_of_order_lines() -> None:
    text = SWF + SWF.replace("1 0 0", "2 9 0", 1) + SWF.replace("1 0 0", "3 5 0", 1)
    trace = parse_swf(text, "t.swf", strict=False)
    assert [job.number for job in trace.jobs] == [1, 2]
    assert [str(error).splitlines()[0] for error in trace.skipped] == [
        "t.swf:3:3: field 2 (submit time): 5 is earlier than 9 on line 2; "
        "SWF job lines are sorted by submit time"
    ]


def test_compare_skips_bad_trace_lines_by_default_and_strict_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text(SWF + "2 x 0\n" + SWF.replace("1 0 0", "3 5 0", 1))
    (tmp_path / "slurm.conf").write_text(BASE)
    argv = [
        "compare", "--trace", str(trace), "--conf", str(tmp_path / "slurm.conf"),
        "--run", "a", "--workers", "1", "--quiet",
    ]  # fmt: skip
    status, _, _ = _run([*argv, "--out", str(tmp_path / "out")], tmp_path)
    err = capsys.readouterr().err
    assert status == 0, err
    assert f"{trace}:2:6: expected 18 fields, found 3" in err
    assert "plurm: 1 bad trace lines skipped (--strict refuses the trace)" in err
    document = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert (document["jobs"], document["skipped_lines"]) == (2, 1)
    assert (tmp_path / "out" / "a" / "jobs.csv").read_text().count("\n") == 3
    status, _, err = _run([*argv, "--out", str(tmp_path / "out2"), "--strict"], tmp_path)
    assert status == 1 and "expected 18 fields, found 3" in err


def test_swf_streams_are_capped() -> None:
    with pytest.raises(TraceError, match=r"s.swf: cannot read: is larger than the cap of 10 bytes"):
        read_swf(io.StringIO(SWF), name="s.swf", limit=10)
    with pytest.raises(TraceError, match="is larger than the cap of 10 bytes"):
        read_swf(gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(b"0" * 1000))), limit=10)
    assert len(read_swf(io.StringIO(SWF), limit=len(SWF)).jobs) == 1


def test_a_big_overlapping_configuration_loads_right(tmp_path: Path) -> None:
    """20,000 nodes in 200 partitions of 2,000 that overlap and wrap around (the shape of
    bench/bench_conf_scale.py's "overlap", kept small): every partition's nodes, in node-table
    order and shared with the node table, the rendered Nodes= expressions, DownNodes."""
    from plurm.conf.render import render

    total = 20_000
    lines = [BASE.split("NodeName")[0].rstrip(), "NodeName=n[1-20000] CPUs=1"]
    expected = {}
    for index in range(200):
        first = index * 100 + 1
        numbers = [(first - 1 + k) % total + 1 for k in range(2000)]
        expected[f"p{index}"] = [f"n{number}" for number in sorted(numbers)]
        last = first + 1999
        spec = f"n[{first}-{min(total, last)}]" + (f",n[1-{last - total}]" if last > total else "")
        lines.append(f"PartitionName=p{index} Nodes={spec},n{first}")  # a duplicate, too
    lines.append("NodeSet=most Nodes=n[1-19999]")
    lines.append("PartitionName=viaset Nodes=most,n5")
    lines.append("DownNodes=n[100-199] Reason=gone")
    config = conf.parse_text("\n".join(lines) + "\n", path=tmp_path / "slurm.conf")
    table = {name: name for name in config.node_names}
    for index in range(200):
        nodes = config.partition(f"p{index}").nodes
        assert list(nodes) == expected[f"p{index}"]
        assert all(table[name] is name for name in nodes)
    assert config.partition("viaset").nodes == config.node_names[:19999]
    text = render(config)
    rendered = {
        line.split()[0].removeprefix("PartitionName="): line.split("Nodes=")[1].split()[0]
        for line in text.splitlines()
        if line.startswith("PartitionName=p")
    }
    assert rendered["p0"] == "n[1-2000]"
    assert rendered["p199"] == "n[1-1900,19901-20000]"
    for name, expression in rendered.items():
        assert hostlist.expand(expression) == expected[name]
    assert config.node_state("n150") == ("DOWN", "gone")
    assert config.node_state("n200") == ("UNKNOWN", None)
