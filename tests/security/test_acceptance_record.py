"""The acceptance record counts only what happened (issue 27, part 4), tried as the pull
request's author or another bot would: lines that were there all along, an unrelated push,
rtcbot's marker in another bot's comment, 40 👍 from one account. And the pr-review
reporter's recording step: it no longer fails, and a reporter that does fail is logged with
its type and message.

Everything runs through the App's own paths over real HTTP (the fake GitHub on loopback, held
to GitHub's OpenAPI description) and a real SQLite store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from analyzers.context import Tools, head_file_limit
from analyzers.report import AnalyzerReport, Finding
from bot.app import feedback
from bot.app.events import AnalyzeJob
from bot.app.runtime import Runtime
from bot.app.web import create_app
from bot.core.checks import CheckRuns
from bot.core.feedback import acceptance
from bot.github import installation_client
from bot.store.store import Store
from reporters.base import failure
from reporters.diff_filter import DiffFilter
from reporters.pr_review import MARKER
from tests.bot.app_support import deliver, drain, make_settings, serve
from tests.bot.conftest import Backend  # the `backend` fixture: tests/security/conftest.py
from tests.bot.results_support import review_as_the_worker, scripted
from tests.fakes.github_server import FakeGitHub, Padded

BEFORE = "import ast\n\n\ndef calc(expr):\n    return eval(expr)\n\n\ndef other():\n    return 1\n"
FIX = "    return ast.literal_eval(expr)\n"  # replaces line 5
TAKEN = BEFORE.replace("    return eval(expr)\n", FIX)
KEY = "0123456789abcdef0123"


def suggestion(key: str = KEY, replacement: str = FIX) -> feedback.Item:
    return feedback.Item("autofix", "suggestion", key, "app.py", 5, 5, replacement, rtc="pass")


def pending_after(store: Store, posted: str, later: str, item: feedback.Item | None = None) -> int:
    """Record a suggestion posted on a head whose app.py is `posted`, then a push makes it
    `later`: how many suggestions the push marks applied."""
    feedback.record(store, 1, "o/r", 1, "a" * 40, [item or suggestion()], lambda path: posted)
    return feedback.check_applied(store, "o/r", 1, lambda path: later)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(f"sqlite:///{tmp_path / 'rtcbot.db'}")
    yield s
    s.close()


def test_a_real_application_counts(store: Store) -> None:
    assert pending_after(store, BEFORE, TAKEN) == 1
    [row] = store.published.rows("o/r", 1)
    assert (row.original, row.preexisting) == ("    return eval(expr)\n", False)
    assert row.applied_at is not None


def test_a_file_that_cannot_be_read_when_posted_is_recorded_and_never_counted(store: Store) -> None:
    def unreadable(path: str) -> str:
        raise OSError("GitHub is away")

    feedback.record(store, 1, "o/r", 1, "a" * 40, [suggestion()], unreadable)
    [row] = store.published.rows("o/r", 1)
    assert (row.original, row.preexisting) == (None, None)
    assert feedback.check_applied(store, "o/r", 1, lambda path: TAKEN) == 0


def test_lines_already_there_at_the_posted_head_never_count_even_after_an_unrelated_push(store: Store) -> None:
    there = BEFORE + "\n\ndef safe(expr):\n" + FIX  # the suggested line exists already, elsewhere
    unrelated = there.replace("return 1", "return 2")
    assert pending_after(store, there, unrelated) == 0
    [row] = store.published.rows("o/r", 1)
    assert row.preexisting is True and row.applied_at is None
    # not even when the flagged line is later replaced: it was never shown to come from the suggestion
    assert feedback.check_applied(store, "o/r", 1, lambda path: there.replace("    return eval(expr)\n", FIX)) == 0


def test_the_suggested_lines_added_beside_the_flagged_ones_are_not_an_application(store: Store) -> None:
    beside = BEFORE.replace("def other():\n", "def other2(expr):\n" + FIX + "\n\ndef other():\n")
    assert FIX in beside and "    return eval(expr)\n" in beside  # the flagged line is still there
    assert pending_after(store, BEFORE, beside) == 0


def test_a_fix_that_keeps_a_flagged_line_counts_once_the_rest_is_taken(store: Store) -> None:
    keeps = "    expr = expr.strip()\n    return eval(expr)\n"
    posted = BEFORE.replace("    return eval(expr)\n", keeps)
    item = feedback.Item("autofix", "suggestion", KEY, "app.py", 5, 6, "    expr = expr.strip()\n" + FIX, rtc="pass")
    later = posted.replace(keeps, "    expr = expr.strip()\n" + FIX)
    assert pending_after(store, posted, later, item) == 1


def test_a_file_grown_past_the_limit_holds_no_suggestion_applied_and_is_not_downloaded(
        store: Store, fake_github: Callable[..., FakeGitHub], tmp_path: Path) -> None:
    """A push pads one suggestion's file to GitHub's 100 MB: reading the new head as the App
    does (the contents API, up to the limit of a file analysed), its bytes are never asked for
    and no suggestion in it counts applied; the push that takes a suggestion elsewhere still
    counts (before, the refusal ended the whole check)."""
    gh = fake_github()
    head = "b" * 40
    gh.set_file("app.py", TAKEN, ref=head)
    gh.set_file("big.py", Padded(gh.max_raw_bytes), ref=head)
    c = installation_client(make_settings(tmp_path, gh), gh.installation_id)
    big = feedback.Item("autofix", "suggestion", "f" * 20, "big.py", 5, 5, FIX, rtc="pass")
    feedback.record(store, 1, "o/r", 1, "a" * 40, [suggestion(), big], lambda path: BEFORE)
    limit = head_file_limit(Tools())
    assert feedback.check_applied(store, "o/r", 1, lambda path: c.file_text(gh.repo, path, head, limit=limit)) == 1
    assert {r.path: r.applied_at is not None for r in store.published.rows("o/r", 1)} == {"app.py": True,
                                                                                          "big.py": False}
    gh.wait_for(lambda: all(r.sent is not None for r in gh.requests))
    assert max(r.sent or 0 for r in gh.requests if r.path.endswith("/big.py")) < 4096


def test_old_rows_stay_readable_and_are_never_counted(tmp_path: Path, backend: Backend) -> None:
    """A database made before the posted-head columns (SQLite; PostgreSQL): opened by this
    rtcbot, it gains them (NULL for the rows there), its rows read as before, and none counts
    as applied."""
    url = backend.database_url or f"sqlite:///{tmp_path / 'old.db'}"
    Store(url).close()
    old = Store(url, create=False)
    try:
        with old.engine.begin() as c:
            c.exec_driver_sql("ALTER TABLE published DROP COLUMN original")
            c.exec_driver_sql("ALTER TABLE published DROP COLUMN preexisting")
            c.execute(text("INSERT INTO published (installation_id, repo, pr_number, head_sha, analyzer, kind, key, "
                           "path, start_line, end_line, replacement, created_at, thumbs_up, thumbs_down) VALUES "
                           "(1, 'o/r', 1, :sha, 'autofix', 'suggestion', :key, 'app.py', 5, 5, :fix, 0, 0, 0)"),
                      {"sha": "a" * 40, "key": KEY, "fix": FIX})
    finally:
        old.close()
    store = Store(url)
    try:
        [row] = store.published.rows("o/r", 1)
        assert (row.key, row.replacement, row.original, row.preexisting) == (KEY, FIX, None, None)
        assert feedback.check_applied(store, "o/r", 1, lambda path: TAKEN) == 0
        Store(url).close()  # opened again: nothing left to add
    finally:
        store.close()


def _own_and_foreign(gh: FakeGitHub, rt: Runtime) -> tuple[dict[str, Any], dict[str, Any]]:
    """A pull request with one suggestion of rtcbot's (its App's bot wrote it) and one whose
    marker another bot copied into its own comment; both recorded as rtcbot's."""
    gh.add_pr(1, diff_text="diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n"
                           "@@ -1,1 +1,2 @@\n x = 1\n+y = 2\n")
    feedback.record(rt.store, gh.installation_id, gh.repo, 1, gh.pulls[1].head_sha,
                    [suggestion(KEY), suggestion("fedcba9876543210fedc")])
    own = gh.add_comment(1, "app.py", 2, "fix\n" + MARKER.format(key=KEY), user="rtcbot[bot]", user_type="Bot")
    foreign = gh.add_comment(1, "app.py", 2, "fix\n" + MARKER.format(key="fedcba9876543210fedc"),
                             user="evil-helper[bot]", user_type="Bot")
    return own, foreign


