"""The PR-review reporter: AutoFix's verified fixes as committable suggestions, once.

Pure planning first; then the reporter through the real GitHub client against the fake GitHub
(which refuses, as GitHub does, a review comment on a line the diff does not show); then both
surfaces end to end with real Semgrep and a scripted model: the Action with
`reporters: pr-review`, the App with RTCBOT_REPORTERS=pr-review.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from analyzers.code.diff import parse_github_files
from analyzers.report import AnalyzerReport, Finding, Fix
from analyzers.semgrep.scan import find_semgrep
from bot.app.settings import ServiceSettings
from bot.github import GitHubClient, GitHubSettings, token_client
from reporters.base import REPORTERS, ReporterError, Sinks, Target, reporters_named, run_reporter
from reporters.diff_filter import DiffFilter
from reporters.pr_review import MARKER, PullRequestReviewReporter, candidates, key_of, plan
from tests.analyzers.autofix.test_analyzer import APP
from tests.analyzers.autofix.test_analyzer import responder as autofix_answers
from tests.bot.app_support import deliver, drain, make_settings, serve
from tests.fakes.github_server import FakeGitHub, files_from_diff
from tests.fakes.llm_server import ScriptedLLM
from tests.support import require

TOKEN = "ghs_review_token"
UNPACED = GitHubSettings(write_interval_s=0.0)  # the spacing of writes is tests/bot/test_jobs.py's
SOURCE = "def f(x):\n    a = eval(x)\n    b = eval(x)\n    return a + b\n"
PATCH = "@@ -1,3 +1,4 @@\n def f(x):\n-    a = x\n+    a = eval(x)\n+    b = eval(x)\n     return a + b\n"


def fixed(line: int, *, rtc: bool = True, end: int | None = None, path: str = "m.py", new: str = "") -> Finding:
    end = end or line
    replacement = new or "".join(f"    v{n} = ast.literal_eval(x)\n" for n in range(line, end + 1))
    return Finding("autofix", "python-code-injection", "eval on input", path, line, end, level="warning",
                   scores={"fixed": 1.0, "rtc_pass": 1.0 if rtc else 0.0}, rule_id="python-code-injection",
                   fix=Fix(path, line, end, replacement, f"-eval@{line}\n+{replacement}"))


def report(*findings: Finding) -> AnalyzerReport:
    return AnalyzerReport("autofix", "AutoFix", findings=list(findings))


FILES = [{"filename": "m.py", "status": "modified", "patch": PATCH}]
DIFF = DiffFilter.of(parse_github_files(FILES))  # what the callers hand in: the lines the diff shows
HEAD = Target(repo="o/r", number=7, head_sha="a" * 40, diff=DIFF)


def reviewer(client: GitHubClient, **kw: Any) -> PullRequestReviewReporter:
    """The reporter as the surfaces build it: the review comments they read handed in."""
    return PullRequestReviewReporter(client, comments=lambda: client.review_comments("o/r", 7), **kw)


# ---------------------------------------------------------------------------------- planning
def test_a_verified_fix_on_diff_lines_becomes_one_suggestion_comment() -> None:
    body, old, outside = plan(HEAD, candidates([report(fixed(2), fixed(2, end=3, new="    a = b = 0\n"))]),
                              DIFF, [])
    assert body is not None and (old, outside) == (0, 0)
    assert body["commit_id"] == HEAD.head_sha and body["event"] == "COMMENT"
    one, many = body["comments"]
    assert (one["path"], one["line"], one["side"]) == ("m.py", 2, "RIGHT") and "start_line" not in one
    assert "```suggestion\n    v2 = ast.literal_eval(x)\n```" in one["body"]
    assert (many["start_line"], many["line"], many["start_side"]) == (2, 3, "RIGHT")
    assert "Patched RTC" in one["body"] and one["body"].endswith(MARKER.format(key=key_of(fixed(2))))
    assert body["body"].startswith("rtcbot AutoFix: 2 fixes you can commit")


def test_unverified_fixes_wait_for_mode_all_and_lines_outside_the_diff_are_counted() -> None:
    rtc_failed, outside = fixed(2, rtc=False), fixed(9)
    assert candidates([report(rtc_failed)]) == []
    body, _, left_out = plan(HEAD, candidates([report(rtc_failed, outside)], "all"), DIFF, [])
    assert body is not None and [c["line"] for c in body["comments"]] == [2] and left_out == 1
    assert "Not verified by Patched RTC" in body["comments"][0]["body"]
    assert "1 more touch lines this pull request does not change" in body["body"]
    # a fix that spans a line the diff does not show is not suggested either (GitHub refuses it)
    assert plan(HEAD, candidates([report(fixed(4, end=6))]), DIFF, [])[0] is None


def test_a_fix_already_posted_is_not_posted_again_even_where_its_lines_moved() -> None:
    first, _, _ = plan(HEAD, candidates([report(fixed(2))]), DIFF, [])
    assert first is not None
    moved = fixed(3, new="    v2 = ast.literal_eval(x)\n")  # a push above it: same fix, next line
    moved.fix = Fix("m.py", 3, 3, "    v2 = ast.literal_eval(x)\n", fixed(2).fix.diff)  # type: ignore[union-attr]
    as_posted = [{**c, "user": {"login": "rtcbot[bot]", "type": "Bot"}} for c in first["comments"]]
    body, old, _ = plan(HEAD, candidates([report(moved)]), DIFF, as_posted)
    assert body is None and old == 1


def test_the_reporter_is_built_by_name_and_says_what_it_lacks() -> None:
    assert REPORTERS["pr-review"] == "reporters.pr_review:PullRequestReviewReporter"
    with pytest.raises(ReporterError, match="pr-review reporter needs a GitHub client"):
        reporters_named(["pr-review"], Sinks())
    assert isinstance(reporters_named(["pr-review"], Sinks(github=object()))[0], PullRequestReviewReporter)
    assert [r.mode  # type: ignore[attr-defined]
            for r in reporters_named(["pr-review"], Sinks(github=object(), suggestions="all"))] == ["all"]
    with pytest.raises(ReporterError, match="suggestions: 'some'"):
        reporters_named(["pr-review"], Sinks(github=object(), suggestions="some"))
    off = PullRequestReviewReporter(object(), mode="off")  # type: ignore[arg-type]  # never called
    assert run_reporter(off, HEAD, {}, [report(fixed(2))]) == 0
    from bot.core.config import parse_config

    assert parse_config("suggestions: all\n").config.suggestions == "all"
    assert "suggestions" in (parse_config("suggestions: maybe\n").error or "")
    settings = ServiceSettings(reporters="pr-review,check-runs")  # type: ignore[arg-type]
    assert settings.reporters == ["pr-review"]  # the check runs are always published
    for bad, why in (("pr-reviews", "unknown reporter 'pr-reviews'"), ("sarif", "needs a path")):
        with pytest.raises(ValueError, match=why):
            ServiceSettings(reporters=bad)  # type: ignore[arg-type]


# ------------------------------------------------------------------ through the real client
def test_one_review_per_head_and_nothing_twice(fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github(repo="o/r")
    gh.grant_token(TOKEN)
    pr = gh.add_pr(7, files=[dict(f) for f in FILES])
    client = token_client(gh.base_url, TOKEN, UNPACED)
    target = Target(repo="o/r", number=7, head_sha=pr.head_sha, diff=DIFF)
    reports = [report(fixed(2), fixed(3, rtc=False), fixed(9))]
    try:
        with pytest.raises(ReporterError, match="needs the pull request's review comments"):
            run_reporter(PullRequestReviewReporter(client), target, {}, reports)  # never fetched by the reporter
        with pytest.raises(ReporterError, match="needs the lines the pull request's diff shows"):
            run_reporter(reviewer(client), Target(repo="o/r", number=7, head_sha=pr.head_sha), {}, reports)
        assert gh.reviews == []
        assert run_reporter(reviewer(client), target, {"autofix": "AutoFix"}, reports) == 1
        [review] = gh.reviews
        assert review["commit_id"] == pr.head_sha and [c["line"] for c in review["comments"]] == [2]
        # a re-run of the same head, then a push that leaves the fixed line alone: nothing new
        assert run_reporter(reviewer(client), target, {}, reports) == 0
        pushed_files = [{**FILES[0], "patch": PATCH + "+# more\n"}]
        pushed = gh.push(7, files=pushed_files)
        assert run_reporter(reviewer(client), Target("o/r", 7, pushed.head_sha,
                                                diff=DiffFilter.of(parse_github_files(pushed_files))),
                       {}, reports) == 0
        assert len(gh.reviews) == 1
        # the fake refuses a comment on a line the diff does not show, as GitHub does
        bad = {"commit_id": pr.head_sha, "event": "COMMENT", "comments": [{"path": "m.py", "line": 40, "body": "x"}]}
        with pytest.raises(Exception, match="422"):
            client.create_review("o/r", 7, bad)
    finally:
        client.close()


# ------------------------------------------------------------- the review analyzer's comments
def remark(line: int, text: str = "Dividing by len(values) fails on an empty list.", path: str = "m.py") -> Finding:
    return Finding("review", f"review comment: {text}", text, path, line, line,
                   scores={"con": 0.61, "comp": 0.42, "rel": 0.5},
                   evidence={"matched": [{"pseudo_ref": "An empty list raises ZeroDivisionError.", "similarity": 0.7}]},
                   key=f"k{line}")


def test_review_comments_join_the_fixes_in_one_review_with_their_scores() -> None:
    reports = [report(fixed(2)), AnalyzerReport("review", "Review", findings=[remark(3), remark(9, "Far away.")])]
    body, old, outside = plan(HEAD, candidates(reports, "off"), DIFF, [])  # suggestions off: comments still go
    assert body is not None and (old, outside) == (0, 1)  # line 9 is not on the diff
    [comment] = body["comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("m.py", 3, "RIGHT") and "start_line" not in comment
    assert comment["body"].startswith("Dividing by len(values) fails on an empty list.")
    assert "CRScore Rel 0.50, Con 0.61, Comp 0.42" in comment["body"] and "```suggestion" not in comment["body"]
    assert "An empty list raises ZeroDivisionError." in comment["body"]
    assert body["body"].startswith("rtcbot review: 1 comment")
    both, _, _ = plan(HEAD, candidates(reports), DIFF, [])
    assert both is not None and [c["line"] for c in both["comments"]] == [2, 3]
    assert "1 fix you can commit" in both["body"] and "1 review comment by rtcbot" in both["body"]
    # each analyzer's own words (analyzers/*/view.py `in_review`), fixes first; the one left out
    # is named by the check run it is in, its analyzer's
    assert both["body"] == (
        "rtcbot AutoFix: 1 fix you can commit from this review, each checked by a Semgrep re-scan and Patched RTC. "
        "And 1 review comment by rtcbot, each the best of several drafts by CRScore. "
        "1 more touch lines this pull request does not change, so GitHub cannot take them as suggestions: "
        "they are in the Review check run.")
    # posted once: a re-run, or the same comment a line further down after a push, is not posted again
    again, old, _ = plan(HEAD, candidates([AnalyzerReport("review", "Review", findings=[remark(2)])]), DIFF,
                         [{**c, "user": {"login": "rtcbot[bot]", "type": "Bot"}} for c in both["comments"]])
    assert again is None and old == 1


def test_the_reporter_posts_review_comments_once(fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github(repo="o/r")
    gh.grant_token(TOKEN)
    pr = gh.add_pr(7, files=[dict(f) for f in FILES])
    client = token_client(gh.base_url, TOKEN, UNPACED)
    target = Target(repo="o/r", number=7, head_sha=pr.head_sha, diff=DIFF)
    reports = [AnalyzerReport("review", "Review", findings=[remark(2), remark(3, "Name `b` says nothing.")])]
    try:
        assert run_reporter(reviewer(client, mode="off"), target, {"review": "Review"}, reports) == 2
        [review] = gh.reviews
        assert [c["line"] for c in review["comments"]] == [2, 3]
        assert all("CRScore Rel 0.50" in c["body"] for c in review["comments"])
        assert run_reporter(reviewer(client), target, {}, reports) == 0
        assert len(gh.reviews) == 1
    finally:
        client.close()


# ----------------------------------------------------------------------- both surfaces
def app_pr(gh: FakeGitHub, number: int) -> str:
    """A pull request that adds tests.analyzers.autofix.test_analyzer's vulnerable APP as app.py."""
    text = "".join(difflib.unified_diff([], APP.splitlines(keepends=True), "a/app.py", "b/app.py"))
    pr = gh.add_pr(number, files=files_from_diff(f"diff --git a/app.py b/app.py\n{text}"))
    gh.contents[(pr.head_sha, "app.py")] = APP
    return pr.head_sha


