"""Docs and code cannot drift: every hook is documented with its exact signature, and the
example plugin in docs/hooks.md works as written."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable

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
