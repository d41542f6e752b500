"""The definition a line of a file sits in: "method Stats._windowed_running_min", "class Cart",
"function render". Pure.

Git's hunk header (`@@ … @@ def running_mean`) names the nearest definition line *above* the
hunk, which is often the function before the one changed; a report names the innermost
function or class that encloses the hunk's first changed line, read from the file at the head:
Python with `ast`, Java, JavaScript and TypeScript with a scan of braces that skips strings and
comments. None when the file cannot be parsed (the caller falls back to git's header); "" when
the line is in no definition (module level).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from analyzers.code.diff import Hunk, one_line

BRACE_LANGUAGES = frozenset({"java", "javascript", "typescript"})
LABEL_CHARS = 120  # a hunk's label: a definition's name is the pull request's, of any length


@dataclass(frozen=True)
class Definition:
    kind: str  # "class", "function" or "method"
    name: str  # qualified by the definitions around it: "Outer.Inner.run"
    start: int = field(default=0, compare=False)  # its first line (a decorator's; a brace's line)
    end: int = field(default=0, compare=False)  # its last line where the parser says (Python), else 0

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


def first_changed_line(hunk: Hunk) -> int:
    """The head-file line where the hunk's change starts: its first added line, else (a removal
    only) the head line after the removed lines, else the one before."""
    for i, ln in enumerate(hunk.lines):
        if ln.kind == "+" and ln.new_no is not None:
            return ln.new_no
        if ln.kind == "-":
            after = [x.new_no for x in hunk.lines[i:] if x.new_no is not None]
            before = [x.new_no for x in hunk.lines[:i] if x.new_no is not None]
            return (after[:1] or before[-1:] or [max(hunk.new_start, 1)])[0]
    return max(hunk.new_start, 1)


def enclosing(text: str, language: str | None, line: int) -> str | None:
    """The innermost definition around `line` (1-based) of `text` in words, "" when there is
    none, None when the file cannot be read as `language`."""
    if language == "python":
        found = _python(text, line)
    elif language in BRACE_LANGUAGES:
        found = _braces(text, line)
    else:
        return None
    if found is None:
        return None
    return str(found[-1]) if found else ""


def innermost(text: str, language: str | None, lines: Sequence[int]) -> list[Definition | None] | None:
    """The innermost definition around each of `lines` (None for a line in none), the file read
    once for all of them; None when the file cannot be read as `language`."""
    chains: list[list[Definition] | None] | None
    if language == "python":
        tree = _parse(text)
        chains = None if tree is None else [_python_chain(tree, ln) for ln in lines]
    elif language in BRACE_LANGUAGES:
        found = _braces_chains(_code_chars(text), lines)
        chains = [found[ln] for ln in lines]
    else:
        return None
    if chains is None or any(c is None for c in chains):
        return None
    return [c[-1] if c else None for c in chains]


def enclosing_many(text: str, language: str | None, lines: Iterable[int]) -> dict[int, str | None]:
    """`enclosing` for each of `lines`, the file read once (a PR's hunks in one file share it)."""
    wanted = sorted(set(lines))
    found: Mapping[int, list[Definition] | None]
    if language == "python":
        tree = _parse(text)
        found = {ln: None if tree is None else _python_chain(tree, ln) for ln in wanted}
    elif language in BRACE_LANGUAGES:
        found = _braces_chains(_code_chars(text), wanted)
    else:
        return dict.fromkeys(wanted)
    return {ln: None if chain is None else str(chain[-1]) if chain else "" for ln, chain in found.items()}


def chains(text: str, language: str | None, lines: Iterable[int]) -> dict[int, list[Definition]] | None:
    """The definitions around each of `lines`, outermost first, the file read once; None when the
    file cannot be read as `language` (then no line is in a definition we can name)."""
    wanted = sorted(set(lines))
    if language == "python":
        tree = _parse(text)
        return None if tree is None else {ln: _python_chain(tree, ln) for ln in wanted}
    if language in BRACE_LANGUAGES:
        found = _braces_chains(_code_chars(text), wanted)
        return None if any(c is None for c in found.values()) else {ln: c or [] for ln, c in found.items()}
    return None


def brace_headers(text: str, lines: Iterable[int]) -> dict[int, list[tuple[Definition | None, str]] | None]:
    """For each of `lines`, every brace open at it, outermost first: the definition it opened (None:
    one we do not name) and the text before it (normalised, at most HEADER_CHARS: `if (admin)`,
    `else`, `guest:`); None when the braces do not balance before it."""
    stacks = _braces_stacks(_code_chars(text), sorted(set(lines)))
    return {ln: None if st is None else [(d, h) for d, _, h in st] for ln, st in stacks.items()}


def hunk_label(hunk: Hunk, text: str | None, language: str | None) -> str:
    """What a report calls a hunk: the definition its change starts in at the head; else git's
    header context (the file not there or not parsed, or the change outside any definition: the
    same label whether the head's file was read or not); else "hunk at line N".
    One line of at most LABEL_CHARS characters (analyzers/code/diff.py `one_line`)."""
    return hunk_labels([hunk], text, language)[0]


def hunk_labels(hunks: Sequence[Hunk], text: str | None, language: str | None) -> list[str]:
    """`hunk_label` of each of a file's hunks, the file read once."""
    lines = [first_changed_line(h) for h in hunks]
    found = enclosing_many(text, language, lines) if text is not None else dict.fromkeys(lines)
    out = []
    for hunk, line in zip(hunks, lines, strict=True):
        name = found[line]
        if name:
            out.append(one_line(name, LABEL_CHARS))
        elif hunk.section:  # no definition around it, or none known: git's context line in either case,
            out.append(one_line(hunk.section, LABEL_CHARS))  # so a hunk's label is the same from a file or --git
        else:
            out.append(f"hunk at line {line}")
    return out


# ---------------------------------------------------------------------------- Python
def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _python(text: str, line: int) -> list[Definition] | None:
    tree = _parse(text)
    return None if tree is None else _python_chain(tree, line)


def _python_chain(tree: ast.Module, line: int) -> list[Definition]:
    chain: list[Definition] = []
    body: Sequence[ast.AST] = tree.body
    names: list[str] = []
    in_class = False
    while True:
        inner = next((n for n in _defs(body) if _span(n)[0] <= line <= _span(n)[1]), None)
        if inner is None:
            return chain
        names.append(inner.name)
        kind = "class" if isinstance(inner, ast.ClassDef) else "method" if in_class else "function"
        chain.append(Definition(kind, ".".join(names), *_span(inner)))
        in_class = isinstance(inner, ast.ClassDef)
        body = list(ast.iter_child_nodes(inner))


Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _defs(nodes: Sequence[ast.AST]) -> list[Def]:
    """The definitions among `nodes` and inside their non-definition statements (an `if`, a
    `try`, a `with`), in order."""
    out: list[Def] = []
    for n in nodes:
        if isinstance(n, Def):
            out.append(n)
        elif isinstance(n, ast.stmt):
            out += _defs(list(ast.iter_child_nodes(n)))
    return out


def _span(node: Def) -> tuple[int, int]:
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return start, node.end_lineno or node.lineno


# ---------------------------------------------------------------------------- braces
_CONTROL = frozenset({"if", "for", "while", "switch", "catch", "synchronized", "try", "else", "do",
                      "finally", "return", "new", "with", "static"})
_CLASS = re.compile(r"\b(class|interface|enum|record)\s+([A-Za-z_$][\w$]*)")
_JS_FUNCTION = re.compile(r"\bfunction\b\s*\*?\s*([A-Za-z_$][\w$]*)?\s*\(")
_ASSIGNED = re.compile(r"([A-Za-z_$][\w$]*)\s*[:=]\s*(?:async\s+)?(?:function\b|\(?[\w$,\s]*\)?\s*=>)")
_CALLABLE = re.compile(r"([A-Za-z_$][\w$]*)\s*\([^()]*\)\s*(?:throws\s+[\w$.,\s]+|:\s*[\w$<>\[\],.\s|]+)?$")


def _header_definition(header: str) -> Definition | None:
    """What the text before a `{` opens: a class, a function or method, or nothing we name."""
    head = " ".join(header.split())
    m = _CLASS.search(head)
    if m and "(" not in head[: m.start()]:
        return Definition("class", m.group(2))
    for pattern in (_JS_FUNCTION, _ASSIGNED):
        m = pattern.search(head)
        if m and m.group(1):
            return Definition("function", m.group(1))
    if _JS_FUNCTION.search(head) or head.endswith("=>"):
        return None  # an anonymous function or arrow: no name to give
    m = _CALLABLE.search(head)
    if m and m.group(1) not in _CONTROL and not re.search(r"\bnew\s+$", head[: m.start(1)]):
        return Definition("function", m.group(1))
    return None


Stack = list[tuple[Definition | None, int, str]]  # what each open brace opened, on which line, after what
HEADER_CHARS = 200


def _braces(text: str, line: int) -> list[Definition] | None:
    """The definitions whose braces are open at `line` (those opened on it included), outermost
    first; None when the braces do not balance before it (not a file we can read)."""
    return _braces_chains(_code_chars(text), [line])[line]


def _braces_chains(chars: Sequence[tuple[str, int]], lines: Sequence[int]) -> dict[int, list[Definition] | None]:
    """`_braces` for each of `lines`, in one pass over the characters."""
    return {ln: None if st is None else _chain(st) for ln, st in _braces_stacks(chars, lines).items()}


def _braces_stacks(chars: Sequence[tuple[str, int]], lines: Sequence[int]) -> dict[int, Stack | None]:
    """The braces open at each of `lines` (those opened on it included), in one pass over the
    characters: what comes before a line is read once for every line after it; None for a line
    before which the braces do not balance."""
    out: dict[int, Stack | None] = {}
    stack: Stack = []
    header: list[str] = []
    i, n, broken = 0, len(chars), False
    for line in sorted(set(lines)):
        while not broken and i < n and chars[i][1] < line:
            broken = not _step(stack, header, *chars[i], line)
            i += 1
        if broken:
            out[line] = None
            continue
        here, here_header, j = list(stack), list(header), i
        while j < n and chars[j][1] == line and _step(here, here_header, *chars[j], line):
            j += 1
        out[line] = None if j < n and chars[j][1] == line else here
    return out


def _step(stack: Stack, header: list[str], ch: str, at: int, line: int) -> bool:
    """One character read toward `line` (False: a `}` closes nothing)."""
    if ch == "{":
        text = "".join(header)
        stack.append((_header_definition(text), at, " ".join(text[-HEADER_CHARS:].split())))
        header.clear()
    elif ch == "}":
        if not stack:
            return False
        if at < line or stack[-1][1] == line:
            stack.pop()
        header.clear()
    elif ch == ";":
        header.clear()
    else:
        header.append(ch)
    return True


def _chain(stack: Stack) -> list[Definition]:
    chain: list[Definition] = []
    names: list[str] = []
    for d, at, _ in stack:
        if d is None:
            continue
        names.append(d.name)
        kind = "method" if d.kind == "function" and chain and chain[-1].kind == "class" else d.kind
        chain.append(Definition(kind, ".".join(names), at))
    return chain


def _code_chars(text: str) -> list[tuple[str, int]]:
    """The characters of `text` outside comments and string, character and template literals
    (each literal as `'digits'`, a digest of its text: no brace, no name, yet `"admin": {` and
    `"guest": {` stay two keys), with their 1-based line numbers."""
    out: list[tuple[str, int]] = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        two = text[i:i + 2]
        if two == "//":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if two == "/*":
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            line += text.count("\n", i, end)
            i = end
            continue
        if c in "\"'`":
            j = i + 1
            while j < n and text[j] != c and (c == "`" or text[j] != "\n"):
                j += 2 if text[j] == "\\" else 1
            end = min(n, j + 1)
            out += [(ch, line) for ch in _literal(text[i:end])]
            line += text.count("\n", i, end)
            i = end
            continue
        out.append((c, line))
        line += c == "\n"
        i += 1
    return out


def _literal(text: str) -> str:
    return "'" + str(int(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12], 16)) + "'"
