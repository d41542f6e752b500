"""Deliveries over real HTTP → jobs on the real queue → check runs on the fake GitHub.

The jobs run in this process the way a worker's thread runs them (claimed from the store);
tests/bot/test_worker.py runs `rtcbot worker` itself as a subprocess.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from bot.app import events
from bot.app.events import AnalyzeJob, PRJob
from tests.bot.app_support import App
from tests.fakes.github_server import FakeGitHub, many_hunks_diff
from tests.fakes.llm_server import RoundTrips, last_user_text

EDITING = "rtcbot / EditingRTC"


ROUND_TRIPS = RoundTrips()  # passes every baseline, re-creates hunks of up to 12 added lines: conclusive


def responder(req: dict[str, Any]) -> str | list[str]:
    text = last_user_text(req)
    if "Summary of changes" in text:
        return ("Summary of changes\n1. The function now multiplies the argument.\n"
                "Implications\n1. Callers get a product instead of a sum.")
    return ROUND_TRIPS(req)


@pytest.fixture
def world(apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> Callable[..., App]:
    """`world(**settings)`: the App (tests/bot/conftest.py `apps`) on this test's backend, for a
    fake GitHub of its own, on an LLM that answers with `responder`."""
    return lambda **settings: apps(fake_github(), responder=responder, **settings)


def finished(w: App, name: str = EDITING, sha: str | None = None) -> dict[str, Any]:
    runs = [r for r in w.gh.runs(name, sha) if r["status"] == "completed"]
    assert runs, f"no completed {name} check run; runs: {[(r['name'], r['status']) for r in w.gh.runs()]}"
    return runs[-1]


def test_opened_ends_with_completed_check_runs_matching_the_findings(world: Callable[..., App]) -> None:
    w = world()
    pr = w.gh.add_pr(5, fixture="more-itertools-d992be0de9.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 5))
    assert w.run() == 1  # the PR's job runs its analyses itself: no second trip through the queue
    rows = w.rt.store.jobs.where(head_sha=pr.head_sha)
    assert [(j.kind, j.status) for j in rows] == [("pr", "done"), ("analyze", "done")]
    parent, child = (events.from_spec(j.spec) for j in rows)  # typed jobs, through the store's JSON
    assert isinstance(parent, PRJob) and isinstance(child, AnalyzeJob)
    assert (child.pr_number, child.head_sha, child.analyzer, child.root, child.reason) == (
        5, pr.head_sha, "editing_rtc", rows[0].id, "pull_request.opened")
    run = finished(w, sha=pr.head_sha)
    assert run["conclusion"] == "neutral"
    assert run["external_id"] == "5:editing_rtc"
    assert [a["label"] for a in run["actions"]] == ["Re-run"]
    row = w.rt.store.checks.get(w.gh.repo, EDITING, pr.head_sha)
    assert row is not None and row.status == "completed" and row.github_id == run["id"]
    findings = w.rt.store.checks.findings(row.id)
    assert findings, "findings were stored"
    got = sorted((a["path"], a["start_line"], a["end_line"]) for a in run["annotations"])
    want = sorted((f.path, f.start_line, f.end_line) for f in findings)
    assert got == want
    assert run["output"]["title"] == "2 of 4 changes explained; 2 unclear"  # the verdict; the name says
    assert "- overall: RTC " in run["output"]["summary"]  # "EditingRTC"; the figures folded
    assert [r for r in w.gh.rejections if r[0] != 404] == []


def test_more_than_50_annotations_go_in_batches(world: Callable[..., App]) -> None:
    w = world()
    pr = w.gh.add_pr(9, diff_text=many_hunks_diff(hunks=60))
    w.deliver("pull_request", w.gh.pr_event("opened", 9))
    w.run()
    run = finished(w, sha=pr.head_sha)
    assert len(run["annotations"]) == 60
    sizes = [len((u.get("output") or {}).get("annotations") or []) for u in run["updates"]]
    assert max(sizes) <= 50 and sum(sizes) == 60 and sizes.count(0) <= 2
    assert [r for r in w.gh.rejections if r[0] != 404] == []


def test_missing_patch_is_skipped_with_the_reason(world: Callable[..., App]) -> None:
    w = world()
    files = [
        {"filename": "logo.png", "status": "modified", "additions": 0, "deletions": 0, "changes": 0},
        {"filename": "a.py", "status": "modified", "additions": 1, "deletions": 1, "changes": 2,
         "patch": "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2"},
    ]
    pr = w.gh.add_pr(3, files=files)
    w.deliver("pull_request", w.gh.pr_event("opened", 3))
    w.run()
    run = finished(w, sha=pr.head_sha)
    assert "`logo.png`: no patch from GitHub (binary or too large)" in run["output"]["summary"]
    assert len(run["annotations"]) == 1


def test_check_run_rerequested_reruns(world: Callable[..., App]) -> None:
    w = world(force_debounce_s=0.0)  # each re-run runs (bursts: tests/security/test_tenants.py)
    pr = w.gh.add_pr(4, fixture="more-itertools-d992be0de9.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 4))
    w.run()
    first = finished(w, sha=pr.head_sha)
    shown = sorted(json.dumps(a, sort_keys=True) for a in first["annotations"])
    assert shown
    w.deliver("check_run", w.gh.check_run_event(first["id"], "rerequested"))
    assert w.run() == 1
    # one check run per (analysis, head): the re-run updates it in place
    [run] = w.gh.runs(EDITING, pr.head_sha)
    assert run["id"] == first["id"] and run["status"] == "completed" and run["external_id"] == "4:editing_rtc"
    statuses = [u.get("status") for u in run["updates"] if u.get("status")]
    assert statuses == ["in_progress", "completed", "in_progress", "completed"]
    # the Re-run button does the same
    w.deliver("check_run", w.gh.check_run_event(run["id"], "requested_action"))
    w.run()
    [run] = w.gh.runs(EDITING, pr.head_sha)
    assert [u.get("status") for u in run["updates"] if u.get("status")].count("completed") == 3
    assert [j.status for j in w.rt.store.jobs.where(kind="analyze", head_sha=pr.head_sha)] == ["done"] * 3
    # GitHub appends annotations: the re-runs add none that the run already shows
    assert sorted(json.dumps(a, sort_keys=True) for a in run["annotations"]) == shown


def test_synchronize_with_unchanged_hunks_makes_no_llm_requests(world: Callable[..., App]) -> None:
    w = world()
    diff = many_hunks_diff("src/calc.py", hunks=3)
    w.gh.add_pr(6, diff_text=diff)
    w.deliver("pull_request", w.gh.pr_event("opened", 6))
    w.run()
    assert w.llm.request_count > 0
    w.llm.reset()
    pr = w.gh.push(6, diff_text=diff)  # a new head with the same hunks (e.g. a rebase)
    w.deliver("pull_request", w.gh.pr_event("synchronize", 6))
    w.run()
    run = finished(w, sha=pr.head_sha)
    assert w.llm.request_count == 0
    assert len(run["annotations"]) == 3
    # one hunk changes: only it costs requests
    changed = diff.replace("return x * 1", "return x ** 1")
    pr = w.gh.push(6, diff_text=changed)
    w.deliver("pull_request", w.gh.pr_event("synchronize", 6))
    w.run()
    finished(w, sha=pr.head_sha)
    assert 0 < w.llm.request_count <= 7


@pytest.mark.model
def test_review_comment_gets_a_crscore_annotation_on_its_line(world: Callable[..., App]) -> None:
    w = world()
    w.gh.add_pr(8, diff_text=many_hunks_diff("src/calc.py", hunks=2))
    c = w.gh.add_comment(8, "src/calc.py", 13, "This now multiplies instead of adding; callers expecting a sum break.")
    w.deliver("pull_request_review_comment", w.gh.review_comment_event(8, c))
    w.run()
    run = finished(w, "rtcbot / CRScore")
    lines = [(a["path"], a["start_line"]) for a in run["annotations"]]
    assert lines == [("src/calc.py", 13)]
    assert "comment" in run["annotations"][0]["title"]


@pytest.mark.slow
@pytest.mark.model
def test_review_comments_update_the_one_crscore_check_run_of_the_head(world: Callable[..., App]) -> None:
    w = world(force_debounce_s=0.0)
    pr = w.gh.add_pr(8, diff_text=many_hunks_diff("src/calc.py", hunks=2))
    c = w.gh.add_comment(8, "src/calc.py", 13, "This now multiplies instead of adding; callers expecting a sum break.")
    w.deliver("pull_request_review_comment", w.gh.review_comment_event(8, c))
    w.run()
    first = finished(w, "rtcbot / CRScore")
    d = w.gh.add_comment(8, "src/calc.py", 13, "Please add a test for the product.", user="bob")
    w.deliver("pull_request_review_comment", w.gh.review_comment_event(8, d))
    w.run()
    w.deliver("pull_request_review_comment", w.gh.review_comment_event(8, c, action="edited"))
    w.run()
    [run] = w.gh.runs("rtcbot / CRScore", pr.head_sha)  # not one per comment delivery
    assert run["id"] == first["id"] and run["status"] == "completed" and run["external_id"] == "8:crscore"
    assert [u.get("status") for u in run["updates"] if u.get("status")].count("completed") == 3
    assert "Please add a test" in json.dumps(run["annotations"])  # the second comment was scored in it
    row = w.rt.store.checks.get(w.gh.repo, "rtcbot / CRScore", pr.head_sha)
    assert row is not None and (row.github_id, row.status) == (first["id"], "completed")


def test_an_analysis_run_twice_at_once_makes_one_check_run(world: Callable[..., App]) -> None:
    w = world(force_debounce_s=0.0)
    pr = w.gh.add_pr(22, fixture="more-itertools-d992be0de9.diff")
    job = AnalyzeJob(repo=w.gh.repo, installation_id=w.gh.installation_id, pr_number=22, head_sha=pr.head_sha,
                     analyzer="editing_rtc", force=True, reason="check_run.rerequested")
    first = w.rt.store.jobs.add(events.to_spec(job))
    assert first is not None and w.rt.store.jobs.start(first) is not None
    second = w.rt.store.jobs.add(events.to_spec(job))  # asked for while the first runs: made
    assert second is not None and w.rt.store.jobs.requeue(first, expect="running")
    ids = [first, second]
    with ThreadPoolExecutor(2) as ex:  # two workers run the same analysis of the same head at once
        # one runs, the other waits for its lease (bot/app/one_run.py) and is answered by its run
        assert sorted(ex.map(w.rt.run_job, ids)) == ["done", "skipped"]
    [run] = w.gh.runs(EDITING, pr.head_sha)
    assert run["status"] == "completed"
    assert len([u for u in run["updates"] if u.get("conclusion")]) == 1, "completed once"


def test_draft_is_skipped_unless_configured(world: Callable[..., App]) -> None:
    w = world()
    w.gh.add_pr(10, fixture="more-itertools-d992be0de9.diff", draft=True)
    w.deliver("pull_request", w.gh.pr_event("opened", 10))
    w.run()
    assert w.gh.runs() == []
    assert [j.status for j in w.rt.store.jobs.where(kind="pr")] == ["skipped"]
    w.gh.set_file(".github/rtcbot.yml", "drafts: true\n")
    w.deliver("pull_request", w.gh.pr_event("reopened", 10))
    w.run()
    finished(w)


def test_invalid_repo_config_is_explained_and_defaults_apply(world: Callable[..., App]) -> None:
    w = world()
    w.gh.set_file(".github/rtcbot.yml", "analyzers: {nonsense: true}\n")
    pr = w.gh.add_pr(11, fixture="more-itertools-d992be0de9.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 11))
    w.run()
    summary = finished(w, sha=pr.head_sha)["output"]["summary"]
    assert "unknown analyzer 'nonsense'" in summary and "the defaults apply" in summary


def test_threshold_crossed_is_failure(world: Callable[..., App]) -> None:
    w = world()
    w.gh.set_file(".github/rtcbot.yml", "thresholds:\n  editing_rtc: {rtc: 0.6}\n")
    pr = w.gh.add_pr(12, fixture="more-itertools-d992be0de9.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 12))
    w.run()
    run = finished(w, sha=pr.head_sha)
    assert run["conclusion"] == "failure"  # the scripted model re-creates 2 of the 4 edits: rtc 0.5
    assert "below the threshold" in run["output"]["summary"]


def test_fail_on_gates_the_check_run(world: Callable[..., App]) -> None:
    w = world()
    w.gh.set_file(".github/rtcbot.yml", "fail_on: editing_rtc.findings>0 && editing_rtc.rtc<=0.5\n")
    pr = w.gh.add_pr(18, fixture="more-itertools-d992be0de9.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 18))
    w.run()
    run = finished(w, sha=pr.head_sha)
    assert run["conclusion"] == "failure"
    verdict, crossed = [ln for ln in run["output"]["summary"].split("\n") if ln][:2]
    assert verdict.startswith("**The gate fails: editing\\_rtc.findings>0")  # the verdict first
    assert "Threshold crossed" in crossed and "editing_rtc.findings>0" in crossed and "editing_rtc.rtc<=0.5" in crossed
    assert "the defaults apply" not in run["output"]["summary"]  # the App reads the same file as the Action


def test_the_app_never_runs_a_test_command_and_says_so(world: Callable[..., App], tmp_path: Path) -> None:
    w = world()
    marker = tmp_path / "ran"
    w.gh.set_file(".github/rtcbot.yml", f"test_command: touch {marker}\n")
    pr = w.gh.add_pr(19, fixture="more-itertools-d992be0de9.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 19))
    w.run()
    summary = finished(w, sha=pr.head_sha)["output"]["summary"]
    assert "never runs a pull request's code" in summary and "the defaults apply" not in summary
    assert [r["name"] for r in w.gh.runs()] == [EDITING]  # no SynthesisRTC
    assert not marker.exists()


def test_newer_push_cancels_the_older_heads_pending_work(world: Callable[..., App]) -> None:
    w = world()
    old = w.gh.add_pr(13, fixture="more-itertools-d992be0de9.diff").head_sha
    w.deliver("pull_request", w.gh.pr_event("opened", 13))
    [held] = w.rt.store.jobs.where(kind="pr")  # the old head's job, not yet claimed: the workers are busy
    new = w.gh.push(13, diff_text=many_hunks_diff(hunks=1)).head_sha
    w.deliver("pull_request", w.gh.pr_event("synchronize", 13))
    w.run()  # the old head's job first (its installation's oldest), superseded; then the new head's
    assert w.rt.run_job(held.id) == "cancelled"  # a late message for it runs nothing
    assert w.gh.runs(EDITING, old) == []
    assert finished(w, sha=new)
    assert [j.status for j in w.rt.store.jobs.where(kind="pr", head_sha=old)] == ["cancelled"]
    assert w.rt.store.jobs.where(kind="analyze", head_sha=old) == []


def test_an_older_delivery_processed_late_is_superseded(world: Callable[..., App]) -> None:
    w = world()
    old = w.gh.add_pr(17, fixture="more-itertools-d992be0de9.diff").head_sha
    w.deliver("pull_request", w.gh.pr_event("opened", 17))
    new = w.gh.push(17, diff_text=many_hunks_diff(hunks=1)).head_sha
    w.deliver("pull_request", w.gh.pr_event("synchronize", 17))
    w.run()
    assert w.gh.runs(EDITING, old) == []
    assert finished(w, sha=new)
    assert [j.status for j in w.rt.store.jobs.where(kind="pr", head_sha=old)] == ["cancelled"]


def test_secondary_rate_limit_is_obeyed(world: Callable[..., App]) -> None:
    w = world()
    pr = w.gh.add_pr(14, fixture="more-itertools-d992be0de9.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 14))
    w.gh.fail_next(1, status=403, retry_after=1, match="PATCH")
    t0 = time.monotonic()
    w.run()
    assert time.monotonic() - t0 >= 1.0
    finished(w, sha=pr.head_sha)
    assert (403, "You have exceeded a secondary rate limit. "
                 "Please wait a few minutes before you try again.") in w.gh.rejections


def test_installation_token_is_reused_and_jwt_is_backdated(world: Callable[..., App]) -> None:
    w = world()
    for n, fixture in ((20, "more-itertools-d992be0de9.diff"), (21, "more-itertools-5c715d813a.diff")):
        w.gh.add_pr(n, fixture=fixture)
        w.deliver("pull_request", w.gh.pr_event("opened", n))
    w.run()
    assert len([r for r in w.gh.runs() if r["status"] == "completed"]) == 2
    assert w.gh.token_requests == 1
    claims = w.gh.jwt_claims[0]
    assert claims["iss"] in (w.gh.app_id, str(w.gh.app_id))
    assert time.time() - claims["iat"] >= 55
    assert claims["exp"] - claims["iat"] <= 660


WRITE_INTERVAL_S = 0.5


def test_content_creating_requests_are_spaced(world: Callable[..., App]) -> None:
    w = world(write_interval_s=WRITE_INTERVAL_S)
    w.gh.add_pr(15, diff_text=many_hunks_diff(hunks=60))
    w.deliver("pull_request", w.gh.pr_event("opened", 15))
    w.run()
    times = [r.at for r in w.gh.writes()]
    assert len(times) >= 3  # the check run created in progress, then 60 annotations in 2 updates
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    # The client spaces the requests it sends; the fake stamps each when it has handled it, so a
    # gap seen here is the interval less how much later the first was handled than the second
    # (the first update carries 50 annotations, the second 10). Half the interval leaves a loaded
    # machine that (0.05 s of 0.25 s did not); unspaced requests come milliseconds apart.
    assert min(gaps) >= WRITE_INTERVAL_S / 2, gaps


def test_sweep_recovers_a_job_whose_worker_died(world: Callable[..., App]) -> None:
    w = world(stale_after_s=1e-6, max_attempts=2)  # every heartbeat is stale
    pr = w.gh.add_pr(16, fixture="more-itertools-d992be0de9.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 16))
    job = w.rt.claims.next()  # the PR's job, claimed by a worker that then died
    assert job is not None and job.kind == "pr"
    swept = w.rt.sweep()
    assert swept["requeued"] == 1
    assert re.fullmatch(rf"requeued job {job.id} of delivery {job.delivery_id} \(no heartbeat for \d+ s\)",
                        str(swept)), str(swept)  # in words, naming the delivery
    w.run()
    assert finished(w, sha=pr.head_sha)["conclusion"] == "neutral"
    assert w.rt.store.jobs.get(job.id).status == "done"  # type: ignore[union-attr]
    [analysis] = w.rt.store.jobs.where(kind="analyze")
    assert analysis.status == "done" and json.loads(analysis.result or "{}")["findings"] > 0
    idle = w.rt.sweep()
    assert not any(idle.values()) and str(idle) == ""  # nothing done: nothing to say


def test_a_pr_job_rerun_after_a_crash_takes_over_the_analyses_it_made(world: Callable[..., App]) -> None:
    w = world(stale_after_s=1e-6)  # every heartbeat is stale (times are > 0)
    pr = w.gh.add_pr(17, fixture="more-itertools-d992be0de9.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 17))
    job = w.rt.claims.next()  # the PR's job, claimed by a worker that then died...
    assert job is not None and job.kind == "pr"
    pr_job = events.from_spec(job.spec)
    assert isinstance(pr_job, PRJob)
    child = w.rt.store.jobs.add(events.to_spec(AnalyzeJob.of(pr_job, "editing_rtc", root=job.id)), job.delivery_id)
    assert child is not None and w.rt.store.jobs.start(child) is not None  # ...in the analysis it had made
    assert w.rt.sweep()["requeued"] == 2
    assert w.rt.run_job(child) == "done"  # the analysis's message comes first
    w.run()  # then the PR's: nothing is made or run again
    assert [a.id for a in w.rt.store.jobs.where(kind="analyze")] == [child]
    again = w.rt.store.jobs.get(job.id)
    assert again is not None and (again.status, again.result) == ("done", "analyses: editing_rtc done")
    assert len(w.gh.runs(EDITING, pr.head_sha)) == 1


def test_huge_pr_pages_files_and_cuts_the_summary(world: Callable[..., App]) -> None:
    w = world()
    files = [{"filename": f"assets/img{i:04d}-with-a-rather-long-name.png", "status": "added",
              "additions": 0, "deletions": 0, "changes": 0} for i in range(2500)]
    files.append({"filename": "a.py", "status": "modified", "additions": 1, "deletions": 1, "changes": 2,
                  "patch": "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2"})
    pr = w.gh.add_pr(30, files=files)
    w.deliver("pull_request", w.gh.pr_event("opened", 30))
    w.run()
    run = finished(w, sha=pr.head_sha)
    summary = run["output"]["summary"]
    assert len(summary.encode("utf-8")) <= 65_535 and "lines) left out." in summary
    pages = [r for r in w.gh.requests if r.path.endswith("/pulls/30/files")]
    assert len(pages) == 26  # 2,501 files, 100 per page
    assert [r for r in w.gh.rejections if r[0] == 422] == []


def test_installation_token_is_renewed_before_it_expires(world: Callable[..., App],
                                                         fake_github: Callable[..., FakeGitHub]) -> None:
    w = world()
    w.gh.token_ttl_s = 61.5  # rtcbot renews a token 60 s before it expires (bot/github/auth.py)
    w.gh.add_pr(40, fixture="more-itertools-d992be0de9.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 40))
    w.run()
    time.sleep(2.0)
    w.gh.add_pr(41, fixture="more-itertools-5c715d813a.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 41))
    w.run()
    assert len([r for r in w.gh.runs() if r["status"] == "completed"]) == 2
    # renewed (at least once more: a slow first job on a loaded machine may renew mid-job)
    # before GitHub would have refused it: not one 401
    assert w.gh.token_requests >= 2
    assert not [r for r in w.gh.rejections if r[0] == 401]


def test_installation_events_are_remembered(world: Callable[..., App]) -> None:
    w = world()
    from tests.support import FIXTURES

    p = json.loads((FIXTURES / "github" / "webhooks" / "installation" / "created.payload.json").read_text())
    w.deliver("installation", p)
    w.run()
    inst = w.rt.store.installations.get(p["installation"]["id"])
    assert inst is not None and inst.active and inst.account == p["installation"]["account"]["login"]
    p["action"] = "deleted"
    w.deliver("installation", p)
    w.run()
    assert w.rt.store.installations.get(p["installation"]["id"]).active is False  # type: ignore[union-attr]


def test_a_refused_token_is_replaced(world: Callable[..., App]) -> None:
    w = world()
    w.gh.add_pr(50, fixture="more-itertools-d992be0de9.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 50))
    w.run()
    w.gh.tokens.clear()  # GitHub forgot every token (revoked, or the key was rotated)
    w.gh.add_pr(51, fixture="more-itertools-5c715d813a.diff")
    w.deliver("pull_request", w.gh.pr_event("opened", 51))
    w.run()
    assert len([r for r in w.gh.runs() if r["status"] == "completed"]) == 2
    assert w.gh.token_requests == 2
