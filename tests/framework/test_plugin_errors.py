"""A plugin whose hooks do not fit the specs is refused with its type string, what is
wrong and the nearest hook; never with pluggy's object reprs."""

from __future__ import annotations

import pytest

from plurm import HOOK_API_VERSION, conf, hookimpl
from plurm.manager import Plugins
from plurm.registry import PluginContext, PluginLoadError, Registry

CONF = (
    "ClusterName=c\nSlurmctldHost=h\nPreemptType=preempt/mine\nNodeName=n1\n"
    "PartitionName=p Nodes=ALL\n"
)


class _Base:
    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        pass

    @hookimpl
    def preempt_mode(self, job: object, cluster: object) -> None:
        return None

    @hookimpl
    def preempt_priority(self, job: object, cluster: object) -> int:
        return 0


class Misspelt(_Base):
    @hookimpl
    def preempt_preemptible(self, preemptor: object, preemptee: object, cluster: object) -> bool:
        return False


class WrongArguments(_Base):
    @hookimpl
    def preempt_preemptable(self, preemptor: object, victim: object, cluster: object) -> bool:
        return False


def _load(factory: type) -> Plugins:
    config = conf.parse_text(CONF)
    return Plugins.load(config, registry=Registry(factories={"preempt/mine": factory}))


def test_a_misspelt_hook_names_the_plugin_and_the_nearest_hook() -> None:
    with pytest.raises(PluginLoadError) as caught:
        _load(Misspelt)
    assert str(caught.value) == (
        "preempt/mine (given directly): preempt_preemptible is not a Plurm hook; "
        "did you mean preempt_preemptable?"
    )


def test_arguments_the_spec_does_not_give_are_named_with_the_specs() -> None:
    with pytest.raises(PluginLoadError) as caught:
        _load(WrongArguments)
    assert str(caught.value) == (
        "preempt/mine (given directly): preempt_preemptable(preemptor, victim, cluster) asks "
        "for victim, which the hook does not give; preempt_preemptable receives (preemptor, "
        "preemptee, cluster), any of them, by these names"
    )
    assert "object at 0x" not in str(caught.value)
