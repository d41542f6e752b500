"""The record of what people did with rtcbot's suggestions, and `rtcbot stats` from it.

Pure parts first; then the whole scripted sequence through the App over real HTTP — a
suggestion posted, a push that applies it, its thread resolved, a 👍, the pull request merged —
read back with `rtcbot stats --json`.
"""

from __future__ import annotations

import difflib
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from analyzers.semgrep.scan import find_semgrep
from bot.app import feedback
from bot.app.runtime import Runtime
from bot.app.web import create_app
from bot.core.feedback import acceptance, is_applied, keys_in
from bot.entry import main
from tests.analyzers.autofix.test_analyzer import APP
from tests.analyzers.autofix.test_analyzer import responder as autofix_answers
from tests.bot.app_support import deliver, drain, drop_schema, make_settings, postgres_url, serve
from tests.fakes.github_server import FakeGitHub, files_from_diff
from tests.fakes.llm_server import ScriptedLLM
from tests.support import require


def test_applied_means_the_suggested_lines_are_there_near_where_they_were() -> None:
    text = "a\n" * 300 + "def calc(expr):\n    return ast.literal_eval(expr)\n"
    assert is_applied("    return ast.literal_eval(expr)\n", text, near=302)
    assert is_applied("    return ast.literal_eval(expr)  \n", text)  # trailing blanks aside
    assert not is_applied("    return ast.literal_eval(expr)\n", text, near=10, window=50)  # elsewhere
    assert not is_applied("    return eval(expr)\n", text)
    assert not is_applied("\n", text) and not is_applied("x\n", None)


def test_acceptance_rates_by_group() -> None:
    def row(analyzer: str, rtc: str, applied: bool) -> SimpleNamespace:
        return SimpleNamespace(analyzer=analyzer, rtc=rtc, band=None, applied_at=1.0 if applied else None,
                               resolved=applied, thumbs_up=1, thumbs_down=0, merged=False, repo="o/r", pr_number=1)
    rows = [row("autofix", "pass", True), row("autofix", "pass", True), row("autofix", "fail", False)]
    s = acceptance(rows)
    assert s["overall"]["n"] == 3 and s["overall"]["accepted"] == 2
    assert s["by_rtc"]["pass"]["rate"] == 1.0 and s["by_rtc"]["fail"]["rate"] == 0.0
    assert s["by_band"] == {} and s["resolved"] == 2 and s["thumbs_up"] == 3
    assert keys_in(["x <!-- rtcbot:suggestion:abcdef0123 --> <!-- rtcbot:suggestion:abcdef0123 -->", None]) \
        == ["abcdef0123"]


def _files(text: str) -> list[dict[str, object]]:
    body = "".join(difflib.unified_diff([], text.splitlines(keepends=True), "a/app.py", "b/app.py"))
    return files_from_diff(f"diff --git a/app.py b/app.py\n{body}")


