"""/dashboard behind "Sign in with GitHub", through Flask's test client and the fake GitHub (real
HTTP): who sees what, state and CSRF checks, the session held in the store (its cookie an id
only; signing out and expiry end it there) and the cookie's flags."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient

from bot.app.dashboard.sessions import ID_SHAPE, StoreSessionInterface
from bot.app.runtime import Runtime
from bot.app.web import create_app
from bot.store.schema import DashboardSessionRow
from tests.bot.app_support import make_settings
from tests.bot.dashboard.support import dashboard_settings, seed, sign_in
from tests.fakes.github_server import FakeGitHub

COOKIE = "rtcbot_session"
REPO = "octo-org/widgets"  # the fake GitHub's repository, which its user can reach
OTHER = "octo-org/secret"  # in the store, but not the user's


def dashboard_app(tmp_path: Path, gh: FakeGitHub, **kw: object) -> Flask:
    app = create_app(dashboard_settings(tmp_path, gh, **kw))  # type: ignore[arg-type]
    rt: Runtime = app.extensions["rtcbot"]
    seed(rt.store, REPO, prs=6)
    seed(rt.store, OTHER, prs=3, installation=99)  # reached through a second installation, if at all
    return app


def session_id(c: FlaskClient) -> str | None:
    """The id in the client's session cookie (None: no cookie)."""
    cookie = c.get_cookie(COOKIE)
    return cookie.value if cookie else None


def stored(app: Flask, sid: str) -> DashboardSessionRow | None:
    """The store's row of session `sid` (as the app finds it: by the id's keyed hash)."""
    interface = app.session_interface
    assert isinstance(interface, StoreSessionInterface)
    rt: Runtime = app.extensions["rtcbot"]
    return rt.store.sessions.get(interface.id_hash(sid))


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
    assert re.search(r"LLM tokens: <b>\d+</b> prompt \(\d+ served from the endpoint's cache\), <b>\d+</b> completion",
                     page.text)
    assert "Content-Security-Policy" in page.headers and "no-store" in page.headers["Cache-Control"]
    other = c.get(f"/dashboard/{OTHER}")
    missing = c.get("/dashboard/nobody/nothing")
    assert other.status_code == missing.status_code == 404
    assert other.data == missing.data  # another user's repository looks like one that does not exist
    no_data(other.data)
    # the session holds who and what, never GitHub's token; the cookie only its id
    with c.session_transaction() as s:
        assert s["login"] == "octocat" and s["repos"] == {REPO: gh.installation_id}
        assert not any("ghu_" in str(v) for v in s.values())
    sid = session_id(c)
    assert sid is not None and ID_SHAPE.fullmatch(sid)
    row = stored(app, sid)
    assert row is not None and row.data["login"] == "octocat"
    rt: Runtime = app.extensions["rtcbot"]
    assert rt.store.sessions.get(sid) is None  # the store keeps a hash of the id, never the id
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
    app = dashboard_app(tmp_path, gh, session_lifetime_s=600)
    c = app.test_client()
    sign_in(c, gh)
    assert c.get(f"/dashboard/{REPO}").status_code == 200
    sid = session_id(c)
    assert sid is not None
    row = stored(app, sid)
    assert row is not None and 599 < row.expires_at - row.created_at <= 600  # the lifetime, from signing in
    rt: Runtime = app.extensions["rtcbot"]
    interface = app.session_interface
    assert isinstance(interface, StoreSessionInterface)
    rt.store.sessions.put(interface.id_hash(sid), row.data, created_at=row.created_at - 601,
                          expires_at=time.time() - 1)  # the same session, its end passed
    r = c.get(f"/dashboard/{REPO}")
    assert r.status_code == 302 and r.headers["Location"].startswith("/login")
    no_data(r.data)
    assert session_id(c) is None  # the cookie is removed
    c.set_cookie(COOKIE, sid)  # and presented again, it still opens nothing
    assert c.get(f"/dashboard/{REPO}").status_code == 302
    assert rt.sweep()["sessions"] == 1  # the sweep drops the expired row
    assert rt.store.sessions.prune(now=time.time() + 10**6) == 0


def test_a_lifetime_shortened_since_signing_in_ends_the_session(tmp_path: Path,
                                                                 fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    c = dashboard_app(tmp_path, gh, session_lifetime_s=600).test_client()
    sign_in(c, gh)
    with c.session_transaction() as s:
        s["at"] = time.time() - 601  # signed in longer ago than RTCBOT_SESSION_LIFETIME_S allows now
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


def test_logout_ends_the_session_on_the_server(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    app = dashboard_app(tmp_path, gh)
    c = app.test_client()
    sign_in(c, gh)
    sid = session_id(c)
    assert sid is not None and stored(app, sid) is not None
    token = re.search(r'name="csrf" value="([^"]+)"', c.get("/dashboard").text).group(1)  # type: ignore[union-attr]
    out = c.post("/logout", data={"csrf": token})
    assert out.status_code == 200 and "You are signed out" in out.text
    assert session_id(c) is None and stored(app, sid) is None
    replay = app.test_client()  # the cookie copied before signing out, presented again
    replay.set_cookie(COOKIE, sid)
    for path in (f"/dashboard/{REPO}", "/dashboard"):
        r = replay.get(path)
        assert r.status_code == 302 and r.headers["Location"].startswith("/login?next="), path
        no_data(r.data)


def cookie_of(c: FlaskClient) -> str:
    return c.get("/login").headers["Set-Cookie"]


def test_session_cookie_flags(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    local = cookie_of(dashboard_app(tmp_path / "a", gh).test_client())
    assert "HttpOnly" in local and "SameSite=Lax" in local and "Secure" not in local
    public = cookie_of(dashboard_app(tmp_path / "b", gh, public_url="https://rtcbot.example.com").test_client())
    assert "HttpOnly" in public and "SameSite=Lax" in public and "Secure" in public
    assert "Expires=" in public  # a permanent session, expiring with the lifetime


def test_login_leads_to_the_page_asked_for_or_the_dashboard(tmp_path: Path,
                                                            fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    app = dashboard_app(tmp_path, gh)
    back = sign_in(app.test_client(), gh, "")
    assert back.status_code == 302 and back.headers["Location"] == "/dashboard"
    back = sign_in(app.test_client(), gh, f"/dashboard/{OTHER}/")
    assert back.status_code == 302 and back.headers["Location"] == f"/dashboard/{OTHER}/"
