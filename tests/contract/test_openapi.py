"""The fake GitHub held to GitHub's published OpenAPI description: the vendored description
is the operations rtcbot uses, a request it rejects is a violation (422 for a body, 404 for an
operation it lacks) that fails the test, and the fake's answers to the bot's real calls carry
what the described answers require."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from bot.github import installation_client
from tests.bot.app_support import make_settings
from tests.contract.openapi import SPEC, description
from tests.fakes.github_server import FakeGitHub, many_hunks_diff
from tests.support import ROOT


def extract_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("openapi_extract", SPEC.parent / "extract.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_vendored_description_is_the_extract_scripts_operations() -> None:
    api = description()
    script = extract_script()
    assert api.version == script.VERSION
    assert sorted((op.method.lower(), op.template) for op in api.operations) == sorted(script.OPERATIONS)
    for method, path in [("POST", "/app/installations/7/access_tokens"), ("GET", "/repos/o/r/pulls/3/files"),
                         ("GET", "/repos/o/r/pulls/3/comments"), ("GET", "/repos/o/r/contents/a/b.py"),
                         ("GET", "/repos/o/r/commits/abc/check-runs"), ("POST", "/repos/o/r/check-runs"),
                         ("PATCH", "/repos/o/r/check-runs/9"), ("GET", "/app"),
                         ("GET", "/repos/o/r/pulls/comments/5/reactions"), ("GET", "/app/hook/deliveries"),
                         ("POST", "/app/hook/deliveries/90000001/attempts")]:  # every call in bot/github/
        assert api.match(method, path) is not None, (method, path)


ANNOTATION = {"path": "a.py", "start_line": 1, "end_line": 2, "annotation_level": "warning", "message": "m"}


def test_valid_requests_have_no_problems_and_bad_ones_name_the_field() -> None:
    api = description()
    assert api.request_problems("PATCH", "/repos/o/r/check-runs/9", {
        "status": "completed", "conclusion": "success", "completed_at": "2024-05-01T10:00:00Z",
        "output": {"title": "t", "summary": "s", "annotations": [
            {"path": "a.py", "start_line": 1, "end_line": 2, "annotation_level": "warning", "message": "m"}]}}) == []
    assert api.request_problems("GET", "/repos/o/r/commits/abc/check-runs?check_name=x&filter=latest") == []
    bad = api.request_problems("POST", "/repos/o/r/check-runs", {
        "name": "x", "head_sha": "a", "status": "waiting", "started_at": "yesterday",
        "output": {"title": "t", "summary": "s", "annotations": [ANNOTATION] * 50 + [{"path": "a.py"}]}})
    assert any(p.startswith("body/status:") for p in bad)  # create takes queued|in_progress|completed
    assert any(p.startswith("body/started_at:") and "date-time" in p for p in bad)
    assert "body/output/annotations: breaks maxItems (50)" in bad  # at most 50 a request
    assert "body/output/annotations/50: 'start_line' is a required property" in bad
    assert len(bad) == 7  # and end_line, annotation_level, message
    many = api.request_problems("POST", "/repos/o/r/check-runs", {"name": "x", "head_sha": "a", "output": {
        "title": "t", "summary": "s", "annotations": [{"path": "a.py"}] * 30}})
    assert len(many) == 21 and many[-1] == "… and 100 more"  # 30 × 4 problems, the first 20 listed
    assert api.request_problems("PATCH", "/repos/o/r/check-runs/9", {"status": "completed"})  # no conclusion
    assert api.request_problems("GET", "/repos/o/r/pulls/x/files")[0].startswith("path/pull_number:")
    assert api.request_problems("GET", "/repos/o/r/pulls/1/files?per_page=all&sort=new") == [
        "query: 'sort' is not a parameter of pulls/list-files", "query/per_page: 'all' is not of type 'integer'"]
    assert api.request_problems("POST", "/repos/o/r/check-runs") == ["body: checks/create requires a JSON body"]
    assert api.request_problems("DELETE", "/repos/o/r/check-runs/9") == [
        "DELETE /repos/o/r/check-runs/9 is no operation of GitHub's REST API description"]


def test_a_request_the_description_rejects_is_a_violation_answered_like_github() -> None:
    with FakeGitHub(expect_violations=True) as gh:
        gh.grant_token("t")
        gh.add_pr(1, diff_text=many_hunks_diff(hunks=2))
        with httpx.Client(base_url=gh.base_url, headers={"Authorization": "token t"}) as c:
            bad = c.post(f"/repos/{gh.repo}/check-runs", json={"name": "x", "head_sha": gh.pulls[1].head_sha,
                                                                 "status": "waiting"})
            unknown = c.get(f"/repos/{gh.repo}/issues")
            good = c.get(f"/repos/{gh.repo}/pulls/1/files")
        assert bad.status_code == 422 and bad.json()["message"].startswith("Invalid request.")
        assert "body/status: 'waiting' is not one of" in bad.json()["message"]
        assert gh.check_runs == {}  # rejected before anything was made
        assert unknown.status_code == 404 and good.status_code == 200
        assert [(v.method, v.path) for v in gh.violations] == [
            ("POST", f"/repos/{gh.repo}/check-runs"), ("GET", f"/repos/{gh.repo}/issues")]
        with pytest.raises(AssertionError, match=r"(?s)2 request\(s\).*POST /repos/octo-org/widgets/check-runs:"
                                                 r".*body/status.*\"status\": \"waiting\".*GET /repos/octo-org/"):
            gh.expect_violations = False
            gh.check_contract()
        gh.expect_violations = True


def test_a_with_block_fails_on_a_violation() -> None:
    with pytest.raises(AssertionError, match="GET /repos/octo-org/widgets/issues"):  # noqa: PT012
        with FakeGitHub() as gh:
            gh.grant_token("t")
            httpx.get(f"{gh.base_url}/repos/{gh.repo}/issues", headers={"Authorization": "token t"})


@pytest.mark.slow
def test_the_fake_github_fixture_fails_a_test_whose_bot_sent_a_rejected_request(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(textwrap.dedent("""
        import httpx
        from tests.fakes.github_server import fake_github  # noqa: F401

        def test_sends_a_bad_body(fake_github):
            gh = fake_github()
            gh.grant_token("t")
            httpx.post(f"{gh.base_url}/repos/{gh.repo}/check-runs", json={"name": "x"},
                       headers={"Authorization": "token t"})

        def test_opts_out(fake_github):
            gh = fake_github(expect_violations=True)
            gh.grant_token("t")
            r = httpx.post(f"{gh.base_url}/repos/{gh.repo}/check-runs", json={"name": "x"},
                           headers={"Authorization": "token t"})
            assert r.status_code == 422 and len(gh.violations) == 1
    """), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                        str(tmp_path / "test_inner.py")], capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=120)
    assert "2 passed, 1 error" in r.stdout, r.stdout + r.stderr  # the error: the gate, at teardown
    assert "ERROR at teardown of test_sends_a_bad_body" in r.stdout
    assert "'head_sha' is a required property" in r.stdout


def test_the_fakes_answers_to_the_bots_calls_are_what_the_description_describes(tmp_path: Path) -> None:
    api = description()
    with FakeGitHub() as gh:
        pr = gh.add_pr(3, diff_text=many_hunks_diff(hunks=3))
        gh.add_comment(3, "src/many.py", 2, "use a constant")
        gh.set_file(".github/rtcbot.yml", "analyzers: [editing_rtc]\n", ref=pr.head_sha)
        gh.set_file("src/many.py", "def f0(x):\n    return x * 0\n", ref=pr.head_sha)
        bot = installation_client(make_settings(tmp_path, gh), gh.installation_id)  # mints a token: JWT
        assert [f["filename"] for f in bot.pr_files(gh.repo, 3)] == ["src/many.py"]
        assert bot.review_comments(gh.repo, 3)[0]["body"] == "use a constant"
        assert bot.config_text(gh.repo, ".github/rtcbot.yml", pr.head_sha) == "analyzers: [editing_rtc]\n"
        assert bot.file_text(gh.repo, "src/many.py", pr.head_sha) is not None
        run = bot.create_check_run(gh.repo, "rtcbot / EditingRTC", pr.head_sha, external_id="3:editing_rtc",
                                   status="in_progress")
        bot.update_check_run(gh.repo, run["id"], conclusion="neutral", output={
            "title": "t", "summary": "s", "annotations": [{"path": "src/many.py", "start_line": 2, "end_line": 2,
                                                            "annotation_level": "notice", "message": "m"}]})
        assert bot.find_check_run(gh.repo, pr.head_sha, "rtcbot / EditingRTC")["id"] == run["id"]  # type: ignore[index]
        token = next(iter(gh.tokens))
        with httpx.Client(base_url=gh.base_url, headers={"Authorization": f"token {token}"}) as c:
            for path in ("/pulls/3", f"/check-runs/{run['id']}", f"/check-runs/{run['id']}/annotations"):
                assert c.get(f"/repos/{gh.repo}{path}").status_code == 200
        answered = [q for q in gh.requests if q.status < 300]
        operations = {api.match(q.method, q.path)[0].operation_id for q in answered}  # type: ignore[index]
        assert operations == {"apps/create-installation-access-token", "pulls/list-files",
                              "pulls/list-review-comments", "repos/get-content", "checks/create", "checks/update",
                              "checks/list-for-ref", "pulls/get", "checks/get", "checks/list-annotations"}
        for q in answered:
            if isinstance(q.response, str):
                continue  # the raw media type: the file's bytes, no schema
            assert api.response_problems(q.method, q.target, q.status, "application/json", q.response) == [], q.target


def test_the_fakes_app_webhook_deliveries_are_what_the_description_describes(tmp_path: Path) -> None:
    """`rtcbot redeliver`'s calls (bot/github/hook_deliveries.py): the list, newest first, over
    cursor pages, and a redelivery, each answer checked against the description."""
    from datetime import UTC, datetime

    from bot.github import app_client
    from bot.github.hook_deliveries import deliveries_since, redeliver

    api = description()
    with FakeGitHub() as gh:
        gh.add_pr(1, diff_text=many_hunks_diff(hunks=1))
        for _ in range(105):  # the App is not reachable: each attempt fails
            gh.send_hook("pull_request", gh.pr_event("opened", 1))
        app = app_client(make_settings(tmp_path, gh))
        listed = list(deliveries_since(app, datetime(2020, 1, 1, tzinfo=UTC)))
        assert [d.id for d in listed] == sorted((d["id"] for d in gh.hook_deliveries), reverse=True)
        assert {d.status_code for d in listed} == {502} and len({d.guid for d in listed}) == 105
        redeliver(app, listed[-1])
        gh.wait_for(lambda: len(gh.hook_deliveries) == 106)
        assert gh.hook_deliveries[-1]["guid"] == listed[-1].guid and gh.hook_deliveries[-1]["redelivery"]
        answered = [q for q in gh.requests if q.status < 300]
        assert {api.match(q.method, q.path)[0].operation_id for q in answered} == {  # type: ignore[index]
            "apps/list-webhook-deliveries", "apps/redeliver-webhook-delivery"}
        assert len([q for q in answered if q.method == "GET"]) == 2  # 100, then 5 through the cursor
        for q in answered:
            assert api.response_problems(q.method, q.target, q.status, "application/json", q.response) == [], q.target
