"""GresTypes, Gres= on node lines and gres.conf (plurm.conf.gres), with Slurm 22.05's
verdicts: what is dropped with a notice, what is refused with file, line and column, and
which nodes start DRAIN for reporting fewer GRES than configured."""

from __future__ import annotations

from pathlib import Path

import pytest

from plurm import conf
from plurm.conf import cache
from plurm.conf.gres import parse_count
from plurm.conf.model import GresCount, GresDevice
from plurm.errors import ConfError, ConfKeyError

HEAD = "ClusterName=c\nSlurmctldHost=h\nSelectType=select/cons_tres\n"
NODES = (
    "NodeName=g[1-2] CPUs=8 Sockets=1 CoresPerSocket=8 Gres={gres}\n"
    "NodeName=c1 CPUs=4\nPartitionName=p Nodes=ALL Default=YES\n"
)


def parse(gres: str = "gpu:2", gres_conf: str = "", types: str = "gpu") -> conf.SlurmConfig:
    text = HEAD + (f"GresTypes={types}\n" if types else "") + NODES.format(gres=gres)
    return conf.parse_text(text, path="/nowhere/slurm.conf", gres_text=gres_conf)


def refused(gres: str = "gpu:2", gres_conf: str = "", types: str = "gpu") -> ConfError:
    with pytest.raises(ConfError) as caught:
        parse(gres, gres_conf, types)
    return caught.value


def test_node_gres_forms_and_counts() -> None:
    config = parse("gpu:a100:4,gpu:v100:2", types="gpu,mps")
    assert config.gres.types == ("gpu", "mps")
    assert config.gres.node_counts("g1") == (
        GresCount("gpu", "a100", 4),
        GresCount("gpu", "v100", 2),
    )
    assert config.gres.node_counts("c1") == ()
    assert parse("gpu").gres.node_counts("g2") == (GresCount("gpu", None, 1),)
    assert parse("gpu:a100").gres.node_counts("g2") == (GresCount("gpu", "a100", 1),)
    assert parse("mps:1K", types="mps").gres.node_counts("g1") == (GresCount("mps", None, 1024),)


@pytest.mark.parametrize(
    ("text", "value"),
    [("2", 2), ("4k", 4096), ("1M", 1 << 20), ("2G", 2 << 30), ("1KB", 1000), ("1KiB", 1024)],
)
def test_counts_take_slurms_suffixes(text: str, value: int) -> None:
    assert parse_count(text) == value


def test_a_name_missing_from_gres_types_is_dropped_with_slurms_message() -> None:
    config = parse("gpu:2,bandwidth:4", types="gpu")
    assert config.gres.node_counts("g1") == (GresCount("gpu", None, 2),)
    messages = [notice.message for notice in config.notices]
    assert "Invalid GRES configured on node g[1-2]: bandwidth:4" in messages
    assert parse("gpu:2", types="").gres.node_counts("g1") == ()


def test_typed_and_untyped_entries_of_one_name_are_refused() -> None:
    error = refused("gpu:2,gpu:a100:2")
    assert "some gpu GRES have a type while others do not" in str(error)
    assert "slurm.conf:5" in str(error)
    assert "invalid GRES count in gpu:a100:x2" in str(refused("gpu:a100:x2"))


def test_gres_conf_devices_files_cores_and_node_lists() -> None:
    config = parse(
        "gpu:a100:2",
        "AutoDetect=off\nNodeName=g[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-1] Cores=0-3\n",
    )
    assert config.gres.autodetect == "off"
    assert config.gres.devices["g2"] == (
        GresDevice("gpu", 0, "a100", "/dev/nvidia0", frozenset(range(4))),
        GresDevice("gpu", 1, "a100", "/dev/nvidia1", frozenset(range(4))),
    )
    assert "c1" not in config.gres.devices
    assert not config.down_nodes


def test_a_count_only_gres_conf_has_no_devices() -> None:
    config = parse("gpu:2", "Name=gpu Count=2\n")
    assert config.gres.devices == {}
    assert config.gres.node_counts("g1") == (GresCount("gpu", None, 2),)


def test_fewer_in_gres_conf_than_configured_drains_the_node() -> None:
    config = parse("gpu:2", "NodeName=g2 Name=gpu File=/dev/nvidia0\n")
    assert config.node_state("g2") == (
        "DRAIN",
        "gres/gpu count reported lower than configured (1 < 2)",
    )
    assert config.node_state("g1")[0] != "DRAIN"


@pytest.mark.parametrize(
    ("gres_conf", "message", "where"),
    [
        ("Name=gpu File=/dev/nvidia[0-1] Count=3\n", "count does not match File value", ":1:38"),
        ("Name=gpu Count=x\n", "Invalid GRES record for gpu, invalid count x", ":1:16"),
        (
            "Name=gpu File=/dev/nvidia[0-1] Cores=0-8\n",
            "Cores=0-8 (only 8 Cores are available)",
            ":1",
        ),
        ("Name=gpu Cores=a-b\n", "Invalid GRES data for gpu, Cores=a-b", ":1:16"),
        ("Type=a100 Count=2\n", "Invalid GRES data, no type name", ":1"),
        (
            "NodeName=g1 Name=gpu File=/dev/nvidia0\nNodeName=g1 Name=gpu Count=1\n",
            'some records have "File" specification while others do not',
            ":2",
        ),
        (
            "Name=gpu Type=a File=/dev/nvidia0\nName=gpu File=/dev/nvidia1\n",
            'some records have "Type=" specification while others do not',
            ":2",
        ),
        ("Name=gpu File=/dev/nvidia[0-\n", "File=/dev/nvidia[0-", ":1:15"),
    ],
)
def test_gres_conf_errors_name_file_line_and_column(
    gres_conf: str, message: str, where: str
) -> None:
    error = refused("gpu:2", gres_conf)
    assert message in str(error)
    assert f"gres.conf{where}" in str(error)


def test_an_unknown_gres_conf_key_suggests_the_right_one() -> None:
    error = refused("gpu:2", "Name=gpu Fiel=/dev/nvidia0\n")
    assert isinstance(error, ConfKeyError)
    assert "did you mean 'File'?" in str(error)
    assert "gres.conf:1:10" in str(error)


def test_records_slurm_ignores_become_notices() -> None:
    config = parse("gpu:2", "AutoDetect=nvml\nName=fpga Count=1\nName=gpu Count=2\n")
    messages = [notice.message for notice in config.notices]
    assert "Ignoring gres.conf record, invalid name: fpga" in messages
    assert any("AutoDetect=nvml" in m for m in messages)


def test_gres_conf_beside_slurm_conf_is_read_and_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "slurm.conf"
    path.write_text(HEAD + "GresTypes=gpu\n" + NODES.format(gres="gpu:2"))
    assert not cache.load(path).down_nodes
    (tmp_path / "gres.conf").write_text("Name=gpu File=/dev/nvidia0\n")  # created since
    assert cache.load(path).node_state("g1")[0] == "DRAIN"
    assert str(tmp_path / "gres.conf") in cache.load(path).files
    (tmp_path / "gres.conf").write_text("Name=gpu File=/dev/nvidia[0-1]\n")
    assert not cache.load(path).down_nodes