@pytest.mark.slow
def test_a_suggestion_applied_resolved_liked_and_merged_is_counted(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    require(find_semgrep(), "semgrep is not installed")
    gh = fake_github()
    settings = make_settings(tmp_path, gh, scripted_llm(autofix_answers), analyzers=["autofix"])
    rt = Runtime(settings)
    try:
        pr = gh.add_pr(3, files=_files(APP))
        gh.contents[(pr.head_sha, "app.py")] = APP
        with serve(create_app(settings, runtime=rt)) as url:
            assert deliver(url, "pull_request", gh.pr_event("opened", 3)).status_code == 202
            drain(rt)
            [posted] = rt.store.published.rows(gh.repo, 3)
            assert (posted.path, posted.start_line, posted.rtc, posted.applied_at) == ("app.py", 7, "pass", None)

            # the author commits the suggestion: the next head holds its lines
            fixed = APP.replace("    return eval(expr)\n", "    return ast.literal_eval(expr)\n")
            pushed = gh.push(3, files=_files(fixed))
            gh.contents[(pushed.head_sha, "app.py")] = fixed
            assert deliver(url, "pull_request", gh.pr_event("synchronize", 3)).status_code == 202
            drain(rt)
            assert rt.store.published.rows(gh.repo, 3)[0].applied_at is not None

            # its thread is resolved, it gets a 👍, the pull request is merged
            comment = next(c for c in gh.pulls[3].comments if "rtcbot:suggestion" in c["body"])
            thread = {"action": "resolved", "thread": {"node_id": "T_1", "comments": [comment]},
                      "pull_request": {"number": 3}, "repository": {"full_name": gh.repo},
                      "installation": {"id": gh.installation_id}}
            assert deliver(url, "pull_request_review_thread", thread).status_code in (200, 202)
            gh.react(comment["id"], "alice")
            closed = gh.pr_event("opened", 3)
            closed["action"] = "closed"
            closed["pull_request"].update(state="closed", merged=True)
            assert deliver(url, "pull_request", closed).status_code == 202
            drain(rt)
    finally:
        rt.store.close()
    r = CliRunner().invoke(main, ["stats", "--json", "--repo", gh.repo],
                           env={"RTCBOT_DATA_DIR": str(settings.data_dir), "DATABASE_URL": ""})
    assert r.exit_code == 0, r.output
    stats = json.loads(r.output)
    assert stats["published"] == 1 and stats["overall"]["accepted"] == 1
    assert stats["by_rtc"] == {"pass": {"n": 1, "accepted": 1, "rate": 1.0,
                                        "interval": stats["by_rtc"]["pass"]["interval"]}}
    assert (stats["resolved"], stats["thumbs_up"], stats["thumbs_down"], stats["merged_prs"]) == (1, 1, 0, 1)
    table = CliRunner().invoke(main, ["stats"], env={"RTCBOT_DATA_DIR": str(settings.data_dir), "DATABASE_URL": ""})
    assert table.exit_code == 0 and "Patched RTC pass" in table.output and "100%" in table.output


def test_the_stats_endpoint_answers_only_the_operators_token(tmp_path: Path) -> None:
    import httpx

    token = "s3cret-stats-token-0123"
    on = make_settings(tmp_path, stats_token=token)
    rt = Runtime(on)
    try:
        rt.store.repositories.seen(5, 1, "o/r", at=0.0)  # served by GitHub's ids: repository 5, installation 1
        feedback.record(rt.store, 1, "o/r", 2, "a" * 40, [feedback.Item("autofix", "suggestion", "k" * 20, "a.py",
                                                                       3, 3, "x = 1\n", rtc="pass")],
                        repository_id=5)
        with serve(create_app(on, runtime=rt)) as url:
            assert httpx.get(f"{url}/stats").status_code == 401
            assert httpx.get(f"{url}/stats", headers={"Authorization": "Bearer wrong"}).status_code == 401
            ok = httpx.get(f"{url}/stats?repo=o/r", headers={"Authorization": f"Bearer {token}"})
            assert ok.status_code == 200 and ok.json()["published"] == 1 and ok.json()["repo"] == "o/r"
            bad = httpx.get(f"{url}/stats?repo=nope", headers={"Authorization": f"Bearer {token}"})
            assert bad.status_code == 400 and "owner/name" in bad.json()["message"]
    finally:
        rt.store.close()
    off = make_settings(tmp_path / "off")
    rt = Runtime(off)
    try:
        with serve(create_app(off, runtime=rt)) as url:
            assert httpx.get(f"{url}/stats", headers={"Authorization": f"Bearer {token}"}).status_code == 404
    finally:
        rt.store.close()


def test_stats_names_the_store_it_read(tmp_path: Path) -> None:
    env = {"RTCBOT_DATA_DIR": str(tmp_path / "data"), "DATABASE_URL": ""}
    r = CliRunner().invoke(main, ["stats"], env=env)
    assert r.exit_code == 0, r.output
    store = f"sqlite:///{tmp_path / 'data' / 'rtcbot.sqlite3'}"
    assert r.output.splitlines()[0] == f"Store: {store} (the default: no DATABASE_URL is set)"
    j = CliRunner().invoke(main, ["stats", "--json"], env=env)
    assert j.exit_code == 0 and json.loads(j.output)["store"] == store


@pytest.mark.services
def test_stats_names_a_postgresql_store_without_its_password(tmp_path: Path) -> None:
    schema = f"rtcbot_{uuid.uuid4().hex[:10]}"
    url = postgres_url(schema)
    require(url, "PostgreSQL is not answering on 127.0.0.1:5432 (trust auth, database test)")
    assert url is not None
    try:
        with_password = url.replace("postgres@", "postgres:hunter2@")  # trust auth: any password is taken
        r = CliRunner().invoke(main, ["stats"], env={"RTCBOT_DATA_DIR": str(tmp_path), "DATABASE_URL": with_password})
        assert r.exit_code == 0, r.output
        first = r.output.splitlines()[0]
        assert first.startswith("Store: postgresql+psycopg://***@127.0.0.1:5432/test"), first
        assert "hunter2" not in r.output and "default" not in first
    finally:
        drop_schema(schema)
