"""Every example payload octokit publishes for the events the App sees, delivered to the App's
webhook endpoint over real HTTP, signed: each gets a documented answer (200 for a ping or
nothing to do, 202 with its jobs), never a 5xx; those that name an installation and an open
pull request with an action rtcbot handles make jobs (docs/github-app.md: opened, updated,
reopened or marked ready for review; a review comment; a submitted review)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.app.runtime import Runtime
from bot.app.web import create_app
from tests.bot.app_support import deliver, make_settings, serve
from tests.support import FIXTURES

OCTOKIT = FIXTURES / "github" / "webhooks" / "octokit"
EVENTS = sorted(p.stem for p in OCTOKIT.glob("*.json"))
# (event, action) that ask for work on a pull request, as docs/github-app.md describes them
PR_WORK = {("pull_request", a) for a in ("opened", "synchronize", "reopened", "ready_for_review")} | {
    ("pull_request_review_comment", "created"), ("pull_request_review_comment", "edited"),
    ("pull_request_review", "submitted")}


def examples() -> list[Any]:
    out = []
    for event in EVENTS:
        for i, payload in enumerate(json.loads((OCTOKIT / f"{event}.json").read_text(encoding="utf-8"))):
            out.append(pytest.param(event, payload, id=f"{event}.{payload.get('action', '-')}.{i}"))
    return out


def asks_for_pr_work(event: str, payload: dict[str, Any]) -> bool:
    pr = payload.get("pull_request") or {}
    return ((event, payload.get("action")) in PR_WORK and isinstance((payload.get("installation") or {}).get("id"), int)
            and isinstance(pr.get("number"), int) and bool((pr.get("head") or {}).get("sha"))
            and pr.get("state", "open") == "open")


@pytest.fixture
def app_url(tmp_path: Path) -> Iterator[tuple[str, Runtime]]:
    """A fresh App per delivery: one example's work never merges into another's."""
    settings = make_settings(tmp_path)  # SQLite and its queue: nothing runs the jobs
    rt = Runtime(settings)
    with serve(create_app(settings, runtime=rt)) as url:
        yield url, rt
    rt.store.close()


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client() as c:
        yield c


def test_the_vendored_examples_cover_every_event_the_app_subscribes_to() -> None:
    path = Path(__file__).resolve().parents[2] / "bot" / "app" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    subscribed = set(manifest["default_events"]) | {"installation", "installation_repositories", "ping"}
    assert subscribed <= set(EVENTS), sorted(subscribed - set(EVENTS))
    assert sum(1 for _ in examples()) >= 70  # every example, not a sample


@pytest.mark.parametrize(("event", "payload"), examples())
def test_each_octokit_example_gets_a_documented_answer(app_url: tuple[str, Runtime], client: httpx.Client,
                                                      event: str, payload: dict[str, Any]) -> None:
    url, _ = app_url
    r = deliver(url, event, payload, client=client)
    assert r.status_code in (200, 202), f"{event}.{payload.get('action')}: {r.status_code} {r.text}"
    answer = r.json()
    assert isinstance(answer.get("message"), str) and answer["message"]
    if event == "ping":
        assert (r.status_code, answer["message"]) == (200, "pong")
        return
    jobs = answer.get("jobs")
    assert isinstance(jobs, list)
    assert (r.status_code == 202) == bool(jobs), answer  # 202 exactly when jobs are queued
    if asks_for_pr_work(event, payload):
        assert jobs, f"{event}.{payload['action']} names installation and pull request, yet: {answer}"
    if event.startswith("installation"):
        assert jobs, answer  # an installation is always recorded
