"""Which comments are this App's own: only those count as its markers, threads and reactions
(bot/app/feedback.py `by_a_bot` and bot/github `AppIdentity.wrote`, asked of GitHub once per
process)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.app import feedback
from bot.app.settings import ServiceSettings
from bot.github import app_identity


class OwnComments:
    """`owns(comment)`: whether this App wrote `comment`."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings

    def __call__(self, comment: Mapping[str, Any]) -> bool:
        return feedback.by_a_bot(comment) and app_identity(self.settings).wrote(comment)
