"""Figures the shipped alerts read (deploy/prometheus/alerts.yml), counted at scrape time from
the tables (the workers are other processes): analyses that failed, by analyzer (their check
runs were completed as neutral, saying why: bot/core/checks.py), and each installation's LLM use
today, to compare with its daily budget."""

from __future__ import annotations

from sqlalchemy import func, select

from bot.store.db import Database
from bot.store.schema import JobRow, LLMUsageRow, utc_day


def failed_analyses(db: Database) -> list[tuple[str, int]]:
    """(analyzer, failed analysis jobs) for every analyzer with one."""
    with db.reading() as c:
        rows = c.execute(select(JobRow.analyzer, func.count()).where(
            JobRow.status == "failed", JobRow.analyzer.is_not(None)).group_by(JobRow.analyzer)).all()
    return [(str(r[0]), int(r[1])) for r in rows]


def usage_today(db: Database) -> list[tuple[int, int, int]]:
    """(installation id, LLM requests, LLM tokens) of each installation that used any today (UTC)."""
    with db.reading() as c:
        rows = c.execute(select(LLMUsageRow.installation_id, LLMUsageRow.requests, LLMUsageRow.tokens)
                         .where(LLMUsageRow.day == utc_day())).all()
    return [(int(r[0]), int(r[1]), int(r[2])) for r in rows]
