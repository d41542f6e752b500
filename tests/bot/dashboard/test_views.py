"""/dashboard behind "Sign in with GitHub", through Flask's test client and the fake GitHub (real
HTTP): who sees what, state and CSRF checks, the session's expiry and cookie flags."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient

from bot.app.jobs import Runtime
from bot.app.web import create_app
from tests.bot.app_support import make_settings
from tests.bot.dashboard.support import dashboard_settings, seed, sign_in
from tests.fakes.github_server import FakeGitHub

REPO = "octo-org/widgets"  # the fake GitHub's repository, which its user can reach
OTHER = "octo-org/secret"  # in the store, but not the user's


def dashboard_app(tmp_path: Path, gh: FakeGitHub, **kw: object) -> Flask:
    app = create_app(dashboard_settings(tmp_path, gh, **kw))  # type: ignore[arg-type]
    rt: Runtime = app.extensions["rtcbot"]
    seed(rt.store, REPO, prs=6)
    seed(rt.store, OTHER, prs=3)
    return app


def no_data(body: bytes) -> None:
    """No figure, chart or list of repositories (a redirect may repeat the path asked for)."""
    text = body.decode()
    for mark in ("<svg", "EditingRTC", "LLM", "Installation", "pull requests", f">{REPO}<", f">{OTHER}<"):
        assert mark not in text, mark


def test_without_the_oauth_settings_the_dashboard_is_off(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path))
    for path in ("/dashboard", f"/dashboard/{REPO}", "/login"):
        r = app.test_client().get(path)
        assert r.status_code == 404, path
        message = r.get_json()["message"]
        assert "RTCBOT_OAUTH_CLIENT_ID" in message and "RTCBOT_SESSION_SECRET" in message


def test_an_anonymous_visitor_gets_no_data(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    app = dashboard_app(tmp_path, fake_github())
    c = app.test_client()
    for path in ("/dashboard", f"/dashboard/{REPO}", f"/dashboard/{OTHER}", "/dashboard/nobody/nothing"):
        r = c.get(path)
        assert r.status_code == 302, path
        assert r.headers["Location"].startswith("/login?next="), path
        no_data(r.data)


def test_a_user_sees_their_repositories_and_no_other(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    app = dashboard_app(tmp_path, gh)
    c = app.test_client()
    back = sign_in(c, gh, f"/dashboard/{REPO}")
    assert back.status_code == 302 and back.headers["Location"] == f"/dashboard/{REPO}"
    index = c.get("/dashboard")
    assert index.status_code == 200
    assert f'href="/dashboard/{REPO}"' in index.text and OTHER not in index.text
    page = c.get(f"/dashboard/{REPO}")
    assert page.status_code == 200
    assert len(re.findall(r'<svg role="img" aria-label="[^"]+"', page.text)) == 5
    assert "Content-Security-Policy" in page.headers and "no-store" in page.headers["Cache-Control"]
    other = c.get(f"/dashboard/{OTHER}")
    missing = c.get("/dashboard/nobody/nothing")
    assert other.status_code == missing.status_code == 404
    assert other.data == missing.data  # another user's repository looks like one that does not exist
    no_data(other.data)
    # the session holds who and what, never GitHub's token
    with c.session_transaction() as s:
        assert s["login"] == "octocat" and s["repos"] == {REPO: gh.installation_id}
        assert not any("ghu_" in str(v) for v in s.values())
    assert [r.path for r in gh.requests if r.path.startswith("/user")] == [
        "/user", "/user/installations", f"/user/installations/{gh.installation_id}/repositories"]


def test_a_repository_reached_through_a_second_installation(tmp_path: Path,
                                                            fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    gh.user_installations[99] = [OTHER] + [f"octo-org/r{i}" for i in range(120)]  # two pages
    app = dashboard_app(tmp_path, gh)
    c = app.test_client()
    sign_in(c, gh)
    assert c.get(f"/dashboard/{OTHER}").status_code == 200
    with c.session_transaction() as s:  # only repositories with data are kept
        assert s["repos"] == {REPO: gh.installation_id, OTHER: 99}


def test_a_wrong_state_is_refused(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    c = dashboard_app(tmp_path, gh).test_client()
    assert c.get("/login").status_code == 302
    r = c.get("/oauth/callback?code=abc&state=forged")
    assert r.status_code == 400 and "state" in r.text
    r = c.get("/oauth/callback?code=abc")  # no sign-in started in this browser
    assert r.status_code == 400
    assert c.get("/dashboard").status_code == 302
    assert not [x for x in gh.requests if x.path == "/login/oauth/access_token"]


def test_a_code_github_refuses_is_a_clear_error(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    c = dashboard_app(tmp_path, gh).test_client()
    start = c.get("/login")
    state = re.search(r"state=([^&]+)", start.headers["Location"]).group(1)  # type: ignore[union-attr]
    r = c.get(f"/oauth/callback?code=not-a-code&state={state}")
    assert r.status_code == 502 and "incorrect or expired" in r.text
    assert c.get("/dashboard").status_code == 302


def test_an_expired_session_shows_nothing(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    c = dashboard_app(tmp_path, gh, session_lifetime_s=600).test_client()
    sign_in(c, gh)
    assert c.get(f"/dashboard/{REPO}").status_code == 200
    with c.session_transaction() as s:
        s["at"] = time.time() - 601
    r = c.get(f"/dashboard/{REPO}")
    assert r.status_code == 302 and r.headers["Location"].startswith("/login")
    no_data(r.data)
    with c.session_transaction() as s:
        assert "login" not in s


def test_logout_needs_the_csrf_token(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    c = dashboard_app(tmp_path, gh).test_client()
    sign_in(c, gh)
    page = c.get("/dashboard").text
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    assert c.post("/logout").status_code == 400
    assert c.post("/logout", data={"csrf": "wrong"}).status_code == 400
    assert c.get(f"/dashboard/{REPO}").status_code == 200  # still signed in
    assert c.post("/logout", data={"csrf": token}).status_code == 200
    assert c.get(f"/dashboard/{REPO}").status_code == 302


def cookie_of(c: FlaskClient) -> str:
    return c.get("/login").headers["Set-Cookie"]


def test_session_cookie_flags(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    local = cookie_of(dashboard_app(tmp_path / "a", gh).test_client())
    assert "HttpOnly" in local and "SameSite=Lax" in local and "Secure" not in local
    public = cookie_of(dashboard_app(tmp_path / "b", gh, public_url="https://rtcbot.example.com").test_client())
    assert "HttpOnly" in public and "SameSite=Lax" in public and "Secure" in public
    assert "Expires=" in public  # a permanent session, expiring with the lifetime


def test_login_never_sends_a_user_elsewhere(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    c = dashboard_app(tmp_path, gh).test_client()
    back = sign_in(c, gh, "//evil.example.com/x")
    assert back.status_code == 302 and back.headers["Location"] == "/dashboard"
