"""Inconclusive hunks (analyzers/editing_rtc/evidence.py): what a round trip can say about a
change and what it cannot, through the analyzer and a scripted model on real HTTP."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from analyzers import registry
from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext
from analyzers.editing_rtc import evidence
from analyzers.editing_rtc.analyzer import EditingRTC
from analyzers.llm.local import ALIAS
from analyzers.report import AnalyzerReport, Inconclusive
from analyzers.rtc.round_trip import RoundTrip
from reporters import readable
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM, last_user_text

TWO = (
    "--- a/m.py\n+++ b/m.py\n@@ -1,4 +1,4 @@\n def f(x):\n     y = x\n-    return y+1\n+    return y + 2\n"
    " # end f\n"
    "@@ -10,4 +10,4 @@ def g():\n def g():\n     z = 0\n-    pass\n+    return z\n # end g\n"
)
DELETION = "--- a/d.py\n+++ b/d.py\n@@ -1,4 +1,2 @@\n def h():\n-    a = 1\n-    b = 2\n     return 3\n"


def _old(text: str) -> str:
    return text.split("[old]\n```", 1)[1].split("\n", 1)[1].split("```", 1)[0]


def scripted(*, baseline: str = "keep", recreate: tuple[str, ...] = ("y + 2", "return z")) -> Callable[
        [dict[str, Any]], str | list[str]]:
    """A model that describes each edit, re-creates the hunks whose new line is in `recreate`
    from a description, and answers "Edit." by giving the old code back (`baseline` "keep") or
    with an unrelated line ("garbage")."""
    def answer(req: dict[str, Any]) -> str | list[str]:
        text = last_user_text(req)
        if "[edit description]" not in text:
            return [f"Change the returned value ({i})." for i in range(req.get("n", 1))]
        old = _old(text)
        if text.rstrip().endswith("[edit description] Edit."):
            return "```\nprint('hello')\n```\n[end]" if baseline == "garbage" else f"```\n{old}```\n[end]"
        new = old.replace("return y+1", "return y + 2").replace("    pass", "    return z")
        keep = any(r in new for r in recreate)
        return f"```\n{new if keep else old}```\n[end]"
    return answer


def run(srv: ScriptedLLM, diff: str = TWO) -> AnalyzerReport:
    return EditingRTC().run(parse_diff(diff), AnalysisContext(llm_factory=lambda: client_for(srv)))


def test_a_model_that_fails_the_hunks_baseline_makes_it_inconclusive_with_no_advice(
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    report = run(scripted_llm(scripted(baseline="garbage", recreate=("y + 2",))))
    f, g = report.findings
    assert f.inconclusive is None and f.scores["rtc"] == 1.0  # re-created: evidence all the same
    assert g.inconclusive is Inconclusive.BASELINE
    assert registry.advice(g) is None
    assert g.message.startswith("What the model understood: ")  # nothing said of the change
    assert report.scores["inconclusive"] == 1.0 and report.scores["hunks"] == 1.0  # counted apart
    assert report.scores["rtc"] == 1.0  # the figures are the conclusive hunks'
    assert registry.headline(report) == (
        'the change is explained; 1 inconclusive (the model could not give back the unchanged lines '
        'when asked for an unspecified "Edit.")')


def test_a_model_that_re_creates_no_hunk_of_the_run_makes_every_hunk_inconclusive(
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    report = run(scripted_llm(scripted(recreate=())))
    assert [f.inconclusive for f in report.findings] == [Inconclusive.EVERY_ITEM] * 2
    assert all(registry.advice(f) is None for f in report.findings)
    assert "rtc" not in report.scores and report.scores["inconclusive"] == 2.0
    assert registry.headline(report) == \
        "every hunk is inconclusive (the model could not re-create any change of this run)"


def test_the_embedded_model_is_inconclusive_whatever_it_answers(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    report = run(scripted_llm(scripted(), model=ALIAS))
    assert [f.scores["rtc"] for f in report.findings] == [1.0, 1.0]
    assert {f.inconclusive for f in report.findings} == {Inconclusive.EMBEDDED}


def test_a_hunk_no_description_carried_is_advised_with_what_they_missed(
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    report = run(scripted_llm(scripted(recreate=("y + 2",))))
    f, g = report.findings
    assert g.inconclusive is None and g.scores["rtc"] == 0.0 and g.missed == ["return z"]
    assert registry.advice(g) == "no description carried “return z”: say in the pull request what it does and why"
    assert registry.advice(f) is None
    assert registry.headline(report) == "1 of 2 changes explained; 1 unclear"
    assert "What the model understood" in g.message and "EditingRTC 0.00" not in g.message


def test_pure_deletions_are_not_scored(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(scripted())
    report = run(srv, DELETION)
    assert srv.request_count == 0 and not report.findings
    [s] = report.skipped
    assert (s.reason, s.kind) == ("lines removed only: nothing to re-create", "policy")
    assert report.not_run == "the code changes only remove lines"


def test_a_budget_cut_says_how_many_of_the_hunks_were_scored(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(scripted())
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv, max_requests=5, max_concurrency=1))
    report = EditingRTC().run(parse_diff(TWO), ctx)
    assert (len(report.findings), report.planned, report.cut_by) == (1, 2, "LLM budget")
    assert readable.headline(report) == "the change is explained; 1 of 2 hunks scored (LLM budget)"


def _trip(baseline: str, regenerated: str) -> RoundTrip:
    return RoundTrip(forward=["d"], backward=[[regenerated]], baseline=[baseline])


def test_the_baseline_is_failed_below_half_the_unchanged_lines_kept() -> None:
    [hunk] = parse_diff("--- a/e.py\n+++ b/e.py\n@@ -1,3 +1,3 @@\n def h():\n-    a = 1\n+    b = 2\n"
                        "     return 3\n").files[0].hunks
    assert evidence.kept(hunk, "def h():\n    a = 1\n    return 3\n") == 1.0
    assert not evidence.failed_baseline(hunk, _trip("def  h():\n  return 3", ""))  # whitespace aside
    assert not evidence.failed_baseline(hunk, _trip("def h():\n    pass\n", ""))  # 1 of 2 kept: not below half
    assert evidence.failed_baseline(hunk, _trip("x = 1\n", ""))
    assert evidence.missed(hunk, _trip("", "def h():\n    return 3\n")) == ["b = 2"]
    assert evidence.missed(hunk, _trip("", "def h():\n    b  =  2\n")) == []


def test_a_model_whose_answers_are_unusable_is_the_operators_problem_not_a_finding(
        scripted_llm: Callable[..., ScriptedLLM], caplog: Any) -> None:
    """Issue #47 item 3: code where a description was asked, words where code was. The model is
    stopped after a handful of answers; with none of them in format, the report is "not run"
    with why and a warning in the operator's log, and the hunks it finished are not scored (a
    "failed" item: a gate cannot pass over them), never findings read from unusable answers."""
    def unusable(req: dict[str, Any]) -> list[str]:
        n = int(req.get("n") or 1)
        return (["I would rather not write code."] * n if "[edit description]" in last_user_text(req)
                else ["```\nx = 1\n```"] * n)

    with caplog.at_level("WARNING", logger="analyzers.editing_rtc.analyzer"):
        report = run(scripted_llm(unusable), TWO)
    assert not report.findings and "rtc" not in report.scores
    assert report.not_run.startswith("the model's answers were not usable: 0 of ")
    assert readable.headline(report) == f"not run: {report.not_run}"
    assert {s.path for s in report.unanalysed} == {"m.py"} and len(report.unanalysed) == 2
    assert any("EditingRTC did not run" in r.getMessage() for r in caplog.records)
