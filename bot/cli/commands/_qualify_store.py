"""`rtcbot qualify --database`: each model's verdict stored in the GitHub App's database (its
`qualifications` table), where the App reads it under `require_qualified: true`; the store is
opened, and the repository named as OWNER/NAME, before any model runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from analyzers.qualify import ModelResult
from bot.cli.commands._qualify_history import repository_name

if TYPE_CHECKING:
    from bot.store.store import Store

OWNER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/(?!\.\.?$)[A-Za-z0-9_.-]{1,100}")  # GitHub's rules


def github_name(url: str) -> str | None:
    """OWNER/NAME of a GitHub remote URL (https, ssh or scp-like), None when it is not one."""
    m = re.search(r"github\.com[:/]+([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$", url)
    return m.group(1) if m else None


def app_database(url: str) -> str:
    """`app`: the App's database URL from its settings (bot/store/settings.py); else `url` itself."""
    if url != "app":
        return url
    from pydantic import ValidationError

    from bot.core.settings_env import error_lines
    from bot.store.settings import StoreSettings

    try:
        return StoreSettings().database()
    except ValidationError as e:
        raise click.ClickException("the App's settings: " + "; ".join(error_lines(e, StoreSettings))) from None


def open_store(url: str) -> Store:
    """The App's store, opened before any model runs (a bad URL fails first, not last)."""
    from bot.store.db import BadDatabaseURL, DatabaseError
    from bot.store.store import Store

    try:
        return Store(url)
    except (BadDatabaseURL, ValueError) as e:  # the URL itself may hold a password: never echoed
        raise click.ClickException(f"--database: not a database URL ({type(e).__name__})") from None
    except (DatabaseError, OSError) as e:
        raise click.ClickException(f"--database: cannot open it: {type(e).__name__}: "
                                   f"{str(e).splitlines()[0]}") from None


def store_results(store: Store, repo: str, results: list[ModelResult], rec: dict[str, Any]) -> None:
    """One row per model in the App's `qualifications` table."""
    from bot.store.db import DatabaseError

    try:
        for r in results:
            figures = {**r.to_dict(), "revisions": rec["revisions"], "date": rec["date"],
                       "thresholds": rec["thresholds"], "seed": rec["seed"]}
            store.qualifications.save(repo, r.model, r.qualified, figures, base_url=r.base_url)
    except DatabaseError as e:
        raise click.ClickException(f"--database: cannot store the record: {str(e).splitlines()[0]}") from None
    finally:
        store.close()


def app_store(database_url: str | None, repo_name: str | None, repo: Path) -> tuple[str, Store] | None:
    """With --database: (the repository's OWNER/NAME, the App's store), checked before any model runs."""
    if database_url is None:
        return None
    owner_name = repo_name or github_name(repository_name(repo))
    if owner_name is None or not OWNER_NAME.fullmatch(owner_name):
        raise click.BadParameter(f"{owner_name or repository_name(repo)!r} is not a GitHub OWNER/NAME "
                                 "(give --repo-name)", param_hint="--repo-name")
    return owner_name, open_store(app_database(database_url))
