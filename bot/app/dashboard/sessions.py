"""The dashboard's sessions on the server, as Flask's SessionInterface: the cookie carries a
random id (256 bits, HttpOnly, SameSite=Lax, Secure unless the App's URL is plain http on
loopback) and nothing else; what the session knows lives in the store (bot/store/sessions.py)
under an HMAC-SHA256 of that id keyed with RTCBOT_SESSION_SECRET, so a copy of the database
holds no id a browser could present, and changing the secret signs everyone out.

A session gets a new id whenever `renew` is called (starting a sign-in, and signing in, so an
id planted before cannot be carried into a signed-in session). It ends at a fixed time: the
lifetime after signing in (RTCBOT_SESSION_LIFETIME_S), or SIGN_IN_WINDOW_S after a sign-in
started. A session emptied (`session.clear()`, signing out) is deleted from the store and its
cookie removed; a cookie the store does not know (ended, expired, forged, or an old signed
cookie) opens an empty session and is removed."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from typing import Any

from flask import Flask, Request, Response
from flask.sessions import SecureCookieSession, SessionInterface, SessionMixin

from bot.store.sessions import Sessions

SIGN_IN_WINDOW_S = 600.0  # how long a sign-in may take between /login and GitHub's callback
ID_BYTES = 32
ID_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(ID_BYTES)


class StoredSession(SecureCookieSession):
    """A session's data as a dict (Flask's change tracking), with its id and times."""

    def __init__(self, initial: dict[str, Any] | None = None, *, sid: str | None = None,
                 created_at: float = 0.0, expires_at: float = 0.0, stale: bool = False) -> None:
        super().__init__(initial)
        self.sid = sid
        self.created_at = created_at
        self.expires_at = expires_at
        self.stale = stale  # the browser sent a cookie that opens no session
        self.renewed = False


def renew(session: SessionMixin) -> None:
    """Empty the session and give it a new id when it is saved (its old row is deleted)."""
    session.clear()
    if isinstance(session, StoredSession):
        session.renewed = True


class StoreSessionInterface(SessionInterface):
    """Sessions kept in the store; `lifetime_s` counts from signing in."""

    def __init__(self, sessions: Sessions, secret: str, lifetime_s: float) -> None:
        self.sessions = sessions
        self.key = secret.encode()
        self.lifetime_s = lifetime_s

    def id_hash(self, sid: str) -> str:
        return hmac.new(self.key, sid.encode(), hashlib.sha256).hexdigest()

    def open_session(self, app: Flask, request: Request) -> StoredSession:
        sid = request.cookies.get(self.get_cookie_name(app))
        if not sid:
            return StoredSession()
        row = self.sessions.get(self.id_hash(sid)) if ID_SHAPE.fullmatch(sid) else None
        if row is None:
            return StoredSession(stale=True)
        return StoredSession(dict(row.data), sid=sid, created_at=row.created_at, expires_at=row.expires_at)

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        if not isinstance(session, StoredSession):
            return
        if session.accessed:
            response.vary.add("Cookie")
        if not session:  # emptied (signed out) or never used
            if session.sid is not None:
                self.sessions.end(self.id_hash(session.sid))
            if session.sid is not None or session.stale:
                response.delete_cookie(self.get_cookie_name(app), domain=self.get_cookie_domain(app),
                                       path=self.get_cookie_path(app), secure=self.get_cookie_secure(app),
                                       httponly=self.get_cookie_httponly(app),
                                       samesite=self.get_cookie_samesite(app))
            return
        if session.sid is None or session.renewed:
            if session.sid is not None:
                self.sessions.end(self.id_hash(session.sid))
            session.sid, session.created_at, session.renewed = secrets.token_urlsafe(ID_BYTES), time.time(), False
            window = self.lifetime_s if session.get("login") else min(SIGN_IN_WINDOW_S, self.lifetime_s)
            session.expires_at = session.created_at + window
        elif not session.modified:
            return
        self.sessions.put(self.id_hash(session.sid), dict(session), created_at=session.created_at,
                          expires_at=session.expires_at)
        response.set_cookie(self.get_cookie_name(app), session.sid, expires=session.expires_at,
                            domain=self.get_cookie_domain(app), path=self.get_cookie_path(app),
                            secure=self.get_cookie_secure(app), httponly=self.get_cookie_httponly(app),
                            samesite=self.get_cookie_samesite(app))
