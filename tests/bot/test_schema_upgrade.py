"""An upgrade across a real schema change with jobs queued (#48 item 10): a database of the
rtcbot before the leases (no `leases` table, no `llm_request_failures`, no schema version) holds
a delivery's jobs, queued and not run; the new rtcbot starts on it, migrates it to SCHEMA_VERSION (said in the log), and
its worker runs the waiting jobs to a completed check run — on SQLite and PostgreSQL+Redis."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import inspect

from bot.store.versions import SCHEMA_VERSION
from tests.bot.app_support import running_app
from tests.bot.conftest import Backend
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import ScriptedLLM, varied

EDITING = "rtcbot / EditingRTC"


@pytest.mark.slow
def test_an_old_schema_with_jobs_queued_is_migrated_and_its_jobs_run(
        tmp_path: Path, backend: Backend, fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM], caplog: pytest.LogCaptureFixture) -> None:
    gh, llm = fake_github(), scripted_llm(varied)
    pr = gh.add_pr(1, fixture="more-itertools-d992be0de9.diff")
    stores = {"database_url": backend.database_url, "redis_url": backend.redis_url}
    with running_app(tmp_path, gh, llm, **stores) as old:
        old.deliver("pull_request", gh.pr_event("opened", 1))  # recorded and queued; no worker runs it
        assert [j.status for j in old.rt.store.jobs.where()] == ["queued"]
        with old.rt.store.engine.begin() as c:  # the schema of the rtcbot before #48
            c.exec_driver_sql("DROP TABLE leases")
            c.exec_driver_sql("DROP TABLE llm_request_failures")
            c.exec_driver_sql("DROP TABLE schema_version")
    caplog.set_level(logging.INFO, logger="bot.store.versions")
    with running_app(tmp_path, gh, llm, **stores) as new:  # the new rtcbot starts on it
        assert new.rt.store.schema_version() == SCHEMA_VERSION == 3
        tables = set(inspect(new.rt.store.engine).get_table_names())
        assert {"leases", "llm_request_failures", "schema_version"} <= tables
        assert f"database: schema 0 → {SCHEMA_VERSION} (" in caplog.text
        assert new.run() == 1  # the waiting `pr` job (it runs the analysis it fans out)
        [run] = gh.runs(EDITING, pr.head_sha)
        assert run["status"] == "completed" and len([u for u in run["updates"] if u.get("conclusion")]) == 1
        assert {j.status for j in new.rt.store.jobs.where()} == {"done"}
        assert new.rt.store.leases.holder(f"{gh.repository_id}:{pr.head_sha}:editing_rtc") is None  # released
