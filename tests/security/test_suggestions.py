"""Strangers' text in what rtcbot posts and records: a model's fix, a person's comment, /stats."""

from __future__ import annotations

from pathlib import Path

import httpx

from analyzers.code.diff import parse_github_files
from analyzers.report import AnalyzerReport, Finding, Fix
from bot.app import feedback
from bot.app.runtime import Runtime
from bot.app.web import create_app
from reporters.base import Target
from reporters.diff_filter import DiffFilter
from reporters.pr_review import MARKER, candidates, key_of, plan
from tests.bot.app_support import make_settings, serve

PATCH = "@@ -1,2 +1,2 @@\n def f(x):\n-    return x\n+    return eval(x)\n"
FILES = [{"filename": "m.py", "status": "modified", "patch": PATCH}]
HEAD = Target(repo="o/r", number=1, head_sha="b" * 40)
DIFF = DiffFilter.of(parse_github_files(FILES))


def verified(replacement: str) -> Finding:
    return Finding("autofix", "python-code-injection", "eval", "m.py", 2, 2, scores={"fixed": 1.0, "rtc_pass": 1.0},
                   rule_id="r", fix=Fix("m.py", 2, 2, replacement, "-x\n+y"))


def test_a_models_fix_cannot_close_the_suggestion_block_early() -> None:
    evil = "    return 1\n```\n\n[click me](https://evil.example) @everyone\n````\n"
    block = Fix("m.py", 2, 2, evil).suggestion
    fence = block.split("suggestion", 1)[0]
    assert len(fence) == 5 and block.endswith(fence) and block.count(fence) == 2  # longer than any run inside


def test_a_marker_pasted_into_a_persons_comment_neither_hides_a_suggestion_nor_counts() -> None:
    f = verified("    return ast.literal_eval(x)\n")
    pasted = [{"body": "lgtm " + MARKER.format(key=key_of(f)), "user": {"login": "mallory", "type": "User"},
               "reactions": {"+1": 50}}]
    body, already, _ = plan(HEAD, candidates([AnalyzerReport("autofix", "AutoFix", findings=[f])]), DIFF, pasted)
    assert body is not None and already == 0  # still suggested
    assert [c for c in pasted if feedback.by_a_bot(c)] == []


def test_reactions_and_threads_count_only_on_the_bots_own_comments(tmp_path: Path) -> None:
    rt = Runtime(make_settings(tmp_path))
    try:
        key = "a" * 20
        feedback.record(rt.store, 1, "o/r", 1, "b" * 40, [feedback.Item("autofix", "suggestion", key, "m.py", 2, 2)])
        marker = MARKER.format(key=key)
        person = {"body": marker, "user": {"login": "mallory", "type": "User"}, "reactions": {"+1": 50}}
        feedback.mark_closed(rt.store, "o/r", 1, True, [{**person, "id": 7}], rt.owns,
                             lambda cid: [{"content": "+1", "user": {"id": n}} for n in range(50)])
        assert rt.thread({"action": "resolved", "thread": {"comments": [person]}, "pull_request": {"number": 1},
                          "repository": {"full_name": "o/r"}}) == 0
        [row] = rt.store.published.rows("o/r", 1)
        assert (row.thumbs_up, row.resolved) == (0, None)
    finally:
        rt.store.close()


def test_stats_answer_nothing_without_the_operators_token(tmp_path: Path) -> None:
    token = "t0ken-for-the-operator-only"
    rt = Runtime(make_settings(tmp_path, stats_token=token))
    try:
        with serve(create_app(rt.settings, runtime=rt)) as url:
            for headers in ({}, {"Authorization": "Bearer"}, {"Authorization": token},
                            {"Authorization": f"Bearer {token}x"}, {"Authorization": f"bearer {token[:-1]}"}):
                r = httpx.get(f"{url}/stats", headers=headers)
                assert r.status_code == 401 and "published" not in r.text
            for repo in ("../../etc", "a" * 300 + "/b", "o/r/x"):
                r = httpx.get(f"{url}/stats", params={"repo": repo}, headers={"Authorization": f"Bearer {token}"})
                assert r.status_code == 400
    finally:
        rt.store.close()
