"""`rtcbot stats` totals the LLM spend per repository served and day (#53): requests, prompt,
completion and cached prompt tokens, from the jobs' records; in the JSON and the table."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.app.settings import load_settings
from bot.entry import main
from bot.store.store import Store


def test_stats_totals_the_llm_spend_per_repository_and_day(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"RTCBOT_DATA_DIR": str(tmp_path), "DATABASE_URL": ""}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    store = Store(load_settings().database())
    try:
        now = time.time()
        store.repositories.seen(11, 5, "o/a", now)
        for head in ("a", "b"):
            job = store.jobs.add({"kind": "analyze", "repo": "o/a", "head_sha": head * 40, "analyzer": "editing_rtc",
                                  "pr_number": 1, "repository_id": 11, "installation_id": 5})
            assert job is not None and store.jobs.start(job) is not None
            store.jobs.finish(job, "done", usage={"requests": 5, "tokens": 1200, "prompt_tokens": 1000,
                                                  "completion_tokens": 200, "cached_prompt_tokens": 700})
    finally:
        store.close()
    r = CliRunner().invoke(main, ["stats", "--json"], env=env)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["llm_spend"] == [
        {"repo": "o/a", "day": time.strftime("%Y-%m-%d", time.gmtime(now)), "requests": 10, "prompt_tokens": 2000,
         "completion_tokens": 400, "cached_prompt_tokens": 1400, "tokens": 2400}]
    table = CliRunner().invoke(main, ["stats"], env=env)
    assert table.exit_code == 0, table.output
    assert "LLM spend in any repository" in table.output and "2,000" in table.output and "1,400" in table.output
    other = CliRunner().invoke(main, ["stats", "--repo", "o/zzz"], env=env)
    assert "No LLM spend in o/zzz" in other.output
