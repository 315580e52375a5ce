"""The repository keeps its promises: the README's commands are the ones CI and tox run."""

from __future__ import annotations

import ast
import re

from tests.conftest import REPO


def _readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    return re.findall(r"```sh\n(python3 -m venv[^\n]*)\n```", text)


def test_readme_has_exactly_two_commands_main_job_and_tests() -> None:
    commands = _readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("tox -e demo")
    assert commands[1].endswith("tox")


def test_ci_runs_the_readme_test_command() -> None:
    script = (REPO / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()[1] in script


def test_demo_checks_every_example() -> None:
    tox = (REPO / "tox.ini").read_text()
    for example in sorted((REPO / "conf").glob("*/slurm.conf")):
        assert str(example.relative_to(REPO)) in tox


POLICY_NAMES = (
    "linear",
    "cons_res",
    "cons_tres",
    "partition_prio",
    "preempt/qos",
    "sched/gang",
    "plurm_select",
    "plurm_preempt",
    "plurm_sched",
)


def _code_strings(tree: ast.AST) -> list[str]:
    """Identifiers and string constants of a module, leaving docstrings out."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    words = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                words.append(node.value)
        elif isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            words += [alias.name for alias in node.names]
            if isinstance(node, ast.ImportFrom) and node.module:
                words.append(node.module)
    return words


def test_framework_names_no_policy() -> None:
    """The core asks and applies; it never names a policy. conf/ is the exception: the
    slurm.conf language itself names Slurm's defaults (SelectType=select/linear, ...) and its
    validation rules mention Slurm's plugins. So is kit.py, which decides nothing: the
    packages it writes run their tests beside shipped plugins (select/linear; the guard's
    tests stack it on partition_prio), which their tox.ini installs."""
    root = REPO / "framework" / "plurm"
    checked = 0
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == "conf" or path.name == "kit.py":
            continue
        checked += 1
        for word in _code_strings(ast.parse(path.read_text())):
            for name in POLICY_NAMES:
                assert name not in word.lower(), (
                    f"{path.relative_to(REPO)} names {name!r}: {word!r}"
                )
    assert checked > 20


def test_policy_check_would_catch_a_policy_name() -> None:
    tree = ast.parse('"""mentions select/linear in a docstring"""\nkind = "select/linear"\n')
    assert _code_strings(tree) == ["kind", "select/linear"]


def test_demo_replays_a_shipped_trace_into_a_report() -> None:
    tox = (REPO / "tox.ini").read_text()
    demo = tox[tox.index("[testenv:demo]") :].split("\n[", 1)[0]
    replays = [line for line in demo.splitlines() if "--trace" in line]
    assert len(replays) == 1 and "--out" in replays[0] and "--no-report" not in replays[0]
    for option in ("--trace", "--conf", "--map"):
        path = replays[0].split(f"{option} ", 1)[1].split()[0]
        assert (REPO / path).is_file(), f"the demo's {option} {path} is missing"


def _type_strings(pyproject: str) -> set[str]:
    """The type strings a plugin distribution serves: ``select/linear`` for the entry point
    ``linear`` in the group ``plurm.select``."""
    import tomllib

    groups = tomllib.loads(pyproject).get("project", {}).get("entry-points", {})
    return {
        f"{'jobacct_gather' if group == 'plurm.acct_gather' else group[6:]}/{name}"
        for group, entries in groups.items()
        if group.startswith("plurm.")
        for name in entries
    }


def test_no_plugin_names_another() -> None:
    """What a plugin needs to know of another, it asks through a hook
    (``cluster.preempt_traits``, ...): no code (docstrings may explain) in one plugin
    names another's type string or imports its package."""
    plugins = sorted(path.parent for path in (REPO / "plugins").glob("*/pyproject.toml"))
    served = {path: _type_strings((path / "pyproject.toml").read_text()) for path in plugins}
    packages = {path: {p.name for p in path.glob("plurm_*")} for path in plugins}
    assert len(plugins) >= 5 and all(served.values())
    for path in plugins:
        others = {t for other in plugins if other != path for t in served[other]}
        foreign = {p for other in plugins if other != path for p in packages[other]}
        sources = [s for package in sorted(packages[path]) for s in (path / package).rglob("*.py")]
        assert sources
        for source in sources:
            for word in _code_strings(ast.parse(source.read_text())):
                for name in others:
                    assert name not in word, f"{source.relative_to(REPO)} names {name!r}"
                for package in foreign:
                    assert package not in word, f"{source.relative_to(REPO)} imports {package}"


def test_plugin_name_check_would_catch_a_name() -> None:
    tree = ast.parse('if cluster.config.preempt_type == "preempt/qos":\n    pass\n')
    assert "preempt/qos" in _code_strings(tree)
    assert _type_strings(
        '[project.entry-points."plurm.preempt"]\nqos = "m:Q"\n'
        '[project.entry-points."plurm.acct_gather"]\nlinux = "m:L"\n'
    ) == {"preempt/qos", "jobacct_gather/linux"}
