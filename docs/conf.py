"""Sphinx configuration of the plugin author's site: the guide (plugins.md), the hook
reference (hooks.md) and the API reference that autodoc makes of the docstrings (api.rst,
written by ``python -m plurm.docgen``). ``tox -e docs`` builds it with warnings as errors."""

from __future__ import annotations

project = "Plurm"
author = "Plurm developers"
extensions = ["sphinx.ext.autodoc", "myst_parser"]
myst_fence_as_directive = ["mermaid"]
# Only the pages of the plugin author's site; the rest of docs/ is read on the forge.
root_doc = "index"
include_patterns = [
    "index.rst",
    "api.rst",
    "plugins.md",
    "hooks.md",
    "reference.md",
    "gres.md",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
nitpicky = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}
html_theme = "alabaster"

# Python's own objects (collections.abc, typing) would resolve through intersphinx, which
# needs the network; CI has none, so references to them are left unlinked.
nitpick_ignore_regex = [("py:class", r"(collections\.abc|typing|types|os|pathlib)\..*")]


def setup(app: object) -> None:
    """``mermaid`` fences (diagrams the forge draws) are shown as their source text."""
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class Mermaid(Directive):
        has_content = True

        def run(self) -> list[nodes.Node]:
            text = "\n".join(self.content)
            return [nodes.literal_block(text, text, language="text")]

    app.add_directive("mermaid", Mermaid)  # type: ignore[attr-defined]
