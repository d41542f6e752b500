"""Routing webhook payloads to jobs, on GitHub's example payloads (octokit/webhooks)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot import events
from tests.support import FIXTURES

HOOKS = FIXTURES / "github" / "webhooks"


def load(event: str, name: str) -> dict[str, Any]:
    return dict(json.loads((HOOKS / event / name).read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", ["opened.payload.json", "synchronize.payload.json", "reopened.payload.json",
                                  "ready_for_review.payload.json", "opened.with-organization.payload.json"])
def test_pull_request_actions_make_one_pr_job(name: str) -> None:
    p = load("pull_request", name)
    routed = events.route("pull_request", p)
    assert len(routed.jobs) == 1
    job = routed.jobs[0]
    assert job["kind"] == "pr"
    assert job["repo"] == p["repository"]["full_name"]
    assert job["pr_number"] == p["pull_request"]["number"]
    assert job["head_sha"] == p["pull_request"]["head"]["sha"]
    assert job["default_branch"] == p["repository"]["default_branch"]
    assert job["action"] == p["action"]


@pytest.mark.parametrize("name", ["closed.payload.json", "labeled.payload.json", "assigned.payload.json",
                                  "converted_to_draft.payload.json", "review_requested.payload.json"])
def test_other_pull_request_actions_make_nothing(name: str) -> None:
    routed = events.route("pull_request", load("pull_request", name))
    assert routed.jobs == []
    assert routed.note


def test_draft_flag_travels_with_the_job() -> None:
    p = load("pull_request", "opened.payload.json")
    p["pull_request"]["draft"] = True
    assert events.route("pull_request", p).jobs[0]["draft"] is True


def test_fork_is_detected() -> None:
    p = load("pull_request", "opened.payload.json")
    p["pull_request"]["head"]["repo"]["full_name"] = "someone/fork"
    assert events.route("pull_request", p).jobs[0]["fork"] is True


@pytest.mark.parametrize("action", ["created", "edited"])
def test_review_comment_runs_the_comment_analyzers(action: str) -> None:
    p = load("pull_request_review_comment", "created.payload.json")
    p["action"] = action
    jobs = events.route("pull_request_review_comment", p, comment_analyzers=["crscore"]).jobs
    assert [(j["kind"], j["analyzer"], j["force"]) for j in jobs] == [("analyze", "crscore", True)]
    assert jobs[0]["head_sha"] == p["pull_request"]["head"]["sha"]


def test_deleted_review_comment_is_ignored() -> None:
    assert events.route("pull_request_review_comment", load("pull_request_review_comment", "deleted.payload.json")).jobs == []


def test_review_submitted_runs_the_comment_analyzers_but_dismissed_does_not() -> None:
    assert len(events.route("pull_request_review", load("pull_request_review", "submitted.payload.json")).jobs) == 1
    assert events.route("pull_request_review", load("pull_request_review", "dismissed.payload.json")).jobs == []


def test_check_run_rerequested_reads_external_id() -> None:
    p = load("check_run", "rerequested.payload.json")
    p["check_run"]["external_id"] = "12:editing_rtc"
    p["check_run"]["pull_requests"] = []  # a fork PR
    jobs = events.route("check_run", p).jobs
    assert jobs == [{**jobs[0], "kind": "analyze", "pr_number": 12, "analyzer": "editing_rtc", "force": True}]
    assert jobs[0]["head_sha"] == p["check_run"]["head_sha"]


def test_foreign_check_run_is_not_ours() -> None:
    routed = events.route("check_run", load("check_run", "rerequested.payload.json"), titles={"EditingRTC": "editing_rtc"})
    assert routed.jobs == [] and "not one of ours" in routed.note


def test_check_run_found_by_title_and_pull_requests() -> None:
    p = load("check_run", "requested_action.payload.json")
    p["check_run"]["name"] = "rtcbot / CRScore"
    p["check_run"]["external_id"] = ""
    p["requested_action"] = {"identifier": "rerun"}
    jobs = events.route("check_run", p, titles={"CRScore": "crscore"}).jobs
    assert [(j["analyzer"], j["pr_number"]) for j in jobs] == [("crscore", 26764)]


def test_requested_action_of_another_button_is_ignored() -> None:
    p = load("check_run", "requested_action.payload.json")  # identifier 'lgtm|26764'
    assert events.route("check_run", p).jobs == []


def test_check_suite_rerequested_reruns_every_pr() -> None:
    p = load("check_suite", "rerequested.payload.json")
    jobs = events.route("check_suite", p).jobs
    assert [(j["kind"], j["pr_number"], j["head_sha"]) for j in jobs] == [("pr", 2, p["check_suite"]["head_sha"])]
    assert events.route("check_suite", load("check_suite", "requested.payload.json")).jobs == []


@pytest.mark.parametrize(("event", "name", "active"), [
    ("installation", "created.payload.json", True), ("installation", "deleted.payload.json", False),
    ("installation", "suspend.payload.json", False), ("installation_repositories", "added.payload.json", True)])
def test_installation_events(event: str, name: str, active: bool) -> None:
    p = load(event, name)
    jobs = events.route(event, p).jobs
    assert jobs[0]["kind"] == "installation" and jobs[0]["active"] is active
    assert jobs[0]["installation_id"] == p["installation"]["id"]


def test_ping_and_unknown_events_make_nothing() -> None:
    assert events.route("ping", load("ping", "payload.json")).note == "pong"
    routed = events.route("issue_comment", load("issue_comment", "created.payload.json"))
    assert routed.jobs == [] and "not handled" in routed.note


def test_external_id_round_trip() -> None:
    assert events.parse_external_id(events.external_id(7, "autofix")) == (7, "autofix")
    assert events.parse_external_id("") == (None, None)
