"""Docs and code cannot drift: every hook is documented with its exact signature, and the
example plugin in docs/hooks.md works as written."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path

import pluggy

from plurm.hookspecs import SPEC_MODULES
from plurm.manager import Plugins
from plurm.testing import JobBuilder, TestCluster
from tests.conftest import REPO

HOOKS_DOC = (REPO / "docs" / "hooks.md").read_text()


def _specs() -> list[tuple[str, list[str]]]:
    manager = Plugins.new_manager()
    found = []
    for name, caller in vars(manager.hook).items():
        if isinstance(caller, pluggy.HookCaller) and caller.spec is not None:
            found.append((name, list(caller.spec.argnames)))
    return sorted(found)


def test_every_hook_is_documented_with_its_signature() -> None:
    specs = _specs()
    defined = {
        name
        for module in SPEC_MODULES
        for name, function in vars(module).items()
        if inspect.isfunction(function) and function.__module__ == module.__name__
    }
    assert {name for name, _ in specs} == defined
    for name, args in specs:
        heading = f"### `{name}({', '.join(args)})`"
        assert heading in HOOKS_DOC, heading


def test_every_hook_docstring_follows_the_template() -> None:
    for module in SPEC_MODULES:
        for name in dir(module):
            function = getattr(module, name)
            if getattr(function, "__module__", "") != module.__name__ or not callable(function):
                continue
            doc = function.__doc__ or ""
            for part in (
                "When called:",
                ":returns:",
                "Purity:",
                "Slurm equivalent:",
                "versionadded::",
            ):
                assert part in doc, f"{name} lacks {part!r}"


def test_the_example_plugin_works_as_written(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    code = re.search(r"## A plugin in 50 lines.*?```python\n(.*?)```", HOOKS_DOC, re.S)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "docs/hooks.md", "exec"), namespace)
    assert len(code.group(1).splitlines()) <= 50
    cluster = make_cluster(
        "PreemptType=preempt/urgent\nPreemptMode=REQUEUE\nNodeName=n[1-2] CPUs=1\n"
        "PartitionName=batch Nodes=ALL Default=YES\nPartitionName=urgent_fix Nodes=ALL\n",
        plugins={"preempt/urgent": namespace["Urgent"]},
    )
    batch = [cluster.submit(job().runtime(500)) for _ in range(2)]
    urgent = cluster.submit(job().partition("urgent_fix").runtime(10))
    cluster.run_until(1)
    assert cluster.state(urgent).name == "RUNNING"
    assert sorted(cluster.state(j).name for j in batch) == ["PENDING", "RUNNING"]


def test_generated_docs_are_current() -> None:
    """docs/hooks.md's hook sections and docs/reference.md are what ``python -m
    plurm.docgen`` makes of the code now."""
    from plurm import docgen

    assert docgen.main(["--check", "--root", str(REPO)]) == 0


def test_reference_documents_every_public_name_hooks_receive() -> None:
    """Every name of plurm.model's ``__all__`` that hooks receive is in the reference, with
    a docstring; a stale reference would fail the check above."""
    import plurm.model
    from plurm import docgen

    documented = {name for _, names in docgen.REFERENCE for name in names}
    assert set(plurm.model.__all__) - {"NodeState"} <= documented
    text = (REPO / "docs" / "reference.md").read_text()
    assert "(undocumented)" not in text
    for module, names in docgen.REFERENCE:
        for name in names:
            assert f"## `{module}.{name}`" in text


PLUGINS_DOC = (REPO / "docs" / "plugins.md").read_text()


def test_the_hooks_example_spares_a_preempt_mode_off_partition(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    code = re.search(r"## A plugin in 50 lines.*?```python\n(.*?)```", HOOKS_DOC, re.S)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "docs/hooks.md", "exec"), namespace)
    cluster = make_cluster(
        "PreemptType=preempt/urgent\nPreemptMode=REQUEUE\nNodeName=n1 CPUs=1\n"
        "PartitionName=batch Nodes=ALL Default=YES PreemptMode=OFF\n"
        "PartitionName=urgent_fix Nodes=ALL\n",
        plugins={"preempt/urgent": namespace["Urgent"]},
    )
    batch = cluster.submit(job().runtime(500))
    cluster.settle()
    urgent = cluster.submit(job().partition("urgent_fix").runtime(10))
    cluster.settle()
    assert cluster.state(batch).name == "RUNNING"
    assert cluster.state(urgent).name == "PENDING"


def test_the_plugin_guide_examples_run(
    make_cluster: Callable[..., TestCluster], job: Callable[[], JobBuilder]
) -> None:
    """docs/plugins.md: the policy, the guard, and the tests that use them, run as written
    (the tests are the guide's own, called here with the real fixtures)."""
    blocks = re.findall(r"```python\n(.*?)```", PLUGINS_DOC, re.S)
    assert len(blocks) == 3
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "docs/plugins.md", "exec"), namespace)
    urgent_test = namespace["test_urgent_jobs_preempt"]
    guard_test = namespace["test_a_guard_keeps_the_invariants"]
    assert callable(urgent_test) and callable(guard_test)
    urgent_test(make_cluster, job)
    guard_test(make_cluster)
    # The guard does what the guide says, with its option set in PreemptParameters.
    cluster = make_cluster(
        "PreemptType=preempt/urgent\nPreemptMode=REQUEUE\nJobRequeue=1\n"
        "PreemptParameters=keep_prefix=gold\nNodeName=n1 CPUs=1\n"
        "PartitionName=batch Nodes=ALL Default=YES\nPartitionName=urgent_fix Nodes=ALL\n",
        plugins={
            "preempt/urgent": namespace["Urgent"],
            "preempt/keep_named": namespace["KeepNamed"],
        },
        plurm_text="PreemptGuards=preempt/keep_named\n",
    )
    gold = cluster.submit(job().name("gold-1").runtime(500))
    cluster.settle()
    urgent = cluster.submit(job().partition("urgent_fix").runtime(10))
    cluster.settle()
    assert cluster.state(gold).name == "RUNNING" and cluster.state(urgent).name == "PENDING"


def test_the_plugin_guide_shows_the_real_option_error(tmp_path: Path) -> None:
    from plurm import conf
    from plurm.params import check_options

    namespace: dict[str, object] = {}
    exec(re.findall(r"```python\n(.*?)```", PLUGINS_DOC, re.S)[1], namespace)
    keep_named = namespace["KeepNamed"]
    text = (REPO / "conf" / "sdsc-sp2" / "slurm.conf").read_text()
    (tmp_path / "slurm.conf").write_text(text + "PreemptParameters=keep_prefx=gold\n")
    config = conf.load(tmp_path / "slurm.conf")
    names = ("jobacct_gather/none", "preempt/partition_prio", "sched/backfill", "select/linear")
    declared = {name: () for name in names}
    declared["preempt/keep_named"] = keep_named.PLURM_OPTIONS  # type: ignore[attr-defined]
    (error,) = check_options(config, declared)
    shown = str(error).replace(str(tmp_path) + "/", "")
    assert shown in PLUGINS_DOC
