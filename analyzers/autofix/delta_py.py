"""Python: the constructs a piece of code holds, read from the AST of the whole file.

`constructs(text, lines)` parses the file and returns what the nodes that start on `lines`
do, as `Construct`s (analyzers/autofix/allowlist.py compares the fixed lines' with the
flagged lines'):

- every call, by its dotted name resolved through the file's imports (`from shlex import
  quote` makes `quote(x)` a call of `shlex.quote`; `cmd.split()` stays `cmd.split`; a method
  of a value that is no name, `hashlib.sha256(b).hexdigest()`, is `*.hexdigest`);
- a call of something that is not a name (a subscript, a call's result, a lambda): COMPUTED;
- dynamic dispatch: `getattr` and its kin, `__import__`, `importlib.import_module`, `eval`,
  `exec`, `compile`, `globals`/`locals`/`vars`, any dunder attribute (`__dict__`,
  `__builtins__`, …): DYNAMIC;
- a dangerous callable or an imported name referred to without being called (`run = eval`,
  `m = subprocess`, `partial(os.system, …)`): ALIAS;
- `**kwargs` or `*args` in a call: UNPACKED;
- `shell=` anything but the literal `False`, an `executable=`, a `subprocess` call with more than one
  positional argument (shell is Popen's ninth), or a shell program as the first item of an
  argument list (`["sh", "-c", cmd]`): SHELL;
- every import, by the module (and name) it binds: IMPORT.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping

from analyzers.autofix.constructs import SHELLS, Added, Construct
from analyzers.code import pyparse

DYNAMIC_CALLS = frozenset({
    "getattr", "setattr", "delattr", "__import__", "importlib.import_module", "importlib.__import__",
    "eval", "exec", "compile", "globals", "locals", "vars", "operator.attrgetter", "operator.methodcaller",
    "builtins.getattr", "builtins.eval", "builtins.exec", "builtins.__import__", "builtins.compile",
})
# referred to without a call, these are a callable handed on (an alias): refused
DANGEROUS = DYNAMIC_CALLS | {"open", "breakpoint", "os.system", "os.popen", "subprocess.call", "subprocess.run",
                             "subprocess.Popen", "subprocess.check_call", "subprocess.check_output",
                             "subprocess.getoutput", "subprocess.getstatusoutput", "pickle.loads", "pickle.load",
                             "marshal.loads", "yaml.load", "yaml.unsafe_load"}
_TEXT_LIMIT = 80


def imports_of(tree: ast.AST) -> dict[str, str]:
    """Each name an import binds (anywhere in the file) → the dotted name it stands for."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            mod = "." * node.level + (node.module or "")
            for a in node.names:
                bound[a.asname or a.name] = f"{mod}.{a.name}"
    return bound


def constructs(text: str, lines: range) -> list[Construct]:
    """What the nodes starting on `lines` of the file `text` do (SyntaxError where the file
    does not parse)."""
    tree = pyparse.parse(text)
    bound = imports_of(tree)
    nodes = [n for n in ast.walk(tree) if getattr(n, "lineno", None) in lines]
    callees = {id(part) for n in nodes if isinstance(n, ast.Call) for part in _chain(n.func)}
    roots = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    out: list[Construct] = []
    for n in nodes:
        out += _of_node(n, bound, callees, roots)
    return out


def _of_node(n: ast.AST, bound: Mapping[str, str], callees: set[int], roots: set[int]) -> Iterator[Construct]:
    if isinstance(n, ast.Call):
        yield from _of_call(n, bound)
    elif isinstance(n, ast.Attribute) and _dunder(n.attr):
        yield Construct(Added.DYNAMIC, f".{n.attr}")
    elif isinstance(n, ast.Name) and _dunder(n.id) and n.id != "__name__":
        yield Construct(Added.DYNAMIC, n.id)
    elif isinstance(n, ast.Import):
        yield from (Construct(Added.IMPORT, a.name) for a in n.names)
    elif isinstance(n, ast.ImportFrom):
        mod = "." * n.level + (n.module or "")
        yield from (Construct(Added.IMPORT, f"{mod}.{a.name}") for a in n.names)
    if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load) and id(n) not in callees:
        name = _dotted(n, bound)
        if name in DANGEROUS or (isinstance(n, ast.Name) and n.id in bound and id(n) not in roots):
            yield Construct(Added.ALIAS, name or _text(n))


def _of_call(call: ast.Call, bound: Mapping[str, str]) -> Iterator[Construct]:
    name = _dotted(call.func, bound)
    if name is None:
        yield Construct(Added.COMPUTED, _text(call.func))
    elif name in DYNAMIC_CALLS:
        yield Construct(Added.DYNAMIC, name)
    else:
        yield Construct(Added.CALL, name)
    for kw in call.keywords:
        if kw.arg is None:
            yield Construct(Added.UNPACKED, f"**{_text(kw.value)}")
        elif kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
            yield Construct(Added.SHELL, f"shell={_text(kw.value)}")
        elif kw.arg == "executable":  # Popen(["-c", cmd], executable="/bin/sh") is a shell
            yield Construct(Added.SHELL, f"executable={_text(kw.value)}")
    for a in call.args:
        if isinstance(a, ast.Starred):
            yield Construct(Added.UNPACKED, f"*{_text(a.value)}")
        elif isinstance(a, (ast.List, ast.Tuple)) and a.elts and _shell_program(a.elts[0]):
            yield Construct(Added.SHELL, _text(a))
    if name is not None and name.startswith("subprocess.") and len(call.args) > 1:
        yield Construct(Added.SHELL, f"{name} with {len(call.args)} positional arguments")


def _shell_program(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and \
        node.value.rsplit("/", 1)[-1].lower() in SHELLS


def _chain(node: ast.expr) -> Iterable[ast.expr]:
    """The callee and every receiver it is reached through (`a.b.c` → `a.b.c`, `a.b`, `a`)."""
    while True:
        yield node
        if not isinstance(node, ast.Attribute):
            return
        node = node.value


def _dotted(node: ast.expr, bound: Mapping[str, str]) -> str | None:
    """`subprocess.call` (through the imports), `cmd.split`, `str.join` (a string's method),
    `*.hexdigest` (a method of another value), or None for what has no name."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        root = bound.get(node.id, node.id)
    elif attrs and isinstance(node, ast.Constant):
        root = type(node.value).__name__
    elif attrs:
        root = "*"
    else:
        return None
    return ".".join([root, *reversed(attrs)])


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _text(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"
