from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from analyzers.execution.oracle import Executor, Limits
from analyzers.execution.passk import summarize
from analyzers.execution.repair import (
    RepairConfig,
    TaskError,
    code_blocks,
    evaluate,
    extract_program,
    repair_messages,
    sample_fixes,
    task_from_json,
)
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM, last_user_text
from tests.support import DATA

QUIX = DATA / "repair" / "quixbugs-python-dev.jsonl"


def quix(n: int | None = None) -> list[dict]:  # type: ignore[type-arg]
    rows = [json.loads(line) for line in QUIX.read_text().splitlines() if line.strip()]
    return rows[:n] if n else rows


def test_task_from_json_function_and_stdio_styles() -> None:
    t = task_from_json(quix(1)[0])
    assert t.id == "quixbugs/find_first_in_sorted" and t.entry_point == "find_first_in_sorted"
    assert len(t.cases) == 7 and t.cases[0].kind == "function" and t.cases[0].expected == 2
    s = task_from_json({"id": "p1", "language": "java", "buggy": "class Main {}",
                        "tests": [{"input": "1 2", "output": "3"}], "tolerance": 1e-3})
    assert (s.cases[0].kind == "stdio" and s.cases[0].stdin == "1 2"
            and s.cases[0].tolerance.abs == 1e-3)  # type: ignore[union-attr]
    with pytest.raises(TaskError, match="unsupported language"):
        task_from_json({"id": "x", "language": "cobol", "buggy": "x", "tests": [{"input": ""}]})
    with pytest.raises(TaskError, match="no tests"):
        task_from_json({"id": "x", "buggy": "x", "tests": []})
    with pytest.raises(TaskError, match="entry_point"):
        task_from_json({"id": "x", "buggy": "x", "tests": [{"args": [1], "expected": 1}]})


def test_prompt_shows_the_buggy_program_and_asks_for_a_block() -> None:
    t = task_from_json(quix(1)[0])
    msgs = repair_messages(t)
    assert msgs[0]["role"] == "system" and msgs[-1]["role"] == "user"
    assert t.buggy.rstrip() in msgs[-1]["content"]
    assert "`find_first_in_sorted`" in msgs[-1]["content"] and "```python" in msgs[-1]["content"]


def test_extract_program() -> None:
    answer = ("Here is the fix:\n```python\nx = 1\n```\nAnd the function:\n```python\n"
              "def f(a):\n\n    return a + 1\n```\nDone.")
    assert code_blocks(answer) == ["x = 1\n", "def f(a):\n\n    return a + 1\n"]
    assert extract_program(answer, "f") == "def f(a):\n\n    return a + 1\n"
    assert extract_program("```\ndef g():\n    pass\n", "g") == "def g():\n    pass\n"  # unclosed
    assert extract_program("Sure! def is great.\ndef f():\n    return 2\n", "f") == "def f():\n    return 2\n"
    assert extract_program("no code at all", "f") == "no code at all"
    cut = '```python\ndef f(a):\n    return a + 1\n\n\n"""\nDocs that never clo'
    assert extract_program(cut, "f") == "def f(a):\n    return a + 1\n\n\n"
    broken = "```python\ndef f(a):\n    return (a +\n```"
    assert extract_program(broken, "f") == "def f(a):\n    return (a +\n"  # nothing parses: unchanged


@pytest.mark.slow
def test_references_pass_and_buggy_programs_fail_on_some_quixbugs_tasks() -> None:
    tasks = [task_from_json(o) for o in quix(5)]
    # the CPU limit stops a buggy loop; the wall limit is for a sandbox and a Python that start
    # slowly on a loaded machine (a reference given 2 s in all could be a TLE there)
    ex = Executor(Limits(wall_s=10, cpu_s=2, memory_mb=512), workers=2)
    res = evaluate(ex, [(t, [t.reference, t.buggy]) for t in tasks])
    for r in res:
        ref, bug = r.verdicts
        assert set(ref) == {"AC"}, (r.task.id, ref)
        assert any(v != "AC" for v in bug), r.task.id
    fig = summarize({r.task.id: r.verdicts for r in res}, [1, 2])
    assert fig["pass@1"] == pytest.approx(0.5) and fig["pass@2"] == 1.0


def test_sample_fixes_asks_n_samples_above_zero_temperature(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    t = task_from_json(quix(1)[0])
    fixed = f"```python\n{t.reference}\n```"
    srv = scripted_llm(lambda req: [fixed, "I cannot help", fixed] if t.buggy.rstrip() in last_user_text(req) else "?")
    answers, programs = sample_fixes(client_for(srv, tmp_path), t, RepairConfig(samples=3, temperature=0.7))
    assert srv.request_count == 1 and srv.requests[0]["n"] == 3 and srv.requests[0]["temperature"] == 0.7
    assert programs[0].strip() == t.reference.strip() and programs[1] == "I cannot help"
    res = evaluate(Executor(Limits(wall_s=10, cpu_s=3, memory_mb=512), workers=2), [(t, programs)])  # wall: as above
    assert [set(s) for s in res[0].verdicts] == [{"AC"}, {"CE"}, {"AC"}]
