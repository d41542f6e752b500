"""The one GitHub REST client, behind one protocol, for every surface.

    installation_client(settings, installation_id)   the App: an installation's token
    token_client(api_url, token, settings)           the Action: GITHUB_TOKEN

Both are `GitHubClient` (bot/github/client.py) with the same headers, retry and rate-limit
policy (bot/github/transport.py, bot/github/policy.py), errors (`GitHubError`,
bot/github/errors.py) and calls (`GitHub`, the protocol).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.github.auth import AppJWT, InstallationAuth, TokenAuth, parse_expiry
from bot.github.client import GitHubClient
from bot.github.contents import MAX_CONFIG_BYTES
from bot.github.errors import GitHubError
from bot.github.protocol import GitHub
from bot.github.settings import AppSettings, GitHubSettings, GitHubSettingsError, load_github_settings
from bot.github.transport import API_VERSION

__all__ = [
    "API_VERSION",
    "AppIdentity",
    "app_identity",
    "TokenIdentity",
    "token_identity",
    "graphql_url",
    "MAX_CONFIG_BYTES",
    "GitHub",
    "GitHubClient",
    "GitHubError",
    "GitHubSettings",
    "GitHubSettingsError",
    "AppSettings",
    "app_client",
    "installation_client",
    "load_github_settings",
    "token_client",
]

log = logging.getLogger(__name__)
VIEWER_QUERY = "query { viewer { login } }"
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


def app_identity(settings: AppSettings) -> AppIdentity:
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


@dataclass(frozen=True)
class TokenIdentity:
    """Who a token acts as on GitHub (GraphQL's `viewer`): `<slug>[bot]` for an App's
    installation token — the workflow's GITHUB_TOKEN is `github-actions[bot]` — or a person's
    login for a personal token. GitHub logins are unique, and no user's can hold `[bot]`."""

    login: str

    def wrote(self, item: Mapping[str, Any]) -> bool:
        """Whether this identity made `item` (a comment GitHub lists): its user's login is this one."""
        user = item.get("user")
        return isinstance(user, Mapping) and str(user.get("login") or "").lower() == self.login.lower()


def graphql_url(api_url: str) -> str:
    """GitHub's GraphQL endpoint beside its REST API: `<api>/graphql` (https://api.github.com/graphql),
    or `https://HOST/api/graphql` on GitHub Enterprise Server (whose REST API is `/api/v3`)."""
    base = api_url.rstrip("/")
    return base.removesuffix("/v3") + "/graphql" if base.endswith("/api/v3") else base + "/graphql"


def token_identity(client: GitHub) -> TokenIdentity | None:
    """Who `client`'s token acts as, asked of GraphQL's `viewer` (REST's `GET /user` refuses an
    installation token such as GITHUB_TOKEN, and `GET /app` needs the App's key); None when
    GitHub does not say, and then nothing counts as written by this token."""
    try:
        data = client.request("POST", graphql_url(client.api_url), json={"query": VIEWER_QUERY}).json()
    except (GitHubError, ValueError) as e:
        log.warning("GitHub did not say who this token is (%s): no comment counts as rtcbot's own", e)
        return None
    viewer = (data.get("data") or {}).get("viewer") if isinstance(data, dict) else None
    login = viewer.get("login") if isinstance(viewer, dict) else None
    if not isinstance(login, str) or not login:
        log.warning("GitHub's answer to `viewer` names no login: no comment counts as rtcbot's own")
        return None
    return TokenIdentity(login)


def _github_settings(settings: AppSettings) -> GitHubSettings:
    return GitHubSettings.model_validate(
        {k: getattr(settings, k) for k in GitHubSettings.model_fields}
    )


def installation_auth(settings: AppSettings, installation_id: int) -> InstallationAuth:
    """The process's token of one installation (shared by every job, so it is reused)."""
    app_id, _ = settings.require_app()
    api_url = settings.github_api_url.rstrip("/")
    cache_key = (api_url, app_id, installation_id)
    with _installations_lock:
        auth = _installations.get(cache_key)
        if auth is None:
            app = app_client(settings)

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


def app_client(settings: AppSettings) -> GitHubClient:
    """The App itself (its JWT: the /app endpoints), its key read again for each JWT: a key file
    replaced by a rotation is used from the next request on (docs/deploy.md)."""
    app_id, _ = settings.require_app()
    return GitHubClient(settings.github_api_url.rstrip("/"), AppJWT(app_id, lambda: settings.require_app()[1]),
                        _github_settings(settings))


def installation_client(settings: AppSettings, installation_id: int) -> GitHubClient:
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
    """A client for a token as is: the Action's GITHUB_TOKEN (writes spaced per token). It wrote
    what the token's identity wrote, asked of GitHub once, when first needed (`token_identity`)."""
    client = GitHubClient(
        api_url, TokenAuth(token), settings, throttle_key=("token", hash(token)), own_http=True
    )
    identity = functools.cache(lambda: token_identity(client))

    def wrote(item: Mapping[str, Any]) -> bool:
        found = identity()
        return found is not None and found.wrote(item)

    client.author = wrote
    return client
