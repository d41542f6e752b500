"""Python smells: the Pyscent set with its thresholds, from radon and `ast`, all in process.

| smell | rule | source |
|---|---|---|
| long method | > 50 statements | pylint's too-many-statements (R0915), counted as pylint does (design.py) |
| long parameter list | > 5 arguments | pylint's too-many-arguments (R0913), the same |
| long branch | > 12 branches | pylint's too-many-branches (R0912), the same |
| many methods | > 20 public methods | pylint's too-many-public-methods (R0904), the same |
| many attributes | > 7 instance attributes | pylint's too-many-instance-attributes (R0902), the same |
| complex function | cyclomatic complexity rank C or worse (≥ 11) | radon |
| low cohesion | class cohesion < 30 % (mean share of instance attributes each method uses) | ast |
| long lambda | > 60 characters | ast |
| long list comprehension | > 72 characters | ast |
| shotgun surgery | a class calling > 7 distinct external functions | ast |
| useless try/except | a bare `except:` or a handler that only `pass`es | ast |

Code that does not parse (a hunk is often a fragment) is dedented and retried, else skipped.
No process is started: pylint's five checks are counted on the parsed tree (design.py, held to
pylint's own messages by tests/analyzers/crscore/test_design.py), so the detector costs
milliseconds, not a Python start-up and astroid's inference (about a second).
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping

from analyzers.code import pyparse
from analyzers.crscore.smells.design import Message, design_messages
from analyzers.crscore.smells.found import Smell, SmellReport

MIN_CC_RANK = "C"  # radon: C = 11–20
MIN_COHESION = 0.30
MAX_LAMBDA_CHARS = 60
MAX_LISTCOMP_CHARS = 72
MAX_EXTERNAL_CALLS = 7

DESIGN_SMELLS = {
    "too-many-statements": "Long method",
    "too-many-arguments": "Long parameter list",
    "too-many-branches": "Long branch",
    "too-many-public-methods": "Many methods",
    "too-many-instance-attributes": "Many attributes",
}


def parseable(code: str) -> str | None:
    """The code as given, or dedented, if it parses; else None."""
    for candidate in (code, textwrap.dedent(code)):
        try:
            pyparse.parse(candidate)
            return candidate
        except (SyntaxError, ValueError):
            continue
    return None


def radon_smells(tree: ast.Module) -> list[Smell]:
    from radon.complexity import cc_rank, cc_visit_ast

    out = []
    for block in cc_visit_ast(tree):  # radon's own cc_visit parses unlocked
        rank = cc_rank(block.complexity)
        if rank >= MIN_CC_RANK:
            out.append(Smell("pyscent", block.lineno, "complex-function", "", text=(
                f"line {block.lineno}, complex function smell: `{block.name}` has cyclomatic complexity "
                f"{block.complexity} (rank {rank})")))
    return out


def _self_attrs(node: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(node)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"}


def _call_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        if isinstance(f.value, ast.Name) and f.value.id in ("self", "cls"):
            return None  # the class's own methods are not external
        base = f.value.id if isinstance(f.value, ast.Name) else "…"
        return f"{base}.{f.attr}"
    return None


def ast_smells(code: str, tree: ast.Module) -> list[Smell]:
    out: list[Smell] = []

    def src(node: ast.AST) -> str:
        return ast.get_source_segment(code, node) or ""

    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and len(src(node)) > MAX_LAMBDA_CHARS:
            out.append(Smell("pyscent", node.lineno, "long-lambda", "", text=(
                f"line {node.lineno}, long lambda smell: a lambda of {len(src(node))} characters "
                f"(more than {MAX_LAMBDA_CHARS})")))
        elif isinstance(node, ast.ListComp) and len(src(node)) > MAX_LISTCOMP_CHARS:
            out.append(Smell("pyscent", node.lineno, "long-list-comprehension", "", text=(
                f"line {node.lineno}, long list comprehension smell: {len(src(node))} characters "
                f"(more than {MAX_LISTCOMP_CHARS})")))
        elif isinstance(node, ast.ExceptHandler):
            bare = node.type is None
            only_pass = all(isinstance(s, ast.Pass) for s in node.body)
            if bare or only_pass:
                why = "a bare except" if bare else "an except that only passes"
                out.append(Smell("pyscent", node.lineno, "useless-try-except", "", text=(
                    f"line {node.lineno}, useless exception handling smell: {why}")))
        elif isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
            attrs = _self_attrs(node)
            used = [len(_self_attrs(m) & attrs) / len(attrs) for m in methods if attrs
                    and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in m.decorator_list)]
            if attrs and len(used) >= 2:
                cohesion = sum(used) / len(used)
                if cohesion < MIN_COHESION:
                    out.append(Smell("pyscent", node.lineno, "low-cohesion", "", text=(
                        f"line {node.lineno}, low cohesion smell: class `{node.name}` has cohesion "
                        f"{cohesion:.0%} (below {MIN_COHESION:.0%})")))
            external = {name for n in ast.walk(node) if isinstance(n, ast.Call)
                        for name in [_call_name(n)] if name}
            if len(external) > MAX_EXTERNAL_CALLS:
                out.append(Smell("pyscent", node.lineno, "shotgun-surgery", "", text=(
                    f"line {node.lineno}, shotgun surgery smell: class `{node.name}` calls "
                    f"{len(external)} external functions (more than {MAX_EXTERNAL_CALLS})")))
    return out


def design_smell(msg: Message) -> Smell:
    """One of pylint's design messages as a smell, worded as pylint's was."""
    label = DESIGN_SMELLS[msg.symbol]
    where = f" in `{msg.obj}`" if msg.obj else ""
    return Smell("pyscent", msg.line, msg.symbol, msg.message,
                 text=f"line {msg.line}, {label.lower()} smell{where}: {msg.message}")


def detect_python(files: Mapping[str, str]) -> dict[str, SmellReport]:
    out = {name: SmellReport() for name in files}
    for name, code in files.items():
        fixed = parseable(code)
        if fixed is None:
            out[name].skipped = "not parseable Python (a hunk is often a fragment)"
            continue
        tree = pyparse.parse(fixed)
        smells = radon_smells(tree) + ast_smells(fixed, tree) + [design_smell(m) for m in design_messages(tree)]
        out[name].smells = sorted(smells, key=lambda s: (s.line, s.rule))
    return out
