from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext
from analyzers.execution.oracle import Case, Executor, Limits, Program, Sandbox
from analyzers.synthesis_rtc.analyzer import (
    SynthesisConfig,
    SynthesisRTCAnalyzer,
    assemble,
    humaneval_round_trips,
    load_humaneval,
    overall,
    strip_docstring,
    with_tests,
)
from analyzers.synthesis_rtc.prompts import BASELINE
from analyzers.synthesis_rtc.regions import candidate_regions, sample_regions
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM, last_user_text

LIMITS = Limits(wall_s=5, cpu_s=5, memory_mb=512)


@pytest.fixture(scope="module")
def problems():  # type: ignore[no-untyped-def]
    return load_humaneval(limit=12)


def test_load_humaneval_from_the_package(problems) -> None:  # type: ignore[no-untyped-def]
    assert len(load_humaneval()) == 164
    assert problems[0].task_id == "HumanEval/0" and problems[0].entry_point == "has_close_elements"


def test_strip_docstring_keeps_signature_imports_and_helpers(problems) -> None:  # type: ignore[no-untyped-def]
    ctx = strip_docstring(problems[0].prompt, "has_close_elements")
    assert ctx.startswith("from typing import List") and ctx.rstrip().endswith("-> bool:")
    assert '"""' not in ctx and ">>>" not in ctx
    ctx10 = strip_docstring(problems[10].prompt, problems[10].entry_point)
    assert "def is_palindrome" in ctx10 and "Test if given string is a palindrome" in ctx10  # helper kept
    assert "Find the shortest palindrome" not in ctx10


@pytest.mark.slow
def test_canonical_bodies_pass_and_wrong_ones_fail(problems) -> None:  # type: ignore[no-untyped-def]
    ex = Executor(LIMITS, workers=2)
    jobs = []
    for p in problems:
        ctx = strip_docstring(p.prompt, p.entry_point)
        jobs.append(assemble(ctx, p.entry_point, p.canonical_solution))  # a bare body
        jobs.append(assemble(ctx, p.entry_point, f"```python\n{p.prompt}{p.canonical_solution}```"))  # a function
        jobs.append(assemble(ctx, p.entry_point, "```python\nreturn None\n```"))
    res = ex.run_many([(Program("python", with_tests(src, p)), [Case(kind="script")])
                       for src, p in zip(jobs, [p for p in problems for _ in range(3)], strict=True)])
    verdicts = [r[0].verdict for r in res]
    assert set(verdicts[0::3]) == {"AC"} and set(verdicts[1::3]) == {"AC"}
    assert "AC" not in verdicts[2::3]


def scripted_round_trip(problems):  # type: ignore[no-untyped-def]
    """Describes each body honestly; regenerates the canonical body from the descriptions of
    even-numbered problems, and garbage from the baseline and the odd ones."""
    by_name = {p.entry_point: p for p in problems}

    def respond(req: dict) -> list[str] | str:  # type: ignore[type-arg]
        text = last_user_text(req)
        name = next(n for n in by_name if f"`{n}`" in text)
        p = by_name[name]
        n = int(req.get("n") or 1)
        if "say what the body" in text:
            return [f"describe {name} #{i}" for i in range(n)]
        if "Complete the function" in text:
            return f"```python\n{p.prompt}{p.canonical_solution}```"
        even = int(p.task_id.split("/")[1]) % 2 == 0
        if f"TODO: {BASELINE}" in text or not even:
            return "```python\nreturn None\n```"
        return p.canonical_solution
    return respond


