"""The executor's result cache: (program, case, limits) → CaseResult, in memory and optionally
in a SQLite file (0600, its folder 0700), so a rerun of the same case is never run again."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path

from analyzers.execution.verdicts import CaseResult


class ResultCache:
    """(program, case, limits) → CaseResult, in memory and optionally in a SQLite file."""

    def __init__(self, path: Path | None = None):
        self._mem: dict[str, CaseResult] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))  # SQLite's own files follow its mode
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=30)
            self._db.execute("CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.commit()

    def get(self, key: str) -> CaseResult | None:
        with self._lock:
            hit = self._mem.get(key)
            if hit is None and self._db is not None:
                row = self._db.execute("SELECT value FROM runs WHERE key = ?", (key,)).fetchone()
                if row:
                    hit = CaseResult(**json.loads(row[0]))
                    self._mem[key] = hit
        return replace(hit, cached=True, notes=list(hit.notes)) if hit else None

    def put(self, key: str, result: CaseResult) -> None:
        with self._lock:
            self._mem[key] = result
            if self._db is not None:
                self._db.execute("INSERT OR REPLACE INTO runs (key, value) VALUES (?, ?)",
                                 (key, json.dumps(result.to_dict())))
                self._db.commit()
