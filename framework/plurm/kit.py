"""The plugin author's kit: ``plurm plugin new KIND NAME`` writes a package that works.

KIND ``preempt`` writes a preemption policy (``PreemptType=preempt/NAME``), every preempt
hook stubbed with its documentation, the required ones answering as a simple tier policy
does; KIND ``guard`` writes a guard (``PreemptGuards=preempt/NAME`` in plurm.conf) with its
``preempt_veto`` and one declared option; KIND ``priority`` writes a job priority policy
(``PriorityType=priority/NAME``), every priority hook stubbed, ``priority_job_set`` answering
with a smallest-job-first priority. Each package has a pyproject with the entry point, tests
that use Plurm's fixtures and run the combination invariants
(:mod:`plurm.testing.invariants`) with the plugin, and a tox.ini; its tests pass as written.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from pathlib import Path

from plurm._markers import HOOK_API_VERSION
from plurm.errors import PlurmError
from plurm.hookspecs import preempt, priority

__all__ = ["KINDS", "KitError", "new_plugin"]

KINDS = ("preempt", "guard", "priority")
#: The plugin type each kit writes (a guard is a preempt plugin too).
_TYPES = {"preempt": "preempt", "guard": "preempt", "priority": "priority"}

#: Where the names hook signatures use come from, for the generated TYPE_CHECKING imports.
_IMPORTS = {
    "Job": "plurm.model.job",
    "Cluster": "plurm.model.cluster",
    "PreemptMode": "plurm.conf.values",
    "Any": "typing",
    "Mapping": "collections.abc",
    "Sequence": "collections.abc",
    "PriorityFactors": "plurm.model.priority",
    "PriorityWeights": "plurm.model.priority",
    "ShareRow": "plurm.model.priority",
}

#: The policy's answers: a job preempts jobs of partitions of a strictly lower PriorityTier.
_POLICY = {
    "preempt_preemptable": "return _tier(preemptee, cluster) < _tier(preemptor, cluster)",
    "preempt_mode": (
        "part = cluster.partition(job.partition)\n"
        "mode = part.preempt_mode or cluster.config.preempt_mode\n"
        "return PreemptMode(mode.base)  # without the GANG, WITHIN and PRIORITY flags"
    ),
    "preempt_priority": (
        "return (_tier(job, cluster) << 16) + len(job.nodes)  # lower tiers, smaller jobs first"
    ),
    "preempt_grace_time": "return cluster.partition(job.partition).grace_time",
    "preempt_job_preempt_check": ("return self.preempt_preemptable(preemptor, preemptee, cluster)"),
}


class KitError(PlurmError):
    """The kit cannot write the package asked for."""


#: The priority policy's one answer: fewer CPUs first (then first come, as the queue breaks
#: ties by job id), less the job's --nice.
_PRIORITY_POLICY = {
    "priority_job_set": (
        "cpus = job.request.cpus\nreturn max(1, _TOP - min(cpus, _TOP - 1) * 10 - job.request.nice)"
    ),
}


def _stub(name: str, body: str | None, module: object = preempt) -> str:
    function = getattr(module, name)
    signature = inspect.signature(function)
    params = ", ".join(
        ["self", *(f"{p.name}: {p.annotation}" for p in signature.parameters.values())]
    )
    summary = inspect.cleandoc(function.__doc__ or "").split("\n\n", 1)[0]
    see = f"See docs/hooks.md ({name}) for when it is called and what it must\nanswer."
    doc = textwrap.indent(f'"""{summary}\n\n{see}"""', "    ")
    code = body if body is not None else "return None  # no answer: the core's default"
    return (
        f"@hookimpl\ndef {name}({params}) -> {signature.return_annotation}:\n{doc}\n"
        + textwrap.indent(code, "    ")
        + "\n"
    )


def _imports(code: str) -> str:
    names = sorted((n for n in _IMPORTS if re.search(rf"\b{n}\b", code)), key=_IMPORTS.__getitem__)
    lines = [f"    from {_IMPORTS[n]} import {n}" for n in names if n != "PreemptMode"]
    return "\n".join(lines)


def _policy_module(name: str, cls: str) -> str:
    hooks = sorted(
        n
        for n, f in vars(preempt).items()
        if inspect.isfunction(f) and f.__module__ == preempt.__name__ and n != "preempt_veto"
    )
    stubs = "\n".join(textwrap.indent(_stub(hook, _POLICY.get(hook)), "    ") for hook in hooks)
    return f'''"""preempt/{name}: a preemption policy for Plurm (``PreemptType=preempt/{name}``).

