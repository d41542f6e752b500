"""Tenants, budgets and floods in the GitHub App, end to end: signed deliveries over real HTTP
→ the real queue → jobs → check runs on the fake GitHub, LLM requests counted at the scripted
LLM server.

Attacks covered:
- cross-tenant cache probing: installation B sends the same hunk as installation A's private
  PR; a cache hit (or a cache figure in B's public check run) would tell B that A has it;
- cache figures in public check runs (they stay in /metrics, for the operator);
- floods of forced work: 200 `edited` review comments and 200 `rerequested` check runs
  (each skipped dedupe: 400 analyses, ~800 check-run writes);
- payloads kept forever (routed deliveries' bodies are dropped after the retention);
- unbounded LLM cost: a default budget per job and per installation per day, cut-offs listed
  as skipped in the check run, never silent;
- another local user reading the store (payloads, private code) or the LLM cache: 0600 files
  in 0700 folders.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from bot.app.settings import ServiceSettings
from tests.bot.app_support import App, deliver, scrape
from tests.fakes.github_server import FakeGitHub, many_hunks_diff

EDITING = "rtcbot / EditingRTC"


def completed(gh: FakeGitHub, sha: str) -> list[dict[str, Any]]:
    return [r for r in gh.runs(EDITING, sha) if r["status"] == "completed"]


def completions(gh: FakeGitHub, sha: str) -> int:
    """How many analyses completed the head's one EditingRTC check run (a re-run updates it in place)."""
    return sum(1 for r in gh.runs(EDITING, sha) for u in r["updates"] if u.get("status") == "completed")


def check_run_text(gh: FakeGitHub) -> str:
    """Everything rtcbot wrote to check runs, as one lower-case JSON text."""
    return json.dumps([w.body for w in gh.writes()]).lower()


