"""Program repair evaluation (FixEval): ask a model for fixes of buggy programs, run them.

Tasks come from JSONL: `id`, `language` (python | java), `buggy`, `reference`, and tests,
either function cases (`entry_point` + `tests: [{args, expected}]`, optional `tolerance`, as in
QuixBugs) or stdin/stdout cases (`tests: [{input, output}]`, as in FixEval). The prompt and
the parsing are pure; `sample_fixes` talks to the model; `evaluate` runs the programs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from analyzers.code import pyparse
from analyzers.execution.oracle import Case, Executor, Program
from analyzers.execution.verdicts import CaseResult, Tolerance
from analyzers.llm.client import LLMClient, Message

LANGUAGES = ("python", "java")


class TaskError(ValueError):
    """A dataset line that is not a usable repair task; str() says why."""


@dataclass(frozen=True)
class RepairTask:
    id: str
    language: str
    buggy: str
    reference: str
    cases: tuple[Case, ...]
    entry_point: str | None = None

    def program(self, source: str) -> Program:
        return Program(self.language, source, self.entry_point)  # type: ignore[arg-type]


def task_from_json(obj: Mapping[str, Any], default_id: str = "") -> RepairTask:
    ident = str(obj.get("id") or default_id)
    lang = str(obj.get("language") or "python").lower()
    if lang not in LANGUAGES:
        raise TaskError(f"{ident}: unsupported language {lang!r} (python or java)")
    buggy, reference = obj.get("buggy"), obj.get("reference")
    if not isinstance(buggy, str) or not buggy.strip():
        raise TaskError(f"{ident}: no buggy program")
    tests = obj.get("tests")
    if not isinstance(tests, list) or not tests:
        raise TaskError(f"{ident}: no tests")
    try:
        tol = Tolerance.parse(obj.get("tolerance"))
    except (TypeError, ValueError) as e:
        raise TaskError(f"{ident}: {e}") from None
    entry = obj.get("entry_point")
    cases: list[Case] = []
    for i, t in enumerate(tests):
        if not isinstance(t, Mapping):
            raise TaskError(f"{ident}: test {i} is not an object")
        if "args" in t:
            if not entry or lang != "python":
                raise TaskError(f"{ident}: function tests need a Python task with an entry_point")
            args = t["args"]
            cases.append(Case(kind="function", args=tuple(args) if isinstance(args, list) else (args,),
                              expected=t.get("expected"), tolerance=tol))
        elif "input" in t or "output" in t:
            cases.append(Case(kind="stdio", stdin=str(t.get("input", "")), expected_output=str(t.get("output", "")),
                              tolerance=tol))
        else:
            raise TaskError(f"{ident}: test {i} has neither args nor input/output")
    return RepairTask(ident, lang, buggy, reference if isinstance(reference, str) else "", tuple(cases),
                      str(entry) if entry else None)


# -- prompt and parsing (pure) ------------------------------------------------------------------

SYSTEM = "You are an expert programmer who fixes bugs with the smallest correct change."


def repair_messages(task: RepairTask) -> list[Message]:
    what = (f"The function `{task.entry_point}` below" if task.entry_point
            else "The program below (it reads standard input and writes standard output)")
    ask = (
        f"{what} has a bug. Find it and fix it. Keep the same name and signature and change as "
        "little as possible. Reply with the whole corrected program in a single fenced code "
        f"block (```{task.language}), and nothing else."
    )
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"{ask}\n\n```{task.language}\n{task.buggy.rstrip()}\n```"},
    ]


_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)


def code_blocks(text: str) -> list[str]:
    """The fenced code blocks of an answer, in order (an unclosed last block runs to the end)."""
    return [m.group(3) for m in _FENCE.finditer(text)]


def _parses(code: str) -> bool:
    try:
        pyparse.parse(code)
    except Exception:  # SyntaxError, and the parser's own limits (RecursionError, MemoryError)
        return False
    return True


def trim_to_valid_python(code: str, entry_point: str | None = None, max_chars: int = 20_000) -> str:
    """An answer cut off by the token limit (an unterminated string, a half line) parses once
    its tail goes: the longest prefix of whole lines that parses and still defines
    entry_point; the code unchanged when it parses already or no prefix does."""
    if _parses(code) or len(code) > max_chars:
        return code
    lines = code.splitlines(keepends=True)
    pat = re.compile(rf"^\s*def\s+{re.escape(entry_point)}\s*\(", re.M) if entry_point else None
    for cut in range(len(lines) - 1, 0, -1):
        head = "".join(lines[:cut])
        if pat is not None and not pat.search(head):
            break
        if head.strip() and _parses(head):
            return head
    return code


def extract_program(text: str, entry_point: str | None = None, language: str = "python") -> str:
    """The program in a model's answer: the first fenced block that defines entry_point (or
    the longest block), else the answer itself with any prose before the code dropped.
    Python answers cut off at the end are trimmed back to what parses."""
    blocks = code_blocks(text)
    code = text
    if blocks:
        code = max(blocks, key=len)
        if entry_point:
            pat = re.compile(rf"\bdef\s+{re.escape(entry_point)}\s*\(")
            code = next((b for b in blocks if pat.search(b)), code)
    elif language == "python":
        m = re.search(r"^(?:from |import |def |class |@)", text, re.M)
        if m:
            code = text[m.start():]
    return trim_to_valid_python(code, entry_point) if language == "python" else code


# -- sampling and evaluation ---------------------------------------------------------------

@dataclass(frozen=True)
class RepairConfig:
    samples: int = 10
    temperature: float = 0.8
    max_tokens: int = 1024
    seed: int = 4321


def sample_fixes(llm: LLMClient, task: RepairTask, cfg: RepairConfig = RepairConfig()) -> tuple[list[str], list[str]]:
    """(raw answers, extracted programs): cfg.samples fixes at cfg.temperature."""
    answers = llm.sample(repair_messages(task), n=cfg.samples, temperature=cfg.temperature,
                         max_tokens=cfg.max_tokens, seed=cfg.seed)
    return answers, [extract_program(a, task.entry_point, task.language) for a in answers]


@dataclass
class TaskResult:
    task: RepairTask
    programs: list[str]
    results: list[list[CaseResult]] = field(default_factory=list)  # per sample, per case

    @property
    def verdicts(self) -> list[list[str]]:
        return [[r.verdict for r in row] for row in self.results]


def evaluate(executor: Executor, tasks_programs: Sequence[tuple[RepairTask, Sequence[str]]],
             on_done: Callable[[], None] | None = None) -> list[TaskResult]:
    """Run every program of every task on the task's cases (all runs in parallel)."""
    jobs = [(t.program(p), t.cases) for t, ps in tasks_programs for p in ps]
    flat = executor.run_many(jobs, on_done=on_done)
    out: list[TaskResult] = []
    i = 0
    for t, ps in tasks_programs:
        out.append(TaskResult(t, list(ps), flat[i:i + len(ps)]))
        i += len(ps)
    return out
