"""The `review` analyzer: K candidate comments per hunk from a scripted model, filtered by
CRScore against the hunk's claims (real embedding model, real smell detectors)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from analyzers import registry
from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext
from analyzers.options import OptionsError
from analyzers.review.analyzer import ReviewAnalyzer, ReviewOptions, parse_candidates
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM, last_user_text


def _file(path: str, old: str, new: str) -> str:
    return (f"--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,3 @@\n def f(values, path):\n"
            f"-    {old}\n+    {new}\n+    return total\n")


DIFF = (_file("stats/a.py", "total = 0", "total = sum(values) / len(values)")
        + _file("stats/b.py", "total = 0", "total = sum(values) / len(values)")
        + _file("io/c.py", "total = ''", "total = open(path).read()"))

MEAN_CLAIMS = ("1. The function now computes the mean by dividing sum(values) by len(values).\n\n"
               "Implications:\n1. An empty values list makes the division raise ZeroDivisionError.\n")
OPEN_CLAIMS = ("1. The function now reads the whole file at path with open(path).read().\n\n"
               "Implications:\n1. The file handle from open(path) is never closed, which leaks a file descriptor.\n")
GOOD_A = "Dividing by len(values) raises ZeroDivisionError when values is an empty list; guard the empty case."
GOOD_B = "Dividing by len(values) raises a ZeroDivisionError when the values list is empty, so guard that case."
GOOD_C = "The file handle from open(path) is never closed and leaks a file descriptor; use a with block."
ANSWERS = {
    "stats/a.py": [f"Line 2: {GOOD_A}", "Line 2: Nice!", "Sure, here is my review of the change.",
                   "**Line 3**: Return early."],
    "stats/b.py": [f"1. Line 2 - {GOOD_B}", "Line 40: This line is not in the hunk.", "LGTM", "Line 3: ok"],
    "io/c.py": [f"- line 2: {GOOD_C}", "Line 2: Good.", "Looks fine to me.", "Line 3: fine"],
}


def responder(req: dict[str, Any]) -> str | list[str]:
    text = last_user_text(req)
    if "Summary of changes" in text:  # the CRScore claims of a hunk
        return OPEN_CLAIMS if "open(path)" in text else MEAN_CLAIMS
    path = next(p for p in ANSWERS if f"`{p}`" in text)
    return ANSWERS[path][: int(req.get("n", 1))]


def run(server: ScriptedLLM, tmp_path: Path, **options: Any):  # type: ignore[no-untyped-def]
    ctx = AnalysisContext(llm_factory=lambda: client_for(server, tmp_path), options={"review": options})
    return registry.get("review").run(parse_diff(DIFF), ctx)


@pytest.mark.model
def test_k_candidates_per_hunk_one_kept_per_hunk_near_duplicates_dropped(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    server = scripted_llm(responder)
    report = run(server, tmp_path)
    assert report.error is None, report.error
    asks = [r for r in server.requests if "Summary of changes" not in last_user_text(r)]
    assert len(asks) == 3 and all(r["n"] == 4 and r["temperature"] > 0 for r in asks)  # K = 4 per hunk
    assert report.scores["candidates"] == 8  # 4 answers per hunk, 3 without an entry, 1 off the hunk
    assert report.scores["unparsed"] == 3 and any("3 of 12 answers" in n for n in report.notes)
    assert any("1 candidate(s) were on lines the hunk does not show" in n for n in report.notes)
    # a.py and b.py get the same finding in other words: one of them is kept, once
    assert report.scores["duplicates"] == 1
    by_path = {f.path: f for f in report.findings}
    assert len(report.findings) == 2 and set(by_path) in ({"stats/a.py", "io/c.py"}, {"stats/b.py", "io/c.py"})
    mean = by_path.get("stats/a.py") or by_path["stats/b.py"]
    assert mean.message in (GOOD_A, GOOD_B) and mean.start_line == mean.end_line == 2
    assert by_path["io/c.py"].message == GOOD_C and by_path["io/c.py"].start_line == 2
    for f in report.findings:
        assert f.analyzer == "review" and set(f.scores) == {"con", "comp", "rel"}
        assert f.scores["rel"] >= ReviewOptions().min_rel and f.scores["con"] >= ReviewOptions().min_con
        assert f.evidence["candidates_on_hunk"] in (2, 3) and f.evidence["matched"]  # the claims it covers
    matched = {m["pseudo_ref"] for m in by_path["io/c.py"].evidence["matched"]}
    assert any("never closed" in m for m in matched)
    # a re-run costs no request (candidates and claims are cached) and keeps the same comments
    before = server.request_count
    again = run(server, tmp_path)
    assert server.request_count == before
    assert [(f.key, f.scores) for f in again.findings] == [(f.key, f.scores) for f in report.findings]


@pytest.mark.model
def test_thresholds_and_max_per_hunk_are_options(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    server = scripted_llm(responder)
    none = run(server, tmp_path, min_rel=1.0)
    assert none.findings == [] and none.scores["kept"] == 0
    more = run(server, tmp_path, max_per_hunk=3, min_rel=0.0, min_con=0.0, duplicate=1.0)
    per_path = [f.path for f in more.findings]
    assert per_path.count("io/c.py") == 3 and len(more.findings) == 8  # a.py 3, b.py 2, c.py 3
    # the pick order within a hunk: the specific comment beats "Good." and "fine"
    assert next(f for f in more.findings if f.path == "io/c.py").message == GOOD_C


def test_options_are_strict_and_bounded() -> None:
    assert registry.options_type("review") is ReviewOptions
    assert "review" not in registry.DEFAULT_ANALYZERS and "review" in registry.ANALYZERS
    with pytest.raises(OptionsError) as e:
        registry.validate_options("review", {"candidates": 50, "min_rel": 2, "max_per_hunk": "1", "k": 1})
    text = "\n".join(e.value.problems)
    assert "options.review.candidates: 50 is over the maximum of 8" in text
    assert "options.review.min_rel: 2 is over the maximum of 1" in text
    assert "options.review.max_per_hunk" in text and "options.review.k: unknown option" in text


def test_parser_keeps_what_parses() -> None:
    got = parse_candidates("Here you go:\n1. **Line 12:** The loop skips\nthe last item.\n\n"
                           "- line 7 — `x` is unused\nSome closing words.\n```\nLine 9: in code\n```\nLine x: no")
    assert [(c.line, c.text) for c in got] == [(12, "The loop skips the last item."),
                                               (7, "`x` is unused Some closing words.")]
    assert parse_candidates("I have no comments.") == []


def test_no_llm_is_one_clear_error() -> None:
    report = ReviewAnalyzer().run(parse_diff(DIFF), AnalysisContext())
    assert report.error is not None and "needs an LLM" in report.error and report.findings == []


@pytest.mark.model
def test_rtcbot_review_prints_the_kept_comments(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from bot.entry import main

    monkeypatch.setenv("RTCBOT_CACHE_DIR", str(tmp_path))
    server = scripted_llm(responder)
    patch = tmp_path / "change.diff"
    patch.write_text(DIFF, encoding="utf-8")
    args = ["review", str(patch), "--analyzers", "review", "--llm-base-url", server.base_url, "--model", server.model]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert "The file handle from open(path) is never closed" in res.output and "io/c.py" in res.output
    assert "Nice!" not in res.output  # a candidate CRScore dropped


def test_crscore_lists_what_no_comment_covered_smells_first_with_lines() -> None:
    from analyzers.context import ReviewComment
    from analyzers.crscore.analyzer import Unit, unreviewed
    from analyzers.crscore.score import Match, Scores

    changes = parse_diff(DIFF)
    (fa, ha), (fb, hb), (fc, hc) = list(changes.hunks())
    unit = Unit(fa, [ha], ha.key, claims=["Computes the mean.", "An empty list raises ZeroDivisionError."],
                smells=["line 3, R1710: inconsistent return statements"],
                implications=["An empty list raises ZeroDivisionError."])
    on_b = Unit(fb, [hb], hb.key, claims=["Computes the mean of b."])
    placed = [(ReviewComment("stats/a.py", 2, "Guard the empty list."), unit),
              (ReviewComment("stats/b.py", 2, "Mean of b."), on_b)]
    results = [Scores(0.9, 0.3, 0.45, None, matched=[Match("Computes the mean.", "x", 0.8)]),
               Scores(0.9, 1.0, 0.95, None, matched=[Match("Computes the mean of b.", "y", 0.9)])]
    notes = unreviewed(changes, placed, results)
    assert notes == [
        "not covered by any review comment: stats/a.py:3 — line 3, R1710: inconsistent return statements",
        "not covered by any review comment: stats/a.py:2-3 — An empty list raises ZeroDivisionError.",
        "1 changed hunk(s) have no review comment: io/c.py:2-3",
    ]


def test_each_hunk_keeps_its_candidates_in_the_recipes_pick_order() -> None:
    from analyzers.crscore.analyzer import Unit
    from analyzers.crscore.score import Match, Scores
    from analyzers.review.analyzer import RECIPE, Candidate, HunkWork, Scored, pick_order, select

    (fa, ha), (fb, hb), _ = list(parse_diff(DIFF).hunks())
    a, b = HunkWork(fa, ha, Unit(fa, [ha], ha.key)), HunkWork(fb, hb, Unit(fb, [hb], hb.key))

    def scored(work: HunkWork, text: str, best: float) -> Scored:  # one sentence, one claim at `best`
        return Scored(work, Candidate(2, text), Scores(0.5, 0.5, 0.5, None, [text], [best],
                                                       [Match("claim", text, best)]))

    items = [scored(a, "Short.", 0.60), scored(a, "A longer comment that names the empty list case.", 0.58),
             scored(a, "Off topic.", 0.10), scored(b, "Only one on b.", 0.40)]
    assert RECIPE.margin >= 0.02  # 0.58 is within the margin of 0.60: the longer comment goes first
    assert pick_order(items) == [1, 3, 0, 2]  # a's first, b's first, then a's second and third
    kept, duplicates = select(items, np.eye(4), ReviewOptions(max_per_hunk=1, min_rel=0.0, min_con=0.0))
    assert [k.candidate.text for k in kept] == [items[1].candidate.text, "Only one on b."] and duplicates == 0
    # a draft that only asks goes after one that says, unless it scores more than the penalty above it
    asks = [scored(a, "Should this guard the empty list?", 0.62), scored(a, "Guard the empty list.", 0.60)]
    assert RECIPE.pick is not None and RECIPE.pick.asks > 0.02
    assert pick_order(asks) == [1, 0]
    assert pick_order([scored(a, "Should this guard the empty list?", 0.80), asks[1]]) == [0, 1]


NOT_CODE = ("--- a/deploy/values.yaml\n+++ b/deploy/values.yaml\n@@ -1,2 +1,3 @@\n replicas: 2\n"
            "-image: app:1\n+image: app:2\n+pull: always\n")


@pytest.mark.model
def test_hunks_that_are_not_code_are_not_sent_to_the_reviewer(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    server = scripted_llm(responder)
    ctx = AnalysisContext(llm_factory=lambda: client_for(server, tmp_path), options={"review": {}})
    report = registry.get("review").run(parse_diff(NOT_CODE + DIFF), ctx)
    asked = [last_user_text(r) for r in server.requests if "Summary of changes" not in last_user_text(r)]
    assert len(asked) == 3 and not any("values.yaml" in t for t in asked)
    assert [(s.item, s.reason) for s in report.skipped if "values.yaml" in s.item] == [
        ("deploy/values.yaml:2", "not code (yaml)")]


def _many_hunks(n: int) -> str:
    return "".join(_file(f"pkg/m{i}.py", "total = 0", f"total = {i}") for i in range(n))


@pytest.mark.model
def test_a_model_that_never_answers_in_the_format_is_stopped_after_a_handful(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    server = scripted_llm(lambda req: ["I think this change looks reasonable overall."] * int(req.get("n", 1)))
    llm = client_for(server, tmp_path, max_concurrency=1)  # the embedded model's one request at a time
    ctx = AnalysisContext(llm_factory=lambda: llm, options={"review": {"max_hunks": 19}})
    report = registry.get("review").run(parse_diff(_many_hunks(19)), ctx)
    # 4 answers a request: the watch has seen 8 (a handful) after two hunks, none in format
    assert server.request_count == 2
    stopped = [s for s in report.skipped if "keep missing the expected format" in s.reason]
    assert len(stopped) == 17 and stopped[0].reason.startswith("not asked: ") and "0 of 8 in it" in stopped[0].reason
    assert any("8 of 8 answers were not in the expected format" in n and "stopped after 8 answers" in n
               and "17 hunk(s) not asked" in n for n in report.notes), report.notes
    assert report.findings == []


@pytest.mark.model
def test_the_format_stop_holds_with_requests_in_parallel(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    # 0.1 s a request, as a fast hosted model; 4 answers a request, none in format
    server = scripted_llm(lambda req: ["Looks fine."] * int(req.get("n", 1)), delay_s=0.1)
    llm = client_for(server, tmp_path, max_concurrency=4)
    ctx = AnalysisContext(llm_factory=lambda: llm, options={"review": {"max_hunks": 40}})
    report = registry.get("review").run(parse_diff(_many_hunks(40)), ctx)
    # the first 4 go at once; a request's answers are counted before its slot is freed, so the
    # one that frees a slot first lets at most one more go (4 answers seen), and the second stops
    # the run (8 seen): 4 or 5, however loaded the machine (counted after the slot was freed, a
    # second wave always went, and on a loaded CI machine a third: 12)
    assert 4 <= server.request_count <= 5, server.request_count
    not_asked = [s for s in report.skipped if s.reason.startswith("not asked: ")]
    assert len(not_asked) == 40 - server.request_count
    assert llm.usage.requests == server.request_count  # a request halted at its slot is not counted
