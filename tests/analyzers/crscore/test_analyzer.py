"""The CRScore analyzer on a real diff, with claims from a scripted LLM server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext, ReviewComment
from analyzers.crscore import score as crs
from analyzers.crscore.analyzer import CRScoreAnalyzer
from analyzers.crscore.recipe import RECIPES
from analyzers.crscore.sts import shared_embedder
from analyzers.registry import get
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM
from tests.support import FIXTURES, require

DIFF = FIXTURES / "prs" / "more-itertools-d992be0de9.diff"
ANSWER = ("1. The running minimum and maximum now keep the first of equal items, which makes them stable.\n"
          "2. Tests for stability were added.\n\nImplications:\n"
          "1. Callers that relied on the last equal item get a different object.\n")


def _changes():  # type: ignore[no-untyped-def]
    require(DIFF.exists(), f"{DIFF} is missing")
    return parse_diff(DIFF.read_text(encoding="utf-8"))


def test_no_comments_gives_an_empty_report_with_a_note() -> None:
    report = CRScoreAnalyzer().run(_changes(), AnalysisContext())
    assert report.findings == [] and report.error is None
    assert any("no review comments" in n for n in report.notes)
    assert not any("--" in n for n in report.notes)  # no CLI advice in the App's check run


@pytest.mark.model
def test_scores_each_comment_with_matched_and_missed(scripted_llm: Callable[..., ScriptedLLM],
                                                     tmp_path: Path) -> None:
    changes = _changes()
    f, h = next((f, h) for f, h in changes.hunks() if f.path == "more_itertools/recipes.py")
    line = h.added_lines[0]
    server = scripted_llm(ANSWER)
    comments = [
        ReviewComment(f.path, line, "Does running_min now keep the first of equal items? That makes it stable.",
                      "alice", 1),
        ReviewComment(f.path, line, "nit", "bob", 2),
        ReviewComment(f.path, 99999, "This line is far away.", "carol", 3),
        ReviewComment("not/in/diff.py", 1, "Where is this?", "dave", 4),
    ]
    ctx = AnalysisContext(llm_factory=lambda: client_for(server, tmp_path), comments=comments)
    analyzer = get("crscore")
    assert isinstance(analyzer, CRScoreAnalyzer)
    report = analyzer.run(changes, ctx)
    assert report.error is None
    assert [s.reason for s in report.skipped] == ["line outside the diff", "file not in the diff"]
    assert len(report.findings) == 2
    good, nit = report.findings
    assert good.path == f.path and good.start_line == line
    assert (good.comment_id, nit.comment_id) == (1, 2)  # typed: the store reads it, not evidence
    assert set(good.scores) == {"con", "comp", "rel"}
    assert good.scores["rel"] > nit.scores["rel"]
    refs = good.evidence["pseudo_references"]
    # the default scores are the rtcbot recipe's (floor 0.2, F-2), not the plain soft ones
    (ours,) = crs.score_reviews(shared_embedder(), [(comments[0].body, refs)], None, recipe=RECIPES["rtcbot"])
    (plain,) = crs.score_reviews(shared_embedder(), [(comments[0].body, refs)], None)
    assert good.scores == pytest.approx(ours.as_dict()) and good.scores != pytest.approx(plain.as_dict())
    assert any("threshold-free, recipe rtcbot (floor 0.2, β 2)" in n for n in report.notes)
    assert refs[:3] == ["The running minimum and maximum now keep the first of equal items, which makes them stable.",
                        "Tests for stability were added.",
                        "Callers that relied on the last equal item get a different object."]
    covered = {m["pseudo_ref"] for m in good.evidence["matched"]} | {m["pseudo_ref"] for m in good.evidence["missed"]}
    assert covered == set(refs)
    assert good.evidence["review_sentences"][0]["sentence"].startswith("Does running_min")
    assert server.request_count == 1  # one claims request for the one hunk both comments are on
    assert good.key != nit.key and len(good.key) == 24
    # the key is stable: a second run (claims from the cache) gives the same keys and scores
    again = CRScoreAnalyzer().run(changes, AnalysisContext(llm_factory=lambda: client_for(server, tmp_path),
                                                           comments=comments))
    assert [x.key for x in again.findings] == [good.key, nit.key]
    assert again.findings[0].scores == good.scores
    assert server.request_count == 1


@pytest.mark.model
def test_hard_scores_and_file_smells(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    changes = parse_diff(
        "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,5 @@\n def f(a, b, c, d, e, g, h):\n-    return a\n"
        "+    try:\n+        return a\n+    except:\n+        pass\n"
    )
    post = "def f(a, b, c, d, e, g, h):\n    try:\n        return a\n    except:\n        pass\n"
    ctx = AnalysisContext(llm_factory=lambda: client_for(scripted_llm(ANSWER), tmp_path),
                          comments=[ReviewComment("m.py", 2, "Do not swallow every exception here.")],
                          file_loader=lambda p: post if p == "m.py" else None,
                          options={"crscore": {"tau": 0.3296}})
    report = CRScoreAnalyzer().run(changes, ctx)
    (finding,) = report.findings
    assert all(v in (0.0, 1.0) or 0 < v < 1 for v in finding.scores.values())
    # the smells come from the post-change file, kept on the changed lines (2–5) only:
    # the bare except (line 4) is in, the long parameter list (line 1, context) is out
    smells = [r for r in finding.evidence["pseudo_references"] if r.startswith("line ")]
    assert smells == ["line 4, useless exception handling smell: a bare except"]
    assert any("thresholded at τ = 0.3296" in n for n in report.notes)


@pytest.mark.model
def test_without_an_llm_the_smells_still_score() -> None:
    from analyzers.crscore.smells import jshint

    require(jshint.unavailable_reason() is None, str(jshint.unavailable_reason()))
    changes = parse_diff("--- a/x.js\n+++ b/x.js\n@@ -1 +1,2 @@\n var a = 1;\n+var b = a == null\n")
    ctx = AnalysisContext(comments=[ReviewComment("x.js", 2, "Missing semicolon after the comparison.")])
    report = CRScoreAnalyzer().run(changes, ctx)
    assert any("no LLM claims" in n for n in report.notes)
    (finding,) = report.findings
    assert any("semicolon" in r for r in finding.evidence["pseudo_references"])
    assert finding.scores["rel"] > 0


@pytest.mark.model
def test_a_hunk_moved_by_an_earlier_edit_reuses_its_claims(scripted_llm: Callable[..., ScriptedLLM],
                                                           tmp_path: Path) -> None:
    """Claims are asked without the @@ line numbers: a push that only shifts a hunk costs nothing."""
    diff = "--- a/m.py\n+++ b/m.py\n@@ -10,3 +10,3 @@ def f():\n     a = 1\n-    b = 2\n+    b = 3\n     return a + b\n"
    moved = diff.replace("@@ -10,3 +10,3 @@", "@@ -12,3 +14,3 @@")
    server = scripted_llm(ANSWER)
    for text, line in ((diff, 11), (moved, 15)):
        ctx = AnalysisContext(llm_factory=lambda: client_for(server, tmp_path),
                              comments=[ReviewComment("m.py", line, "Why does b change to 3?", "alice", 1)])
        report = CRScoreAnalyzer().run(parse_diff(text), ctx)
        assert report.error is None and len(report.findings) == 1
    assert server.request_count == 1


def test_rtcbots_own_comments_are_listed_apart_never_scored() -> None:
    """Three suggestions rtcbot posted (marked `ours` by the surface that knows its identity)
    and no other comment: nothing is scored, and the report says why, one item each."""
    changes = _changes()
    f, h = next((f, h) for f, h in changes.hunks() if f.path == "more_itertools/recipes.py")
    own = [ReviewComment(f.path, h.added_lines[0], "```suggestion\nx = 1\n```", author="rtcbot[bot]", ours=True)
           for _ in range(3)]
    report = CRScoreAnalyzer().run(changes, AnalysisContext(comments=own))
    assert report.findings == [] and report.error is None
    assert [s.kind for s in report.skipped] == ["policy"] * 3
    assert all("written by rtcbot" in s.reason for s in report.skipped)
    assert get("crscore").headline(report) == "no review comments scored; 3 comments by rtcbot not scored"  # type: ignore[attr-defined]


def test_a_comment_on_a_file_that_is_not_code_is_skipped_before_any_request(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm("1. A claim.")
    yaml = parse_diff("--- a/ci.yml\n+++ b/ci.yml\n@@ -1,2 +1,2 @@\n on: push\n-jobs: {}\n+jobs: {a: 1}\n")
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv, tmp_path),
                          comments=[ReviewComment("ci.yml", 2, "Name this job.", "alice", 1)])
    report = CRScoreAnalyzer().run(yaml, ctx)
    assert srv.request_count == 0 and report.findings == []
    assert [(s.item, s.reason) for s in report.skipped] == [("comment at ci.yml:2", "not code (yaml)")]
