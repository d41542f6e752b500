"""The items of a GitHub list endpoint, 100 a page, following its `Link: rel="next"` headers up
to a limit, and never off the API's own origin (the caller's token would go with the request)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from bot.github.errors import GitHubError
from bot.github.transport import Transport

PER_PAGE = 100


def pages(transport: Transport, url: str, limit: int, **query: Any) -> Iterator[dict[str, Any]]:
    """The items of the list at `url` (with `query`), at most `limit`, asked of GitHub page by page."""
    origin = urlsplit(transport.api_url)[:2]
    params: dict[str, Any] | None = {**query, "per_page": PER_PAGE}
    next_url: str | None = url
    seen = 0
    while next_url:
        r = transport.request("GET", next_url, params=params)
        data = r.json()
        if not isinstance(data, list):
            raise GitHubError(
                r.status_code, f"expected a list from {url}", method="GET", path=url
            )
        for item in data:
            yield item
            seen += 1
            if seen >= limit:
                return
        next_url = r.links.get("next", {}).get("url") if data else None
        if next_url and urlsplit(next_url)[:2] != origin:
            raise GitHubError(
                r.status_code,
                f"the next page of {url} is off the API ({next_url})",
                method="GET",
                path=url,
            )
        params = None  # the next link carries them
