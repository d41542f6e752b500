"""Who a request is from: a token (the Action's GITHUB_TOKEN) or a GitHub App installation.

App authentication as GitHub documents it: a JWT signed RS256 with the App's key (`iat` 60 s in
the past, `exp` 9 minutes after now, `iss` the App id) exchanged at
`POST /app/installations/{id}/access_tokens` for an installation token, which lives an hour and
is used until a minute before it expires (a 401 renews it at once). The private key is parsed
once per process and key text (~30 ms of CPU for each parse), its file read again for each JWT
(a rotated key is used from the next token request on); one token per installation is shared by every
thread and job of the process, and asked for by one thread at a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

import jwt
from cryptography.hazmat.primitives import serialization

JWT_BACKDATE_S = 60
JWT_LIFETIME_S = 540
TOKEN_MARGIN_S = 60  # an installation token is renewed this long before it expires (clock skew)


class Auth(Protocol):
    def header(self) -> str:
        """The Authorization header's value."""
        ...

    def renew(self, stale: str) -> bool:
        """GitHub refused `stale` (401): drop it if it is still the one in use; whether a new
        attempt may succeed."""
        ...


class TokenAuth:
    """A token as is (the Action's GITHUB_TOKEN, a personal token): nothing to renew."""

    def __init__(self, token: str) -> None:
        self._header = f"Bearer {token}"

    def header(self) -> str:
        return self._header

    def renew(self, stale: str) -> bool:
        return False


_signers: dict[str, Callable[[dict[str, Any]], str]] = {}
_signers_lock = threading.Lock()


def jwt_signer(private_key_pem: str) -> Callable[[dict[str, Any]], str]:
    """RS256 signing with the key parsed once per process."""
    with _signers_lock:
        sign = _signers.get(private_key_pem)
        if sign is None:
            key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)

            def sign(payload: dict[str, Any]) -> str:
                return jwt.encode(payload, key, algorithm="RS256")  # type: ignore[arg-type]

            _signers[private_key_pem] = sign
        return sign


class AppJWT:
    """The App itself (for /app endpoints and for minting installation tokens). `private_key`:
    the PEM, or where to read it each time a JWT is made (a key file replaced by a rotation is
    used from the next JWT on, without a restart; each key text is parsed once)."""

    def __init__(self, app_id: int, private_key: str | Callable[[], str]) -> None:
        self.app_id = app_id
        self._key = private_key if callable(private_key) else (lambda: private_key)

    def header(self) -> str:
        now = int(time.time())
        token = jwt_signer(self._key())(
            {"iat": now - JWT_BACKDATE_S, "exp": now + JWT_LIFETIME_S, "iss": str(self.app_id)}
        )
        return f"Bearer {token}"

    def renew(self, stale: str) -> bool:
        return False


Mint = Callable[[], tuple[str, float]]  # → (token, expiry as epoch seconds)


class InstallationAuth:
    """An installation's token, minted by `mint` when there is none or it is about to expire."""

    def __init__(self, mint: Mint) -> None:
        self._mint = mint
        self._lock = threading.Lock()
        self._header: str | None = None
        self._expires = 0.0
        self.minted = 0

    def header(self) -> str:
        with self._lock:
            if self._header is None or time.time() > self._expires - TOKEN_MARGIN_S:
                token, self._expires = self._mint()
                self._header = f"Bearer {token}"
                self.minted += 1
            return self._header

    def renew(self, stale: str) -> bool:
        with self._lock:
            if self._header == stale:
                self._header = None
            return True


def parse_expiry(value: Any) -> float:
    """GitHub's `expires_at` ("2026-01-01T00:00:00Z") as epoch seconds; an hour from now when
    it is missing or odd (GitHub's documented lifetime)."""
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return time.time() + 3600.0
