"""`rtcbot stats [--repo R] [--json]`: what people did with rtcbot's suggestions.

Reads the App's store (DATABASE_URL, else the SQLite file under RTCBOT_DATA_DIR) and prints
acceptance rates — a suggestion counts as accepted when a later push applied it — by analyzer,
by Patched RTC outcome and by CRScore band, each with its count and 95% Wilson interval, then
the other signals (threads resolved, reactions, merged pull requests). See bot/core/feedback.py.
`--repo` is the repository the App serves under that name now (by GitHub's id: a renamed one's
suggestions under its new name, a removed one's nowhere); rows whose ids are not known are
never counted.
Then the findings and rules each repository's team dismissed (`dismissals` in the JSON), and the
LLM spend per repository and day over the last 30 days (`llm_spend`): requests, prompt and
completion tokens, and the prompt tokens the endpoint's cache served (docs/cost.md).
The first line names the store it read (its URL, userinfo and query values hidden; `store` in the JSON).
"""

from __future__ import annotations

import json
import time
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from bot.app.settings import load_settings
from bot.core import feedback
from bot.core.dismissals import Dismissal
from bot.core.settings import SettingsError
from bot.store.db import safe_url
from bot.store.store import Store


def _pct(rate: float | None) -> str:
    return "—" if rate is None else f"{100 * rate:.0f}%"


def _interval(iv: list[float] | None) -> str:
    return "—" if not iv else f"{100 * iv[0]:.0f}–{100 * iv[1]:.0f}%"


def render(stats: dict[str, Any], repo: str | None) -> Table | str:
    where = repo or "every repository"
    if not stats["published"]:
        return f"No suggestions published yet in {where}."
    t = Table(title=f"What people did with rtcbot's suggestions in {where}", title_justify="left")
    for col, justify in (("group", "left"), ("suggestions", "right"), ("applied", "right"),
                         ("rate", "right"), ("95% interval", "right")):
        t.add_column(col, justify=justify)  # type: ignore[arg-type]

    def row(label: str, r: dict[str, Any]) -> None:
        t.add_row(label, f"{r['n']:,}", f"{r['accepted']:,}", _pct(r["rate"]), _interval(r["interval"]))

    row("all", stats["overall"])
    for name, r in stats["by_analyzer"].items():
        row(f"analyzer {name}", r)
    for name, r in stats["by_rtc"].items():
        row(f"Patched RTC {name}", r)
    for name, r in stats["by_band"].items():
        row(f"CRScore {name}", r)
    t.caption = (f"{stats['resolved']:,} review threads resolved · 👍 {stats['thumbs_up']:,} · "
                 f"👎 {stats['thumbs_down']:,} · {stats['merged_prs']:,} pull requests merged")
    return t


SPEND_DAYS = 30


def spend_table(spend: list[dict[str, Any]], repo: str | None) -> Table | str:
    """The LLM spend per repository and day (`Jobs.spend_by_day`), with its totals."""
    where = repo or "any repository"
    if not spend:
        return f"No LLM spend in {where} in the last {SPEND_DAYS} days."
    t = Table(title=f"LLM spend in {where}, per day (UTC), last {SPEND_DAYS} days", title_justify="left")
    cols = ("requests", "prompt_tokens", "completion_tokens", "cached_prompt_tokens")
    for col in ("day", "repository", "requests", "prompt tokens", "completion tokens", "cached prompt tokens"):
        t.add_column(col, justify="left" if col in ("day", "repository") else "right")
    for r in spend:
        t.add_row(r["day"], r["repo"], *(f"{r[c]:,}" for c in cols))
    t.add_row("total", "", *(f"{sum(r[c] for r in spend):,}" for c in cols))
    return t


def dismissals_text(dismissed: list[tuple[str, Dismissal]], repo: str | None) -> str:
    """The findings and rules the teams dismissed (`@rtcbot ignore`), one line each."""
    if not dismissed:
        return f"No dismissals in {repo or 'any repository'}."
    lines = [f"Dismissed ({len(dismissed):,}):"]
    lines += [f"  {r}: {d.kind} {d.target} — {d.line()}" for r, d in dismissed]
    return "\n".join(lines)


@click.command("stats")
@click.option("--repo", default=None, metavar="OWNER/NAME", help="Only this repository.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of the table.")
def command(repo: str | None, as_json: bool) -> None:
    """Acceptance of rtcbot's suggestions, from the App's store (bot/core/feedback.py)."""
    try:
        settings = load_settings()
    except SettingsError as e:
        raise click.ClickException(str(e)) from None
    try:
        store = Store(settings.database())
    except Exception as e:
        raise click.ClickException(f"cannot open the store: {type(e).__name__}: {e}") from None
    try:
        stats = feedback.acceptance(store.published.served(repo))
        dismissed = store.dismissals.rows(repo)
        spend = store.job_queries.spend_by_day(repo, since=time.time() - SPEND_DAYS * 86400)
    finally:
        store.close()
    stats["repo"] = repo
    stats["dismissals"] = [{"repo": r, "target": d.target, "kind": d.kind, "paths": d.path_glob, "by": d.by,
                            "at": d.at, "reason": d.reason} for r, d in dismissed]
    stats["llm_spend"] = spend
    stats["store"] = safe_url(settings.database())
    if as_json:
        click.echo(json.dumps(stats, sort_keys=True))
        return
    default = "" if settings.database_url else " (the default: no DATABASE_URL is set)"
    click.echo(f"Store: {stats['store']}{default}")
    Console().print(render(stats, repo))
    click.echo(dismissals_text(dismissed, repo))
    Console().print(spend_table(spend, repo))
