from __future__ import annotations

from collections.abc import Callable
from typing import Any

from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext
from analyzers.editing_rtc.analyzer import (
    EditingRTC,
    backward_well_formed,
    forward_well_formed,
    parse_code,
    parse_description,
)
from analyzers.llm.client import LLMSettings
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM, last_user_text

DIFF = (
    "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n def f(x):\n-    return x+1\n+    return x + 2\n \n"
    "@@ -10,2 +10,2 @@ def g():\n-    pass\n+    return None\n     # end\n"
    "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-a\n+b\n"
)


def oracle(req: dict[str, Any]) -> str | list[str]:
    """Describes every edit as 'GOOD'; re-creates the new code only from a GOOD description."""
    text = last_user_text(req)
    if "[edit description]" not in text:  # forward: distinct descriptions per sample
        return [f"GOOD {req.get('seed')}-{i}: make the change." for i in range(req.get("n", 1))]
    old = text.split("[old]\n```", 1)[1].split("\n", 1)[1].split("```", 1)[0]
    desc = text.rsplit("[edit description]", 1)[1]
    if "GOOD" not in desc:
        return f"```\n{old}```\n[end]"
    new = old.replace("return x+1", "return x + 2").replace("    pass", "    return None")
    return f"Sure!\n```python\n{new}\n\n```\n[end]"


def run(srv: ScriptedLLM) -> Any:
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv))
    return EditingRTC().run(parse_diff(DIFF), ctx)


def test_request_count_per_hunk_when_n_honoured(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(oracle, honour_n=True)
    report = run(srv)
    assert len(report.findings) == 2
    assert srv.request_count == 2 * 5


def test_request_count_per_hunk_when_n_ignored(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(oracle, honour_n=False)
    run(srv)
    assert srv.request_count == 2 * 7


def test_scores_and_evidence(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    report = run(scripted_llm(oracle))
    f = report.findings[0]
    assert f.path == "m.py" and f.start_line == 2
    assert f.scores["rtc"] == 1.0 and f.scores["baseline"] == 0.0 and f.scores["lift"] == 1.0
    assert f.scores["rtc@3"] == 1.0
    assert len(f.evidence["descriptions"]) == 3 and f.evidence["descriptions"][0].startswith("GOOD")
    assert "return x + 2" in f.evidence["regenerated"][0]
    assert report.scores["rtc"] == 1.0
    assert any("README.md" in s.item and "not code" in s.reason for s in report.skipped)


def test_budget_stop_lists_unscored_hunks(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(oracle)
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv, max_requests=5, max_concurrency=1))
    report = EditingRTC().run(parse_diff(DIFF), ctx)
    assert srv.request_count == 5
    assert len(report.findings) + sum("not scored" in s.reason for s in report.skipped) == 2
    assert any("budget" in s.reason for s in report.skipped)


def test_one_instance_runs_each_change_with_its_own_options(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """A run's options are that run's: the instance is left as made (it once kept the first
    run's options, and a second repository's run on it asked for the first one's samples)."""
    srv = scripted_llm(oracle, honour_n=True)
    analyzer = EditingRTC()
    for n_forward in (1, 3):
        before = srv.request_count
        ctx = AnalysisContext(llm_factory=lambda: client_for(srv), options={"editing_rtc": {"n_forward": n_forward}})
        analyzer.run(parse_diff(DIFF), ctx)
        assert srv.request_count - before == 2 * (1 + n_forward + 1)  # per hunk: forward, backwards, baseline
    assert analyzer.config is None


def test_parse_code_keeps_blank_lines_and_tolerates_formats() -> None:
    code = "def f():\n    a = 1\n\n    return a\n"
    assert parse_code(f"```python\n{code}```\n[end]") == code
    assert parse_code(f"Here you go:\n```\n{code}") == code  # cut before the closing fence
    assert parse_code(f"{code}[end]") == code
    assert parse_code(f"{code}\n[old]\nmore").strip() == code.strip()
    assert parse_code("````\n```inner```\n````") == "```inner```\n"


def test_parse_description() -> None:
    assert parse_description("  Rename x to y.\n\n[old]\n```\nx\n```") == "Rename x to y."
    assert parse_description("Use a\n   set.") == "Use a set."
    assert parse_description("") == ""


def test_settings_validation() -> None:
    import pytest

    from analyzers.llm.client import LLMClient, LLMError

    with pytest.raises(LLMError):
        LLMClient(LLMSettings(base_url=None, model="x"))


def test_answers_in_the_expected_format() -> None:
    assert forward_well_formed("Rename x to y in the loop.")
    assert not forward_well_formed("   ")  # nothing said
    assert not forward_well_formed("[new]\nx = 1")  # an echoed prompt, no description
    assert not forward_well_formed("Do this:\n```python\nx = 1\n```")  # code where words were asked
    assert backward_well_formed("```python\nx = 1\n```\n[end]")
    assert backward_well_formed("~~~\nx = 1\n")  # a fence cut by the token limit still counts
    assert not backward_well_formed("x = 1")


M_PY = "def f(x):\n    return x + 2\n\n" + "\n" * 5 + "def g():\n    return None\n    # end\n"  # m.py at the head


def test_a_hunk_is_titled_by_the_definition_it_changes_at_the_head(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """Git's header says `def g():` above line 10, which is in g; the first hunk (no header)
    changes f. With the file at the head both are named from the parsed file."""
    srv = scripted_llm(oracle)
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv), file_loader={"m.py": M_PY}.get)
    report = EditingRTC().run(parse_diff(DIFF), ctx)
    assert [f.title for f in report.findings] == ["function f", "function g"]
    without = run(scripted_llm(oracle))  # no file at the head: git's header, else the line
    assert [f.title for f in without.findings] == ["hunk at line 2", "def g():"]


def _hunks(n: int) -> str:
    return "".join(f"--- a/m{i}.py\n+++ b/m{i}.py\n@@ -1,2 +1,2 @@\n def f(x):\n"
                   f"-    return x+{i}\n+    return x - {i}\n" for i in range(n))


def test_a_model_that_never_answers_in_the_format_is_stopped_after_a_handful(
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    # descriptions with code in them, and never code in a fence: no answer in the expected format
    srv = scripted_llm(lambda req: ["```\nx = 1\n```"] * req.get("n", 1) if "[edit description]" not in
                       last_user_text(req) else "I would rather not write code.")
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv, max_concurrency=1))
    report = EditingRTC().run(parse_diff(_hunks(12)), ctx)
    # hunk 1: 1 forward request (3 answers) and its backward requests; by then 8+ answers, none in format
    # what it finished is not scored (no answer was usable: issue #47), never a finding
    finished = [s for s in report.skipped if s.reason == "not scored: none of the model's answers was usable"]
    assert srv.request_count <= 5 and finished[:1] and len(finished) <= 2 and not report.findings
    assert report.not_run.startswith("the model's answers were not usable: 0 of ")
    stopped = [s for s in report.skipped if s.reason.startswith("not asked: the model's answers keep missing")]
    assert len(stopped) == 12 - len(finished)
    assert any("stopped after" in n and f"{len(stopped)} hunk(s) not asked" in n for n in report.notes), report.notes


def test_a_model_in_format_is_never_stopped(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(oracle)
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv, max_concurrency=1))
    report = EditingRTC().run(parse_diff(_hunks(12)), ctx)
    assert len(report.findings) == 12 and not any("format" in n for n in report.notes)