As generated it lets a job preempt jobs of partitions with a strictly lower PriorityTier, by
the victim partition's PreemptMode; change the answers to make it yours. Every preempt hook
is here: those that answer None leave the core's default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plurm import HOOK_API_VERSION, hookimpl
from plurm.conf.values import PreemptMode
from plurm.registry import PluginContext

if TYPE_CHECKING:
{_imports(stubs)}

__all__ = ["{cls}"]


def _tier(job: Job, cluster: Cluster) -> int:
    return cluster.partition(job.partition).priority_tier


class {cls}:
    """The preempt/{name} policy."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context

{stubs}'''


def _priority_module(name: str, cls: str) -> str:
    hooks = sorted(
        n
        for n, f in vars(priority).items()
        if inspect.isfunction(f) and f.__module__ == priority.__name__
    )
    stubs = "\n".join(
        textwrap.indent(_stub(hook, _PRIORITY_POLICY.get(hook), priority), "    ") for hook in hooks
    )
    return f'''"""priority/{name}: a job priority policy (``PriorityType=priority/{name}``).

As generated it puts the jobs asking for fewer CPUs first (the queue breaks ties by job id:
first come, first served), less each job's ``--nice``; change the answers to make it yours.
Every priority hook is here: those that answer None leave the core's default (no periodic
recalculation, nothing for sprio and sshare to show, nothing kept across a restart).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plurm import HOOK_API_VERSION, hookimpl
from plurm.registry import PluginContext

if TYPE_CHECKING:
{_imports(stubs)}

__all__ = ["{cls}"]

#: The highest priority it gives.
_TOP = 100_000


class {cls}:
    """The priority/{name} policy."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context

{stubs}'''


def _guard_module(name: str, cls: str) -> str:
    veto = _stub("preempt_veto", "return preemptee.run_time(cluster.now) >= self.min_run")
    return f'''"""preempt/{name}: a guard for Plurm (PreemptGuards=preempt/{name} in plurm.conf).

A guard stands beside whatever PreemptType policy the site runs and may only veto its
victims. As generated it spares jobs that have run ``min_run`` seconds or more
(``PreemptParameters=min_run=SECONDS`` in slurm.conf; default 3600).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plurm import HOOK_API_VERSION, hookimpl
from plurm.params import PluginOption
from plurm.registry import PluginContext

if TYPE_CHECKING:
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job

__all__ = ["{cls}"]


class {cls}:
    """The preempt/{name} guard."""

    PLURM_HOOK_API = HOOK_API_VERSION
    PLURM_OPTIONS = (
        PluginOption("min_run", kind="int", default=3600, help="seconds until a job is no victim"),
    )

    def __init__(self, context: PluginContext) -> None:
        self.min_run = int(context.options["min_run"])  # type: ignore[call-overload]

{textwrap.indent(veto, "    ")}'''


def _tests(kind: str, name: str, package: str, cls: str) -> str:
    type_string = f"{_TYPES[kind]}/{name}"
    if kind == "priority":
        combination = f'Combination("select/linear", priority="{type_string}")'
        extra = ""
        plugins = f'{{"{type_string}": {cls}}}'
        behaviour = f"""

def test_the_smaller_job_starts_first_though_submitted_last(make_cluster, job) -> None:
    cluster = make_cluster(
        "SelectType=select/cons_res\\nSelectTypeParameters=CR_Core\\n"
        "PriorityType={type_string}\\nNodeName=n1 CPUs=4\\n"
        "PartitionName=p Nodes=ALL Default=YES\\n",
        plugins={plugins},
    )
    cluster.submit(job().tasks(4).runtime(100))  # fills the node until t=100
    cluster.run_until(10)
    big = cluster.submit(job().tasks(4).runtime(100))
    small = cluster.submit(job().tasks(1).runtime(100))
    assert cluster.job(small).priority > cluster.job(big).priority
    cluster.run_until(150)
    assert cluster.state(small).name == "RUNNING"
    assert cluster.state(big).name == "PENDING"
"""
    elif kind == "preempt":
        combination = f'Combination("select/linear", "{type_string}")'
        extra = ""
        plugins = f'{{"{type_string}": {cls}}}'
        behaviour = f"""

def test_a_higher_tier_preempts_a_lower_one(make_cluster, job) -> None:
    cluster = make_cluster(
        "PreemptType={type_string}\\nPreemptMode=REQUEUE\\nJobRequeue=1\\nNodeName=n1 CPUs=1\\n"
        "PartitionName=low Nodes=ALL Default=YES PriorityTier=1\\n"
        "PartitionName=high Nodes=ALL PriorityTier=2\\n",
        plugins={plugins},
    )
    low = cluster.submit(job().runtime(600))
    cluster.settle()
    high = cluster.submit(job().partition("high").runtime(60))
    cluster.settle()
    assert cluster.state(high).name == "RUNNING"
    assert cluster.job(low).restarts == 1
"""
    else:
        combination = (
            f'Combination("select/linear", "preempt/partition_prio", guards=("{type_string}",))'
        )
        extra = ""
        plugins = f'{{"{type_string}": {cls}}}'
        behaviour = f'''

