"""SelectTypeParameters as a source of plugin options: a select plugin declares options
with ``key="SelectTypeParameters"``; they sit beside Slurm's ``CR_*`` words, are typed,
shown in the effective configuration, and checked with file, line, column and the nearest
known word."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from plurm import HOOK_API_VERSION, conf
from plurm.cli.main import main
from plurm.conf.values import CrBase
from plurm.errors import ConfError
from plurm.manager import Plugins
from plurm.params import PluginOption, check_options
from plurm.registry import PluginContext, Registry
from plurm.testing import JobBuilder, TestCluster

HEAD = "ClusterName=c\nSlurmctldHost=h\nSelectType=select/packing\n"
NODES = "NodeName=n[1-4] CPUs=2\nPartitionName=p Nodes=ALL Default=YES\n"


def _linear() -> Callable[[PluginContext], object]:
    factory = Registry().entry_point("select/linear").load()
    assert callable(factory)
    return factory  # type: ignore[no-any-return]


class Packing:
    """select/linear's placements, under another name, with options of its own."""

    PLURM_HOOK_API = HOOK_API_VERSION
    PLURM_OPTIONS = (
        PluginOption("pack_limit", kind="int", default=1, key="SelectTypeParameters"),
        PluginOption("pack_spread", kind="flag", key="SelectTypeParameters"),
    )

    def __new__(cls, context: PluginContext) -> object:  # type: ignore[misc]
        plugin = _linear()(context)
        plugin.packing_options = dict(context.options)  # type: ignore[attr-defined]
        return plugin


def _write(tmp_path: Path, select_params: str) -> Path:
    path = tmp_path / "slurm.conf"
    path.write_text(HEAD + f"SelectTypeParameters={select_params}\n" + NODES)
    return path


def test_options_reach_the_plugin_beside_slurms_words(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    cluster = make_cluster(
        "SelectType=select/packing\nSelectTypeParameters=CR_Memory,pack_limit=3,PACK_SPREAD\n"
        + NODES,
        plugins={"select/packing": Packing},
    )
    params = cluster.config.select_type_parameters
    assert params.base is CrBase.MEMORY
    plugin = next(p.plugin for p in cluster.plugins.loaded if p.type_string == "select/packing")
    assert plugin.packing_options == {"pack_limit": 3, "pack_spread": True}
    # the plugin still schedules: the option words took nothing from Slurm's
    first = cluster.submit(job().runtime(10))
    cluster.settle()
    assert cluster.state(first).name == "RUNNING"


def test_the_default_when_unset(tmp_path: Path) -> None:
    config = conf.load(_write(tmp_path, "CR_Memory"))
    registry = Registry(factories={"select/packing": Packing})
    plugins = Plugins.load(config, registry=registry)
    plugin = next(p.plugin for p in plugins.loaded if p.type_string == "select/packing")
    assert plugin.packing_options == {"pack_limit": 1, "pack_spread": False}


def test_a_misspelt_option_names_file_line_column_and_the_nearest(tmp_path: Path) -> None:
    path = _write(tmp_path, "CR_Memory,pack_limt=3")
    config = conf.load(path)
    (error,) = check_options(config, {"select/packing": Packing.PLURM_OPTIONS})
    assert str(error).startswith(
        f"{path}:4:32: SelectTypeParameters=pack_limt=3: unknown option pack_limt"
    )
    assert "did you mean 'pack_limit'?" in str(error)


def test_a_misspelt_slurm_word_is_refused_with_the_nearest(tmp_path: Path) -> None:
    path = _write(tmp_path, "CR_Core_Memroy")
    with pytest.raises(ConfError, match="did you mean 'cr_core_memory'"):
        Plugins.load(conf.load(path), registry=Registry(factories={"select/packing": Packing}))


def test_a_value_of_the_wrong_kind_is_refused(tmp_path: Path) -> None:
    config = conf.load(_write(tmp_path, "CR_Memory,pack_limit=many"))
    (error,) = check_options(config, {"select/packing": Packing.PLURM_OPTIONS})
    assert "pack_limit must be a whole number, not 'many' (select/packing)" in str(error)


def test_two_bases_are_still_refused_when_read(tmp_path: Path) -> None:
    with pytest.raises(ConfError, match="Bad SelectTypeParameter"):
        conf.load(_write(tmp_path, "CR_CPU,CR_Core,pack_limit=2"))


def test_conf_check_shows_them_in_the_effective_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the plugin installed (a distribution on sys.path), ``plurm conf check`` shows
    the options as written and with their typed effective values; without it, they are
    unknown and the check fails."""
    path = _write(tmp_path, "CR_Memory,pack_limit=3")
    assert main(["conf", "check", str(path)]) == 1
    assert "unknown option pack_limit" in capsys.readouterr().err
    site = tmp_path / "site"
    (site / "plurm_select_packing").mkdir(parents=True)
    (site / "plurm_select_packing" / "__init__.py").write_text(
        "from tests.framework.test_select_options import Packing\n"
    )
    info = site / "plurm_select_packing-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: plurm-select-packing\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[plurm.select]\npacking = plurm_select_packing:Packing\n"
    )
    monkeypatch.syspath_prepend(str(site))
    assert main(["conf", "check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "SelectTypeParameters=CR_Memory,pack_limit=3\n" in out
    assert "#   SelectTypeParameters pack_limit=3 (select/packing, int, default 1)" in out
    assert "#   SelectTypeParameters pack_spread=False (select/packing, flag" in out
