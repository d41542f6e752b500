"""The values a metric's label may take, each from a known set, so no request can add a series
to /metrics (each new label value is a new series in every web worker's files and in
Prometheus): an event is one the App subscribes to (its manifest, bot/app/manifest.json) or
one GitHub sends every App unasked, else "other"; an analyzer is one of the registry's, else
"other". A refused request is counted under REFUSED, never under a value of its headers."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from analyzers.registry import ANALYZERS

OTHER = "other"
REFUSED = "-"  # the event label of a request refused before its signature was trusted, or of none
# sent to every App whatever its manifest subscribes to
ALWAYS_SENT = ("ping", "installation", "installation_repositories", "github_app_authorization")
MANIFEST = Path(__file__).with_name("manifest.json")


@cache
def known_events() -> frozenset[str]:
    events = json.loads(MANIFEST.read_text(encoding="utf-8"))["default_events"]
    return frozenset((*events, *ALWAYS_SENT))


def event_label(event: str) -> str:
    """The event's label: itself when known, REFUSED for none, else OTHER."""
    if not event:
        return REFUSED
    return event if event in known_events() else OTHER


def analyzer_label(name: str | None) -> str:
    return name if name in ANALYZERS else OTHER
