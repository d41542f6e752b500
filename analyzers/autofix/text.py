"""AutoFix's text work, all pure: the prompts (fix, describe, regenerate), what a fix answer
means, how a replacement is fitted into the file (re-indented, applied bottom up), and a
file's new side rebuilt from its hunks when the file itself is not at hand.
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from analyzers.code import pyparse
from analyzers.code.diff import FileChange
from analyzers.llm.client import Message
from analyzers.report import fence_for
from analyzers.semgrep.scan import SemgrepFinding

MAX_FUNCTION_LINES = 60

AnswerKind = Literal["code", "not_vulnerable", "no_fix", "no_code", "no_model"]  # no_model: never asked


# --------------------------------------------------------------------------- prompts
FIX_SYSTEM = (
    "Task: fix a security finding. You are a careful application-security engineer. You "
    "rewrite only the flagged lines so that the weakness is gone and the behaviour is "
    "otherwise kept. Respond with clarity, consistency and precision."
)
DESCRIBE_SYSTEM = (
    "Task: describe a code change. Write the instruction a developer would need to make "
    "exactly this change to the original lines: what to replace and with what. Plain text, "
    "at most five sentences, no code block."
)
REGENERATE_SYSTEM = (
    "Task: apply an instruction to code. Rewrite the given lines as the instruction says "
    "and change nothing else."
)


def _fence(code: str, language: str) -> str:
    fence = fence_for(code)  # the file's own backticks cannot end the block the model is shown
    return f"{fence}{language}\n{code.rstrip(chr(10))}\n{fence}"


def fix_messages(finding: SemgrepFinding, language: str, snippet: str, context: str,
                 context_start: int) -> list[Message]:
    cwe = ", ".join(finding.cwe) or "not given"
    user = (
        f"Semgrep rule `{finding.rule_id}` ({cwe}) flags lines {finding.start_line}-"
        f"{finding.end_line} of `{finding.path}`:\n{finding.message}\n\n"
        f"Surrounding code (starts at line {context_start}):\n{_fence(context, language)}\n\n"
        f"Flagged lines:\n{_fence(snippet, language)}\n\n"
        "Answer in one of three ways:\n"
        f"1. The corrected version of the flagged lines only, in one ```{language} block, "
        "keeping their indentation. Do not repeat the surrounding code.\n"
        "2. `NOT_VULNERABLE: <reason>` if the flagged lines are not a weakness here.\n"
        "3. `NO_FIX: <reason>` if they cannot be fixed by changing these lines alone."
    )
    return [{"role": "system", "content": FIX_SYSTEM}, {"role": "user", "content": user}]


def describe_messages(before: str, after: str, language: str) -> list[Message]:
    user = (f"Original lines:\n{_fence(before, language)}\n\nChanged lines:\n{_fence(after, language)}\n\n"
            "Instruction:")
    return [{"role": "system", "content": DESCRIBE_SYSTEM}, {"role": "user", "content": user}]


def regenerate_messages(before: str, description: str, language: str) -> list[Message]:
    user = (f"Lines:\n{_fence(before, language)}\n\nInstruction: {description.strip()}\n\n"
            f"Reply with the rewritten lines only, in one ```{language} block.")
    return [{"role": "system", "content": REGENERATE_SYSTEM}, {"role": "user", "content": user}]


# --------------------------------------------------------------------------- parsing
_FENCED = re.compile(r"```[^\n`]*\n(.*?)```", re.S)
_OPEN_FENCE = re.compile(r"```[^\n`]*\n(.*)\Z", re.S)
_NOT_VULN = re.compile(r"^\W*not[ _-]?vulnerable\b\W*(.*)", re.I | re.S)
_NO_FIX = re.compile(r"^\W*no[ _-]?fix(?:[ _-]?possible)?\b\W*(.*)", re.I | re.S)


@dataclass(frozen=True)
class FixAnswer:
    kind: AnswerKind
    code: str = ""
    reason: str = ""


def code_block(text: str) -> str | None:
    """The first fenced code block, or an unterminated one (an answer that never closed its
    fence; AutoFix takes no fix from one the token limit stopped: analyzers/autofix/analyzer.py)."""
    m = _FENCED.search(text) or _OPEN_FENCE.search(text)
    return m.group(1) if m else None


def parse_fix_answer(text: str) -> FixAnswer:
    stripped = text.strip()
    for pattern, kind in ((_NOT_VULN, "not_vulnerable"), (_NO_FIX, "no_fix")):
        m = pattern.match(stripped)
        if m:
            return FixAnswer(kind, reason=" ".join(m.group(1).split())[:500])  # type: ignore[arg-type]
    code = code_block(text)
    if code is None or not code.strip():
        return FixAnswer("no_code", reason="the answer has no code block")
    return FixAnswer("code", code=code)


# --------------------------------------------------------------------------- editing
def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def reindent(code: str, like: str) -> str:
    """`code` dedented, then indented like the first non-blank line of `like`; ends with \\n."""
    base = next((_indent_of(ln) for ln in like.splitlines() if ln.strip()), "")
    body = textwrap.dedent(code.expandtabs(4) if "\t" in code and " " in base else code)
    lines = [(base + ln if ln.strip() else "") for ln in body.strip("\n").splitlines()]
    return "\n".join(lines) + "\n" if lines else ""


@dataclass(frozen=True)
class Edit:
    start_line: int  # 1-based, inclusive
    end_line: int
    replacement: str  # whole lines, "\n"-terminated ("" deletes the lines)


def apply_edits(text: str, edits: Sequence[Edit]) -> tuple[str, list[Edit]]:
    """Apply edits bottom up (line numbers stay valid); overlapping edits after the first
    kept one are dropped. Returns the new text and the edits applied."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    applied: list[Edit] = []
    floor = len(lines) + 1  # lowest start line applied so far
    for e in sorted(edits, key=lambda e: (e.start_line, e.end_line), reverse=True):
        if e.end_line >= floor or e.start_line < 1 or e.end_line < e.start_line:
            continue
        new = e.replacement.splitlines(keepends=True)
        if new and not new[-1].endswith("\n"):
            new[-1] += "\n"
        lines[e.start_line - 1: e.end_line] = new
        floor = e.start_line
        applied.append(e)
    return "".join(lines), sorted(applied, key=lambda e: e.start_line)


