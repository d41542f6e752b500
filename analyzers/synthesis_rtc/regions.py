"""Review mode's regions (RTC paper §4.2): runs of consecutive statements inside the functions a
change touches, sized 32–384 characters, weighted so that a region counts in proportion to its
size and inversely to how many others contain it; a few drawn without overlap, and the code
around one and the file with one replaced (pure: analyzers/synthesis_rtc/analyzer.py runs them)."""

from __future__ import annotations

import ast
import hashlib
import random
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from analyzers.code import pyparse


@dataclass(frozen=True)
class Region:
    path: str
    start_line: int  # 1-based, inclusive
    end_line: int
    function: str
    weight: float


def _bodies(node: ast.AST) -> list[list[ast.stmt]]:
    out = []
    for name in ("body", "orelse", "finalbody"):
        b = getattr(node, name, None)
        if isinstance(b, list) and b and isinstance(b[0], ast.stmt):
            out.append(b)
    for h in getattr(node, "handlers", []) or []:
        out.append(h.body)
    return out


def candidate_regions(source: str, path: str, changed: set[int], min_chars: int = 32,
                      max_chars: int = 384) -> list[Region]:
    """Runs of consecutive statements inside functions that touch a changed line, sized
    min..max characters; weight = characters / (1 + enclosing candidate statements), so a
    region counts in proportion to its size and inversely to how many others contain it."""
    try:
        tree = pyparse.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines(keepends=True)
    out: list[Region] = []

    def visit_block(stmts: list[ast.stmt], fn: str, depth: int) -> None:
        for i in range(len(stmts)):
            for j in range(i, len(stmts)):
                a, b = stmts[i].lineno, stmts[j].end_lineno or stmts[j].lineno
                if not changed & set(range(a, b + 1)):
                    continue
                size = len("".join(lines[a - 1:b]).strip())
                if size > max_chars:
                    break
                if size >= min_chars:
                    out.append(Region(path, a, b, fn, size / (1 + depth)))
        for s in stmts:
            if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for body in _bodies(s):
                    visit_block(body, fn, depth + 1)

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            if changed & set(range(node.lineno, end + 1)):
                visit_block(node.body, node.name, 0)
    return out


def sample_regions(regions: Sequence[Region], k: int, seed: str) -> list[Region]:
    """Up to k non-overlapping regions, drawn with probability proportional to weight."""
    rng = random.Random(hashlib.sha256(seed.encode()).hexdigest())
    pool, picked = list(regions), list[Region]()
    while pool and len(picked) < k:
        r = rng.choices(pool, weights=[x.weight for x in pool])[0]
        picked.append(r)
        pool = [x for x in pool if x.end_line < r.start_line or x.start_line > r.end_line]
    return sorted(picked, key=lambda r: (r.path, r.start_line))


def replace_region(source: str, region: Region, code: str) -> str:
    """source with lines start..end replaced by code, re-indented to the region's indent."""
    lines = source.splitlines(keepends=True)
    first = lines[region.start_line - 1]
    indent = first[: len(first) - len(first.lstrip())]
    body = textwrap.indent(textwrap.dedent(code.strip("\n")), indent, lambda _l: True) + "\n"
    return "".join(lines[: region.start_line - 1]) + body + "".join(lines[region.end_line:])


def context_around(source: str, region: Region, budget: int = 1024) -> tuple[str, str]:
    """Whole lines before and after the region, at most `budget` characters in all."""
    lines = source.splitlines(keepends=True)
    before, after = region.start_line - 2, region.end_line
    pre: list[str] = []
    post: list[str] = []
    used = 0
    while before >= 0 or after < len(lines):
        grew = False
        for side in ("pre", "post"):
            idx = before if side == "pre" else after
            if 0 <= idx < len(lines) and used + len(lines[idx]) <= budget:
                used += len(lines[idx])
                if side == "pre":
                    pre.insert(0, lines[idx])
                    before -= 1
                else:
                    post.append(lines[idx])
                    after += 1
                grew = True
        if not grew:
            break
    return "".join(pre), "".join(post)
