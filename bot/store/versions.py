"""The schema's version: a number in the `schema_version` table, the last of the store's
migration steps applied, said in the first log line of `serve` and `worker` and in /healthz.

At start (bot/store/db.py) the store makes the tables it lacks (`create_all`) and the nullable
columns it lacks (bot/store/migrations.py), then applies each step of STEPS newer than the
database's version, in order, and records the last. A step is idempotent (two processes starting
at once may both apply it); a database made before versions (no row) starts from 0. A database
newer than this rtcbot (a rollback) is left as it is: an older rtcbot reads a newer schema (it
names the columns it reads), and says so.

A new step: a function of the engine, appended with the next version and what it changes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, IntegrityError

from bot.store.schema import Base, LeaseRow, LLMFailureRow, SchemaVersionRow

log = logging.getLogger(__name__)
VERSIONS = Base.metadata.tables[SchemaVersionRow.__tablename__]


def _tables_before_versions(engine: Engine) -> None:
    """Version 1: the tables and columns of every rtcbot before versions (made by create_all and
    add_missing_columns, which ran first): nothing more to do."""


def _table(name: str, engine: Engine) -> None:
    """Make table `name` unless it is there."""
    try:
        Base.metadata.tables[name].create(engine, checkfirst=True)
    except DBAPIError:  # another process starting at the same time made it first
        pass


def _leases(engine: Engine) -> None:
    """Version 2: the `leases` table (one run per repository, head and analyzer: #48)."""
    _table(LeaseRow.__tablename__, engine)


def _llm_failures(engine: Engine) -> None:
    """Version 3: the `llm_request_failures` table (the failed LLM requests by reason: #48)."""
    _table(LLMFailureRow.__tablename__, engine)


@dataclass(frozen=True)
class Step:
    version: int
    what: str
    apply: Callable[[Engine], None]


STEPS = (
    Step(1, "the tables before versions", _tables_before_versions),
    Step(2, "the leases table", _leases),
    Step(3, "the llm_request_failures table", _llm_failures),
)
SCHEMA_VERSION = STEPS[-1].version


def read_version(engine: Engine) -> int | None:
    """The database's schema version; None when it has none (new, or made before versions)."""
    with engine.connect() as c:
        return c.scalar(select(SchemaVersionRow.version).where(SchemaVersionRow.id == 1))


def migrate(engine: Engine, *, new: bool = False) -> int:
    """Apply the steps newer than the database's version and record the last; the version now.
    `new`: the database had no tables (create_all made them all at this version): said by
    nothing but the version it has."""
    had = read_version(engine)
    if had is not None and had > SCHEMA_VERSION:
        log.warning("database: schema %s is newer than this rtcbot's (%s): it reads the columns it knows",
                    had, SCHEMA_VERSION)
        return had
    todo = [s for s in STEPS if s.version > (had or 0)]
    for step in todo:
        step.apply(engine)
    if todo:
        _record(engine, SCHEMA_VERSION)
        if not new:
            log.info("database: schema %s → %s (%s)", had or 0, SCHEMA_VERSION,
                     "; ".join(s.what for s in todo))
    return SCHEMA_VERSION


def _record(engine: Engine, version: int) -> None:
    """Set the version row to `version` unless it says a newer one (made when missing)."""
    now = time.time()
    try:
        with engine.begin() as c:
            if c.execute(update(SchemaVersionRow).where(SchemaVersionRow.id == 1, SchemaVersionRow.version < version)
                         .values(version=version, migrated_at=now)).rowcount == 0 \
                    and c.scalar(select(SchemaVersionRow.version).where(SchemaVersionRow.id == 1)) is None:
                c.execute(insert(VERSIONS), {"id": 1, "version": version, "migrated_at": now})
    except IntegrityError:  # another process starting at the same time wrote it first
        pass