def test_reactions_count_once_per_person_and_only_on_this_apps_comments(
        fake_github: Callable[..., FakeGitHub], tmp_path: Path) -> None:
    gh = fake_github()
    settings = make_settings(tmp_path, gh)
    rt = Runtime(settings)
    try:
        own, foreign = _own_and_foreign(gh, rt)
        for _ in range(40):
            gh.react(int(own["id"]), "mallory")  # 40 👍 from one account
        gh.react(int(own["id"]), "bob")
        gh.react(int(own["id"]), "carol", "-1")
        for n in range(40):
            gh.react(int(foreign["id"]), f"sock{n}")  # 40 people, on another bot's comment
        closed = gh.pr_event("opened", 1)
        closed["action"] = "closed"
        closed["pull_request"].update(state="closed", merged=True)
        with serve(create_app(settings, runtime=rt)) as url:
            assert deliver(url, "pull_request", closed).status_code == 202
            drain(rt)
        rows = {r.key: r for r in rt.store.published.rows(gh.repo, 1)}
        assert (rows[KEY].thumbs_up, rows[KEY].thumbs_down, rows[KEY].merged) == (2, 1, True)
        assert (rows["fedcba9876543210fedc"].thumbs_up, rows["fedcba9876543210fedc"].thumbs_down) == (0, 0)
        assert acceptance(list(rows.values()))["thumbs_up"] == 2
    finally:
        rt.store.close()