def test_it_spares_a_job_that_ran_long_enough(make_cluster, job, tmp_path) -> None:
    conf = (
        "PreemptType=preempt/none\\nPreemptParameters=min_run=100\\nNodeName=n1 CPUs=1\\n"
        "PartitionName=p Nodes=ALL Default=YES\\n"
    )
    cluster = make_cluster(conf, plugins={plugins}, plurm_text="PreemptGuards={type_string}\\n")
    guard = next(p.plugin for p in cluster.plugins.loaded if p.type_string == "{type_string}")
    assert guard.min_run == 100
    running = cluster.submit(job().runtime(600))
    cluster.run_until(150)
    victim = cluster.job(running)
    other = cluster.submit(job().runtime(10))
    assert guard.preempt_veto(cluster.job(other), victim, cluster.controller.cluster) is True
'''
    return f'''"""Tests of {type_string}, with the fixtures Plurm ships (make_cluster, job)."""

from __future__ import annotations

from importlib import metadata

from plurm.testing.invariants import (
    Combination,
    check_deterministic,
    check_invariants,
    run_workload,
)
from {package} import {cls}

COMBINATION = {combination}{extra}


def test_the_entry_point_names_the_plugin() -> None:
    found = [
        ep
        for ep in metadata.entry_points(group="plurm.{_TYPES[kind]}")
        if ep.name == "{name}"
    ]
    assert [ep.load() for ep in found] == [{cls}]
{behaviour}

def test_the_combination_invariants_hold(make_cluster) -> None:
    run = run_workload(make_cluster, COMBINATION, plugins={plugins})
    check_invariants(run, COMBINATION)


def test_the_same_input_gives_the_same_history(make_cluster) -> None:
    check_deterministic(make_cluster, COMBINATION, plugins={plugins})
'''


def new_plugin(kind: str, name: str, directory: Path) -> list[Path]:
    """Write the package of a ``kind`` plugin called ``name`` into ``directory``; the files
    written."""
    if kind not in KINDS:
        raise KitError(f"plurm plugin new: no kit for {kind!r} (kits: {', '.join(KINDS)})")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise KitError(f"plurm plugin new: {name!r} is not a plugin name (a-z, 0-9 and _)")
    if directory.exists() and any(directory.iterdir()):
        raise KitError(f"plurm plugin new: {directory} exists and is not empty")
    kind_type = _TYPES[kind]
    package = f"plurm_{kind_type}_{name}"
    cls = "".join(part.capitalize() for part in name.split("_")) or "Plugin"
    if kind == "priority":
        module = _priority_module(name, cls)
    else:
        module = _policy_module(name, cls) if kind == "preempt" else _guard_module(name, cls)
    what = {"preempt": "preemption policy", "guard": "guard", "priority": "job priority policy"}
    major, minor = HOOK_API_VERSION
    files = {
        "pyproject.toml": f'''[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "plurm-{kind_type}-{name.replace("_", "-")}"
version = "0.1.0"
description = "{kind_type}/{name}: a {what[kind]} for Plurm"
requires-python = ">=3.11"
# Written against hook API {major}.{minor}: any Plurm of that major version loads it.
dependencies = ["plurm"]

[project.entry-points."plurm.{kind_type}"]
{name} = "{package}:{cls}"

[tool.setuptools]
packages = ["{package}"]
''',
        f"{package}/__init__.py": module,
        "tests/__init__.py": "",
        f"tests/test_{name}.py": _tests(kind, name, package, cls),
        "tox.ini": """[tox]
env_list = py3

[testenv]
description = the plugin's tests and the combination invariants with it (needs plurm and
    plurm-select-linear from your index)
deps =
    plurm[test]
    plurm-select-linear
    plurm-preempt-partition-prio
commands = pytest {posargs:-q}
""",
        "README.md": (
            f"# {kind_type}/{name}\n\nSee docs/plugins.md in Plurm for how to write one.\n"
        ),
    }
    written = []
    for relative, text in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written
