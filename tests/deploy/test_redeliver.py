"""docs/deploy.md's restore with a gap, end to end: the App records a pull request, the store
is backed up, a push arrives after the backup, the database is lost and the backup restored;
`rtcbot redeliver --since TIME --restored` lists the App's deliveries through GitHub's App
webhook deliveries API (the fake GitHub's, held to GitHub's OpenAPI description), asks for
exactly the one the restored store lacks, GitHub sends it again and it is analysed; the job it
makes takes an id the lost period cannot have used."""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.app.commands.redeliver import parse_since, plan
from bot.entry import main
from bot.github.hook_deliveries import HookDelivery
from bot.store.restored import ERA, next_era
from tests.bot.app_support import SECRET, running_app
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import ScriptedLLM, varied

FIXTURE = "more-itertools-069b30002a.diff"
SECOND = "more-itertools-5c715d813a.diff"
pytestmark = pytest.mark.slow


def redeliver(monkeypatch: pytest.MonkeyPatch, gh: FakeGitHub, data_dir: Path, *args: str) -> tuple[int, str]:
    for name, value in {"RTCBOT_APP_ID": str(gh.app_id), "RTCBOT_PRIVATE_KEY": gh.private_key_pem,
                        "RTCBOT_GITHUB_API_URL": gh.base_url, "RTCBOT_DATA_DIR": str(data_dir),
                        "RTCBOT_HTTP_RETRIES": "1"}.items():
        monkeypatch.setenv(name, value)
    for name in ("DATABASE_URL", "REDIS_URL", "RTCBOT_PRIVATE_KEY_PATH"):
        monkeypatch.delenv(name, raising=False)
    r = CliRunner().invoke(main, ["redeliver", *args])
    return r.exit_code, r.output


def test_a_restore_with_a_gap_redelivers_exactly_the_missing_push_and_it_is_analysed(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],
        monkeypatch: pytest.MonkeyPatch) -> None:
    gh, llm = fake_github(), scripted_llm(varied)
    gh.add_pr(1, fixture=FIXTURE)
    gh.hook_secret = SECRET
    with running_app(tmp_path / "live", gh, llm) as app:
        gh.hook_url = app.url + "/webhook"
        assert gh.send_hook("pull_request", gh.pr_event("opened", 1)) == 202
        app.run()
        backup = tmp_path / "backup.sqlite3"
        with sqlite3.connect(tmp_path / "live" / "data" / "rtcbot.sqlite3") as live, sqlite3.connect(backup) as b:
            live.backup(b)  # the sqlite3 shell's `.backup`
        # GitHub's delivered_at counts whole seconds: `since` is the next whole second, after the
        # first delivery's (the floor of now shared it when the work above took under a second)
        since = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
        time.sleep(max(0.0, (since - datetime.now(UTC)).total_seconds()) + 0.1)
        head = gh.push(1, diff_text=(Path(__file__).parents[1] / "fixtures" / "prs" / SECOND).read_text()).head_sha
        assert gh.send_hook("pull_request", gh.pr_event("synchronize", 1)) == 202
        app.run()
        lost_ids = [j.id for j in app.rt.store.jobs.where(delivery_id=gh.hook_deliveries[-1]["guid"])]
        assert lost_ids and gh.runs(head_sha=head)
    gh.hook_url = None  # serve is down: GitHub's attempt fails
    assert gh.send_hook("pull_request", gh.pr_event("synchronize", 1)) == 502
    gone = [gh.hook_deliveries[-2]["guid"], gh.hook_deliveries[-1]["guid"]]
    gh.check_runs.clear()

    restored = tmp_path / "restored" / "data"
    restored.mkdir(parents=True, mode=0o700)
    shutil.copy2(backup, restored / "rtcbot.sqlite3")
    with running_app(tmp_path / "restored", gh, llm) as app:
        gh.hook_url = app.url + "/webhook"
        code, out = redeliver(monkeypatch, gh, restored, "--since", since.isoformat(), "--dry-run")
        assert code == 0, out
        assert "2 event(s) delivered since" in out and "would ask for 2 redelivery(ies)" in out
        assert gh.redelivery_requests == []
        code, out = redeliver(monkeypatch, gh, restored, "--since", since.isoformat(), "--restored")
        assert code == 0, out
        assert "asked for 2 redelivery(ies)" in out and all(g in out for g in gone), out
        assert "opened" not in out  # the push before the backup is in the store: not asked for
        assert sorted(gh.redelivery_requests) == sorted(
            max(d["id"] for d in gh.hook_deliveries if d["guid"] == g and not d["redelivery"]) for g in gone)
        gh.wait_for(lambda: sum(d["redelivery"] and d["status_code"] == 202 for d in gh.hook_deliveries) == 2)
        app.run()
        run = gh.wait_for(lambda: [r for r in gh.runs(head_sha=head) if r["status"] == "completed"])
        assert run
        new_ids = [j.id for g in gone for j in app.rt.store.jobs.where(delivery_id=g)]
    assert new_ids and min(new_ids) >= ERA and not set(new_ids) & set(lost_ids)
    # run again: every event is recorded now, nothing is asked for
    code, out = redeliver(monkeypatch, gh, restored, "--since", since.isoformat())
    assert code == 0 and "asked for 0 redelivery(ies)" in out, out


