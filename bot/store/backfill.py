"""GitHub's ids on the rows a database made before rtcbot kept them (bot/store/tenants.py), where
they can be known: a job's from its delivery's stored payload (`repository.id`,
`installation.id`) or its spec (`installation_id`); a check run's and a published row's from
the jobs of the same repository name and head or pull request, when those agree on one
repository. The repositories the payloads name are recorded. Rows whose ids stay unknown are
never served to a person (every read that serves one joins on the ids). Idempotent: it fills
only what is NULL; bot/store/db.py runs it when the migration adds columns."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from bot.ids import positive_int
from bot.store.schema import CheckRunRow, Delivery, JobRow, PublishedRow, RepositoryRow

log = logging.getLogger(__name__)
Ids = tuple[int, int]  # (repository id, installation id)


def _payload_ids(body: str) -> tuple[int, int, str] | None:
    """(repository id, installation id, full name) a stored payload names, or None."""
    try:
        p = json.loads(body)
    except ValueError:
        return None
    repo, inst = (p.get("repository") or {}, p.get("installation") or {}) if isinstance(p, dict) else ({}, {})
    rid, iid, name = positive_int(repo.get("id")), positive_int(inst.get("id")), repo.get("full_name")
    return (rid, iid, name) if rid and iid and isinstance(name, str) else None


def _repositories(c: Connection) -> dict[str, tuple[int, int, str]]:
    """Delivery id → (repository id, installation id, name) of the stored payloads; each
    repository recorded under the name its latest delivery gave it."""
    named: dict[str, tuple[int, int, str]] = {}
    latest: dict[int, tuple[float, int, str]] = {}
    for did, body, at in c.execute(select(Delivery.id, Delivery.payload, Delivery.received_at)
                                   .where(Delivery.payload != "")):
        ids = _payload_ids(body or "")
        if ids is None:
            continue
        named[did] = ids
        if ids[0] not in latest or latest[ids[0]][0] <= at:
            latest[ids[0]] = (at, ids[1], ids[2])
    known = set(c.scalars(select(RepositoryRow.id)))
    for rid, (at, iid, name) in latest.items():
        if rid not in known:
            c.execute(insert(RepositoryRow).values(id=rid, installation_id=iid, full_name=name, named_at=at,
                                                   removed_at=None))
    return named


def _jobs(c: Connection, named: dict[str, tuple[int, int, str]]) -> int:
    n = 0
    for jid, did, repo, spec in list(c.execute(select(JobRow.id, JobRow.delivery_id, JobRow.repo, JobRow.spec)
                                               .where(JobRow.repository_id.is_(None)))):
        ids = named.get(did or "")
        inst = positive_int((spec or {}).get("installation_id")) if isinstance(spec, dict) else None
        values: dict[str, int] = {}
        if ids is not None and ids[2] == repo:
            values = {"repository_id": ids[0], "installation_id": ids[1]}
        elif inst is not None:
            values = {"installation_id": inst}
        if values:
            c.execute(update(JobRow).where(JobRow.id == jid).values(**values))
            n += "repository_id" in values
    return n


def _one(found: Iterable[Any]) -> Ids | None:
    ids = {(int(r), int(i)) for r, i in found if r is not None and i is not None}
    return ids.pop() if len(ids) == 1 else None


def _by_jobs(c: Connection, table: Any, key: str) -> int:
    """Fill `table`'s rows from the jobs of the same repository name and `key` (head_sha or
    pr_number) when they name exactly one repository."""
    n = 0
    col = getattr(table, key)
    for repo, value in list(c.execute(select(table.repo, col).where(table.repository_id.is_(None)).distinct())):
        ids = _one(c.execute(select(JobRow.repository_id, JobRow.installation_id).distinct()
                             .where(JobRow.repo == repo, getattr(JobRow, key) == value)))
        if ids is not None:
            c.execute(update(table).where(table.repo == repo, col == value, table.repository_id.is_(None))
                      .values(repository_id=ids[0], installation_id=ids[1]))
            n += 1
    return n


def backfill(c: Connection) -> dict[str, int]:
    """Fill what can be known, inside the caller's transaction; counts by table."""
    named = _repositories(c)
    done = {"jobs": _jobs(c, named), "check_runs": _by_jobs(c, CheckRunRow, "head_sha"),
            "published": _by_jobs(c, PublishedRow, "pr_number")}
    if any(done.values()):
        log.info("database: GitHub's ids filled in on %s", ", ".join(f"{v} {k}" for k, v in done.items()))
    return done
