"""No import cycle anywhere in analyzers/, reporters/ and bot/: every `import` and `from … import`
of every module, those inside functions and under `if TYPE_CHECKING:` included (read from the
source with ast, so an import held back to dodge a circle still counts), makes a graph whose
strongly connected components are all single modules without a self-edge. import-linter's
layers contract orders the packages; this finds a circle inside one too."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

from tests.support import ROOT, syntax_nodes

PACKAGES = ("analyzers", "reporters", "bot")
def modules() -> dict[str, Path]:
    """Every module of the packages by its dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for top in PACKAGES:
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The known modules that module `name` imports: `from p import m` is module p.m where there is
    one, else p; a relative import is resolved against the module's package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in syntax_nodes(path):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import a.b.c` of a name inside a module
                target = target.rpartition(".")[0]
            if target:
                yield target


def graph() -> nx.DiGraph:
    known = modules()
    g = nx.DiGraph()
    g.add_nodes_from(known)
    g.add_edges_from((name, target) for name, path in known.items() for target in imported(name, path, known))
    return g


def cycles(g: nx.DiGraph) -> list[list[str]]:
    """Each circle of imports: a strongly connected set of several modules, or one that imports itself."""
    return [sorted(c) for c in nx.strongly_connected_components(g)
            if len(c) > 1 or any(g.has_edge(n, n) for n in c)]


def test_no_module_of_analyzers_reporters_or_bot_is_in_an_import_cycle() -> None:
    g = graph()
    assert len(g) > 150  # every module is read
    assert g.has_edge("bot.app.comment_commands", "bot.core.answer_command")  # imports at the top
    assert g.has_edge("bot.cli.commands._qualify_store", "bot.store.db")  # and inside functions
    assert cycles(g) == []


def test_the_finder_sees_a_circle_held_by_an_import_inside_a_function(tmp_path: Path) -> None:
    """A toy package whose second module imports the first inside a function: a cycle."""
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "a.py").write_text("from toy.b import g\n", encoding="utf-8")
    (pkg / "b.py").write_text("def g():\n    from . import a\n    return a\n", encoding="utf-8")
    known = {"toy": pkg / "__init__.py", "toy.a": pkg / "a.py", "toy.b": pkg / "b.py"}
    g = nx.DiGraph((n, t) for n, p in known.items() for t in imported(n, p, known))
    assert cycles(g) == [["toy.a", "toy.b"]]