def test_humaneval_round_trips_scores(problems,  # type: ignore[no-untyped-def]
                                      scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    four = problems[:4]
    srv = scripted_llm(scripted_round_trip(four))
    llm = client_for(srv, tmp_path)
    res = humaneval_round_trips(llm, four, Executor(LIMITS, workers=2))
    # per problem: 1 forward + 3 distinct backward + 1 baseline + 1 plain
    assert srv.request_count == 4 * 6
    fwd = [r for r in srv.requests if "say what the body" in last_user_text(r)]
    assert all(r["temperature"] == 0.8 and r["n"] == 3 for r in fwd)
    assert all('"""' not in last_user_text(r).split("```python")[-1] for r in fwd)  # no docstring shown
    assert [r.scores["rtc"] for r in res] == [1.0, 0.0, 1.0, 0.0]
    assert [r.scores["baseline"] for r in res] == [0.0] * 4
    assert [r.scores["pass@1"] for r in res] == [1.0] * 4
    fig = overall(res)
    assert fig["rtc"] == 0.5 and fig["lift"] == 0.5 and fig["rtc@3"] == 0.5 and fig["pass@1"] == 1.0
    assert res[0].trip.forward == [f"describe {four[0].entry_point} #{i}" for i in range(3)]


def test_pass_at_1_is_left_out_without_a_plain_sample(problems,  # type: ignore[no-untyped-def]
                                                      scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    one = problems[:1]
    srv = scripted_llm(scripted_round_trip(one))
    cfg = dataclasses.replace(SynthesisConfig(), plain_samples=0)
    res = humaneval_round_trips(client_for(srv, tmp_path), one, Executor(LIMITS, workers=1), cfg)
    assert not any("Complete the function" in last_user_text(r) for r in srv.requests)
    assert "pass@1" not in res[0].scores and "pass@1" not in overall(res)  # undefined, not 0.0
    assert res[0].scores["rtc"] == 1.0


# -- review mode ---------------------------------------------------------------------------

MODULE_OLD = "def total(xs):\n    return 0\n"
MODULE_NEW = (
    "def total(xs):\n"
    "    result = 0\n"
    "    for x in xs:\n"
    "        if x > 0:\n"
    "            result += x * 2\n"
    "    return result\n"
)
TESTS = (
    "import unittest\nfrom calc import total\n\n\nclass T(unittest.TestCase):\n"
    "    def test_total(self):\n        self.assertEqual(total([1, -2, 3]), 8)\n"
    "        self.assertEqual(total([]), 0)\n"
)
DIFF = (
    "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,6 @@\n def total(xs):\n"
    "-    return 0\n+    result = 0\n+    for x in xs:\n+        if x > 0:\n+            result += x * 2\n"
    "+    return result\n"
)


def test_analyzer_without_a_test_command_only_notes() -> None:
    rep = SynthesisRTCAnalyzer().run(parse_diff(DIFF), AnalysisContext())
    assert rep.findings == [] and "test command" in rep.notes[0] and rep.error is None


def test_analyzer_round_trips_changed_regions_against_the_test_suite(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text(MODULE_NEW)
    (repo / "test_calc.py").write_text(TESTS)

    def respond(req: dict) -> list[str] | str:  # type: ignore[type-arg]
        text = last_user_text(req)
        if "[region]" in text:
            return [f"desc {i}" for i in range(int(req.get("n") or 1))]
        region_src = json.loads(srv_state["region"]) if "region" in srv_state else ""
        return f"```python\n{region_src}\n```" if "TODO: desc 0" in text else "```python\npass\n```"

    srv_state: dict[str, str] = {}
    srv = scripted_llm(respond)
    python = Sandbox().python
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv, tmp_path), repo_path=repo,
                          test_command=f"{python} -m unittest -q test_calc",
                          options={"synthesis_rtc": {"max_regions": 1, "test_timeout_s": 20}})
    changes = parse_diff(DIFF)
    regions = candidate_regions(MODULE_NEW, "calc.py", set(changes.files[0].changed_lines))
    seed = "|".join(sorted(h.key for _, h in changes.hunks()))
    (region,) = sample_regions(regions, 1, seed)
    srv_state["region"] = json.dumps("".join(MODULE_NEW.splitlines(True)[region.start_line - 1:region.end_line]))
    rep = SynthesisRTCAnalyzer().run(changes, ctx)
    assert rep.error is None, rep.error
    assert len(rep.findings) == 1, (rep.notes, rep.skipped)
    f = rep.findings[0]
    assert (f.path, f.start_line, f.end_line) == ("calc.py", region.start_line, region.end_line)
    # desc 0 regenerates the region (tests pass), desc 1 and 2 and the baseline give `pass` (tests fail)
    assert f.scores["rtc_pass"] == pytest.approx(1 / 3) and f.scores["lift"] == pytest.approx(1 / 3)
    assert f.evidence["descriptions"] == ["desc 0", "desc 1", "desc 2"]
    assert rep.scores["regions"] == 1.0


def test_analyzer_reports_a_failing_suite(tmp_path: Path, scripted_llm: Callable[..., ScriptedLLM]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text(MODULE_NEW)
    srv = scripted_llm("x")
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv), repo_path=repo, test_command="exit 1")
    rep = SynthesisRTCAnalyzer().run(parse_diff(DIFF), ctx)
    assert rep.findings == [] and "does not pass on the unmodified code" in rep.notes[0]
    assert srv.request_count == 0
