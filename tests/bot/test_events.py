"""Routing webhook payloads to typed jobs, on GitHub's example payloads (octokit/webhooks), and
the jobs' round trip through the store's JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.app import events
from bot.app.events import AnalyzeJob, BadJob, FeedbackJob, InstallationJob, PRJob, RepositoryJob
from reporters.check_run import external_id
from tests.support import FIXTURES, ROOT

HOOKS = FIXTURES / "github" / "webhooks"


def load(event: str, name: str) -> dict[str, Any]:
    return dict(json.loads((HOOKS / event / name).read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", ["opened.payload.json", "synchronize.payload.json", "reopened.payload.json",
                                  "opened.with-organization.payload.json"])  # ready_for_review: below
def test_pull_request_actions_make_one_pr_job(name: str) -> None:
    p = load("pull_request", name)
    routed = events.route("pull_request", p)
    assert len(routed.jobs) == 1
    job = routed.jobs[0]
    assert isinstance(job, PRJob) and job.kind == "pr"
    assert job.repo == p["repository"]["full_name"]
    assert job.pr_number == p["pull_request"]["number"]
    assert job.head_sha == p["pull_request"]["head"]["sha"]
    assert job.default_branch == p["repository"]["default_branch"]
    assert job.action == p["action"]
    assert job.installation_id == (p.get("installation") or {}).get("id")


@pytest.mark.parametrize("name", ["labeled.payload.json", "assigned.payload.json",
                                  "converted_to_draft.payload.json", "review_requested.payload.json"])
def test_other_pull_request_actions_make_nothing(name: str) -> None:
    routed = events.route("pull_request", load("pull_request", name))
    assert routed.jobs == []
    assert routed.note


def test_a_closed_pull_request_makes_one_feedback_job() -> None:
    p = load("pull_request", "closed.payload.json")
    p["installation"] = {"id": 5}
    [job] = events.route("pull_request", p).jobs
    assert isinstance(job, FeedbackJob) and job.pr_number == p["pull_request"]["number"]
    assert job.merged is bool(p["pull_request"].get("merged")) and events.from_spec(events.to_spec(job)) == job


def test_draft_flag_travels_with_the_job() -> None:
    p = load("pull_request", "opened.payload.json")
    p["pull_request"]["draft"] = True
    [job] = events.route("pull_request", p).jobs
    assert isinstance(job, PRJob) and job.draft is True


def test_fork_is_detected() -> None:
    p = load("pull_request", "opened.payload.json")
    p["pull_request"]["head"]["repo"]["full_name"] = "someone/fork"
    [job] = events.route("pull_request", p).jobs
    assert isinstance(job, PRJob) and job.fork is True


@pytest.mark.parametrize("action", ["created", "edited"])
def test_review_comment_runs_the_comment_analyzers(action: str) -> None:
    p = load("pull_request_review_comment", "created.payload.json")
    p["action"] = action
    jobs = events.route("pull_request_review_comment", p, comment_analyzers=["crscore"]).jobs
    assert all(isinstance(j, AnalyzeJob) for j in jobs)
    assert [(j.kind, j.analyzer, j.force, j.reason) for j in jobs if isinstance(j, AnalyzeJob)] == [
        ("analyze", "crscore", True, "pull_request_review_comment")]
    assert isinstance(jobs[0], AnalyzeJob) and jobs[0].head_sha == p["pull_request"]["head"]["sha"]


def test_deleted_review_comment_is_ignored() -> None:
    assert events.route("pull_request_review_comment",
                        load("pull_request_review_comment", "deleted.payload.json")).jobs == []


def test_review_submitted_runs_the_comment_analyzers_but_dismissed_does_not() -> None:
    assert len(events.route("pull_request_review", load("pull_request_review", "submitted.payload.json")).jobs) == 1
    assert events.route("pull_request_review", load("pull_request_review", "dismissed.payload.json")).jobs == []


def test_check_run_rerequested_reads_external_id() -> None:
    p = load("check_run", "rerequested.payload.json")
    p["check_run"]["external_id"] = "12:editing_rtc"
    p["check_run"]["pull_requests"] = []  # a fork PR
    jobs = events.route("check_run", p).jobs
    assert jobs == [AnalyzeJob(repo=p["repository"]["full_name"], default_branch=p["repository"]["default_branch"],
                               installation_id=(p.get("installation") or {}).get("id"),
                               repository_id=p["repository"]["id"], pr_number=12,
                               head_sha=p["check_run"]["head_sha"], analyzer="editing_rtc", force=True,
                               reason="check_run.rerequested", author_id=p["sender"]["id"])]
    assert isinstance(jobs[0], AnalyzeJob) and jobs[0].explicit  # charged to whoever asked for it


def test_foreign_check_run_is_not_ours() -> None:
    routed = events.route("check_run", load("check_run", "rerequested.payload.json"),
                          titles={"EditingRTC": "editing_rtc"})
    assert routed.jobs == [] and "not one of ours" in routed.note


def test_check_run_found_by_title_and_pull_requests() -> None:
    p = load("check_run", "requested_action.payload.json")
    p["check_run"]["name"] = "rtcbot / CRScore"
    p["check_run"]["external_id"] = ""
    p["requested_action"] = {"identifier": "rerun"}
    jobs = events.route("check_run", p, titles={"CRScore": "crscore"}).jobs
    assert [(j.analyzer, j.pr_number) for j in jobs if isinstance(j, AnalyzeJob)] == [("crscore", 26764)]


def test_requested_action_of_another_button_is_ignored() -> None:
    p = load("check_run", "requested_action.payload.json")  # identifier 'lgtm|26764'
    assert events.route("check_run", p).jobs == []


def test_check_suite_rerequested_reruns_every_pr() -> None:
    p = load("check_suite", "rerequested.payload.json")
    jobs = events.route("check_suite", p).jobs
    assert [(type(j), j.pr_number, j.head_sha, j.force) for j in jobs if isinstance(j, PRJob)] == [
        (PRJob, 2, p["check_suite"]["head_sha"], True)]
    assert events.route("check_suite", load("check_suite", "requested.payload.json")).jobs == []


@pytest.mark.parametrize(("event", "name", "active"), [
    ("installation", "created.payload.json", True), ("installation", "deleted.payload.json", False),
    ("installation", "suspend.payload.json", False), ("installation_repositories", "added.payload.json", True)])
def test_installation_events(event: str, name: str, active: bool) -> None:
    p = load(event, name)
    jobs = events.route(event, p).jobs
    [job] = jobs
    assert isinstance(job, InstallationJob) and job.active is active
    assert job.installation_id == p["installation"]["id"]
    assert job.account == p["installation"]["account"]["login"]


def test_ping_and_unknown_events_make_nothing() -> None:
    assert events.route("ping", load("ping", "payload.json")).note == "pong"
    routed = events.route("issue_comment", load("issue_comment", "created.payload.json"))
    assert routed.jobs == [] and "not on a pull request" in routed.note
    assert "not handled" in events.route("issues", load("issue_comment", "created.payload.json")).note


def test_external_id_round_trip() -> None:
    assert events.parse_external_id(external_id(7, "autofix")) == (7, "autofix")
    assert events.parse_external_id("") == (None, None)


@pytest.mark.parametrize(("event", "name"), [
    ("pull_request", "opened.payload.json"), ("pull_request_review_comment", "created.payload.json"),
    ("check_suite", "rerequested.payload.json"), ("installation", "created.payload.json")])
def test_jobs_round_trip_through_the_stores_json(event: str, name: str) -> None:
    jobs = events.route(event, load(event, name)).jobs
    assert jobs
    for job in jobs:
        spec = json.loads(json.dumps(events.to_spec(job)))  # what the jobs table keeps
        assert spec["kind"] == job.kind  # the store's columns and debounce read kind (and force)
        assert isinstance(job, InstallationJob) or isinstance(spec["force"], bool)
        assert events.from_spec(spec) == job


def test_a_fanned_out_analysis_carries_its_pr_job() -> None:
    [pr] = events.route("pull_request", load("pull_request", "synchronize.payload.json")).jobs
    assert isinstance(pr, PRJob)
    child = AnalyzeJob.of(pr, "autofix", root=41)
    assert (child.repo, child.pr_number, child.head_sha, child.installation_id, child.default_branch) == (
        pr.repo, pr.pr_number, pr.head_sha, pr.installation_id, pr.default_branch)
    assert (child.analyzer, child.root, child.reason, child.explicit) == ("autofix", 41, "pull_request.synchronize",
                                                                         False)


def test_a_spec_stored_by_an_older_version_still_loads() -> None:
    old = {"repo": "o/r", "default_branch": "main", "installation_id": 7, "pr_number": 3, "head_sha": "abc",
           "draft": False, "fork": True, "kind": "analyze", "analyzer": "crscore", "root": 2,
           "reason": "pull_request.opened"}  # children once carried draft and fork
    job = events.from_spec(old)
    assert job == AnalyzeJob(repo="o/r", installation_id=7, pr_number=3, head_sha="abc", analyzer="crscore",
                             root=2, reason="pull_request.opened")


@pytest.mark.parametrize(("spec", "says"), [
    ({"kind": "rebase", "repo": "o/r"}, "rebase"),
    ({"kind": "analyze", "repo": "o/r", "pr_number": 3, "head_sha": "abc"}, "analyzer"),
    ({"kind": "pr", "repo": "o/r", "pr_number": "three", "head_sha": "abc"}, "pr_number"),
])
def test_a_spec_that_is_no_job_is_refused_in_one_line(spec: dict[str, Any], says: str) -> None:
    with pytest.raises(BadJob) as e:
        events.from_spec(spec)
    assert says in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("broken", ["number", "sha"])
def test_a_pull_request_without_number_or_head_makes_no_job(broken: str) -> None:
    p = load("pull_request", "opened.payload.json")
    if broken == "number":
        p["pull_request"]["number"] = None
    else:
        p["pull_request"]["head"]["sha"] = ""
    routed = events.route("pull_request", p)
    assert routed.jobs == [] and "without a number or head SHA" in routed.note


def test_a_delivery_without_an_installation_makes_no_job_and_says_why() -> None:
    # GitHub's example ready_for_review payload is a repository webhook's: no `installation`
    p = load("pull_request", "ready_for_review.payload.json")
    assert "installation" not in p
    routed = events.route("pull_request", p)
    assert routed.jobs == []
    assert "no installation" in routed.note and "repository or organization webhook" in routed.note
    # the same delivery from an installation of the App is a PR job
    routed = events.route("pull_request", {**p, "installation": {"id": 42}})
    [job] = routed.jobs
    assert isinstance(job, PRJob) and (job.action, job.installation_id, job.pr_number) == (
        "ready_for_review", 42, p["pull_request"]["number"])
    # every other event that makes jobs, stripped of its installation
    for event, name in (("pull_request", "opened.payload.json"), ("check_run", "rerequested.payload.json"),
                        ("check_suite", "rerequested.payload.json"),
                        ("pull_request_review_comment", "created.payload.json"),
                        ("installation", "created.payload.json")):
        full = load(event, name)
        if event == "check_run":
            full["check_run"]["external_id"] = "12:editing_rtc"  # one of ours
        assert events.route(event, full, titles={"EditingRTC": "editing_rtc"}).jobs, (event, name)
        bare = {k: v for k, v in full.items() if k != "installation"}
        routed = events.route(event, bare, titles={"EditingRTC": "editing_rtc"})
        assert routed.jobs == [] and "no installation" in routed.note, (event, name)


def octokit_example(event: str, action: str) -> dict[str, Any]:
    """GitHub's example payload of `event`.`action` from octokit's full list (the first)."""
    examples = json.loads((FIXTURES / "github" / "webhooks" / "octokit" / f"{event}.json").read_text(encoding="utf-8"))
    return dict(next(e for e in examples if e.get("action") == action and e.get("installation")))


def test_every_job_of_a_pull_request_carries_githubs_ids() -> None:
    p = load("pull_request", "opened.payload.json")
    [job] = events.route("pull_request", p).jobs
    assert isinstance(job, PRJob) and (job.repository_id, job.installation_id) == (
        p["repository"]["id"], p["installation"]["id"])
    child = AnalyzeJob.of(job, "crscore", root=1)
    assert child.repository_id == p["repository"]["id"]
    assert events.from_spec(events.to_spec(child)) == child


@pytest.mark.parametrize("action", ["renamed", "transferred"])
def test_a_renamed_or_transferred_repository_is_a_repository_job(action: str) -> None:
    p = octokit_example("repository", action)
    [job] = events.route("repository", p).jobs
    assert job == RepositoryJob(repo=p["repository"]["full_name"], installation_id=p["installation"]["id"],
                                repository_id=p["repository"]["id"], action=action)
    assert events.from_spec(events.to_spec(job)) == job


def test_a_deleted_or_removed_repository_is_a_repository_job_and_others_are_not() -> None:
    p = octokit_example("repository", "renamed")
    p["action"] = "deleted"
    assert [j.action for j in events.route("repository", p).jobs if isinstance(j, RepositoryJob)] == ["deleted"]
    p["action"] = "publicized"
    routed = events.route("repository", p)
    assert routed.jobs == [] and "nothing to do" in routed.note
    p["action"] = "renamed"
    del p["repository"]["id"]
    assert "without the repository's id" in events.route("repository", p).note
    removed = octokit_example("installation_repositories", "removed")
    jobs = events.route("installation_repositories", removed).jobs
    assert jobs and all(isinstance(j, RepositoryJob) and j.action == "removed" for j in jobs)
    assert [j.repository_id for j in jobs if isinstance(j, RepositoryJob)] == [
        r["id"] for r in removed["repositories_removed"]]


# -- the routing table: (event, action) → route -------------------------------------------------
OCTOKIT = HOOKS / "octokit"
SENT_TO_EVERY_APP = {"installation", "installation_repositories", "ping"}  # no subscription needed
NOT_IN_OCTOKIT = {("repository", "deleted")}  # GitHub sends it (its docs list it); octokit has no example


def subscribed() -> set[str]:
    manifest = json.loads((ROOT / "bot" / "app" / "manifest.json").read_text(encoding="utf-8"))
    return set(manifest["default_events"]) | SENT_TO_EVERY_APP


def octokit(event: str) -> list[dict[str, Any]]:
    return list(json.loads((OCTOKIT / f"{event}.json").read_text(encoding="utf-8")))


def test_the_table_routes_exactly_the_events_the_app_is_sent() -> None:
    """No route for an event the App never receives, no received event without one, and each has
    an entry for the actions it does not name (GitHub adds actions)."""
    assert {event for event, _ in events.ROUTES} == subscribed()
    assert all((event, events.ANY) in events.ROUTES for event in subscribed())


def test_every_action_in_the_table_is_one_github_sends() -> None:
    """An action misspelt in the table ("synchronized") would route nothing: each named one is in
    GitHub's examples."""
    sent = {(event, p.get("action")) for event in subscribed() for p in octokit(event)}
    named = {key for key in events.ROUTES if key[1] != events.ANY}
    assert named - sent == NOT_IN_OCTOKIT


