"""The dashboard's routes: sign-in (GET /login, GET /oauth/callback, POST /logout), the list of
a user's repositories (GET /dashboard) and a repository's page (GET /dashboard/OWNER/NAME).

The session is held on the server (sessions.py, in the store): the cookie carries a random id
only; signing out or the end of RTCBOT_SESSION_LIFETIME_S ends it there. It holds the user's
login, the repositories they may see (of those the store has data for, any number), the time
they signed in and a CSRF token; never a token of GitHub's."""

from __future__ import annotations

import hmac
import logging
import re
import secrets
import time
from ipaddress import ip_address
from typing import Any, TypeGuard
from urllib.parse import urlsplit

from flask import Blueprint, Flask, Response, redirect, render_template, request, session, url_for

from bot.app.dashboard import charts as charts_
from bot.app.dashboard.data import dismissals, load, repos_with_data, tenant
from bot.app.dashboard.oauth import GitHubSignIn, SignInError, authorize_url
from bot.app.dashboard.sessions import StoreSessionInterface, renew
from bot.app.settings import ServiceSettings
from bot.store.store import Store

log = logging.getLogger(__name__)
MAX_NEXT = 300  # characters of a `next` path, at most
NEXT_PATH = re.compile(r"/dashboard(/[A-Za-z0-9_.-]+)*/?")  # this app's pages; GitHub's names fit


def _loopback_http(url: str | None) -> bool:
    if not url:
        return False
    parts = urlsplit(url)
    if parts.scheme != "http":
        return False
    host = parts.hostname or ""
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def configure(app: Flask, settings: ServiceSettings, store: Store) -> None:
    """The app's session: held in the store, its cookie HttpOnly, SameSite=Lax, Secure off loopback."""
    assert settings.session_secret
    app.session_interface = StoreSessionInterface(store.sessions, settings.session_secret,
                                                  settings.session_lifetime_s)
    app.config.update(
        SESSION_COOKIE_NAME="rtcbot_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=not _loopback_http(settings.public_url),
    )


def _safe_next(value: object) -> TypeGuard[str]:
    """Whether `value` may be where signing in leads: a dashboard path of this app, never another
    site (`//host`, a scheme, backslashes), a header break (CR/LF) or a `.`/`..` step."""
    return (isinstance(value, str) and len(value) <= MAX_NEXT and NEXT_PATH.fullmatch(value) is not None
            and not any(step in (".", "..") for step in value.split("/")))


def blueprint(settings: ServiceSettings, store: Store) -> Blueprint:
    """The dashboard's routes: sign-in and sign-out, and the pages behind them."""
    bp = Blueprint("dashboard", __name__, template_folder="templates")
    bp.after_request(_headers)
    _sign_in_routes(bp, settings, store)
    _page_routes(bp, settings, store)
    return bp


def _redirect_uri(settings: ServiceSettings) -> str:
    if settings.public_url:
        return settings.public_url.rstrip("/") + "/oauth/callback"
    return url_for("dashboard.callback", _external=True)


def _page(template: str, status: int = 200, **ctx: Any) -> Response:
    return Response(render_template(template, login=session.get("login"), csrf=session.get("csrf"), **ctx),
                    status=status, mimetype="text/html")


def _message(status: int, title: str, text: str) -> Response:
    return _page("message.html", status, title=title, text=text)


def _signed_in(lifetime: float) -> dict[str, int] | None:
    """The user's repositories, or None (anonymous, or the sign-in expired: then cleared)."""
    at = session.get("at")
    if not session.get("login") or not isinstance(at, int | float):
        return None
    if time.time() - at > lifetime:
        session.clear()
        return None
    repos = session.get("repos")
    return repos if isinstance(repos, dict) else {}


