"""Check runs and their findings: one row per (repository, check name, head SHA), claimed
before its check run is created on GitHub, then updated in place; the scores per hunk and per
comment of its last report."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, select

from analyzers.report import Finding
from bot.store.db import Database
from bot.store.schema import Base, CheckRunRow, FindingRow

CHECK_RUNS = Base.metadata.tables[CheckRunRow.__tablename__]
KEY = ["repo", "name", "head_sha"]  # one row each (uq_check_run)
IN_CHUNK = 500  # names in one IN (...) list (SQLite allows 32,766 parameters; PostgreSQL 65,535)

# (check run id, path, start line, end line, scores, title) of one finding
# (check run, path, start line, end line, scores, title, why it is inconclusive: "" when it is not)
ScoredFinding = tuple[int, str | None, int | None, int | None, dict[str, Any], str, str]


class Checks:
    """The check_runs and findings tables."""

    def __init__(self, db: Database) -> None:
        self.db = db
        stmt = db.insert_on_conflict(CHECK_RUNS)
        # INSERT … ON CONFLICT (repo, name, head_sha) DO NOTHING RETURNING id (a row back: claimed)
        self._claim = stmt.on_conflict_do_nothing(index_elements=KEY).returning(CHECK_RUNS.c.id)

    def get(self, repo: str, name: str, head_sha: str) -> CheckRunRow | None:
        with self.db.session() as s:
            return s.scalars(select(CheckRunRow).where(
                CheckRunRow.repo == repo, CheckRunRow.name == name, CheckRunRow.head_sha == head_sha)).first()

    def claim(self, repo: str, name: str, head_sha: str, pr_number: int | None = None) -> bool:
        """Insert the row of (repo, check name, head) without a GitHub id, before creating its
        check run; False when the row is there already (another job has it or is creating it)."""
        with self.db.session() as s:
            return s.execute(self._claim, {"repo": repo, "name": name, "head_sha": head_sha, "status": "queued",
                                           "pr_number": pr_number, "updated_at": time.time()}).first() is not None

    def save(self, repo: str, name: str, head_sha: str, **values: Any) -> CheckRunRow:
        """Insert or update the row of (repo, check name, head) with `values`, in one statement
        (two jobs saving the same new check run at once: the second updates the first's row)."""
        values["updated_at"] = time.time()
        stmt = self.db.insert_on_conflict(CHECK_RUNS)
        upsert = stmt.on_conflict_do_update(index_elements=KEY, set_={k: stmt.excluded[k] for k in values})
        with self.db.session() as s:
            run_id = s.execute(upsert.returning(CHECK_RUNS.c.id),
                               {"repo": repo, "name": name, "head_sha": head_sha, **values}).scalar_one()
            return s.get_one(CheckRunRow, run_id)

    def save_findings(self, check_run_id: int, findings: Sequence[Finding]) -> None:
        with self.db.session() as s:
            s.execute(delete(FindingRow).where(FindingRow.check_run_id == check_run_id))
            for f in findings:
                comment = f.comment_id
                s.add(FindingRow(check_run_id=check_run_id, analyzer=f.analyzer, path=f.path,
                                 start_line=f.start_line, end_line=f.end_line, key=f.key[:200],
                                 comment_id=str(comment) if comment is not None else None,
                                 scores=dict(f.scores), data=json.loads(json.dumps(f.to_dict(), default=str))))

    def findings(self, check_run_id: int) -> list[FindingRow]:
        with self.db.session() as s:
            return list(s.scalars(select(FindingRow).where(FindingRow.check_run_id == check_run_id)
                                  .order_by(FindingRow.id)))

    # -- reads for the dashboard: by GitHub's ids, never by a name -----------------------------
    def repositories_among(self, among: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
        """Those (repository id, installation id) of `among` with at least one check run of that
        repository made under that installation."""
        pairs = sorted(set(among))
        found: set[tuple[int, int]] = set()
        with self.db.session() as s:
            for i in range(0, len(pairs), IN_CHUNK):
                chunk = pairs[i:i + IN_CHUNK]
                rows = s.execute(select(CheckRunRow.repository_id, CheckRunRow.installation_id).distinct()
                                 .where(CheckRunRow.repository_id.in_([r for r, _ in chunk])))
                found.update((r, n) for r, n in rows if r is not None and n is not None and (r, n) in chunk)
        return found

    def completed_since(self, repository_id: int, installation_id: int, since: float) -> list[CheckRunRow]:
        """The repository's completed check runs updated since `since`."""
        with self.db.session() as s:
            return list(s.scalars(select(CheckRunRow).where(
                *_tenant(repository_id, installation_id), CheckRunRow.status == "completed",
                CheckRunRow.updated_at >= since)))

    def scored_findings(self, repository_id: int, installation_id: int, since: float, names: Sequence[str],
                        limit: int) -> list[ScoredFinding]:
        """The newest `limit` findings of the repository's completed check runs named `names`
        updated since `since`, each with its title and the reason it is inconclusive (from its
        stored data; "" when it is conclusive)."""
        q = (select(FindingRow.check_run_id, FindingRow.path, FindingRow.start_line, FindingRow.end_line,
                    FindingRow.scores, FindingRow.data["title"].as_string(),
                    FindingRow.data["inconclusive"].as_string())
             .join(CheckRunRow, CheckRunRow.id == FindingRow.check_run_id)
             .where(*_tenant(repository_id, installation_id), CheckRunRow.status == "completed",
                    CheckRunRow.updated_at >= since, CheckRunRow.name.in_(list(names)))
             .order_by(FindingRow.id.desc()).limit(limit))
        with self.db.session() as s:
            return [(c, p, a, b, dict(sc or {}), t or "", why or "") for c, p, a, b, sc, t, why in s.execute(q)]


def _tenant(repository_id: int, installation_id: int) -> tuple[Any, Any]:
    return CheckRunRow.repository_id == repository_id, CheckRunRow.installation_id == installation_id
