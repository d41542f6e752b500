"""The LLM cache: so a push that leaves a hunk unchanged sends no new LLM request for it.

Answers are written behind: `put` buffers them, a writer thread stores the buffer in one
transaction every CACHE_FLUSH_S, and `flush()` stores what is left (a job calls it before it
finishes, so a finished job's answers are in the store). A worker killed midway loses at most
the last CACHE_FLUSH_S of answers; they are asked again. Writing each answer in a transaction of
its own as it arrived held up the requests that came after it: 8 hunks' forward answers
arriving together were 24 writes in a row before the last hunk's backward requests could go out.
"""

from __future__ import annotations

import logging
import threading
import time

from sqlalchemy import func, select

from bot.store.db import Database
from bot.store.schema import Base, CacheRow

CACHE_FLUSH_S = 0.2  # LLM answers are written behind, at most this long after they arrive

log = logging.getLogger(__name__)


class LLMCache:
    """The llm_cache table, written behind."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._lock = threading.Lock()
        self._pending: dict[str, str] = {}  # answers not yet written
        self._writing: dict[str, str] = {}  # answers being written now
        self._writer: threading.Thread | None = None
        stmt = db.upsert(Base.metadata.tables[CacheRow.__tablename__])
        # INSERT … ON CONFLICT (key) DO UPDATE
        self._upsert = (None if stmt is None else
                        stmt.on_conflict_do_update(index_elements=["key"], set_={"value": stmt.excluded.value}))

    def get(self, key: str) -> str | None:
        with self._lock:
            value = self._pending.get(key, self._writing.get(key))
        if value is not None:
            return value
        with self.db.reading() as c:
            found = c.execute(select(CacheRow.value).where(CacheRow.key == key)).scalar()
        return None if found is None else str(found)

    def put(self, key: str, value: str) -> None:
        with self._lock:
            self._pending[key] = value
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_behind, name="llm-cache-writer", daemon=True)
                self._writer.start()

    def flush(self) -> None:
        """Write the buffered answers now, in one transaction."""
        with self._lock:
            items = self._pending
            self._pending = {}
            self._writing.update(items)
        if not items:
            return
        try:
            rows = [{"key": k, "value": v} for k, v in items.items()]
            with self.db.session() as s:
                if self._upsert is not None:
                    s.execute(self._upsert, rows)
                else:
                    for row in rows:
                        s.merge(CacheRow(**row))
        except Exception:
            with self._lock:  # kept for the next flush
                for k, v in items.items():
                    self._pending.setdefault(k, v)
            raise
        finally:
            with self._lock:
                for k in items:
                    self._writing.pop(k, None)

    def _write_behind(self) -> None:
        while True:
            time.sleep(CACHE_FLUSH_S)
            try:
                self.flush()
            except Exception:
                log.warning("could not write LLM answers to the cache; will try again", exc_info=True)
            with self._lock:
                if not self._pending:
                    self._writer = None
                    return

    def size(self) -> int:
        with self.db.session() as s:
            return int(s.scalar(select(func.count()).select_from(CacheRow)) or 0)


class StoreCache:
    """The LLM client's Cache protocol (get / put) on the store's LLM cache, within one
    namespace (the installation): one tenant's answers are never served to another, so none
    can learn from its cache hits (or timings) what another's private pull requests hold."""

    def __init__(self, cache: LLMCache, namespace: int | str) -> None:
        self.cache = cache
        self.prefix = f"i{namespace}:"

    def get(self, key: str) -> str | None:
        return self.cache.get(self.prefix + key)

    def put(self, key: str, value: str) -> None:
        self.cache.put(self.prefix + key, value)