def _headers(resp: Response) -> Response:
    resp.headers["Content-Security-Policy"] = ("default-src 'none'; style-src 'unsafe-inline'; "
                                               "img-src 'self' data:; "
                                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["Referrer-Policy"] = "same-origin"
    resp.headers["Cache-Control"] = "no-store"
    return resp


def _sign_in_routes(bp: Blueprint, settings: ServiceSettings, store: Store) -> None:
    """GET /login, GET /oauth/callback (GitHub's OAuth web flow) and POST /logout: only the POST,
    with the session's CSRF token, ends a signed-in session (GET /login leaves it as it is)."""
    assert settings.oauth_client_id and settings.oauth_client_secret
    github = GitHubSignIn(settings.github_url, settings.github_api_url, settings.oauth_client_id,
                          settings.oauth_client_secret)
    _login_route(bp, settings, github)
    _callback_route(bp, settings, store, github)
    _logout_route(bp)


def _login_route(bp: Blueprint, settings: ServiceSettings, github: GitHubSignIn) -> None:
    """GET /login?next=PATH: to GitHub's authorization page, with a new state in the session
    (signed in already: straight to PATH)."""

    @bp.get("/login")
    def login() -> Any:
        go = request.args.get("next") or "/dashboard"
        if not _safe_next(go):
            return _message(400, "Sign-in refused", "The sign-in link's next page is not a page of this "
                            "dashboard (a path such as /dashboard/OWNER/NAME); start again from /dashboard.")
        if _signed_in(settings.session_lifetime_s) is not None:  # signed in already: a link never signs out
            return redirect(go)
        state = secrets.token_urlsafe(24)
        renew(session)
        session["state"] = state
        session["next"] = go
        return redirect(authorize_url(settings.github_url, github.client_id, _redirect_uri(settings), state))


def _callback_route(bp: Blueprint, settings: ServiceSettings, store: Store, github: GitHubSignIn) -> None:
    """GET /oauth/callback: GitHub's answer, its state checked; the code exchanged for a token
    that asks who the user is and which repositories they see, then dropped; a new session."""

    @bp.get("/oauth/callback")
    def callback() -> Any:
        expected = session.pop("state", None)
        given = request.args.get("state", "")
        if not isinstance(expected, str) or not hmac.compare_digest(expected.encode(), given.encode()):
            return _message(400, "Sign-in failed", "The sign-in's state does not match this browser's; "
                            "start again from the sign-in link.")
        code = request.args.get("code", "")
        if not code or len(code) > 200:
            why = request.args.get("error_description") or "GitHub sent no authorization code"
            return _message(400, "Sign-in failed", why[:200])
        try:
            token = github.exchange(code, _redirect_uri(settings))
            user = github.user(token)
        except SignInError as e:
            log.warning("dashboard sign-in failed: %s", e)
            return _message(502, "Sign-in failed", str(e))
        del token
        known = repos_with_data(store, user.repos)
        visible = dict(sorted((r, i) for r, i in user.repos.items() if r in known))
        go = session.get("next")
        renew(session)  # a new id: one set before signing in is not carried over
        session.update(login=user.login, repos=visible, at=time.time(), csrf=secrets.token_urlsafe(24))
        pruned = store.sessions.prune()
        log.info("dashboard: %s signed in (%d repositories with data; %d expired sessions dropped)",
                 user.login, len(visible), pruned)
        return redirect(go if _safe_next(go) else "/dashboard")


def _logout_route(bp: Blueprint) -> None:
    """POST /logout with the session's CSRF token: the session ends."""

    @bp.post("/logout")
    def logout() -> Any:
        expected = session.get("csrf")
        given = request.form.get("csrf", "")
        if not isinstance(expected, str) or not hmac.compare_digest(expected.encode(), given.encode()):
            return _message(400, "Not signed out", "The form's CSRF token is missing or wrong; reload the page.")
        session.clear()  # the session ends in the store; its cookie is removed
        return _message(200, "Signed out", "You are signed out.")


def _page_routes(bp: Blueprint, settings: ServiceSettings, store: Store) -> None:
    """GET /dashboard (the user's repositories) and GET /dashboard/OWNER/NAME (one's figures)."""

    @bp.get("/dashboard")
    def index() -> Any:
        repos = _signed_in(settings.session_lifetime_s)
        if repos is None:
            return redirect(url_for("dashboard.login", next=request.path))
        by_installation: dict[int, list[str]] = {}
        for r, inst in sorted(repos.items()):
            if tenant(store, r, inst) is not None:  # renamed, removed or deleted since: not listed
                by_installation.setdefault(int(inst), []).append(r)
        return _page("index.html", installations=sorted(by_installation.items()))

    @bp.get("/dashboard/<owner>/<name>")
    def repo_page(owner: str, name: str) -> Any:
        repos = _signed_in(settings.session_lifetime_s)
        if repos is None:
            return redirect(url_for("dashboard.login", next=request.path))
        repo = f"{owner}/{name}"
        if repo not in repos:  # the same answer as a repository that does not exist
            return _message(404, "Not found", "No such repository, or not one you can see.")
        if tenant(store, repo, repos[repo]) is None:  # renamed, removed or deleted since sign-in
            return _message(404, "Not found", "No such repository, or not one you can see.")
        figures = load(store, repo, repos[repo], settings.github_url)
        return _page("repo.html", repo=repo, installation=repos[repo], f=figures, charts=charts_.charts(figures),
                     github_url=settings.github_url.rstrip("/"), dismissals=dismissals(store, repo, repos[repo]))
