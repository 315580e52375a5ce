"""Property tests: on any input whatsoever the config reader raises only ConfError, with a
position for every problem, and accepted input gives a usable configuration."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plurm import conf
from plurm.errors import ConfError
from tests.conftest import REPO, SHARED

# Text from the characters slurm.conf is made of, plus a few that should never appear.
CHARACTERS = st.sampled_from([*'abcNnPpxyz0123456789=,[]-:#\\" \t\n.', "\r", "\x00", "é"])
# Random text is built of characters and of whole words that steer it into deeper rules.
CHUNKS = st.one_of(CHARACTERS, st.sampled_from(["Include ", "NodeName=", "ClusterName=x\n"]))
KEY_WORDS = st.sampled_from(
    [
        "ClusterName",
        "SlurmctldHost",
        "NodeName",
        "PartitionName",
        "Nodes",
        "CPUs",
        "PreemptMode",
        "PreemptType",
        "OverSubscribe",
        "MaxTime",
        "DEFAULT",
        "ALL",
        "SelectTypeParameters",
        "Include",
        "NodeSet",
        "Feature",
        "Weight",
        "Sockets",
    ]
)
VALUE_WORDS = st.sampled_from(
    [
        "n[1-3]",
        "n[3-1]",
        "SUSPEND,GANG",
        "FORCE:2",
        "YES",
        "1-00:00",
        "UNLIMITED",
        '""',
        "preempt/qos",
        "CR_Core",
        "0",
        "010",
        "x",
        "ALL",
    ]
)


def _examples() -> list[str]:
    texts = [path.read_text() for path in sorted((REPO / "conf").glob("*/slurm.conf"))]
    corpus = SHARED / "conf-corpus"
    if corpus.is_dir():
        texts += [
            path.read_bytes().decode("utf-8", "replace")
            for path in sorted(corpus.glob("*.conf"))[:12]
        ]
    return texts


EXAMPLES = _examples()


@st.composite
def structured_lines(draw: st.DrawFn) -> str:
    """Lines that look like slurm.conf: key=value pairs from real keys and values."""
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        pairs = [
            f"{draw(KEY_WORDS)}{draw(st.sampled_from(['=', ' = ', '+=', '']))}{draw(VALUE_WORDS)}"
            for _ in range(draw(st.integers(1, 4)))
        ]
        lines.append(" ".join(pairs) + draw(st.sampled_from(["", " \\", " # c", "\\"])))
    return "\n".join(lines) + "\n"


@st.composite
def mutated_example(draw: st.DrawFn) -> str:
    """A real configuration with a few characters or lines changed."""
    text = draw(st.sampled_from(EXAMPLES))
    for _ in range(draw(st.integers(1, 6))):
        if not text:
            break
        position = draw(st.integers(0, len(text) - 1))
        action = draw(st.sampled_from(["delete", "insert", "replace", "duplicate_line"]))
        if action == "delete":
            text = text[:position] + text[position + 1 :]
        elif action == "insert":
            text = text[:position] + draw(CHARACTERS) + text[position:]
        elif action == "replace":
            text = text[:position] + draw(CHARACTERS) + text[position + 1 :]
        else:
            lines = text.splitlines(keepends=True)
            index = draw(st.integers(0, len(lines) - 1))
            lines.insert(index, lines[index])
            text = "".join(lines)
    return text


def _check(tmp_path: Path, text: str) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    try:
        config = conf.load(path)
    except ConfError as error:
        assert error.errors
        for single in error.errors:
            assert single.location is not None, single
            assert single.location.file
            str(single)  # every message renders
        return
    # An accepted file is a usable configuration.
    assert config.cluster_name
    assert len(set(config.node_names)) == len(config.node_names)
    for part in config.partitions:
        assert set(part.nodes) <= set(config.node_names)


FUZZ = settings(
    max_examples=int(os.environ.get("PLURM_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@FUZZ
@given(st.lists(CHUNKS, max_size=200).map("".join))
def test_random_text_raises_only_conf_errors_with_positions(tmp_path: Path, text: str) -> None:
    _check(tmp_path, text)


@FUZZ
@given(structured_lines())
def test_structured_noise_raises_only_conf_errors(tmp_path: Path, text: str) -> None:
    _check(tmp_path, "ClusterName=f\nSlurmctldHost=h\n" + text)


@FUZZ
@given(mutated_example())
def test_mutated_real_configs_raise_only_conf_errors(tmp_path: Path, text: str) -> None:
    _check(tmp_path, text)


@FUZZ
@given(st.lists(CHUNKS, max_size=150).map("".join))
def test_random_qos_conf_raises_only_conf_errors(tmp_path: Path, text: str) -> None:
    (tmp_path / "qos.conf").write_text(text, encoding="utf-8", errors="surrogateescape")
    _check(tmp_path, "ClusterName=f\nSlurmctldHost=h\n")
