"""The one GitHub client (bot/github/), against the fake GitHub on loopback, as the App uses it
(an installation's token) and as the Action uses it (GITHUB_TOKEN).

Every rate-limit case of GitHub's guidance, with the waits made short by settings: the
primary limit (403 or 429, `x-ratelimit-remaining: 0`: wait for `x-ratelimit-reset`), a
secondary limit with `Retry-After` and without it (wait `secondary_wait_s`, doubling), a wait
past the cap (a clear error at once), 5xx retried a bounded number of times, a 403 that is no
rate limit (never retried: the Action's fork fallback depends on it), a revoked installation
token (renewed once), and `X-GitHub-Api-Version: 2022-11-28` on every request.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.app.settings import ServiceSettings
from bot.github import (
    API_VERSION,
    GitHubClient,
    GitHubError,
    GitHubSettings,
    installation_client,
    token_client,
)
from bot.github.policy import RESET_MARGIN_S, Attempts, GiveUp, Retry, decide
from tests.fakes.github_server import FakeGitHub, Request, many_hunks_diff
from tests.fakes.llm_server import RoundTrips, ScriptedLLM
from tests.support import FIXTURES, ROOT, syntax_nodes

TOKEN = "ghs_action_token"
SURFACES = ("app", "action")
FAST: dict[str, Any] = {
    "secondary_wait_s": 0.3,
    "retry_backoff_s": 0.05,
    "max_retry_wait_s": 30.0,
    "write_interval_s": 0.0,
}


def client(gh: FakeGitHub, surface: str, **settings: Any) -> GitHubClient:
    """The client each surface makes: the App's for its installation, the Action's for a token."""
    values = {**FAST, **settings}
    if surface == "app":
        return installation_client(
            ServiceSettings(
                app_id=gh.app_id,
                private_key=gh.private_key_pem,
                github_api_url=gh.base_url,
                **values,
            ),
            gh.installation_id,
        )
    gh.grant_token(TOKEN)
    return token_client(gh.base_url, TOKEN, GitHubSettings(**values))


def calls(gh: FakeGitHub, part: str, method: str | None = None) -> list[Request]:
    with gh._lock:
        return [r for r in gh.requests if part in r.path and method in (None, r.method)]


@pytest.fixture
def gh(fake_github: Callable[..., FakeGitHub]) -> FakeGitHub:
    g = fake_github()
    g.add_pr(7, diff_text=many_hunks_diff(hunks=3))
    return g


# ============================================================================ headers
@pytest.mark.parametrize("surface", SURFACES)
def test_every_request_names_the_api_version(gh: FakeGitHub, surface: str) -> None:
    """The App (on PyGithub) sent no X-GitHub-Api-Version before; now both surfaces send it on
    every request, the installation-token request included."""
    gh.set_file("src/many.py", "print('head')\n", ref="abc123")
    c = client(gh, surface)
    assert c.pr_files(gh.repo, 7)
    assert c.file_text(gh.repo, "src/many.py", "abc123") == "print('head')\n"
    assert c.file_text(gh.repo, "src/missing.py", "abc123") is None
    run = c.create_check_run(
        gh.repo, "rtcbot / X", gh.pulls[7].head_sha, external_id="7", status="in_progress"
    )
    c.update_check_run(
        gh.repo, int(run["id"]), conclusion="neutral", output={"title": "t", "summary": "s"}
    )
    assert c.find_check_run(gh.repo, gh.pulls[7].head_sha, "rtcbot / X") is not None
    assert len(gh.requests) >= 6 + (surface == "app")
    assert {r.headers.get("x-github-api-version") for r in gh.requests} == {API_VERSION}
    assert {r.headers.get("accept") for r in gh.requests if "/contents/" not in r.path} == {
        "application/vnd.github+json"
    }
    if surface == "app":
        assert calls(gh, "/access_tokens")  # the token was minted through the same client


# ============================================================================ rate limits
@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("status", [403, 429])
def test_the_primary_limit_waits_for_the_reset(gh: FakeGitHub, surface: str, status: int) -> None:
    c = client(gh, surface)
    gh.fail_next(1, status=status, retry_after=None, reset_in=1, match="/files")
    files = c.pr_files(gh.repo, 7)
    assert files
    first, second = calls(gh, "/files")
    assert first.status == status and second.status == 200
    reset = int(first.at + 1)  # what the fake sent as x-ratelimit-reset
    assert second.at >= reset, "retried before x-ratelimit-reset"
    # and soon after it: within the margin and 5 s for a loaded machine to send the retry (1 s
    # was within reach of a descheduled client); a 60 s secondary-limit wait stays far outside
    assert second.at - first.at <= (reset - first.at) + RESET_MARGIN_S + 5.0


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("status", [403, 429])
def test_a_secondary_limit_without_retry_after_waits_at_least_the_minimum(
    gh: FakeGitHub, surface: str, status: int
) -> None:
    """Before: the Action failed at once on a 403 secondary limit without Retry-After, and the
    App gave up at once on such a 429."""
    c = client(gh, surface)
    gh.fail_next(2, status=status, retry_after=None, match="POST /repos")
    run = c.create_check_run(gh.repo, "rtcbot / X", gh.pulls[7].head_sha, external_id="7")
    assert run["id"] in gh.check_runs
    tries = [r for r in gh.requests if r.method == "POST" and r.path.endswith("/check-runs")]
    assert [r.status for r in tries] == [status, status, 201]
    gaps = [b.at - a.at for a, b in zip(tries, tries[1:], strict=False)]
    assert gaps[0] >= 0.3 and gaps[1] >= 0.6, gaps  # at least the minimum, then twice it


@pytest.mark.parametrize("surface", SURFACES)
def test_retry_after_is_obeyed(gh: FakeGitHub, surface: str) -> None:
    c = client(gh, surface)
    gh.fail_next(1, status=429, retry_after=1, match="PATCH")
    run = c.create_check_run(gh.repo, "rtcbot / X", gh.pulls[7].head_sha, external_id="7")
    c.update_check_run(
        gh.repo, int(run["id"]), conclusion="success", output={"title": "t", "summary": "s"}
    )
    first, second = [r for r in gh.requests if r.method == "PATCH"]
    assert (first.status, second.status) == (429, 200)
    assert second.at - first.at >= 1.0
    assert gh.check_runs[run["id"]]["conclusion"] == "success"


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("limit", ["retry-after", "reset"])
def test_a_wait_past_the_cap_is_a_clear_error_at_once(
    gh: FakeGitHub, surface: str, limit: str
) -> None:
    # a cap of 30 s: had the client waited up to it, the 10 s bound below would show it
    # (with a cap of 5 s and a bound of 2 s, a loaded machine's answer could pass the bound)
    c = client(gh, surface, max_retry_wait_s=30)
    if limit == "retry-after":
        gh.fail_next(1, status=403, retry_after=3600, match="/files")
    else:
        gh.fail_next(1, status=429, retry_after=None, reset_in=3600, match="/files")
    t0 = time.monotonic()
    with pytest.raises(GitHubError) as e:
        c.pr_files(gh.repo, 7)
    assert time.monotonic() - t0 < 10.0
    assert e.value.status == (403 if limit == "retry-after" else 429)
    text = str(e.value)
    assert text.startswith(f"GitHub answered {e.value.status}: ") and "\n" not in text
    assert "rtcbot gave up" in text and "cap of 30 s (RTCBOT_MAX_RETRY_WAIT_S)" in text
    assert len(calls(gh, "/files")) == 1


@pytest.mark.parametrize("surface", SURFACES)
def test_server_errors_are_retried_a_bounded_number_of_times(gh: FakeGitHub, surface: str) -> None:
    c = client(gh, surface, http_retries=2)
    gh.fail_next(2, status=503, retry_after=None, match="/files")
    assert c.pr_files(gh.repo, 7)  # two failures, then an answer
    assert [r.status for r in calls(gh, "/files")] == [503, 503, 200]
    gh.requests.clear()
    gh.fail_next(5, status=502, retry_after=None, match="/comments")
    with pytest.raises(GitHubError, match=r"^GitHub answered 502: Server Error$"):
        c.review_comments(gh.repo, 7)
    assert len(calls(gh, "/comments")) == 3  # the request and 2 retries, no more


@pytest.mark.parametrize("surface", SURFACES)
def test_a_403_that_is_no_rate_limit_is_answered_at_once(gh: FakeGitHub, surface: str) -> None:
    """A token that may not write check runs (a fork's): no retry, no wait."""
    # a secondary limit's wait of 30 s: one taken would pass the 10 s bound (it was 0.3 s
    # against a bound of 0.3 s, which a loaded machine's one request could pass)
    c = client(gh, surface, secondary_wait_s=30.0)
    gh.read_only_checks = True
    t0 = time.monotonic()
    with pytest.raises(GitHubError) as e:
        c.create_check_run(gh.repo, "rtcbot / X", gh.pulls[7].head_sha, external_id="7")
    assert time.monotonic() - t0 < 10.0
    assert (e.value.status, e.value.message) == (403, "Resource not accessible by integration")
    assert len([r for r in gh.requests if r.method == "POST" and "/check-runs" in r.path]) == 1


def test_a_revoked_installation_token_is_renewed_once(gh: FakeGitHub) -> None:
    c = client(gh, "app")
    assert c.pr_files(gh.repo, 7)
    minted = gh.token_requests
    with gh._lock:
        gh.tokens.clear()  # revoked (or the server forgot it)
    assert c.pr_files(gh.repo, 7)
    assert gh.token_requests == minted + 1
    assert [r.status for r in gh.requests if "/files" in r.path] == [200, 401, 200]


def test_a_token_that_is_refused_is_an_error_not_a_loop(gh: FakeGitHub) -> None:
    c = token_client(gh.base_url, "ghs_not_granted", GitHubSettings(**FAST))
    with pytest.raises(GitHubError, match=r"^GitHub answered 401: Bad credentials$"):
        c.pr_files(gh.repo, 7)
    assert len(gh.requests) == 1


# ============================================================================ the policy (pure)
def test_the_policy_follows_githubs_order() -> None:
    s = GitHubSettings(secondary_wait_s=60, max_retry_wait_s=800, http_retries=2, retry_backoff_s=1)
    now = 1_000_000.0
    # Retry-After wins over everything
    step = decide(
        s,
        Attempts(),
        status=429,
        headers={
            "retry-after": "7",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": str(now + 100),
        },
        now=now,
    )
    assert step == Retry(7.0, "rate limit (Retry-After)")
    # the primary limit: until the reset (and a margin for the clocks)
    step = decide(
        s,
        Attempts(),
        status=403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now + 30))},
        now=now,
    )
    assert isinstance(step, Retry) and step.wait_s == 30 + RESET_MARGIN_S
    # a secondary limit: at least the minute, doubling
    seen = Attempts()
    waits = [
        decide(s, seen, status=403, message="You have exceeded a secondary rate limit", now=now)
        for _ in range(4)
    ]
    assert [w.wait_s for w in waits if isinstance(w, Retry)] == [60, 120, 240]
    assert isinstance(waits[3], GiveUp) and "cap of 800 s" in waits[3].why  # 420 + 480 > 800
    # a 403 that is no rate limit, a 404, a 422: the answer stands
    for status, message in (
        (403, "Resource not accessible by integration"),
        (404, "Not Found"),
        (422, "x"),
    ):
        assert decide(s, Attempts(), status=status, message=message, now=now) is None
    # 5xx and network errors: backoff, http_retries times, then the answer stands
    seen = Attempts()
    assert [decide(s, seen, status=None if i % 2 else 500, now=now) for i in range(3)] == [
        Retry(1.0, "server error"),
        Retry(2.0, "network error"),
        None,
    ]