def test_another_bots_marker_does_not_resolve_rtcbots_suggestion(
        fake_github: Callable[..., FakeGitHub], tmp_path: Path) -> None:
    gh = fake_github()
    rt = Runtime(make_settings(tmp_path, gh))
    try:
        own, foreign = _own_and_foreign(gh, rt)

        def resolve(comment: dict[str, object]) -> int:
            return rt.thread({"action": "resolved", "thread": {"comments": [comment]}, "pull_request": {"number": 1},
                              "repository": {"full_name": gh.repo}})

        assert resolve(foreign) == 0
        posing = {**own, "performed_via_github_app": {"id": gh.app_id + 1, "slug": "other"}}
        assert resolve(posing) == 0  # GitHub says another App made it
        assert resolve(own) == 1
        rows = {r.key: r.resolved for r in rt.store.published.rows(gh.repo, 1)}
        assert rows == {KEY: True, "fedcba9876543210fedc": None}
    finally:
        rt.store.close()


# ------------------------------------------------------------------ the recording step
PATCH = "@@ -1,2 +1,3 @@\n def f(x):\n-    return x\n+    y = x\n+    return y\n"


def _publish_review(gh: FakeGitHub, tmp_path: Path, recorded: list[list[dict[str, object]]],
                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A `review` analyzer's report (rtcbot's own comments, no fixes) through the App's outputs
    with the pr-review reporter and the feedback recorder, as the worker's analysis runs them."""
    pr = gh.add_pr(4, files=[{"filename": "m.py", "status": "modified", "additions": 2, "deletions": 1,
                              "changes": 3, "patch": PATCH}])
    client = installation_client(make_settings(tmp_path, gh), gh.installation_id)
    job = AnalyzeJob(repo=gh.repo, installation_id=gh.installation_id, pr_number=4, head_sha=pr.head_sha,
                     analyzer="review", reason="pull_request.opened")
    store = Store(f"sqlite:///{tmp_path / 'pub.db'}")
    try:
        scripted(monkeypatch, AnalyzerReport("review", "Review", findings=[Finding(
            "review", "review comment", "Name `y` says nothing; call it `result`.", "m.py", 2, 2,
            scores={"rel": 0.8})]))
        review_as_the_worker(client, CheckRuns(store.checks), job, None, extra=["pr-review"],
                             review_comments=lambda: client.review_comments(gh.repo, 4), on_published=recorded.append)
    finally:
        store.close()