def unified_diff(path: str, before: str, after: str, context: int = 3) -> str:
    return "".join(difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        fromfile=f"a/{path}", tofile=f"b/{path}", n=context,
    ))


def line_span(text: str, start: int, end: int) -> str:
    lines = text.splitlines(keepends=True)
    out = "".join(lines[start - 1: end])
    return out if out.endswith("\n") or not out else out + "\n"


def context_of(text: str, language: str, start: int, end: int, window: int) -> tuple[int, str]:
    """The enclosing Python function when short enough, else `window` lines either side."""
    if language == "python":
        try:
            tree = pyparse.parse(text)
        except (SyntaxError, ValueError):
            tree = None
        best: ast.AST | None = None
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lo = min([node.lineno] + [d.lineno for d in node.decorator_list])
                hi = node.end_lineno or node.lineno
                if lo <= start and end <= hi and hi - lo < MAX_FUNCTION_LINES:
                    if best is None or lo >= best.lineno:  # type: ignore[attr-defined]
                        best = node
        if best is not None:
            lo = min([best.lineno] + [d.lineno for d in best.decorator_list])  # type: ignore[attr-defined]
            return lo, line_span(text, lo, best.end_lineno or lo)  # type: ignore[attr-defined]
    n = len(text.splitlines())
    lo, hi = max(1, start - window), min(n, end + window)
    return lo, line_span(text, lo, hi)


def python_parses(text: str) -> bool:
    try:
        pyparse.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def pseudo_file(fc: FileChange) -> str:
    """The file's new side rebuilt from its hunks, each at its real line numbers (gaps blank,
    each hunk dedented so that a hunk from inside a block still parses)."""
    lines: list[str] = []
    for h in fc.hunks:
        code = textwrap.dedent(h.new_code).splitlines()
        start = max(h.new_start, 1)
        while len(lines) < start - 1:
            lines.append("")
        lines[start - 1:] = code
    return "\n".join(lines) + "\n"