def suggested(gh: FakeGitHub) -> list[tuple[str, int]]:
    return [(c["path"], c["line"]) for r in gh.reviews for c in r["comments"]]


@pytest.mark.slow
def test_the_action_posts_verified_fixes_as_suggestions_once(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    from tests.bot.test_action import EVENT, run_action
    from tests.bot.test_action import TOKEN as ACTION_TOKEN

    require(find_semgrep(), "semgrep is not installed")
    event = json.loads(EVENT.read_text(encoding="utf-8"))
    gh = fake_github(repo=event["repository"]["full_name"])
    gh.grant_token(ACTION_TOKEN)
    number = event["pull_request"]["number"]
    text = "".join(difflib.unified_diff([], APP.splitlines(keepends=True), "a/app.py", "b/app.py"))
    gh.add_pr(number, files=files_from_diff(f"diff --git a/app.py b/app.py\n{text}"),
              head_sha=event["pull_request"]["head"]["sha"])
    gh.contents[(event["pull_request"]["head"]["sha"], "app.py")] = APP
    llm = scripted_llm(autofix_answers)
    for attempt in range(2):  # the second run is a re-run: it posts nothing new
        proc = run_action(gh, llm, tmp_path, analyzers="autofix", reporters="pr-review")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert f"rtcbot: pr-review: {1 - attempt}" in proc.stderr
    assert suggested(gh) == [("app.py", 7)]  # the one fix that is fixed and passes Patched RTC
    assert "```suggestion\n    return ast.literal_eval(expr)\n```" in gh.reviews[0]["comments"][0]["body"]
    proc = run_action(gh, llm, tmp_path, analyzers="autofix", reporters="pr-reviews")
    assert proc.returncode == 2 and "reporters: unknown reporter 'pr-reviews'" in proc.stderr


@pytest.mark.slow
def test_the_app_posts_them_with_rtcbot_reporters(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    require(find_semgrep(), "semgrep is not installed")
    gh = fake_github()
    llm = scripted_llm(autofix_answers)
    settings = make_settings(tmp_path, gh, llm, analyzers=["autofix"], reporters=["pr-review"])
    from bot.app.runtime import Runtime
    from bot.app.web import create_app

    rt = Runtime(settings)
    try:
        app_pr(gh, 5)
        with serve(create_app(settings, runtime=rt)) as url:
            assert deliver(url, "pull_request", gh.pr_event("opened", 5)).status_code == 202
            drain(rt)
        assert [r["conclusion"] for r in gh.runs("rtcbot / AutoFix")] == ["neutral"]
        assert suggested(gh) == [("app.py", 7)]
    finally:
        rt.store.close()


def test_review_format_github_review_prints_the_request_body_for_a_dry_run() -> None:
    from reporters.base import render

    body = json.loads(render([report(fixed(2), fixed(3, rtc=False))], "github-review"))
    assert body["event"] == "COMMENT" and [c["line"] for c in body["comments"]] == [2]
    assert "```suggestion" in body["comments"][0]["body"] and "commit_id" not in body and "note" not in body
    nothing = json.loads(render([report(fixed(3, rtc=False))], "github-review"))  # an unverified fix only
    assert {k: v for k, v in nothing.items() if k != "note"} == {"event": None, "body": "", "comments": []}
    assert nothing["note"].startswith("**")  # the verdict first, then what the dry run would post
    assert nothing["note"].endswith("nothing to post: no verified fix and no review comment to suggest, "
                                    "so the pull request would get no review")
