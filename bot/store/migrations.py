"""The store's one migration rule: a column added to a table later is nullable, and a database
made before it gains it (`ALTER TABLE … ADD COLUMN`, NULL in the rows already there), so that
old rows stay readable. `create_all` makes missing tables; this adds missing columns, and the
indexes a table gained with them. A new column that is not nullable has no value to give old
rows: that is refused, never guessed.
"""

from __future__ import annotations

import logging

from sqlalchemy import MetaData, inspect
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.schema import CreateColumn

log = logging.getLogger(__name__)


def add_missing_columns(engine: Engine, metadata: MetaData) -> list[str]:
    """Add the nullable columns of `metadata`'s tables that the database's tables lack; the
    `table.column` names added. Raises RuntimeError for a missing column that is not nullable."""
    insp = inspect(engine)
    present = set(insp.get_table_names())
    added: list[str] = []
    for table in metadata.sorted_tables:
        if table.name not in present:
            continue
        have = {c["name"] for c in insp.get_columns(table.name)}
        missing = [c for c in table.columns if c.name not in have]
        if not missing:
            continue
        for column in missing:
            if not column.nullable:
                raise RuntimeError(f"the database's table {table.name} lacks the column {column.name}, "
                                   "which is not nullable: migrate it by hand")
            ddl = CreateColumn(column).compile(dialect=engine.dialect)
            name = engine.dialect.identifier_preparer.format_table(table)
            try:
                with engine.begin() as conn:
                    conn.exec_driver_sql(f"ALTER TABLE {name} ADD COLUMN {ddl}")
            except DBAPIError:  # another process starting at the same time added it first
                if column.name not in {c["name"] for c in inspect(engine).get_columns(table.name)}:
                    raise
                continue
            added.append(f"{table.name}.{column.name}")
    if added:
        log.info("database: added the column(s) %s", ", ".join(added))
        add_missing_indexes(engine, metadata)
    return added


def add_missing_indexes(engine: Engine, metadata: MetaData) -> None:
    """Create the named indexes of `metadata`'s existing tables that the database lacks."""
    insp = inspect(engine)
    present = set(insp.get_table_names())
    for table in metadata.sorted_tables:
        if table.name not in present:
            continue
        have = {i["name"] for i in insp.get_indexes(table.name)}
        for index in table.indexes:
            if index.name not in have:
                try:
                    index.create(engine, checkfirst=True)
                except DBAPIError:  # another process starting at the same time made it first
                    continue
