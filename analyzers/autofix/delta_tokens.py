"""Java and JavaScript: the constructs a piece of code holds, read from its tokens.

No parser is assumed (a fix's lines are often part of a statement): comments are dropped,
strings kept as one token each (a template literal's `${…}` parts are read as code), and:

- an identifier followed by `(` is a call, by the dotted chain it is reached through
  (`Runtime.getRuntime`, `cmd.split`; a method of a call's result or an element is
  `*.exec`); `new X(…)` calls `X`; keywords (`if (`, `catch (`, …) are none;
- `)(` or `](`: a call of something that is not a name (COMPUTED);
- reflection and dynamic evaluation (`eval`, `Function`, `Reflect`, `.call`/`.apply`/`.bind`,
  `globalThis`, `constructor`, `Class.forName`, `getMethod`, `invoke`, `MethodHandles`,
  `ScriptEngineManager`, …): DYNAMIC, called or not;
- a dangerous callable named without a call (`const run = eval`, `exec` handed on, a Java
  method reference `::`): ALIAS;
- a spread `...`: UNPACKED; a `shell` option (`shell:`, `"shell":`, `.shell =`) set to
  anything but `false`, or a shell program as a string (`"sh"`, `"/bin/bash"`, `"cmd.exe"`): SHELL;
- `require("m")`, `import … from "m"`, Java's `import a.b.C;`: IMPORT of that module;
  `require` of anything else, or `import(…)`: DYNAMIC.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from analyzers.autofix.constructs import SHELLS, Added, Construct

_TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<template>`(?:\\.|[^`\\])*(?:`|\Z))
  | (?P<string>"(?:\\.|[^"\\\n])*(?:"|$)|'(?:\\.|[^'\\\n])*(?:'|$))
  | (?P<name>[A-Za-z_$][\w$]*)
  | (?P<number>\d[\w.]*)
  | (?P<punct>::|\.\.\.|\?\.|=>|\S)
""", re.S | re.M | re.X)
_TEMPLATE_CODE = re.compile(r"\$\{([^}]*)\}")
KEYWORDS = frozenset({"if", "for", "while", "switch", "catch", "return", "synchronized", "function", "typeof",
                      "await", "yield", "throw", "case", "do", "else", "try", "finally", "instanceof", "void",
                      "delete", "in", "of", "super", "this", "assert"})
DYNAMIC_NAMES = frozenset({
    "eval", "Function", "Reflect", "globalThis", "window", "global", "constructor", "__proto__", "prototype",
    "call", "apply", "bind", "forName", "getMethod", "getMethods", "getDeclaredMethod", "getDeclaredMethods",
    "getField", "getDeclaredField", "invoke", "invokeExact", "newInstance", "setAccessible", "MethodHandles",
    "ScriptEngineManager", "getEngineByName", "findVirtual", "findStatic", "defineClass", "loadClass",
})
DANGEROUS = frozenset({"exec", "execSync", "spawn", "spawnSync", "execFile", "execFileSync", "fork", "setTimeout",
                       "setInterval", "runInNewContext", "runInThisContext", "runInContext", "unserialize",
                       "deserialize", "getRuntime", "readObject", "child_process"})
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")


def tokens(code: str) -> list[str]:
    """The tokens of `code`: comments dropped, each string one token (starting with its quote)."""
    out: list[str] = []
    for m in _TOKEN.finditer(code):
        kind = m.lastgroup
        if kind == "comment":
            continue
        if kind == "template":
            out.append('""')
            for part in _TEMPLATE_CODE.findall(m.group()):
                out += tokens(part)
            continue
        out.append(m.group())
    return out


def constructs(code: str) -> list[Construct]:
    toks = tokens(code)
    out: list[Construct] = []
    for i, tok in enumerate(toks):
        out += _at(toks, i, tok)
    return out


def _at(toks: Sequence[str], i: int, tok: str) -> Iterator[Construct]:
    nxt = toks[i + 1] if i + 1 < len(toks) else ""
    prev = toks[i - 1] if i else ""
    if tok in (")", "]") and nxt == "(":
        yield Construct(Added.COMPUTED, f"{tok}(")
    elif tok == "...":
        yield Construct(Added.UNPACKED, "...")
    elif tok == "::":
        yield Construct(Added.ALIAS, f"::{nxt}")
    elif tok[0] in "\"'" and tok[1:-1] == "shell":  # {"shell": true}
        yield from _shell_option(toks, i)
    elif tok[0] in "\"'":
        if tok[1:-1].rsplit("/", 1)[-1].lower() in SHELLS:
            yield Construct(Added.SHELL, tok)
    elif _IDENT.fullmatch(tok):
        yield from _name(toks, i, tok, prev, nxt)


def _name(toks: Sequence[str], i: int, tok: str, prev: str, nxt: str) -> Iterator[Construct]:
    after = toks[i + 2] if i + 2 < len(toks) else ""
    if tok == "shell":  # `shell: true`, `opts.shell = x`
        yield from _shell_option(toks, i)
    elif tok == "require" and nxt == "(":
        string = after[:1] in ("'", '"') and toks[i + 3: i + 4] == [")"]
        yield Construct(Added.IMPORT, after[1:-1]) if string else Construct(Added.DYNAMIC, "require(…)")
    elif tok == "import" and nxt == "(":
        yield Construct(Added.DYNAMIC, "import(…)")
    elif tok == "import":
        yield Construct(Added.IMPORT, _import_target(toks, i))
    elif tok == "from" and nxt[:1] in ("'", '"'):
        return  # the module of an `import … from "m"`: said at its `import`
    elif tok in DYNAMIC_NAMES:
        yield Construct(Added.DYNAMIC, tok)
        if nxt not in ("(", ".", "?."):  # handed on (`const run = eval`) or indexed (`globalThis[…]`)
            yield Construct(Added.ALIAS, tok)
    elif nxt in ("(", "?.") and (nxt == "(" or after == "(") and tok not in KEYWORDS and prev not in ("function",):
        yield Construct(Added.CALL, _callee(toks, i))
    elif tok in DANGEROUS and nxt not in (".", "?."):
        yield Construct(Added.ALIAS, tok)


def _shell_option(toks: Sequence[str], i: int) -> Iterator[Construct]:
    """A `shell` option set to anything but the literal `false` (or not set where it is named)."""
    nxt, after = (list(toks[i + 1: i + 3]) + ["", ""])[:2]
    if not (nxt in (":", "=") and after == "false"):
        yield Construct(Added.SHELL, f"shell{nxt} {after}".rstrip())


def _callee(toks: Sequence[str], i: int) -> str:
    """The dotted chain a call at `toks[i]` is reached through: `a.b.c`, or `*.c` after a
    call's result, an element or a string."""
    parts = [toks[i]]
    j = i
    while j >= 2 and toks[j - 1] in (".", "?."):
        if not _IDENT.fullmatch(toks[j - 2]) or toks[j - 2] in KEYWORDS - {"this", "super"}:
            parts.append("*")
            break
        parts.append(toks[j - 2])
        j -= 2
    return ".".join(reversed(parts))


def _import_target(toks: Sequence[str], i: int) -> str:
    """`import a.b.C;` → `a.b.C`; `import x from "m"` / `import {x} from "m"` / `import "m"` → `m`."""
    for tok in toks[i + 1: i + 40]:
        if tok[:1] in ("'", '"'):
            return tok[1:-1]
        if tok == ";":
            break
    name: list[str] = []
    for tok in toks[i + 1: i + 40]:
        if tok == ";":
            break
        if tok != "static":
            name.append(tok)
    return "".join(name) or "import"