@pytest.mark.parametrize("event", sorted(subscribed()))
def test_each_example_goes_through_its_entry_and_an_ignored_one_makes_no_job(event: str) -> None:
    for p in octokit(event):
        action = p.get("action")
        entry = events.ROUTES.get((event, str(action))) or events.ROUTES[(event, events.ANY)]
        assert events.handler_of(event, action) is entry
        routed = events.route(event, p, slug="rtcbot")
        assert routed.jobs or routed.note, f"{event}.{action}: neither a job nor why"
        if isinstance(entry, events.Ignored):
            assert routed.jobs == [] and routed.note == f"{event}.{action}: {entry.why}"


def test_an_event_or_action_without_an_entry_is_refused_with_a_note() -> None:
    repo = {"full_name": "o/r", "id": 7}
    assert events.handler_of("deployment", "created") is None
    assert events.route("deployment", {"action": "created", "repository": repo}).note == \
        "event 'deployment' is not handled"
    odd = events.route("pull_request", {"action": "frobnicated", "repository": repo, "installation": {"id": 1}})
    assert (odd.jobs, odd.note) == ([], "pull_request.frobnicated: nothing to do")
    for action in (None, 7, ["opened"], {"a": 1}):  # not a string: the event's other actions
        routed = events.route("pull_request", {"action": action, "repository": repo, "installation": {"id": 1}})
        assert routed.jobs == [] and routed.note == f"pull_request.{action}: nothing to do"
