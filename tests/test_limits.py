"""The size limits of the product's code, with headroom (issue #42, after #28's 500, 20 and 60):
in bot/, reporters/ and analyzers/ no module over 400 lines, no class with more than 15 methods
(private ones too) and no function over 50 lines, its decorators and docstring counted. The
failure lists every place over a limit, so one run shows all that is left to split."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import ROOT, syntax_nodes

PACKAGES = ("bot", "reporters", "analyzers")
MAX_MODULE_LINES = 400
MAX_CLASS_METHODS = 15
MAX_FUNCTION_LINES = 50


def over_limits(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """One line per module, class or function of `packages` (folders under `root`) over a limit."""
    found: list[str] = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            rel = path.relative_to(root).as_posix()
            lines = source.count("\n")
            if lines > MAX_MODULE_LINES:
                found.append(f"module {rel}: {lines} lines (at most {MAX_MODULE_LINES})")
            for node in syntax_nodes(path):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                    length = (node.end_lineno or node.lineno) - start + 1
                    if length > MAX_FUNCTION_LINES:
                        found.append(f"function {rel}:{node.lineno} {node.name}: {length} lines "
                                     f"(at most {MAX_FUNCTION_LINES})")
                elif isinstance(node, ast.ClassDef):
                    methods = sum(isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef) for b in node.body)
                    if methods > MAX_CLASS_METHODS:
                        found.append(f"class {rel}:{node.lineno} {node.name}: {methods} methods "
                                     f"(at most {MAX_CLASS_METHODS})")
    return found


def test_no_module_class_or_function_is_over_its_limit() -> None:
    found = over_limits(ROOT)
    assert not found, f"{len(found)} over the limits:\n" + "\n".join(found)


def _function(name: str, lines: int, decorators: int = 0) -> str:
    """A function of `lines` lines in all, `decorators` of them decorators."""
    body = max(lines - decorators - 2, 0)
    return ("@staticmethod\n" * decorators + f"def {name}() -> None:\n    '''Doc.'''\n"
            + "    x = 1\n" * body)


def test_the_limits_are_counted_as_the_issue_says(tmp_path: Path) -> None:
    pkg = tmp_path / "bot"
    pkg.mkdir()
    (pkg / "ok.py").write_text(_function("at_limit", 50, decorators=3) + "\n" * 10, encoding="utf-8")
    (pkg / "long.py").write_text(_function("decorated", 51, decorators=3), encoding="utf-8")
    methods = "".join(f"    def m{i}(self) -> None:\n        pass\n" for i in range(16))
    (pkg / "wide.py").write_text("class Wide:\n" + methods, encoding="utf-8")
    (pkg / "narrow.py").write_text("class Narrow:\n" + methods[:methods.index("    def m15")], encoding="utf-8")
    (pkg / "big.py").write_text("x = 1\n" * 401, encoding="utf-8")
    (pkg / "edge.py").write_text("x = 1\n" * 400, encoding="utf-8")
    found = over_limits(tmp_path, ("bot",))
    assert found == [
        "module bot/big.py: 401 lines (at most 400)",
        "function bot/long.py:4 decorated: 51 lines (at most 50)",
        "class bot/wide.py:1 Wide: 16 methods (at most 15)",
    ]


MAX_ANALYZERS_TOP = 15  # modules at the top of analyzers/; the rest sit in a package per part


def test_analyzers_keeps_at_most_15_modules_at_its_top() -> None:
    top = sorted(p.name for p in (ROOT / "analyzers").glob("*.py"))
    assert "registry.py" in top and "report.py" in top  # it reads the real folder
    assert len(top) <= MAX_ANALYZERS_TOP, f"{len(top)} modules at the top of analyzers/: {', '.join(top)}"