# ======================================================================= the Action, end to end
@pytest.mark.slow
def test_the_action_rides_out_a_secondary_limit_without_retry_after(
    fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    """`rtcbot action` as the container runs it: the check runs' creation meets a secondary
    limit without Retry-After; the run waits RTCBOT_SECONDARY_WAIT_S and posts them (before: it
    fell back to workflow commands, or failed)."""
    event_path = FIXTURES / "github" / "webhooks" / "pull_request" / "opened.payload.json"
    event = json.loads(event_path.read_text(encoding="utf-8"))
    gh = fake_github(repo=event["repository"]["full_name"])
    gh.grant_token(TOKEN)
    gh.add_pr(
        event["pull_request"]["number"],
        diff_text=many_hunks_diff(hunks=2),
        head_sha=event["pull_request"]["head"]["sha"],
    )
    gh.fail_next(1, status=403, retry_after=None, match="POST /repos")
    llm = scripted_llm(RoundTrips())  # its two hunks conclusive: annotated
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RTCBOT_LLM"))
    }
    env.update(
        {
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_API_URL": gh.base_url,
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "out"),
            "INPUT_LLM-BASE-URL": llm.base_url,
            "INPUT_MODEL": llm.model,
            "INPUT_ANALYZERS": "editing-rtc",
            "RTCBOT_SECONDARY_WAIT_S": "0.5",
        }
    )
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "action"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "::warning" not in proc.stdout and "::notice" not in proc.stdout
    (run,) = gh.check_runs.values()
    assert run["status"] == "completed" and run["annotations"]
    posts = [r for r in gh.requests if r.method == "POST" and r.path.endswith("/check-runs")]
    assert [r.status for r in posts] == [403, 201] and posts[1].at - posts[0].at >= 0.5
    assert {r.headers.get("x-github-api-version") for r in gh.requests} == {API_VERSION}


