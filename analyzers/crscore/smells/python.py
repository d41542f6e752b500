"""Python smells: the Pyscent set with its thresholds, from pylint, radon and `ast`.

| smell | rule | source |
|---|---|---|
| long method | > 50 statements | pylint too-many-statements (R0915) |
| long parameter list | > 5 arguments | pylint too-many-arguments (R0913) |
| long branch | > 12 branches | pylint too-many-branches (R0912) |
| many methods | > 20 public methods | pylint too-many-public-methods (R0904) |
| many attributes | > 7 instance attributes | pylint too-many-instance-attributes (R0902) |
| complex function | cyclomatic complexity rank C or worse (≥ 11) | radon |
| low cohesion | class cohesion < 30 % (mean share of instance attributes each method uses) | ast |
| long lambda | > 60 characters | ast |
| long list comprehension | > 72 characters | ast |
| shotgun surgery | a class calling > 7 distinct external functions | ast |
| useless try/except | a bare `except:` or a handler that only `pass`es | ast |

Code that does not parse (a hunk is often a fragment) is dedented and retried, else skipped.
"""

from __future__ import annotations

import ast
import json
import subprocess
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from analyzers import pyparse
from analyzers.crscore.smells import TOOL_TIMEOUT_S, Smell, SmellReport
from analyzers.tooling import python_argv, run, workdir

MAX_STATEMENTS = 50
MAX_ARGS = 5
MAX_BRANCHES = 12
MAX_PUBLIC_METHODS = 20
MAX_ATTRIBUTES = 7
MIN_CC_RANK = "C"  # radon: C = 11–20
MIN_COHESION = 0.30
MAX_LAMBDA_CHARS = 60
MAX_LISTCOMP_CHARS = 72
MAX_EXTERNAL_CALLS = 7

PYLINT_SMELLS = {
    "too-many-statements": "Long method",
    "too-many-arguments": "Long parameter list",
    "too-many-branches": "Long branch",
    "too-many-public-methods": "Many methods",
    "too-many-instance-attributes": "Many attributes",
}


def pylint_command(files: list[Path]) -> list[str]:
    """`python -I -m pylint …`: isolated, so a `pylint/` folder in the working directory is
    never imported."""
    return [*python_argv("-m", "pylint"), "--disable=all",
            "--enable=" + ",".join(PYLINT_SMELLS), "--output-format=json", "--persistent=n",
            "--score=n", f"--max-statements={MAX_STATEMENTS}", f"--max-args={MAX_ARGS}",
            f"--max-positional-arguments={MAX_ARGS}", f"--max-branches={MAX_BRANCHES}",
            f"--max-public-methods={MAX_PUBLIC_METHODS}", f"--max-attributes={MAX_ATTRIBUTES}",
            *map(str, files)]


def run_pylint(files: list[Path], cwd: Path | None = None) -> list[dict[str, Any]]:
    """pylint's own JSON messages for the Pyscent checks (with Pyscent's thresholds); a clean
    environment, in `cwd` (a folder of ours) or a private one."""
    proc = run(pylint_command(files), timeout=TOOL_TIMEOUT_S, cwd=cwd)
    if proc.returncode & 32 or not proc.stdout.strip():  # 32: usage error
        if proc.returncode == 0 and not proc.stdout.strip():
            return []
        raise RuntimeError(f"pylint failed (exit {proc.returncode}): {proc.stderr.strip()[:200]}")
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def parseable(code: str) -> str | None:
    """The code as given, or dedented, if it parses; else None."""
    for candidate in (code, textwrap.dedent(code)):
        try:
            pyparse.parse(candidate)
            return candidate
        except (SyntaxError, ValueError):
            continue
    return None


def radon_smells(code: str) -> list[Smell]:
    from radon.complexity import cc_rank, cc_visit_ast

    out = []
    for block in cc_visit_ast(pyparse.parse(code)):  # radon's own cc_visit parses unlocked
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


def ast_smells(code: str) -> list[Smell]:
    tree = pyparse.parse(code)
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
            used = [len(_self_attrs(m) & attrs) / len(attrs) for m in methods
                    if not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in m.decorator_list)]
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


def pylint_smell(msg: dict[str, Any]) -> Smell:
    symbol = str(msg.get("symbol", ""))
    label = PYLINT_SMELLS.get(symbol, symbol)
    line = int(msg.get("line", 0))
    obj = msg.get("obj") or ""
    where = f" in `{obj}`" if obj else ""
    return Smell("pyscent", line, symbol, str(msg.get("message", "")), text=(
        f"line {line}, {label.lower()} smell{where}: {msg.get('message', '')}"))


def detect_python(files: Mapping[str, str]) -> dict[str, SmellReport]:
    out = {name: SmellReport() for name in files}
    ok: dict[str, str] = {}
    for name, code in files.items():
        fixed = parseable(code)
        if fixed is None:
            out[name].skipped = "not parseable Python (a hunk is often a fragment)"
        else:
            ok[name] = fixed
    if not ok:
        return out
    for name, code in ok.items():
        out[name].smells += radon_smells(code) + ast_smells(code)
    with workdir("rtcbot-pylint-") as tmp:
        paths = {}
        for i, (name, code) in enumerate(ok.items()):
            p = tmp / f"f{i}_{Path(name).stem.replace('-', '_')}.py"
            p.write_text(code, encoding="utf-8")
            paths[str(p.resolve())] = name
        try:
            messages = run_pylint(list(map(Path, paths)), cwd=tmp)
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError, OSError) as e:
            for name in ok:
                out[name].skipped = f"pylint did not run: {e}"
            messages = []
    for m in messages:
        mname = paths.get(str(Path(str(m.get("path", ""))).resolve()))
        if mname is None:  # pylint reports paths relative to the working directory
            mname = next((n for p, n in paths.items() if p.endswith(str(m.get("path", "")))), None)
        if mname is not None and m.get("symbol") in PYLINT_SMELLS:
            out[mname].smells.append(pylint_smell(m))
    for rep in out.values():
        rep.smells.sort(key=lambda s: (s.line, s.rule))
    return out
