"""Sign in with GitHub: the GitHub App's web flow (a user-to-server token), and the repositories
that token reaches through the App's installations. The token is used here and dropped: only
the user's login and the repository names go into the session.

The web endpoints (/login/oauth/authorize, /login/oauth/access_token) live under GITHUB_URL
(github.com, or a GitHub Enterprise host); the REST calls under the App's API base."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx

from bot.github.transport import tls_context

MAX_INSTALLATIONS = 100  # installations read per sign-in, at most
MAX_PAGES = 10  # pages of 100 repositories per installation, at most
PER_PAGE = 100
API_VERSION = "2022-11-28"


class SignInError(Exception):
    """GitHub refused or failed the sign-in; the message is safe to show (no token)."""


@dataclass(frozen=True)
class User:
    login: str
    repos: dict[str, int]  # full name → installation id


def authorize_url(github_url: str, client_id: str, redirect_uri: str, state: str) -> str:
    query = urlencode({"client_id": client_id, "redirect_uri": redirect_uri, "state": state})
    return f"{github_url.rstrip('/')}/login/oauth/authorize?{query}"


class GitHubSignIn:
    def __init__(self, github_url: str, api_url: str, client_id: str, client_secret: str, *,
                 timeout_s: float = 15.0) -> None:
        self.github_url = github_url.rstrip("/")
        self.api_url = api_url.rstrip("/")
        self.client_id = client_id
        self.client_secret = client_secret
        self.timeout_s = timeout_s

    def exchange(self, code: str, redirect_uri: str) -> str:
        """The user-to-server token for an authorization `code`."""
        try:
            r = httpx.post(f"{self.github_url}/login/oauth/access_token", timeout=self.timeout_s,
                           headers={"Accept": "application/json"}, verify=tls_context(),
                           data={"client_id": self.client_id, "client_secret": self.client_secret,
                                 "code": code, "redirect_uri": redirect_uri})
        except httpx.HTTPError as e:
            raise SignInError(f"GitHub could not be reached ({type(e).__name__})") from None
        try:
            data = r.json()
        except ValueError:
            data = {}
        if r.status_code != 200 or not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
            why = data.get("error_description") or data.get("error") if isinstance(data, dict) else None
            raise SignInError(f"GitHub refused the sign-in ({str(why or r.status_code)[:200]})")
        return str(data["access_token"])

    def _get(self, client: httpx.Client, path: str, **params: Any) -> Any:
        try:
            r = client.get(f"{self.api_url}{path}", params=params or None)
        except httpx.HTTPError as e:
            raise SignInError(f"GitHub's API could not be reached ({type(e).__name__})") from None
        if r.status_code != 200:
            raise SignInError(f"GitHub's API answered {r.status_code} to GET {path.split('?')[0]}")
        try:
            return r.json()
        except ValueError:
            raise SignInError(f"GitHub's API answered GET {path} with something other than JSON") from None

    def user(self, token: str) -> User:
        """Who the token is, and the repositories it reaches through the App's installations
        (GET /user, /user/installations, /user/installations/{id}/repositories), bounded."""
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                   "X-GitHub-Api-Version": API_VERSION}
        with httpx.Client(headers=headers, timeout=self.timeout_s, verify=tls_context()) as c:
            me = self._get(c, "/user")
            login = me.get("login") if isinstance(me, dict) else None
            if not isinstance(login, str):
                raise SignInError("GitHub's API did not say who signed in")
            installations: list[int] = []
            for page in range(1, MAX_INSTALLATIONS // PER_PAGE + 2):
                data = self._get(c, "/user/installations", per_page=PER_PAGE, page=page)
                got = data.get("installations", []) if isinstance(data, dict) else []
                installations += [int(i["id"]) for i in got if isinstance(i, dict) and isinstance(i.get("id"), int)]
                if len(got) < PER_PAGE or len(installations) >= MAX_INSTALLATIONS:
                    break
            repos: dict[str, int] = {}
            for inst in installations[:MAX_INSTALLATIONS]:
                for page in range(1, MAX_PAGES + 1):
                    data = self._get(c, f"/user/installations/{inst}/repositories", per_page=PER_PAGE, page=page)
                    got = data.get("repositories", []) if isinstance(data, dict) else []
                    for repo in got:
                        name = repo.get("full_name") if isinstance(repo, dict) else None
                        if isinstance(name, str) and name.count("/") == 1 and len(name) <= 200:
                            repos.setdefault(name, inst)
                    if len(got) < PER_PAGE:
                        break
        return User(login=login, repos=repos)
