"""GitHub's ids and numbers as a payload gives them: a webhook's (bot/app) or one the store kept
(bot/store/backfill.py). Both layers use it, so it sits in neither (pyproject.toml's import
contracts keep the store below the App)."""

from __future__ import annotations

from typing import Any


def positive_int(value: Any) -> int | None:
    """A payload's id or number: a positive int (never a bool), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
