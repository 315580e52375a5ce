"""Hostlists against vectors recorded from Slurm 22.05's scontrol, plus properties."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plurm import hostlist
from plurm.errors import HostlistError, PlurmError
from tests.conftest import DATA, ORACLE

EXPAND = json.loads((ORACLE / "hostlist" / "expand.json").read_text())
COMPRESS = json.loads((ORACLE / "hostlist" / "compress.json").read_text())


# Inputs where Plurm deliberately differs from 22.05 (see the hostlist module docstring): each
# with the reason. Everything not listed here must match scontrol byte for byte.
DEVIATIONS = json.loads((DATA / "hostlist_deviations.json").read_text())


def _slurm_rejects(vector: dict[str, object]) -> bool:
    return "Invalid hostlist" in str(vector["stderr"]) or vector["exit"] != 0


def _check(
    vector: dict[str, object], deviations: dict[str, str], run: Callable[[str], str]
) -> None:
    expression = str(vector["input"])
    reason = deviations.get(expression)
    if reason is None and _slurm_rejects(vector):
        with pytest.raises(HostlistError, match="Invalid hostlist"):
            run(expression)
    elif reason is None:
        assert run(expression) == vector["stdout"]
    elif "Plurm refuses" in reason:
        with pytest.raises(HostlistError, match="Invalid hostlist"):
            run(expression)
    else:
        assert run(expression) != vector["stdout"]


@pytest.mark.parametrize("vector", EXPAND, ids=lambda v: repr(v["input"])[:40])
def test_expand_matches_scontrol_show_hostnames(vector: dict[str, object]) -> None:
    _check(vector, DEVIATIONS["expand"], lambda e: "".join(h + "\n" for h in hostlist.expand(e)))


@pytest.mark.parametrize("vector", COMPRESS, ids=lambda v: repr(v["input"])[:40])
def test_compress_matches_scontrol_show_hostlist(vector: dict[str, object]) -> None:
    _check(vector, DEVIATIONS["compress"], lambda e: hostlist.compress(e) + "\n")


def test_deviations_stay_few_and_explained() -> None:
    assert len(DEVIATIONS["expand"]) <= 60 and len(DEVIATIONS["compress"]) <= 10
    recorded = {v["input"] for v in EXPAND} | {v["input"] for v in COMPRESS}
    for kind in ("expand", "compress"):
        for expression, reason in DEVIATIONS[kind].items():
            assert expression in recorded and reason


def test_vectors_cover_the_documented_cases() -> None:
    inputs = {v["input"] for v in EXPAND}
    for needed in ("n[01-16]", "n[8-11]", "n[08-11]", "n[1-3].ib", "a[1-2]b[1-2]c[1-2]"):
        assert needed in inputs
    assert len(EXPAND) >= 150 and len(COMPRESS) >= 80


def test_three_groups_use_slurms_order() -> None:
    assert hostlist.expand("a[1-2]b[1-2]c[1-2]") == [
        "a1b1c1",
        "a1b1c2",
        "a2b1c1",
        "a2b1c2",
        "a1b2c1",
        "a1b2c2",
        "a2b2c1",
        "a2b2c2",
    ]


def test_order_and_duplicates_are_kept() -> None:
    assert hostlist.expand("n3,n1,n2,n1") == ["n3", "n1", "n2", "n1"]
    assert hostlist.compress(["n3", "n1", "n2", "n1"]) == "n[3,1-2,1]"


def test_compression_brackets_only_the_trailing_number() -> None:
    names = ["rack1n1", "rack1n2", "rack2n1", "rack2n2"]
    assert hostlist.compress(names) == "rack1n[1-2],rack2n[1-2]"


@pytest.mark.parametrize(
    ("expression", "detail"),
    [
        ("n[3-1]", "invalid range '3-1'"),
        ("n[1-3", "missing ']'"),
        ("n[1-3].ib", "nothing may follow ']'"),
        ("n[0-65536]", "too many hosts in range"),
        ("n[a-c]", "invalid range 'a-c'"),
    ],
)
def test_errors_say_what_is_wrong(expression: str, detail: str) -> None:
    with pytest.raises(HostlistError) as caught:
        hostlist.expand(expression)
    assert detail in str(caught.value)
    assert expression in str(caught.value)


def test_total_size_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hostlist, "MAX_HOSTS", 1000)
    assert len(hostlist.expand("n[1-40]x[1-25]")) == 1000
    with pytest.raises(HostlistError, match="more than 1000 hosts"):
        hostlist.expand("n[1-40]x[1-26]")


def test_range_cap_is_slurms() -> None:
    assert len(hostlist.expand("n[1-65536]")) == 65536
    with pytest.raises(HostlistError):
        hostlist.expand("n[1-65537]")


_PREFIX = st.text(alphabet="abcxyz-_.", min_size=1, max_size=4)


@st.composite
def _host_names(draw: st.DrawFn) -> list[str]:
    """Names of the shapes real clusters use: a prefix, optionally a padded number."""
    names = []
    for _ in range(draw(st.integers(0, 30))):
        prefix = draw(_PREFIX)
        if draw(st.booleans()):
            width = draw(st.integers(1, 4))
            number = draw(st.integers(0, 10**width - 1))
            names.append(f"{prefix}{number:0{width}d}")
        else:
            names.append(prefix)
    return names


@given(_host_names())
def test_compressing_an_expansion_gives_the_same_hosts_back(names: list[str]) -> None:
    assert hostlist.expand(hostlist.compress(names)) == names


@given(st.text(alphabet="n0123456789[]-, \tx", max_size=30))
def test_expansion_raises_only_plurm_errors(expression: str) -> None:
    try:
        hosts = hostlist.expand(expression)
    except PlurmError:
        return
    assert all(host for host in hosts)


# ----------------------------------------------------------------------------- natural order


def _digits_at(text: str, start: int) -> str:
    end = start
    while end < len(text) and "0" <= text[end] <= "9":
        end += 1
    return text[start:end]


def _natural_compare(a: str, b: str) -> int:
    """strnatcmp's comparison, spelled out step by step (the reference natural_key must
    agree with): walk both names together; where both have a digit, compare the two digit
    runs that start there (digit by digit, a run that ends first being the smaller, when
    either starts with 0; else the longer run is the larger, then the first differing
    digit decides); a difference decides, else go on one character; otherwise compare the
    characters, the end of a name below any character. (Names hold no blanks, which
    strnatcmp would skip.)"""
    i = 0
    while True:
        ca = a[i] if i < len(a) else ""
        cb = b[i] if i < len(b) else ""
        if ca.isdigit() and cb.isdigit():
            run_a, run_b = _digits_at(a, i), _digits_at(b, i)
            if "0" in (ca, cb):
                if run_a != run_b:
                    return -1 if run_a < run_b else 1
            elif (len(run_a), run_a) != (len(run_b), run_b):
                return -1 if (len(run_a), run_a) < (len(run_b), run_b) else 1
        if not ca and not cb:
            return 0
        if ca != cb:
            return -1 if ca < cb else 1
        i += 1


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


@pytest.mark.parametrize(
    ("smaller", "larger"),
    [
        ("n2", "n10"),
        ("n9", "n10"),
        ("b1", "y1"),
        ("n01", "n012"),
        ("n012", "n02"),
        ("n02", "n1"),
        ("n0", "n1"),
        ("n-1", "n1"),
        ("n1", "na"),
        ("n", "n0"),
        ("N1", "n1"),
        ("rack2-n10", "rack10-n1"),
        ("n1a", "n1b"),
        ("n1.ib", "n1a"),
    ],
)
def test_natural_key_orders_names_as_strnatcmp(smaller: str, larger: str) -> None:
    """The node table's order: digit runs as numbers (n2 < n10), zero-led runs digit by
    digit, a digit run against another character as a digit character."""
    assert _natural_compare(smaller, larger) == -1
    assert hostlist.natural_key(smaller) < hostlist.natural_key(larger)


@given(st.lists(st.text("0123456789ab-._Z", max_size=8), min_size=2, max_size=2))
def test_natural_key_agrees_with_the_step_by_step_comparison(pair: list[str]) -> None:
    a, b = pair
    key_a, key_b = hostlist.natural_key(a), hostlist.natural_key(b)
    assert _sign((key_a > key_b) - (key_a < key_b)) == _natural_compare(a, b)


def test_natural_key_sorts_a_table_as_strnatcmp_would() -> None:
    names = ["n10", "n2", "n1", "y1", "b1", "n010", "n01", "a100", "a20", "a3"]
    assert sorted(names, key=hostlist.natural_key) == [
        "a3",
        "a20",
        "a100",
        "b1",
        "n01",
        "n010",
        "n1",
        "n2",
        "n10",
        "y1",
    ]