# ============================================================================ file contents
@pytest.mark.parametrize("surface", SURFACES)
def test_a_file_over_a_megabyte_comes_whole(gh: FakeGitHub, surface: str) -> None:
    """GitHub's contents API describes a file of 1-100 MB in its JSON form with `encoding:
    none` and empty `content`: read that way it was an empty file. The raw media type brings
    it whole, on both surfaces, after the JSON form gave its size."""
    text = "".join(f"value_{i} = {i}  # a generated table\n" for i in range(40_000))
    assert len(text.encode()) > gh.max_json_bytes
    gh.set_file("src/table.py", text, ref="abc123")
    c = client(gh, surface)
    described = c.request("GET", "/repos/" + gh.repo + "/contents/src/table.py",
                          params={"ref": "abc123"}).json()
    assert (described["encoding"], described["content"]) == ("none", "")  # the fake is GitHub
    assert c.file_text(gh.repo, "src/table.py", "abc123") == text
    described_, read = [r for r in calls(gh, "/contents/") if r.status == 200][1:]
    assert described_.headers["accept"] == "application/vnd.github+json"
    assert read.headers["accept"] == "application/vnd.github.raw+json"


@pytest.mark.parametrize("surface", SURFACES)
def test_a_file_github_will_not_serve_is_not_available(gh: FakeGitHub, surface: str) -> None:
    """Over 100 MB GitHub answers 403 `too_large` (no rate limit): the file is not available
    (the analyzers fall back to the hunks), asked once; it never fails the run."""
    gh.max_raw_bytes = 4096  # GitHub's 100 MB, small for the test
    gh.set_file("data/huge.py", "x = 1\n" * 1000, ref="abc123")
    c = client(gh, surface, secondary_wait_s=30.0)  # a wait taken would pass the 10 s bound
    t0 = time.monotonic()
    assert c.file_text(gh.repo, "data/huge.py", "abc123") is None
    assert time.monotonic() - t0 < 10.0
    assert [r.status for r in calls(gh, "/contents/")] == [403]
    gh.fail_next(1, status=403, retry_after=None, match="/contents/")  # a rate limit still raises
    with pytest.raises(GitHubError):
        client(gh, surface, http_retries=0, max_retry_wait_s=0.1).file_text(
            gh.repo, "src/many.py", "abc123")


