"""docs/deploy.md's backup and restore, done as the page says: a store with ten weeks of analysed
pull requests (tests/bot/dashboard/support.py seed) is backed up (PostgreSQL: `pg_dump
--format=custom`; SQLite: the sqlite3 shell's `.backup`), restored into a fresh database
(`pg_restore --no-owner` into a database just made; the copy put in a fresh RTCBOT_DATA_DIR),
and the App started on the restored one serves the dashboard's page of the repository with the
same charts and pull requests as before."""

from __future__ import annotations

import re
import shutil
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.app.runtime import Runtime
from bot.app.web import create_app
from tests.bot.app_support import drop_schema, postgres_url
from tests.bot.dashboard.support import dashboard_settings, seed, sign_in
from tests.fakes.github_server import FakeGitHub
from tests.support import require

REPO = "octo-org/widgets"
CHARTS = r'<svg role="img" aria-label="[^"]+"'
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432"
pytestmark = pytest.mark.slow


def dashboard_page(tmp_path: Path, gh: FakeGitHub, **settings: Any) -> tuple[int, set[str]]:
    """The repository's dashboard page from an App on these settings: (its charts, the pull
    requests it links)."""
    app = create_app(dashboard_settings(tmp_path, gh, **settings))
    try:
        c = app.test_client()
        sign_in(c, gh)
        page = c.get(f"/dashboard/{REPO}")
        assert page.status_code == 200, page.text[:500]
        return len(re.findall(CHARTS, page.text)), set(re.findall(rf"/{REPO}/pull/\d+", page.text))
    finally:
        rt: Runtime = app.extensions["rtcbot"]
        rt.store.close()


def seeded(tmp_path: Path, gh: FakeGitHub, **settings: Any) -> tuple[int, set[str]]:
    app = create_app(dashboard_settings(tmp_path, gh, **settings))
    rt: Runtime = app.extensions["rtcbot"]
    seed(rt.store, REPO, prs=12, installation=gh.installation_id)
    rt.store.close()
    return dashboard_page(tmp_path, gh, **settings)


def psql(database: str, sql: str) -> None:
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", f"{PG_ADMIN}/{database}", "-c", sql],
                   check=True, timeout=60, capture_output=True)


@pytest.mark.services
def test_a_postgresql_dump_restored_into_a_fresh_database_serves_the_dashboard(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    require(all(shutil.which(t) for t in ("pg_dump", "pg_restore", "psql")), "pg_dump, pg_restore or psql is missing")
    gh = fake_github()
    schema, fresh = f"restore_{uuid.uuid4().hex[:8]}", f"rtcbot_restored_{uuid.uuid4().hex[:8]}"
    source = postgres_url(schema)
    require(source is not None, "the local PostgreSQL does not answer")
    assert source is not None
    try:
        before = seeded(tmp_path / "before", gh, database_url=source)
        dump = tmp_path / "rtcbot.dump"
        subprocess.run(["pg_dump", "--format=custom", f"--schema={schema}", f"--file={dump}", f"{PG_ADMIN}/test"],
                       check=True, timeout=120)
        psql("postgres", f'CREATE DATABASE "{fresh}"')
        subprocess.run(["pg_restore", "--no-owner", "--exit-on-error", f"--dbname={PG_ADMIN}/{fresh}", str(dump)],
                       check=True, timeout=120)
        restored = source.replace("/test?", f"/{fresh}?")
        after = dashboard_page(tmp_path / "after", gh, database_url=restored)
    finally:
        drop_schema(schema)
        psql("postgres", f'DROP DATABASE IF EXISTS "{fresh}" WITH (FORCE)')
    assert before[0] == 5 and len(before[1]) >= 10
    assert after == before


def test_a_sqlite_backup_copied_into_a_fresh_data_dir_serves_the_dashboard(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    require(shutil.which("sqlite3") is not None, "the sqlite3 shell is missing (Debian: apt-get install sqlite3)")
    gh = fake_github()
    before = seeded(tmp_path / "before", gh)
    live = tmp_path / "before" / "data" / "rtcbot.sqlite3"
    backup = tmp_path / "rtcbot-backup.sqlite3"
    subprocess.run(["sqlite3", str(live), f".backup '{backup}'"], check=True, timeout=60)
    fresh = tmp_path / "after" / "data"
    fresh.mkdir(parents=True, mode=0o700)
    shutil.copy2(backup, fresh / "rtcbot.sqlite3")
    (fresh / "rtcbot.sqlite3").chmod(0o600)
    after = dashboard_page(tmp_path / "after", gh)
    assert before[0] == 5 and len(before[1]) >= 10
    assert after == before
