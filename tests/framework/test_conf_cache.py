"""The commands' configuration cache (plurm.conf.cache): a hit spares the parser, and any
change to a file the configuration was read from is seen at the next load."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from plurm import conf
from plurm.conf import cache
from plurm.errors import ConfError

BASE = "ClusterName=c\nSlurmctldHost=h\nNodeName=n[1-4] CPUs={cpus}\nPartitionName=p Nodes=ALL\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_same_as_parsing_and_a_hit_never_imports_the_parser(home: Path) -> None:
    path = write(home / "slurm.conf", BASE.format(cpus=4))
    assert cache.load(path) == conf.load(path)
    assert len(list((home / "cache" / "plurm").iterdir())) == 1
    probe = (
        "import sys; from plurm.conf import cache; "
        f"config = cache.load({str(path)!r}); "
        "print(config.node('n1').cpus, 'plurm.conf.syntax' in sys.modules)"
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(home / "cache"))
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["4", "False"]


def test_a_change_of_the_same_size_is_seen(home: Path) -> None:
    path = write(home / "slurm.conf", BASE.format(cpus=4))
    assert cache.load(path).node("n1").cpus == 4
    write(path, BASE.format(cpus=8))  # same size; mtime/ctime in nanoseconds differ
    assert cache.load(path).node("n1").cpus == 8


def test_an_include_and_a_new_qos_conf_are_seen(home: Path) -> None:
    nodes = write(home / "nodes.conf", "NodeName=n[1-4] CPUs=4\n")
    path = write(
        home / "slurm.conf",
        "ClusterName=c\nSlurmctldHost=h\nInclude nodes.conf\nPartitionName=p Nodes=ALL\n",
    )
    assert cache.load(path).node("n1").cpus == 4
    write(nodes, "NodeName=n[1-4] CPUs=2\n")
    assert cache.load(path).node("n1").cpus == 2
    assert not cache.load(path).qos_file
    write(home / "qos.conf", "Name=high Priority=10\n")
    assert cache.load(path).qos_file
    assert "high" in [q.name for q in cache.load(path).qos]


def test_errors_are_reported_every_time_and_never_cached(home: Path) -> None:
    path = write(home / "slurm.conf", "ClusterName=c\nSlurmctldHost=h\nNodeNme=n1\n")
    for _ in range(2):
        with pytest.raises(ConfError) as caught:
            cache.load(path)
        assert "NodeNme" in str(caught.value)
    assert not (home / "cache" / "plurm").exists() or not any((home / "cache" / "plurm").iterdir())


def test_a_corrupt_entry_is_parsed_again_and_rewritten(home: Path) -> None:
    path = write(home / "slurm.conf", BASE.format(cpus=4))
    cache.load(path)
    (entry,) = (home / "cache" / "plurm").iterdir()
    entry.write_bytes(b"not a pickle")
    assert cache.load(path).node("n1").cpus == 4
    assert entry.read_bytes() != b"not a pickle"


def test_an_entry_others_may_write_is_not_trusted(home: Path) -> None:
    path = write(home / "slurm.conf", BASE.format(cpus=4))
    cache.load(path)
    (entry,) = (home / "cache" / "plurm").iterdir()
    saved = pickle.loads(entry.read_bytes())
    # an entry that matches the files but says something else, as a forger would write it
    nodes = tuple(attrs.evolve(spec, cpus=99) for spec in saved["config"].nodes)
    saved["config"] = attrs.evolve(saved["config"], nodes=nodes)
    entry.write_bytes(pickle.dumps(saved))
    entry.chmod(0o600)
    assert cache.load(path).node("n1").cpus == 99  # trusted: this user's own file
    entry.write_bytes(pickle.dumps(saved))
    entry.chmod(0o620)
    assert cache.load(path).node("n1").cpus == 4  # group-writable: parsed instead