ODD_PATHS = ["src/a#b.py", "src/a b.py", "src/what?.py", "src/100%.py", "src/100%25.py",
             "src/ünïcødé.py", "src/a+b.py", "src/semi;colon&amp=1.py"]


@pytest.mark.parametrize("surface", SURFACES)
def test_paths_are_percent_encoded(gh: FakeGitHub, surface: str) -> None:
    """`src/a#b.py` fetched `src/a` (the rest was a URL fragment); `?`, `%`, spaces and
    non-ASCII names went wrong the same way. Every path now travels percent-encoded."""
    gh.set_file("src/a", "decoy: the path cut at '#'\n", ref="abc123")
    gh.set_file("src/what", "decoy: the path cut at '?'\n", ref="abc123")
    for i, path in enumerate(ODD_PATHS):
        gh.set_file(path, f"file {i}: {path}\n", ref="abc123")
        gh.set_file(path, f"config {i}\n")
    c = client(gh, surface)
    for i, path in enumerate(ODD_PATHS):
        assert c.file_text(gh.repo, path, "abc123") == f"file {i}: {path}\n", path
        assert c.config_text(gh.repo, path, gh.default_branch) == f"config {i}\n", path
    wire = [r.path for r in calls(gh, "/contents/")]
    assert "/repos/octo-org/widgets/contents/src/a%23b.py" in wire
    assert "/repos/octo-org/widgets/contents/src/%C3%BCn%C3%AFc%C3%B8d%C3%A9.py" in wire
    assert all(r.status == 200 for r in calls(gh, "/contents/"))


def test_surfaces_and_commands_name_the_protocol_never_the_concrete_client() -> None:
    """Outside bot/github (which builds it), no module of bot/ names GitHubClient: the App's jobs and
    commands, the Action and the CLI ask GitHub through the `GitHub` protocol (no isinstance on
    the client, no annotation of it)."""
    root = Path(__file__).resolve().parents[2]
    naming = []
    for path in sorted((root / "bot").rglob("*.py")):
        if path.parent.name == "github":
            continue
        for node in syntax_nodes(path):
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if name == "GitHubClient" or (isinstance(node, ast.alias) and node.name == "GitHubClient"):
                naming.append(f"{path.relative_to(root)}:{getattr(node, 'lineno', '?')}")
    assert naming == []

