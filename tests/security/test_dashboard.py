"""The dashboard and the qualification record as an attacker meets them: a session cookie they
forged, a sign-in replayed, and a record at the base commit built to crash the reader."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from flask import Flask
from flask.sessions import SecureCookieSessionInterface

from bot.core.qualification import refusal_from_text
from tests.bot.dashboard.support import SESSION_SECRET, sign_in
from tests.bot.dashboard.test_views import OTHER, REPO, dashboard_app, no_data
from tests.fakes.github_server import FakeGitHub

COOKIE = "rtcbot_session"


def cookie_for(secret: str, session: dict[str, object]) -> str:
    """A session cookie as Flask signs it, with `secret`."""
    fake = Flask("forger")
    fake.secret_key = secret
    serializer = SecureCookieSessionInterface().get_signing_serializer(fake)
    assert serializer is not None
    return str(serializer.dumps(session))


def test_a_session_cookie_forged_with_another_secret_gets_no_data(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    c = dashboard_app(tmp_path, fake_github()).test_client()
    claim = {"login": "mallory", "repos": {OTHER: 77, REPO: 77}, "at": time.time(), "csrf": "x"}
    c.set_cookie(COOKIE, cookie_for("a guess at the secret, long enough to look real", claim))
    for path in (f"/dashboard/{OTHER}", f"/dashboard/{REPO}", "/dashboard"):
        r = c.get(path)
        assert r.status_code == 302 and r.headers["Location"].startswith("/login"), path
        no_data(r.data)
    # the control: the same claim signed with the App's secret is honoured, so the signature is
    # what refused it above (never forge sessions in the App's name: keep RTCBOT_SESSION_SECRET secret)
    c.set_cookie(COOKIE, cookie_for(SESSION_SECRET, claim))
    assert c.get(f"/dashboard/{OTHER}").status_code == 200


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
    assert repos_with_data(store, hostile) == set()
    assert repos_with_data(store, [*hostile, REPO]) == {REPO}
