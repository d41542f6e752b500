"""Installations and repositories (bot/store/tenants.py) on SQLite and on PostgreSQL: saved by
GitHub's ids, a repository's rows following its id; and an old database gaining the ids."""

from __future__ import annotations

import json
import time

from sqlalchemy import text

from analyzers.report import Finding
from bot.store.schema import Base, PublishedRow
from bot.store.store import Store
from bot.store.tenants import TENANT_ROWS


def test_an_installation_is_saved_and_updated_by_its_id(db_url: str) -> None:
    store = Store(db_url)
    try:
        assert store.installations.get(42) is None
        store.installations.save(42, "octo-org", True)
        store.installations.save(42, "octo-org-renamed", False)
        row = store.installations.get(42)
        assert row is not None and (row.account, row.active) == ("octo-org-renamed", False)
    finally:
        store.close()


def test_a_repositorys_rows_follow_its_id(db_url: str) -> None:
    """Renamed: its rows take the new name; a new id under a name: the old holder's rows move to
    a retired name and it is no longer served; a delivery older than the last naming changes
    nothing; removed: not served, and its rows go when forgotten."""
    store = Store(db_url)
    try:
        repos = store.repositories
        assert repos.seen(1, 77, "o/a", at=10.0)
        store.checks.save("o/a", "rtcbot / EditingRTC", "a" * 40, status="completed", repository_id=1,
                          installation_id=77)
        assert not repos.seen(1, 77, "o/a", at=11.0)  # nothing new
        assert repos.seen(1, 77, "o/b", at=20.0)  # renamed
        assert store.checks.get("o/b", "rtcbot / EditingRTC", "a" * 40) is not None
        assert store.checks.get("o/a", "rtcbot / EditingRTC", "a" * 40) is None
        assert not repos.seen(1, 77, "o/a", at=15.0)  # a job asked for before the rename
        assert (repos.live("o/b", 77), repos.live("o/a", 77)) == (1, None)
        assert repos.seen(2, 88, "o/b", at=30.0)  # another installation's repository takes the name
        assert (repos.live("o/b"), repos.live("o/b", 77), repos.live("o/b", 88)) == (2, None, 2)
        assert store.checks.get("o/b", "rtcbot / EditingRTC", "a" * 40) is None  # its writes never meet them
        assert store.checks.get("o/b#1", "rtcbot / EditingRTC", "a" * 40) is not None
        assert store.checks.claim("o/b", "rtcbot / EditingRTC", "a" * 40)  # the same head: a row of its own
        repos.removed(2, 88, "o/b", at=40.0)
        assert repos.live("o/b") is None and repos.served() == []
        assert not repos.seen(2, 88, "o/b", at=35.0)  # a job queued before the removal never brings it back
        # removed at 40.0 (1970), and 1, whose name another took at 30.0 and no delivery named again
        assert repos.forget_expired(3600.0) == 2
        assert repos.get(2) is None and repos.get(1) is None
        assert store.checks.get("o/b#1", "rtcbot / EditingRTC", "a" * 40) is None
    finally:
        store.close()


def test_a_removed_repository_is_forgotten_after_the_retention(db_url: str) -> None:
    store = Store(db_url)
    try:
        now = time.time()
        store.repositories.seen(3, 77, "o/c", at=now - 100)
        run = store.checks.save("o/c", "rtcbot / EditingRTC", "c" * 40, status="completed", repository_id=3,
                                installation_id=77)
        store.checks.save_findings(run.id, [Finding("editing_rtc", "hunk", path="a.py", start_line=1, end_line=1)])
        store.published.add("o/c", 1, [{"installation_id": 77, "repository_id": 3, "head_sha": "c" * 40,
                                         "analyzer": "autofix", "kind": "suggestion", "key": "k", "path": "a.py",
                                         "start_line": 1, "end_line": 1}])
        store.repositories.removed(3, 77, "o/c", at=now - 50)
        assert store.repositories.forget_expired(60.0) == 0  # removed 50 s ago: kept
        assert store.checks.findings(run.id)
        assert store.repositories.forget_expired(40.0) == 1
        assert store.checks.findings(run.id) == [] and store.checks.get("o/c", "rtcbot / EditingRTC", "c" * 40) is None
        assert store.published.rows("o/c") == [] and store.repositories.get(3) is None
    finally:
        store.close()


def old_database(url: str) -> None:
    """A database as rtcbot made it before it kept GitHub's ids: no id columns, no repositories."""
    store = Store(url)
    try:
        with store.engine.begin() as c:
            c.execute(text("DROP TABLE repositories"))
            for table in TENANT_ROWS:
                name = table.__tablename__
                for index in Base.metadata.tables[name].indexes:
                    if any(col.name in ("repository_id", "installation_id") for col in index.columns):
                        c.execute(text(f"DROP INDEX {index.name}"))
                for column in ("repository_id", "installation_id"):
                    older = table is PublishedRow and column == "installation_id"  # it had this one
                    if column in Base.metadata.tables[name].c and not older:
                        c.execute(text(f"ALTER TABLE {name} DROP COLUMN {column}"))
    finally:
        store.close()


def test_an_old_database_gains_the_ids_where_the_rows_tell_them(db_url: str) -> None:
    old_database(db_url)
    payload = json.dumps({"action": "opened", "repository": {"id": 526, "full_name": "o/r"},
                          "installation": {"id": 77}})
    with Store(db_url, create=False).engine.begin() as c:
        c.execute(text("INSERT INTO deliveries (id, event, action, received_at, status, jobs, payload) "
                       "VALUES ('d1', 'pull_request', 'opened', 1.0, 'routed', 1, :p), "
                       "('d2', 'pull_request', 'opened', 1.0, 'routed', 1, '')"), {"p": payload})
        jobs = ("INSERT INTO jobs (delivery_id, kind, repo, pr_number, head_sha, spec, status, attempts, created_at, "
                "updated_at, llm_requests, llm_tokens) VALUES (:d, 'pr', :r, :n, :h, :s, 'done', 1, 1.0, 1.0, 0, 0)")
        c.execute(text(jobs), {"d": "d1", "r": "o/r", "n": 1, "h": "a" * 40, "s": '{"installation_id": 77}'})
        c.execute(text(jobs), {"d": "d2", "r": "o/gone", "n": 2, "h": "b" * 40, "s": '{"installation_id": 77}'})
        runs = ("INSERT INTO check_runs (repo, name, head_sha, pr_number, status, scores, annotations, updated_at) "
                "VALUES (:r, 'rtcbot / EditingRTC', :h, :n, 'completed', '{}', 0, 1.0)")
        c.execute(text(runs), {"r": "o/r", "h": "a" * 40, "n": 1})
        c.execute(text(runs), {"r": "o/gone", "h": "b" * 40, "n": 2})
    store = Store(db_url)  # the migration adds the columns and fills what the rows tell
    try:
        assert store.repositories.live("o/r", 77) == 526
        [known] = store.jobs.where(repo="o/r")
        [unknown] = store.jobs.where(repo="o/gone")  # its payload pruned: the repository is not known
        assert (known.repository_id, known.installation_id) == (526, 77)
        assert (unknown.repository_id, unknown.installation_id) == (None, 77)
        assert [r.repo for r in store.checks.completed_since(526, 77, 0)] == ["o/r"]
        assert store.checks.repositories_among([(526, 77)]) == {(526, 77)}
        assert store.checks.get("o/gone", "rtcbot / EditingRTC", "b" * 40).repository_id is None  # type: ignore[union-attr]
    finally:
        store.close()