# -- tenants ----------------------------------------------------------------------------------
def test_a_tenant_gets_no_cache_hit_from_another_tenants_answers(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    alpha = fake_github(installation_id=101, repo="alpha/private")
    beta = fake_github(installation_id=202, repo="beta/probe")
    diff = many_hunks_diff(hunks=2)
    pr_a, pr_b = alpha.add_pr(1, diff_text=diff), beta.add_pr(1, diff_text=diff)
    a = apps(alpha, beta)
    a.deliver("pull_request", alpha.pr_event("opened", 1))
    a.run()
    spent_by_alpha = a.llm.request_count
    assert spent_by_alpha > 0 and completed(alpha, pr_a.head_sha)
    a.deliver("pull_request", beta.pr_event("opened", 1))  # the very same hunks
    a.run()
    assert completed(beta, pr_b.head_sha)
    assert a.llm.request_count - spent_by_alpha == spent_by_alpha  # beta paid for every answer
    # within one installation the cache still works: alpha's re-run sends no request
    first = completed(alpha, pr_a.head_sha)[0]
    a.deliver("check_run", alpha.check_run_event(first["id"], "rerequested"))
    a.run()
    assert completions(alpha, pr_a.head_sha) == 2
    assert a.llm.request_count == 2 * spent_by_alpha
    metrics = scrape(a.url, timeout=10).text  # with the operator's RTCBOT_METRICS_TOKEN
    hits = [line for line in metrics.splitlines() if line.startswith("rtcbot_llm_cache_hits_total ")]
    assert hits and float(hits[0].split()[1]) > 0  # the operator still sees them


def test_no_cache_figures_in_any_check_run(apps: Callable[..., App],
                                           fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    pr = gh.add_pr(3, diff_text=many_hunks_diff(hunks=2))
    a = apps(gh)
    a.deliver("pull_request", gh.pr_event("opened", 3))
    a.run()
    run = completed(gh, pr.head_sha)[0]
    a.deliver("check_run", gh.check_run_event(run["id"], "rerequested"))  # all answers cached now
    a.run()
    assert completions(gh, pr.head_sha) == 2
    written = check_run_text(gh)
    # the samples and their bill (what they cost when asked), never what the cache spared
    assert re.search(r"llm work: [0-9,]+ samples \([0-9,]+ requests?, [0-9,]+ prompt and", written)
    assert "cache" not in written and "cached" not in written


# -- floods of forced work ----------------------------------------------------------------------
@pytest.mark.slow
def test_200_edited_comments_and_200_rerequests_make_one_analysis(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    pr = gh.add_pr(4, diff_text=many_hunks_diff(hunks=1))
    a = apps(gh, comment_analyzers=["editing_rtc"], force_debounce_s=60.0)
    a.deliver("pull_request", gh.pr_event("opened", 4))
    a.run()
    first = completed(gh, pr.head_sha)[0]
    writes_before = len(gh.writes())
    comment = gh.add_comment(4, "src/many.py", 2, "Why multiply here?")
    with httpx.Client() as client:
        for _ in range(200):
            r = deliver(a.url, "pull_request_review_comment", gh.review_comment_event(4, comment, "edited"),
                        client=client)
            assert r.status_code == 202, r.text
        a.run()
        for _ in range(200):
            r = deliver(a.url, "check_run", gh.check_run_event(first["id"], "rerequested"), client=client)
            assert r.status_code == 202, r.text
    a.run()
    forced = [j for j in a.rt.store.jobs.where(kind="analyze", head_sha=pr.head_sha) if j.spec.get("force")]
    assert len(forced) == 1 and forced[0].status == "done"
    assert completions(gh, pr.head_sha) == 2  # the first analysis and one forced one
    assert len(gh.writes()) - writes_before <= 4  # one check run created and completed
    assert len(a.rt.store.jobs.where(kind="analyze", head_sha=pr.head_sha)) == 2


DEBOUNCE_S = 6.0  # the forced analysis runs and a second re-run is delivered within it, loaded or not


@pytest.mark.slow  # waits out a 6 s debounce window
def test_forced_work_runs_again_after_the_debounce_window(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    pr = gh.add_pr(5, diff_text=many_hunks_diff(hunks=1))
    a = apps(gh, force_debounce_s=DEBOUNCE_S)
    a.deliver("pull_request", gh.pr_event("opened", 5))
    a.run()
    first = completed(gh, pr.head_sha)[0]
    a.deliver("check_run", gh.check_run_event(first["id"], "rerequested"))
    a.run()
    [forced] = [j for j in a.rt.store.jobs.where(kind="analyze", head_sha=pr.head_sha) if j.spec.get("force")]
    a.deliver("check_run", gh.check_run_event(first["id"], "rerequested"), delivery="within-window")
    assert a.run() == 0
    note = a.rt.store.deliveries.get("within-window").note  # type: ignore[union-attr]
    assert note is not None and "debounce window" in note
    # the window runs from the forced job's making, not from a time taken before its delivery
    # (that was up to the delivery's time too early: over 0.1 s on a loaded machine)
    time.sleep(max(0.0, forced.created_at + DEBOUNCE_S + 0.1 - time.time()))
    a.deliver("check_run", gh.check_run_event(first["id"], "rerequested"))
    assert a.run() == 1
    assert completions(gh, pr.head_sha) == 3


# -- payload retention --------------------------------------------------------------------------
RETENTION_S = 3.0  # long enough that a loaded CI machine routes and sweeps within it (1 s was not)


def test_payloads_are_dropped_after_routing_and_the_retention(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    gh.add_pr(6, diff_text=many_hunks_diff(hunks=1))
    a = apps(gh, payload_retention_s=RETENTION_S)
    a.deliver("pull_request", gh.pr_event("opened", 6), delivery="kept-then-pruned")
    store = a.rt.store
    store.deliveries.record("never-routed", "pull_request", "opened", json.dumps(gh.pr_event("opened", 6)))
    assert a.rt.sweep()["pruned"] == 0
    assert store.deliveries.get("kept-then-pruned").payload  # type: ignore[union-attr]  # within the retention
    time.sleep(RETENTION_S + 0.1)
    assert a.rt.sweep()["pruned"] == 1
    d = store.deliveries.get("kept-then-pruned")
    assert d is not None and d.payload == ""
    assert (d.event, d.action, d.status, d.jobs) == ("pull_request", "opened", "routed", 1)  # metadata kept
    unrouted = store.deliveries.get("never-routed")
    assert unrouted is not None and unrouted.status == "received" and unrouted.payload  # the sweep needs it
    again = deliver(a.url, "pull_request", gh.pr_event("opened", 6), delivery="kept-then-pruned")
    assert again.status_code == 200 and "duplicate" in again.json()["message"]


# -- budgets ------------------------------------------------------------------------------------
def test_default_budgets_exist_and_a_wrong_one_is_an_error() -> None:
    s = ServiceSettings()
    assert s.llm_max_requests >= 1 and s.llm_max_tokens >= 1
    assert s.llm_daily_requests >= 1 and s.llm_daily_tokens >= 1
    bad: list[dict[str, Any]] = [{"llm_max_requests": 0}, {"llm_daily_tokens": -1}, {"force_debounce_s": -1}]
    for values in bad:
        with pytest.raises(ValidationError):
            ServiceSettings(**values)


def test_a_jobs_budget_cut_off_is_listed_as_skipped(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    pr = gh.add_pr(7, diff_text=many_hunks_diff(hunks=3))
    a = apps(gh, llm_max_requests=6, llm_concurrency=1)  # hunk after hunk
    a.deliver("pull_request", gh.pr_event("opened", 7))
    a.run()
    assert a.llm.request_count == 6  # 5 requests a hunk: one hunk scored, the others cut off
    summary = completed(gh, pr.head_sha)[0]["output"]["summary"]
    assert "### Not analysed" in summary
    # the two hunks cut off: their file once, the reason and how many hunks
    assert summary.count("request budget of 6 spent (the LLM budget of one analysis)") == 1
    assert "request budget of 6 spent (the LLM budget of one analysis) — 2 hunks" in summary


def test_an_installations_daily_budget_cut_off_is_listed_as_skipped(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    first = gh.add_pr(8, diff_text=many_hunks_diff(hunks=3))
    second = gh.add_pr(9, diff_text=many_hunks_diff("src/other.py", hunks=2).replace("x", "y"))  # not cached
    a = apps(gh, llm_daily_requests=7, llm_concurrency=1)
    a.deliver("pull_request", gh.pr_event("opened", 8))
    a.run()
    assert a.llm.request_count == 7
    summary = completed(gh, first.head_sha)[0]["output"]["summary"]
    assert "this installation's daily LLM budget" in summary
    a.deliver("pull_request", gh.pr_event("opened", 9))
    a.run()
    assert a.llm.request_count == 7  # nothing left today: no request at all
    summary = completed(gh, second.head_sha)[0]["output"]["summary"]
    assert summary.count("this installation's daily LLM budget") == 1  # the file once, both hunks counted
    assert "it renews at 00:00 UTC) — 2 hunks" in summary
    assert "7" not in summary.split("### Not analysed", 1)[1].split("LLM usage")[0]  # no usage figures
    assert a.rt.store.usage.today(gh.installation_id)[0] == 7


# -- files at rest --------------------------------------------------------------------------------
def test_the_store_and_the_llm_cache_are_private_files(tmp_path: Path) -> None:
    from analyzers.llm.cache import SqliteCache
    from bot.store.store import Store

    umask = os.umask(0o022)  # the usual umask: files 0644, folders 0755 unless we say otherwise
    store = Store(f"sqlite:///{tmp_path / 'data' / 'rtcbot.sqlite3'}")
    store.deliveries.accept("d-1", "ping", None, "{}", [])
    cache = SqliteCache(tmp_path / "cache" / "llm-cache.sqlite3")
    cache.put("k", "code the model was shown")
    old = tmp_path / "old"
    old.mkdir()
    (old / "llm-cache.sqlite3").write_bytes(b"")  # made by an earlier version, 0644
    SqliteCache(old / "llm-cache.sqlite3")
    try:
        for folder in (tmp_path / "data", tmp_path / "cache"):
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
            files = sorted(folder.iterdir())
            assert any(f.name.endswith("-wal") for f in files), files  # WAL files follow the database
            for f in files:
                assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
        assert stat.S_IMODE((old / "llm-cache.sqlite3").stat().st_mode) == 0o600
    finally:
        os.umask(umask)
        store.close()


# -- a tenant's data by GitHub's ids, never by a name that can be renamed or reused ------------------
STATS_TOKEN = "operators-stats-token-0123"
WEBHOOK_EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "github" / "webhooks" / "octokit"


def octokit(event: str, action: str) -> dict[str, Any]:
    """GitHub's example payload of `event`.`action` (octokit/webhooks), a fresh copy."""
    examples = json.loads((WEBHOOK_EXAMPLES / f"{event}.json").read_text(encoding="utf-8"))
    return dict(next(e for e in examples if e.get("action") == action))


def repository_event(gh: FakeGitHub, action: str, full_name: str) -> dict[str, Any]:
    """`repository`.`action` for the fake's repository, which is now called `full_name`
    (`deleted`: GitHub's renamed example with its action changed; octokit has no deleted one)."""
    p = octokit("repository", "renamed")
    p["action"] = action
    p["repository"] = {**p["repository"], "id": gh.repository_id, "full_name": full_name,
                       "name": full_name.split("/")[1]}
    p["installation"] = {"id": gh.installation_id, "node_id": "x"}
    return p


def removed_event(gh: FakeGitHub) -> dict[str, Any]:
    p = octokit("installation_repositories", "removed")
    p["installation"] = {**p["installation"], "id": gh.installation_id}
    p["repositories_removed"] = [{"id": gh.repository_id, "full_name": gh.repo, "name": gh.repo.split("/")[1],
                                  "private": True}]
    return p


def stats(a: App, repo: str | None = None) -> dict[str, Any]:
    r = httpx.get(f"{a.url}/stats", params={"repo": repo} if repo else None, timeout=10,
                  headers={"Authorization": f"Bearer {STATS_TOKEN}"})
    assert r.status_code == 200, r.text
    return dict(r.json())


def cli_stats(a: App, repo: str) -> dict[str, Any]:
    from click.testing import CliRunner

    from bot.entry import main

    env = {"RTCBOT_DATA_DIR": str(a.rt.settings.data_dir), "DATABASE_URL": a.rt.settings.database_url or ""}
    r = CliRunner().invoke(main, ["stats", "--json", "--repo", repo], env=env)
    assert r.exit_code == 0, r.output
    return dict(json.loads(r.output))


def prs_shown(a: App, repo: str, installation: int) -> int:
    from bot.app.dashboard.data import load

    return int(load(a.rt.store, repo, installation, "https://github.com").totals.get("prs", 0))


def analysed(a: App, gh: FakeGitHub, prs: int = 3) -> None:
    """`prs` analysed pull requests of the fake's repository in the store, one suggestion
    published (the dashboard's seed: real rows, with the ids a delivery gives)."""
    from tests.bot.dashboard.support import seed

    seed(a.rt.store, gh.repo, prs=prs, repository=gh.repository_id, installation=gh.installation_id)
    assert prs_shown(a, gh.repo, gh.installation_id) == prs and stats(a, gh.repo)["published"] == 1


def test_a_renamed_repository_keeps_its_data_under_the_new_name(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    a = apps(gh, stats_token=STATS_TOKEN)
    analysed(a, gh)
    old, new = gh.repo, "octo-org/gizmos"
    a.deliver("repository", repository_event(gh, "renamed", new))
    a.run()
    assert a.rt.store.repositories.live(new, gh.installation_id) == gh.repository_id
    assert prs_shown(a, new, gh.installation_id) == 3 and prs_shown(a, old, gh.installation_id) == 0
    assert stats(a, new)["published"] == 1 and stats(a, old)["published"] == 0
    assert cli_stats(a, new)["published"] == 1 and cli_stats(a, old)["published"] == 0
    # a job asked for before the rename, run after it, never names the repository back
    assert not a.rt.store.repositories.seen(gh.repository_id, gh.installation_id, old, at=1.0)
    assert a.rt.store.repositories.live(new, gh.installation_id) == gh.repository_id
    # transferred: the same, to the new owner's name
    a.deliver("repository", repository_event(gh, "transferred", "new-owner/gizmos"))
    a.run()
    assert prs_shown(a, "new-owner/gizmos", gh.installation_id) == 3 and stats(a, "new-owner/gizmos")["published"] == 1


def test_a_new_installations_repository_under_an_old_name_sees_nothing(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    """alpha's repository goes (its deletion never delivered) and beta's installation makes a
    repository of the same name: beta's pull request is analysed, and nothing of alpha's shows
    under the name, on the dashboard, /stats or `rtcbot stats`."""
    alpha = fake_github(installation_id=101, repo="octo-org/widgets")
    beta = fake_github(installation_id=202, repo="octo-org/widgets")
    assert alpha.repository_id != beta.repository_id
    a = apps(alpha, beta, stats_token=STATS_TOKEN)
    analysed(a, alpha)
    pr = beta.add_pr(1, diff_text=many_hunks_diff(hunks=1))
    a.deliver("pull_request", beta.pr_event("opened", 1))
    a.run()
    assert completed(beta, pr.head_sha)
    name = beta.repo
    assert a.rt.store.repositories.live(name) == beta.repository_id
    assert prs_shown(a, name, beta.installation_id) == 1  # beta's own pull request only
    assert prs_shown(a, name, alpha.installation_id) == 0
    assert stats(a, name)["published"] == 0 and stats(a)["published"] == 0 and cli_stats(a, name)["published"] == 0
    # alpha's rows left the name (so beta's writes can never meet them), kept under its id
    runs = a.rt.store.checks.completed_since(alpha.repository_id, alpha.installation_id, 0)
    assert runs and {r.repo for r in runs} == {f"{name}#{alpha.repository_id}"}


@pytest.mark.slow
def test_a_removed_repository_is_not_served_and_its_data_goes_after_the_retention(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    a = apps(gh, stats_token=STATS_TOKEN, payload_retention_s=3.0)
    analysed(a, gh)
    a.deliver("installation_repositories", removed_event(gh))
    a.run()
    # the sweep within the retention first, at once: the reads below (a CLI run among them)
    # may take seconds on a loaded machine
    assert a.rt.sweep()["forgotten"] == 0  # within the retention: kept
    assert a.rt.store.checks.completed_since(gh.repository_id, gh.installation_id, 0)
    assert a.rt.store.repositories.live(gh.repo) is None
    assert prs_shown(a, gh.repo, gh.installation_id) == 0  # kept, and not served
    assert stats(a, gh.repo)["published"] == 0 and stats(a)["published"] == 0
    assert cli_stats(a, gh.repo)["published"] == 0
    removed = a.rt.store.repositories.get(gh.repository_id)
    assert removed is not None and removed.removed_at is not None
    time.sleep(max(0.0, removed.removed_at + 3.1 - time.time()))
    assert a.rt.sweep()["forgotten"] == 1
    assert not a.rt.store.checks.completed_since(gh.repository_id, gh.installation_id, 0)
    assert a.rt.store.job_queries.usage_since(gh.repository_id, gh.installation_id, 0) == []
    assert a.rt.store.repositories.get(gh.repository_id) is None


def test_a_deleted_repository_is_not_served(apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    a = apps(gh, stats_token=STATS_TOKEN)
    analysed(a, gh)
    a.deliver("repository", repository_event(gh, "deleted", gh.repo))
    a.run()
    assert prs_shown(a, gh.repo, gh.installation_id) == 0 and stats(a, gh.repo)["published"] == 0
