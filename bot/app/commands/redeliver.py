"""`rtcbot redeliver --since TIME [--dry-run] [--restored]`: after any gap (a restore from a
backup, an outage, a firewall mistake), ask GitHub to send again every delivery the store has
not recorded.

GitHub keeps the App's deliveries (its "Recent Deliveries", three days); this lists those made
since TIME through the App webhook deliveries API, as the App (its JWT), and asks for a
redelivery of one attempt of each event (GUID, the X-GitHub-Delivery header) whose GUID is not
in the deliveries table. A delivery the store recorded is never asked for again (and the
webhook would take it as a redelivery anyway). Then one line of counts and one line per GUID
asked for; `--dry-run` lists them without asking. `--restored`: the database was just restored
from a backup, so new job ids skip past a mark (bot/store/restored.py).

TIME: an ISO 8601 time (`2026-11-28T21:00:00Z`; a time without a zone is UTC; a date is its
midnight UTC) or a time ago (`90m`, `6h`, `2d`). A bad TIME or bad settings: one line, exit 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import click

from bot.app.settings import ServiceSettings
from bot.core.settings import SettingsError
from bot.github.hook_deliveries import HookDelivery

AGO = re.compile(r"(\d{1,6})([mhd])")
UNITS = {"m": "minutes", "h": "hours", "d": "days"}


def parse_since(value: str, now: datetime | None = None) -> datetime:
    """TIME as an aware UTC datetime; ValueError (its one line) when it is neither form."""
    now = now or datetime.now(UTC)
    m = AGO.fullmatch(value.strip())
    if m:
        return now - timedelta(**{UNITS[m.group(2)]: int(m.group(1))})
    try:
        at = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"--since {value!r} is no time: give an ISO 8601 time (2026-11-28T21:00:00Z) "
                         "or a time ago (90m, 6h, 2d)") from None
    at = at if at.tzinfo else at.replace(tzinfo=UTC)
    if at > now:
        raise ValueError(f"--since {value!r} is in the future")
    return at


@dataclass(frozen=True)
class Plan:
    """What the listing found: the events (GUIDs) seen since TIME, and one attempt of each the
    store lacks, oldest first (GitHub sends them again in that order)."""

    seen: int
    recorded: int
    missing: list[HookDelivery]


def plan(deliveries: list[HookDelivery], recorded: set[str]) -> Plan:
    """One attempt (the latest) of each event whose GUID is not in `recorded`."""
    latest: dict[str, HookDelivery] = {}
    for d in deliveries:
        if d.guid not in latest or d.id > latest[d.guid].id:
            latest[d.guid] = d
    missing = sorted((d for g, d in latest.items() if g not in recorded), key=lambda d: (d.delivered_at, d.id))
    return Plan(len(latest), len(latest) - len(missing), missing)


def _lines(p: Plan, since: datetime, dry_run: bool) -> list[str]:
    verb = "would ask for" if dry_run else "asked for"
    head = (f"{p.seen} event(s) delivered since {since:%Y-%m-%dT%H:%M:%SZ}: {p.recorded} recorded, "
            f"{verb} {len(p.missing)} redelivery(ies)")
    return [head] + [f"  {d.guid} {d.event}{'.' + d.action if d.action else ''} "
                     f"(first at {d.delivered_at:%Y-%m-%dT%H:%M:%SZ}, GitHub delivery {d.id}, answered {d.status_code})"
                     for d in p.missing]


def _settings() -> ServiceSettings:
    from bot.app.service_checks import service_settings
    from bot.shell.exits import settings_exit

    try:
        return service_settings(app=True)
    except SettingsError as e:
        settings_exit(e)


@click.command("redeliver")
@click.option("--since", "since_text", required=True, metavar="TIME",
              help="From when: an ISO 8601 time (UTC unless it says) or a time ago (90m, 6h, 2d).")
@click.option("--dry-run", is_flag=True, help="List what would be asked for; ask for nothing.")
@click.option("--restored", is_flag=True, help="The database was restored from a backup: new job ids skip "
                                               "past a mark, so none repeats one the lost period used.")
def command(since_text: str, dry_run: bool, restored: bool) -> None:
    """Ask GitHub to redeliver each webhook delivery since TIME that the store has not recorded."""
    from bot.core.logs import say_error

    try:
        since = parse_since(since_text)
    except ValueError as e:
        say_error(str(e))
        raise SystemExit(2) from None
    settings = _settings()
    from bot.github import GitHubError, app_client
    from bot.github.hook_deliveries import deliveries_since, redeliver
    from bot.store.store import Store

    store = Store(settings.database())
    try:
        if restored and not dry_run:
            from bot.store.restored import skip_job_ids

            kept, first = skip_job_ids(store.db, f"restored, then redelivered since {since_text}")
            click.echo(f"job ids: the backup's go up to {kept}; new jobs start at {first}")
        app = app_client(settings)
        try:
            listed = list(deliveries_since(app, since))
            p = plan(listed, store.deliveries.recorded([d.guid for d in listed]))
            for d in [] if dry_run else p.missing:
                redeliver(app, d)
        except GitHubError as e:
            say_error(f"GitHub refused the App's deliveries API: {e}")
            raise SystemExit(1) from None
    finally:
        store.close()
    for line in _lines(p, since, dry_run):
        click.echo(line)
