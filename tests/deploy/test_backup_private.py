"""docs/deploy.md's backups are private and off the data disk (#48 item 10): every line of the
page that writes a backup (pg_dump, sqlite3's `.backup`) runs under `umask 077` and writes under
/mnt/backup (another disk), never beside the data; and the lines themselves, run here with a
permissive umask around them (022, the usual one) onto a real store, leave a 0600 file."""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest

from bot.store.store import Store
from tests.bot.app_support import drop_schema, postgres_url
from tests.deploy.test_deploy_files import doc_blocks
from tests.support import require

BACKUP_DIR = "/mnt/backup/rtcbot"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432"


def backup_lines() -> list[str]:
    """The shell lines of deploy.md that write a backup: each one's `sh -c` script."""
    out = []
    for lang, body in doc_blocks():
        if lang != "sh":
            continue
        for line in body.splitlines():
            if "pg_dump " in line or ".backup " in line:
                words = shlex.split(line, comments=True)
                assert words[:2] == ["sudo", "-u"] and words[3:5] == ["sh", "-c"], line
                out.append(words[5])
    return out


def test_every_backup_line_is_private_and_off_the_data_disk() -> None:
    scripts = backup_lines()
    assert len(scripts) >= 3, scripts  # the upgrade's dump, the daily dump, the SQLite copy
    for script in scripts:
        assert script.startswith("umask 077;"), script
        written = script.split("--file=")[1].split()[0] if "--file=" in script else script.split(".backup '")[1]
        assert written.startswith(f"{BACKUP_DIR}/") and "/var/lib/" not in written, script


def run_with_umask_022(script: str) -> None:
    subprocess.run(["sh", "-c", script], check=True, timeout=120, preexec_fn=lambda: os.umask(0o022))


def test_the_sqlite_backup_line_leaves_a_private_copy(tmp_path: Path) -> None:
    require(shutil.which("sqlite3") is not None, "the sqlite3 shell is missing (Debian: apt-get install sqlite3)")
    live = tmp_path / "data" / "rtcbot.sqlite3"
    Store(f"sqlite:///{live}").close()
    [script] = [s for s in backup_lines() if ".backup " in s]
    dest = tmp_path / "backup"
    dest.mkdir(mode=0o700)
    run_with_umask_022(script.replace("/var/lib/rtcbot/rtcbot.sqlite3", str(live)).replace(BACKUP_DIR, str(dest)))
    [copy] = dest.iterdir()
    assert copy.stat().st_mode & 0o777 == 0o600
    with sqlite3.connect(copy) as c:
        assert ("schema_version",) in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()


@pytest.mark.services
def test_the_postgresql_dump_line_leaves_a_private_dump(tmp_path: Path) -> None:
    require(shutil.which("pg_dump") is not None, "pg_dump is missing")
    schema = f"backup_{uuid.uuid4().hex[:8]}"
    url = postgres_url(schema)
    require(url is not None, "the local PostgreSQL does not answer")
    assert url is not None
    try:
        Store(url).close()
        script = [s for s in backup_lines() if "pg_dump " in s and "2026-11-27" in s][0]
        dest = tmp_path / "backup"
        dest.mkdir(mode=0o700)
        run_with_umask_022(script.replace(BACKUP_DIR, str(dest))
                           .removesuffix(" rtcbot") + f" --schema={schema} {PG_ADMIN}/test")
    finally:
        drop_schema(schema)
    [dump] = dest.iterdir()
    assert dump.stat().st_mode & 0o777 == 0o600 and dump.read_bytes()[:5] == b"PGDMP"
