"""The whole path of definitions and branches around a line, where it says more than the innermost
definition (`Place.path`, part of a finding's fingerprint: analyzers/code/place.py). Pure.

Two findings with the same content in two same-named definitions had one fingerprint, so
dismissing the harmless one hid the other. The path tells them apart by what the code says:

- Python (`ast`): every definition from the module down, same-named siblings (singledispatch's
  `@f.register def _`, a property's getter and setter, `def run` in both arms of an `if`) by
  their order among them and how many there are ("function _ #2/3"), a property accessor by its
  decorator ("(setter)"); every branch on the way: the arm of an `if` ("if os.name == 'nt'",
  "else of if …"), a `try`'s clauses, a `match`'s case.
- Java, JavaScript, TypeScript (the scan of braces, analyzers/code/enclosing.py): every brace
  on the way that a definition, an object literal's key (`{admin: {run() {…}}}` → "key admin >
  function run"), a variable's object, or a branch (`if (…)`, `else`, `try`, `catch`,
  `finally`, `switch`) opened.

"" when the path holds nothing but the definitions' names, so a fingerprint where the path adds
nothing is what it was before the path existed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence

from analyzers.code.enclosing import BRACE_LANGUAGES, brace_headers
from analyzers.code.pyparse import parse

SEP = " > "
CONDITION_CHARS = 80
_ACCESSORS = frozenset({"getter", "setter", "deleter"})
Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def paths(text: str, language: str | None, lines: Iterable[int]) -> dict[int, str]:
    """The path around each of `lines` ("" where it says no more than the definitions' names, or
    where the file cannot be read as `language`)."""
    wanted = sorted(set(lines))
    if language == "python":
        try:
            tree = parse(text)
        except SyntaxError:
            return dict.fromkeys(wanted, "")
        return {ln: _joined(_python(tree.body, ln)) for ln in wanted}
    if language in BRACE_LANGUAGES:
        found = brace_headers(text, wanted)
        return {ln: "" if headers is None else _joined([_brace_step(d, h) for d, h in headers])
                for ln, headers in found.items()}
    return dict.fromkeys(wanted, "")


Step = tuple[str, bool]  # one element of a path, and whether it says more than a definition's name


def _joined(steps: Sequence[Step | None]) -> str:
    kept = [s for s in steps if s is not None]
    return SEP.join(text for text, _ in kept) if any(extra for _, extra in kept) else ""


# ---------------------------------------------------------------------------- Python
def _short(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= CONDITION_CHARS else text[:CONDITION_CHARS - 1] + "…"


def _inside(nodes: Sequence[ast.AST], line: int) -> ast.AST | None:
    for n in nodes:
        start = min([getattr(n, "lineno", 0), *(d.lineno for d in getattr(n, "decorator_list", []))])
        if start <= line <= (getattr(n, "end_lineno", None) or start):
            return n
    return None


def _arms(node: ast.AST) -> list[tuple[str | None, list[ast.stmt]]]:
    """The arms of a compound statement, each with its words (None: not a branch)."""
    if isinstance(node, ast.If):
        cond = _short(node.test)
        return [(f"if {cond}", node.body), (f"else of if {cond}", node.orelse)]
    if isinstance(node, ast.Try | ast.TryStar):
        handlers = [(f"except {_short(h.type)}" if h.type else "except", h.body)
                    for h in node.handlers if isinstance(h, ast.ExceptHandler)]
        return [("try", node.body), *handlers, ("else of try", node.orelse), ("finally", node.finalbody)]
    if isinstance(node, ast.Match):
        return [(f"case {_short(c.pattern)}", c.body) for c in node.cases]
    body = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
    return [(None, body)]


def _flat_defs(nodes: Sequence[ast.AST]) -> list[Def]:
    """The definitions of one scope: among `nodes` and inside their branches, loops and blocks."""
    out: list[Def] = []
    for n in nodes:
        if isinstance(n, Def):
            out.append(n)
        elif isinstance(n, ast.stmt):
            out += [d for _, body in _arms(n) for d in _flat_defs(body)]
    return out


def _accessor(node: Def) -> str:
    for d in node.decorator_list:
        if isinstance(d, ast.Name) and d.id == "property":
            return " (getter)"
        if isinstance(d, ast.Attribute) and d.attr in _ACCESSORS:
            return f" ({d.attr})"
    return ""


def _python(body: Sequence[ast.stmt], line: int) -> list[Step | None]:
    steps: list[Step | None] = []
    scope = _flat_defs(body)
    in_class = False
    nodes: Sequence[ast.AST] = body
    while (node := _inside(nodes, line)) is not None:
        if isinstance(node, Def):
            kind = "class" if isinstance(node, ast.ClassDef) else "method" if in_class else "function"
            same = [d for d in scope if d.name == node.name]
            order = f" #{same.index(node) + 1}/{len(same)}{_accessor(node)}" if len(same) > 1 else ""
            steps.append((f"{kind} {node.name}{order}", bool(order)))
            in_class, nodes = isinstance(node, ast.ClassDef), node.body
            scope = _flat_defs(node.body)
            continue
        arm = next(((words, arm) for words, arm in _arms(node) if _inside(arm, line) is not None), None)
        if arm is None:
            break  # the line is in the statement's own head (an `if`'s condition)
        steps.append(None if arm[0] is None else (arm[0], True))
        nodes = arm[1]
    return steps


# ---------------------------------------------------------------------------- braces
_KEY = re.compile(r"(?:^|[,{(]\s*)([A-Za-z_$][\w$]*|'\d+'|\[[^\]]*\])\s*:$")
_OBJECT = re.compile(r"(?:^|[\s(,])([A-Za-z_$][\w$.]*)\s*=$")
_BRANCH = re.compile(r"^(?:(else\s+if|if|while|switch|catch)\s*\(.*\)|else|try|finally|do)$")


def _brace_step(d: object, header: str) -> Step | None:
    """One open brace's part of the path: a definition (no more than its name), a key, an object
    assigned to a name, a branch; None for any other block."""
    if d is not None:
        return (str(d), False)
    head = header.strip()
    if (m := _KEY.search(head)) is not None:
        return (f"key {m.group(1)}", True)
    if (m := _OBJECT.search(head)) is not None:
        return (f"object {m.group(1)}", True)
    if _BRANCH.match(head):
        return (head if len(head) <= CONDITION_CHARS else head[:CONDITION_CHARS - 1] + "…", True)
    return None
