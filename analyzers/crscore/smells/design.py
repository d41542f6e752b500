"""pylint's design checks for the Pyscent smells, counted in process on the `ast` tree.

R0915 too-many-statements, R0913 too-many-arguments, R0912 too-many-branches, R0904
too-many-public-methods and R0902 too-many-instance-attributes, counted as pylint's
MisdesignChecker (pylint/checkers/design_analysis.py) counts them on astroid's tree, with the
same messages, objects and lines — without a pylint process (about a second to start, longer
than an LLM round) or astroid's inference:

- statements of a function: 1, plus every statement inside it (nested functions and classes
  included, docstrings not); an `if` counts 1 (2 with an `else`), a `try` its handlers, `else`
  and `finally`, a `match` 1; `def`, `class`, `return`, `for` and `while` count nothing;
- branches of a function (not of the functions nested in it): an `if` 1 (2 with an `else`),
  a `for` / `while` 1 (2 with an `else`), a `try` as above, a `match` its cases;
- arguments: positional and keyword-only, less `self` / `cls` of a method, less names that
  pylint ignores (`_…`, `ignored_…`, `unused_…`);
- public methods: names in the class body whose first binding is a `def` not starting with `_`;
- instance attributes: names assigned on a method's first argument (`self.x = …`), in the
  method or in functions nested in it, kept to `__slots__` where the class and all its bases
  in the module declare them, and a dataclass's fields (astroid's dataclass brain).

Where pylint infers what the tree does not say, this counts what the tree says (the agreement
test, tests/analyzers/crscore/test_design.py, lists each difference on its corpus): a
decorator that is a classmethod or staticmethod under another name, an attribute set on an
instance other than through a method's first argument (`obj = C(); obj.x = 1`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

MAX_STATEMENTS = 50
MAX_ARGS = 5
MAX_BRANCHES = 12
MAX_PUBLIC_METHODS = 20
MAX_ATTRIBUTES = 7

IGNORED_ARGUMENT = re.compile(r"_.*|^ignored_|^unused_")  # pylint's ignored-argument-names
DESCRIPTORS = {"classmethod": "classmethod", "staticmethod": "staticmethod",
               "abstractclassmethod": "classmethod", "abstractstaticmethod": "staticmethod"}
IMPLICIT_CLASSMETHODS = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})
Function = ast.FunctionDef | ast.AsyncFunctionDef
Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
# nodes whose own visit in pylint's checker replaces the statement count (`visit_default`)
_NOT_COUNTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Return, ast.For, ast.While)


@dataclass(frozen=True)
class Message:
    """One design message, as pylint words it."""

    line: int
    symbol: str
    message: str
    obj: str  # the enclosing classes and functions, dotted ("Outer.method")


def docstring(node: ast.AST) -> ast.stmt | None:
    """The statement that is the block's docstring (astroid keeps it out of the body)."""
    body = getattr(node, "body", None)
    if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body \
            and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0]
    return None


