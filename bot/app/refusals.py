"""A refused webhook delivery is one log line: its delivery id, its event, the status it was
answered and why (a wrong secret, a missing header, a body too large or not JSON), never the
body. The commonest mistake in setting up an App (RTCBOT_WEBHOOK_SECRET not the secret given
to GitHub) is then seen in the service's log, not only as a metric.

The id and the event come from the request's headers, which anyone who reaches the port
writes: they are shown cut to `MAX_SHOWN` characters, anything but printable ASCII replaced
(bot/core/logs.py `shown`, which every line naming them uses: accepted deliveries' too)."""

from __future__ import annotations

import logging

from bot.core.logs import MAX_SHOWN, delivery_context, shown

log = logging.getLogger("bot.app.web")
__all__ = ["MAX_SHOWN", "log_refusal", "shown"]


def log_refusal(status: int, reason: str, *, event: str, delivery: str) -> None:
    """The one line of a refused delivery (a warning: someone sent something GitHub would not)."""
    with delivery_context(shown(delivery)):
        log.warning("refused delivery %s (event %s): %s %s", shown(delivery), shown(event), status, reason)
