"""The App's webhook deliveries as GitHub keeps them (its "Recent Deliveries"), through the App
webhook deliveries API, as the App (its JWT): the list, newest first, page by page through
GitHub's cursor links; and a redelivery of one of them (GitHub answers 202 and sends it again,
with the same GUID in X-GitHub-Delivery)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from bot.github.pages import pages
from bot.github.transport import Transport

MAX_LISTED = 100_000  # deliveries read at most (GitHub keeps them 3 days)


@dataclass(frozen=True)
class HookDelivery:
    """One attempt GitHub made: its own id (what a redelivery names), the event's GUID (the
    X-GitHub-Delivery header, the same for every attempt of one event), when, and GitHub's
    outcome (the status code the App answered; 0 when it was never reached)."""

    id: int
    guid: str
    delivered_at: datetime
    event: str
    action: str | None
    status_code: int
    redelivery: bool


def deliveries_since(app: Transport, since: datetime) -> Iterator[HookDelivery]:
    """The App's deliveries made at or after `since`, newest first (read until an older one)."""
    for item in pages(app, "/app/hook/deliveries", MAX_LISTED):
        at = datetime.fromisoformat(str(item["delivered_at"]).replace("Z", "+00:00"))
        if at < since:
            return
        yield HookDelivery(int(item["id"]), str(item["guid"]), at, str(item.get("event") or ""),
                           item.get("action"), int(item.get("status_code") or 0), bool(item.get("redelivery")))


def redeliver(app: Transport, delivery: HookDelivery) -> None:
    """Ask GitHub to send `delivery` again (GitHubError when it refuses)."""
    app.request("POST", f"/app/hook/deliveries/{delivery.id}/attempts")
