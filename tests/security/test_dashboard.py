"""The dashboard and the qualification record as an attacker meets them: a session cookie they
forged, guessed or planted, a sign-in replayed, a `next` built to break the redirect, and a record
at the base commit built to crash the reader."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from flask import Flask
from flask.sessions import SecureCookieSessionInterface

from bot.core.qualification import refusal_from_text
from tests.bot.dashboard.support import SESSION_SECRET, sign_in
from tests.bot.dashboard.test_views import COOKIE, OTHER, REPO, dashboard_app, no_data, session_id
from tests.fakes.github_server import FakeGitHub


def cookie_for(secret: str, session: dict[str, object]) -> str:
    """A session cookie as Flask signs it, with `secret`."""
    fake = Flask("forger")
    fake.secret_key = secret
    serializer = SecureCookieSessionInterface().get_signing_serializer(fake)
    assert serializer is not None
    return str(serializer.dumps(session))


def test_a_session_cookie_carries_no_claim_even_signed_with_the_apps_secret(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    """The cookie is an id the store must know: a claim signed as Flask's cookie sessions were
    (with a guessed secret, or the App's own), a guessed id, or nonsense opens nothing."""
    gh = fake_github()
    c = dashboard_app(tmp_path, gh).test_client()
    claim = {"login": "mallory", "repos": {OTHER: 77, REPO: 77}, "at": time.time(), "csrf": "x"}
    for cookie in (cookie_for("a guess at the secret, long enough to look real", claim),
                   cookie_for(SESSION_SECRET, claim), "A" * 43, "x" * 3000, "\u00e9\u00e9"):
        c.set_cookie(COOKIE, cookie)
        for path in (f"/dashboard/{OTHER}", f"/dashboard/{REPO}", "/dashboard"):
            r = c.get(path)
            assert r.status_code == 302 and r.headers["Location"].startswith("/login"), (cookie[:20], path)
            no_data(r.data)
    # the control: a real sign-in in the same client opens the user's own repository only
    sign_in(c, gh)
    assert c.get(f"/dashboard/{REPO}").status_code == 200 and c.get(f"/dashboard/{OTHER}").status_code == 404


def test_a_session_id_planted_before_sign_in_is_not_carried_over(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    """Session fixation: an attacker starts a sign-in, plants its id in the victim's browser;
    the victim signs in under a new id, and the planted one opens nothing."""
    gh = fake_github()
    app = dashboard_app(tmp_path, gh)
    attacker = app.test_client()
    assert attacker.get("/login").status_code == 302
    planted = session_id(attacker)
    assert planted is not None
    victim = app.test_client()
    victim.set_cookie(COOKIE, planted)
    sign_in(victim, gh)
    assert victim.get(f"/dashboard/{REPO}").status_code == 200
    assert session_id(victim) not in (None, planted)
    r = attacker.get(f"/dashboard/{REPO}")
    assert r.status_code == 302 and r.headers["Location"].startswith("/login")


@pytest.mark.parametrize("go", [
    "/dashboard\r\nSet-Cookie: rtcbot_session=planted", "/dashboard/x\ny", "/dashboard\r", "/dashboard%0d%0ax",
    "//evil.example.com/dashboard", "https://evil.example.com/dashboard", "/dashboard/..//evil.example.com",
    "/\\evil.example.com", "/dashboard\\..\\x", "/dashboard/../login", "/dashboard/./x", "javascript:alert(1)",
    "/dashboardx", "/dashboard?x=https://evil.example.com", "/dashboard#x", "/dashboard/\x00", "/dashboard/\u0130",
    "/dashboard/" + "a" * 400, " /dashboard", "/dashboard\t"])
def test_a_bad_next_is_a_clear_400(tmp_path: Path, fake_github: Callable[..., FakeGitHub], go: str) -> None:
    """Where signing in leads is a path of this dashboard: anything else is refused at /login
    with one message (a CR/LF was a 500: the redirect's header could not be written)."""
    gh = fake_github()
    c = dashboard_app(tmp_path, gh).test_client()
    r = c.get("/login", query_string={"next": go})
    assert r.status_code == 400, r.data[:200]
    assert "next page is not a page of this dashboard" in r.text
    assert "evil" not in r.text and "Set-Cookie" not in r.text  # the value is not echoed
    assert session_id(c) is None  # no sign-in started
    assert not gh.requests


def test_a_replayed_sign_in_callback_is_refused(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    """The callback URL (code and state) seen once, by a proxy log say, opens no session again."""
    gh = fake_github()
    app = dashboard_app(tmp_path, gh)
    victim = app.test_client()
    start = victim.get("/login")
    back = httpx.get(start.headers["Location"], follow_redirects=False, timeout=10)
    url = urlsplit(back.headers["location"])
    callback = f"{url.path}?{url.query}"
    assert victim.get(callback).status_code == 302
    assert victim.get(f"/dashboard/{REPO}").status_code == 200
    attacker = app.test_client()
    r = attacker.get(callback)  # no sign-in started in this browser: the state is not its own
    assert r.status_code == 400
    assert attacker.get(f"/dashboard/{REPO}").status_code == 302
    again = victim.get(callback)  # the victim's state was used up by the first callback
    assert again.status_code == 400


def test_a_signed_in_user_cannot_widen_their_repositories(tmp_path: Path,
                                                          fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    c = dashboard_app(tmp_path, gh).test_client()
    sign_in(c, gh)
    for path in (f"/dashboard/{OTHER}", "/dashboard/octo-org/..%2Fsecret", "/dashboard/octo-org%2Fsecret/x",
                 f"/dashboard/{OTHER.upper()}"):
        r = c.get(path)
        assert r.status_code == 404, path
        no_data(r.data)


def test_a_record_built_to_crash_the_reader_is_a_refusal() -> None:
    """The Action reads .rtcbot/qualification.json at the base commit: whatever it holds, the
    answer is "not qualified" with a reason, never a crash or a model let through."""
    for text in ("[" * 200_000, '{"models": ' * 50_000, "\x00" * 1000, '{"models": [{"model": "m", "qualified": 1}]}',
                 '{"models": [{"model": ["m"], "qualified": true}]}'):
        why = refusal_from_text("m", text, "r.json", "o/r")
        assert why is not None and "is not qualified for o/r" in why, text[:20]


def test_repository_names_from_github_are_only_ever_compared(tmp_path: Path) -> None:
    """Sign-in asks the store which of the user's repositories (names GitHub lists, some chosen
    by whoever named them) have data: a name built as SQL or as a pattern matches nothing."""
    from bot.app.dashboard.data import repos_with_data
    from bot.store.store import Store
    from tests.bot.dashboard.support import seed

    store = Store(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    seed(store, REPO, prs=2)
    hostile = [f"{REPO}' OR '1'='1", "x') OR 1=1 --", "%", "octo-org/%", "*", REPO.upper(), f"{REPO}\x00"]
    assert repos_with_data(store, dict.fromkeys(hostile, 77)) == set()
    assert repos_with_data(store, dict.fromkeys([*hostile, REPO], 77)) == {REPO}


def test_a_link_to_login_does_not_sign_a_user_out(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    """An image or link to /login on any page the user visits (a cross-site GET, no CSRF token)
    left them signed out: now only POST /logout with the session's CSRF token ends a session."""
    gh = fake_github()
    app = dashboard_app(tmp_path, gh)
    c = app.test_client()
    sign_in(c, gh)
    sid = session_id(c)
    for query in ({}, {"next": f"/dashboard/{REPO}"}):
        r = c.get("/login", query_string=query, headers={"Sec-Fetch-Site": "cross-site"})
        assert r.status_code == 302 and r.headers["Location"] == query.get("next", "/dashboard")
        assert session_id(c) == sid and c.get(f"/dashboard/{REPO}").status_code == 200  # still signed in
    page = c.get("/dashboard").text
    assert '<form method="post" action="/logout">' in page  # the sign-out button posts its token
    for data in ({}, {"csrf": ""}, {"csrf": "guessed"}):
        assert c.post("/logout", data=data).status_code == 400
        assert c.get(f"/dashboard/{REPO}").status_code == 200
    token = re.search(r'name="csrf" value="([^"]+)"', page)
    assert token is not None and c.post("/logout", data={"csrf": token.group(1)}).status_code == 200
    assert c.get(f"/dashboard/{REPO}").status_code == 302 and session_id(c) is None
