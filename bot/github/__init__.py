"""The one GitHub REST client, behind one protocol, for every surface.

    installation_client(settings, installation_id)   the App: an installation's token
    token_client(api_url, token, settings)           the Action: GITHUB_TOKEN

Both are `GitHubClient` (bot/github/client.py) with the same headers, retry and rate-limit
policy (bot/github/policy.py), errors (`GitHubError`) and calls (`GitHub`, the protocol).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.github.auth import AppJWT, InstallationAuth, TokenAuth, parse_expiry
from bot.github.client import API_VERSION, MAX_CONFIG_BYTES, GitHubClient, GitHubError
from bot.github.protocol import GitHub
from bot.github.settings import GitHubSettings, load_github_settings

if TYPE_CHECKING:
    from bot.core.settings import ServiceSettings

__all__ = [
    "API_VERSION",
    "AppIdentity",
    "app_identity",
    "MAX_CONFIG_BYTES",
    "GitHub",
    "GitHubClient",
    "GitHubError",
    "GitHubSettings",
    "installation_client",
    "load_github_settings",
    "token_client",
]

_installations: dict[tuple[str, int, int], InstallationAuth] = {}
_installations_lock = threading.Lock()
_identities: dict[tuple[str, int], AppIdentity] = {}


@dataclass(frozen=True)
class AppIdentity:
    """Who this App is on GitHub: its id and its bot user's login (`<slug>[bot]`, a name no
    person or other App can hold)."""

    app_id: int
    bot_login: str

    def wrote(self, item: Mapping[str, Any]) -> bool:
        """Whether this App made `item` (a comment GitHub lists): its user is this App's bot,
        and where GitHub says which App acted (`performed_via_github_app`), it is this one."""
        user = item.get("user")
        if not isinstance(user, Mapping) or user.get("type") != "Bot":
            return False
        if str(user.get("login") or "").lower() != self.bot_login.lower():
            return False
        via = item.get("performed_via_github_app")
        return via is None or (isinstance(via, Mapping) and via.get("id") == self.app_id)


def app_identity(settings: ServiceSettings) -> AppIdentity:
    """This App's identity, asked of GitHub once per process (`GET /app`, with the App's JWT)."""
    app_id, key = settings.require_app()
    api_url = settings.github_api_url.rstrip("/")
    found = _identities.get((api_url, app_id))
    if found is None:
        data = GitHubClient(api_url, AppJWT(app_id, key), _github_settings(settings)).request("GET", "/app").json()
        slug = data.get("slug") if isinstance(data, dict) else None
        if not isinstance(slug, str) or not slug:
            raise GitHubError(500, "no slug in GitHub's answer to GET /app")
        found = _identities[(api_url, app_id)] = AppIdentity(app_id, f"{slug}[bot]")
    return found


def _github_settings(settings: ServiceSettings) -> GitHubSettings:
    return GitHubSettings.model_validate(
        {k: getattr(settings, k) for k in GitHubSettings.model_fields}
    )


def installation_auth(settings: ServiceSettings, installation_id: int) -> InstallationAuth:
    """The process's token of one installation (shared by every job, so it is reused)."""
    app_id, key = settings.require_app()
    api_url = settings.github_api_url.rstrip("/")
    cache_key = (api_url, app_id, installation_id)
    with _installations_lock:
        auth = _installations.get(cache_key)
        if auth is None:
            app = GitHubClient(api_url, AppJWT(app_id, key), _github_settings(settings))

            def mint() -> tuple[str, float]:
                data = app.request(
                    "POST", f"/app/installations/{installation_id}/access_tokens"
                ).json()
                if not isinstance(data, dict) or not data.get("token"):
                    raise GitHubError(
                        500, "no token in GitHub's answer to the installation token request"
                    )
                return str(data["token"]), parse_expiry(data.get("expires_at"))

            auth = _installations[cache_key] = InstallationAuth(mint)
        return auth


def installation_client(settings: ServiceSettings, installation_id: int) -> GitHubClient:
    """The App's client for one installation (its token, its writes spaced, its check runs)."""
    return GitHubClient(
        settings.github_api_url,
        installation_auth(settings, installation_id),
        _github_settings(settings),
        throttle_key=installation_id,
        app_id=settings.app_id,
        author=lambda item: app_identity(settings).wrote(item),
    )


def token_client(api_url: str, token: str, settings: GitHubSettings | None = None) -> GitHubClient:
    """A client for a token as is: the Action's GITHUB_TOKEN (writes spaced per token)."""
    return GitHubClient(
        api_url, TokenAuth(token), settings, throttle_key=("token", hash(token)), own_http=True
    )