def test_the_review_analyzers_comments_publish_and_record_without_an_error(
        fake_github: Callable[..., FakeGitHub], tmp_path: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    gh = fake_github()
    recorded: list[list[dict[str, object]]] = []
    with caplog.at_level(logging.WARNING, logger="bot.app.results"):
        _publish_review(gh, tmp_path, recorded, monkeypatch)
    assert [r.getMessage() for r in caplog.records] == []
    assert len(gh.reviews) == 1 and recorded == [[]]  # posted; a plain comment suggests no lines


def test_a_reporter_that_fails_is_logged_with_its_type_and_message(
        fake_github: Callable[..., FakeGitHub], tmp_path: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    gh = fake_github(expect_violations=False)
    gh.fail_next(1, status=404, match="/reviews")
    with caplog.at_level(logging.WARNING, logger="bot.app.results"):
        _publish_review(gh, tmp_path, [], monkeypatch)
    [line] = [r.getMessage() for r in caplog.records if "pr-review reporter failed" in r.getMessage()]
    assert "GitHubError: " in line and "Not Found" in line
    assert failure(AssertionError()) == "AssertionError"  # a failure without a message still names itself
    assert failure(ValueError("two\nlines")) == "ValueError: two lines"


def test_the_actions_further_output_that_fails_is_said_with_its_type_and_message(tmp_path: Path) -> None:
    from bot.core.outputs import drive
    from reporters.base import Sinks, Target

    (tmp_path / "out.sarif").symlink_to(tmp_path / "victim")
    said = [d.said for d in drive(["sarif"], Sinks(sarif=tmp_path / "out.sarif"), Target(), {"autofix": "AutoFix"},
                                  [AnalyzerReport("autofix", "AutoFix")])]
    assert said == [f"sarif failed (CheckoutFileError: `{tmp_path / 'out.sarif'}` is a symbolic link (rtcbot follows "
                    "no link in a checkout): not written); the check runs and the summary hold the same findings"]
    assert not (tmp_path / "victim").exists()


def test_another_bots_copy_of_the_marker_does_not_hide_the_suggestion(
        fake_github: Callable[..., FakeGitHub], tmp_path: Path) -> None:
    """The App's reporter takes a suggestion as already posted only when its own bot wrote
    the marker; another bot that copies it cannot keep rtcbot's fix off the pull request."""
    from analyzers.code.diff import parse_github_files
    from analyzers.report import Fix
    from reporters.base import Target
    from reporters.base import run_reporter as drive
    from reporters.pr_review import PullRequestReviewReporter, key_of

    gh = fake_github()
    files = [{"filename": "m.py", "status": "modified", "patch": PATCH}]
    pr = gh.add_pr(4, files=[dict(f) for f in files])
    fix = Finding("autofix", "code injection", "eval", "m.py", 2, 2, scores={"fixed": 1.0, "rtc_pass": 1.0},
                  rule_id="r", fix=Fix("m.py", 2, 2, "    y = int(x)\n", "-    y = x\n+    y = int(x)\n"))
    gh.add_comment(4, "m.py", 2, "ok " + MARKER.format(key=key_of(fix)), user="evil-helper[bot]", user_type="Bot")
    client = installation_client(make_settings(tmp_path, gh), gh.installation_id)
    target = Target(gh.repo, 4, pr.head_sha, diff=DiffFilter.of(parse_github_files(files)))

    def reviewer() -> PullRequestReviewReporter:
        return PullRequestReviewReporter(client, comments=lambda: client.review_comments(gh.repo, 4))

    assert drive(reviewer(), target, {"autofix": "AutoFix"},
                 [AnalyzerReport("autofix", "AutoFix", findings=[fix])]) == 1
    # its own comment, now posted, does count: a re-run posts nothing again
    assert drive(reviewer(), target, {}, [AnalyzerReport("autofix", "AutoFix", findings=[fix])]) == 0
    assert len(gh.reviews) == 1