def children(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.iter_child_nodes` without the docstring."""
    doc = docstring(node)
    return (c for c in ast.iter_child_nodes(node) if c is not doc)


def if_branches(node: ast.If) -> int:
    """1, or 2 with an `else` (an `elif` is an `if` of its own)."""
    return 1 + int(bool(node.orelse) and not (len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)))


def try_branches(node: ast.Try) -> int:
    return len(node.handlers) + int(bool(node.orelse)) + int(bool(node.finalbody))


def statement_weight(node: ast.AST) -> int:
    """What one node adds to the statement count of each function around it."""
    if isinstance(node, ast.If):
        return if_branches(node)
    if isinstance(node, ast.Try):
        return try_branches(node)
    if isinstance(node, _NOT_COUNTED):
        return 0
    return int(isinstance(node, ast.stmt | ast.ExceptHandler))


def branch_weight(node: ast.AST) -> int:
    """What one node adds to the branch count of the function it is directly in."""
    if isinstance(node, ast.If):
        return if_branches(node)
    if isinstance(node, ast.Try):
        return try_branches(node)
    if isinstance(node, ast.For | ast.While):
        return 1 + int(bool(node.orelse))
    if isinstance(node, ast.Match):
        return len(node.cases)
    return 0


def def_line(node: Function | ast.ClassDef) -> int:
    """The line pylint reports for a definition (astroid's `fromlineno`): for a decorated
    function, its first decorator's line plus the lines its decorators span."""
    if isinstance(node, ast.ClassDef) or not node.decorator_list:
        return node.lineno
    return node.decorator_list[0].lineno + sum((d.end_lineno or d.lineno) - d.lineno + 1
                                               for d in node.decorator_list)


def function_type(node: Function, in_class: bool) -> str:
    """astroid's FunctionDef.type, from what the tree says: function, method, classmethod,
    staticmethod."""
    if in_class and node.name in IMPLICIT_CLASSMETHODS:
        return "classmethod"
    for d in node.decorator_list:
        if isinstance(d, ast.Name) and d.id in ("classmethod", "staticmethod"):
            return d.id
        if isinstance(d, ast.Attribute) and d.attr in DESCRIPTORS and (
                d.attr.startswith("abstract") or isinstance(d.value, ast.Name) and d.value.id == "builtins"):
            return DESCRIPTORS[d.attr]
    return "method" if in_class else "function"


def argument_count(node: Function, kind: str) -> int:
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    if kind in ("method", "classmethod"):
        positional = positional[1:]
    names = [x.arg for x in [*positional, *a.kwonlyargs]]
    return sum(1 for n in names if not IGNORED_ARGUMENT.match(n))


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below `node` in its own scope (not inside a nested function, class, lambda
    or comprehension, whose node itself is yielded), in source order, docstrings left out."""
    todo = list(children(node))[::-1]
    while todo:
        child = todo.pop()
        yield child
        if not isinstance(child, _NESTED):
            todo += list(children(child))[::-1]


def bound_names(node: ast.AST) -> Iterator[str]:
    """The names a node binds in its scope."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        yield node.id
    elif isinstance(node, ast.Import | ast.ImportFrom):
        yield from (a.asname or a.name.split(".")[0] for a in node.names if a.name != "*")
    elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest


def public_methods(cls: ast.ClassDef) -> int:
    """Names of the class body whose first binding is a `def`, not starting with `_`
    (astroid's `mymethods`: a class's locals, each its first binding)."""
    first: dict[str, ast.AST] = {}
    for node in walk_scope(cls):
        for name in bound_names(node):
            first.setdefault(name, node)
    return sum(1 for name, node in first.items()
               if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not name.startswith("_"))


def slots_of(cls: ast.ClassDef) -> set[str] | None:
    """The names in the class body's own `__slots__` (None: none, or not a literal)."""
    value = None
    for node in cls.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__"
                                                for t in node.targets):
            value = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.target.id == "__slots__":
            value = node.value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return {value.value}
    items = value.keys if isinstance(value, ast.Dict) else getattr(value, "elts", None)
    names = [e.value for e in items or [] if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return set(names) if items is not None and len(names) == len(items) else None


def allowed_attributes(cls: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> set[str] | None:
    """The slots an instance may have (astroid's `slots()`): None unless the class and every
    base (`object` or a class of the module, recursively) declare `__slots__`."""
    own = slots_of(cls)
    if own is None:
        return None
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id == "object":
            continue
        parent = classes.get(base.id) if isinstance(base, ast.Name) else None
        inherited = allowed_attributes(parent, classes) if parent is not None and parent is not cls else None
        if inherited is None:
            return None
        own |= inherited
    return own


def self_attributes(method: Function) -> set[str]:
    """Attributes assigned on the method's first argument, in it and in what it nests (until
    a nested function takes an argument of that name)."""
    args = [*method.args.posonlyargs, *method.args.args]
    if not args:
        return set()
    me, found, todo = args[0].arg, set(), list(children(method))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id == me:
            found.add(node.attr)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and me in {
                a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                                *filter(None, [node.args.vararg, node.args.kwarg])]}:
            continue
        todo += children(node)
    return found


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def dataclass_fields(cls: ast.ClassDef) -> set[str]:
    """A dataclass's fields (astroid's dataclass brain makes them instance attributes): the
    annotated names of its body, not ClassVar, InitVar or the KW_ONLY marker."""
    if not any(_last_name(d.func if isinstance(d, ast.Call) else d) == "dataclass" for d in cls.decorator_list):
        return set()
    return {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
            and _last_name(n.annotation) not in ("ClassVar", "InitVar", "KW_ONLY")}


def instance_attributes(cls: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> int:
    """Distinct attributes set on `self` in the class's methods, and a dataclass's fields
    (astroid's `instance_attrs`)."""
    names = dataclass_fields(cls)
    for node in walk_scope(cls):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and function_type(node, True) == "method":
            names |= self_attributes(node)
    allowed = allowed_attributes(cls, classes)
    return len(names if allowed is None else names & allowed)


@dataclass
class _Frame:
    """A function, class or lambda being walked: its name and what is counted in it."""

    node: ast.AST
    name: str
    statements: int = 1
    branches: int = 0


def design_messages(tree: ast.Module) -> list[Message]:
    """pylint's five design messages for a module's tree, in the order of their lines."""
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    out: list[Message] = []
    frames: list[_Frame] = []
    todo: list[tuple[ast.AST, bool]] = [(c, False) for c in reversed(list(children(tree)))]
    while todo:
        node, leaving = todo.pop()
        if leaving:
            out += _leave(frames.pop(), ".".join(f.name for f in frames))
            continue
        weight, branches = statement_weight(node), branch_weight(node)
        for f in frames:
            if isinstance(f.node, ast.FunctionDef | ast.AsyncFunctionDef):
                f.statements += weight
        if frames and branches:
            frames[-1].branches += branches
        if isinstance(node, Scope):
            obj = ".".join([*(f.name for f in frames), getattr(node, "name", "<lambda>")])
            out += _enter(node, obj, frames, classes)
            frames.append(_Frame(node, getattr(node, "name", "<lambda>")))
            todo.append((node, True))
        todo += [(c, False) for c in reversed(list(children(node)))]
    return sorted(out, key=lambda m: (m.line, m.symbol, m.obj))


def _enter(node: Scope, obj: str, frames: list[_Frame], classes: dict[str, ast.ClassDef]) -> list[Message]:
    """The messages pylint gives when it enters a function (arguments) or a class (attributes)."""
    if isinstance(node, ast.ClassDef):
        n = instance_attributes(node, classes)
        return [Message(def_line(node), "too-many-instance-attributes",
                        f"Too many instance attributes ({n}/{MAX_ATTRIBUTES})", obj)] if n > MAX_ATTRIBUTES else []
    if isinstance(node, ast.Lambda):
        return []
    kind = function_type(node, bool(frames) and isinstance(frames[-1].node, ast.ClassDef))
    n = argument_count(node, kind)
    return [Message(def_line(node), "too-many-arguments",
                    f"Too many arguments ({n}/{MAX_ARGS})", obj)] if n > MAX_ARGS else []


def _leave(frame: _Frame, outer: str) -> list[Message]:
    """The messages pylint gives when it leaves a function (branches, statements) or a class
    (public methods)."""
    node, obj = frame.node, ".".join(filter(None, [outer, frame.name]))
    out = []
    if isinstance(node, ast.ClassDef):
        n = public_methods(node)
        if n > MAX_PUBLIC_METHODS:
            out.append(Message(def_line(node), "too-many-public-methods",
                               f"Too many public methods ({n}/{MAX_PUBLIC_METHODS})", obj))
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        if frame.branches > MAX_BRANCHES:
            out.append(Message(def_line(node), "too-many-branches",
                               f"Too many branches ({frame.branches}/{MAX_BRANCHES})", obj))
        if frame.statements > MAX_STATEMENTS:
            out.append(Message(def_line(node), "too-many-statements",
                               f"Too many statements ({frame.statements}/{MAX_STATEMENTS})", obj))
    return out