@pytest.mark.parametrize("since", ["yesterday", "2026-13-01", "5w", "2999-01-01T00:00:00Z"])
def test_a_bad_time_is_one_line_and_exit_2(since: str, tmp_path: Path, fake_github: Callable[..., FakeGitHub],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = redeliver(monkeypatch, fake_github(), tmp_path, "--since", since)
    assert code == 2
    assert out.count("\n") == 1 and out.startswith("Error: --since"), out


def test_times_ago_and_iso_times() -> None:
    now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert parse_since("90m", now) == datetime(2026, 11, 29, 10, 30, tzinfo=UTC)
    assert parse_since("2d", now) == datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    assert parse_since("2026-11-28T21:00:00", now) == datetime(2026, 11, 28, 21, 0, tzinfo=UTC)
    assert parse_since("2026-11-28T22:00:00+01:00", now) == datetime(2026, 11, 28, 21, 0, tzinfo=UTC)


def test_the_plan_asks_once_per_event_for_its_latest_attempt() -> None:
    at = datetime(2026, 11, 29, tzinfo=UTC)

    def d(i: int, guid: str) -> HookDelivery:
        return HookDelivery(i, guid, at, "pull_request", "synchronize", 502, False)

    p = plan([d(5, "b"), d(4, "a"), d(3, "b"), d(2, "c")], recorded={"c"})
    assert (p.seen, p.recorded) == (3, 1)
    assert [(x.guid, x.id) for x in p.missing] == [("a", 4), ("b", 5)]


def test_ids_after_a_restore_start_a_new_era() -> None:
    assert next_era(0) == ERA and next_era(27) == 2 * ERA and next_era(ERA - 1) == 2 * ERA
    assert next_era(ERA) == 2 * ERA and next_era(2 * ERA + 5) == 4 * ERA


@pytest.mark.services
def test_on_postgresql_the_sequence_moves_past_the_mark() -> None:
    import uuid

    from bot.store.restored import skip_job_ids
    from bot.store.store import Store
    from tests.bot.app_support import drop_schema, postgres_url
    from tests.support import require

    schema = f"restored_{uuid.uuid4().hex[:8]}"
    url = postgres_url(schema)
    require(url is not None, "the local PostgreSQL does not answer")
    assert url is not None
    store = Store(url)
    try:
        spec = {"kind": "analysis", "repo": "o/r", "pr_number": 1, "head_sha": "a" * 40, "analyzer": "editing_rtc"}
        first = store.jobs.add(spec)
        assert first is not None
        assert skip_job_ids(store.db, "test") == (first, next_era(first))
        assert store.jobs.add({**spec, "head_sha": "b" * 40}) == next_era(first)
        mark = store.jobs.get(next_era(first) - 1)
        assert mark is not None and mark.kind == "restore" and mark.status == "cancelled"
    finally:
        store.close()
        drop_schema(schema)
