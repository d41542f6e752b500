"""docs/github-app.md and docs/deploy.md followed from a clean state: a fresh PostgreSQL schema,
the documented env file (deploy/rtcbot.env.example), `rtcbot serve` and `rtcbot worker` started
with their systemd units' command lines (tests/deploy/stack.py), GitHub replaced by the fake
GitHub server and the LLM endpoint by a scripted one; a signed `pull_request.opened` delivery
(GitHub's own example payload) must end in a completed check run with its annotations. The
time from the first start to that check run is printed (docs/deploy.md quotes it)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.bot.app_support import deliver
from tests.deploy.stack import CHECK, Stack, edits_diff

pytestmark = [pytest.mark.slow, pytest.mark.services]
FIRST_CHECK_RUN_S = 180.0  # generous: the machine is shared; the measured figure is printed


def test_the_documented_deployment_completes_a_check_run(tmp_path: Path) -> None:
    stack = Stack(tmp_path, overrides={"RTCBOT_ANALYZERS": "editing_rtc"})
    try:
        t0 = time.monotonic()
        stack.start_serve()
        stack.start_worker()
        stack.wait_healthy()
        started = time.monotonic() - t0
        sent = time.monotonic()
        head = stack.open_pr(1, edits_diff(1, hunks=2))
        stack.wait_status(head, "completed", timeout=FIRST_CHECK_RUN_S)
        done = time.monotonic()
        (run,) = stack.gh.runs(CHECK, head)
        annotations = [a for r in stack.gh.writes() for a in (r.body or {}).get("output", {}).get("annotations", [])]
        print(f"\nwalkthrough: services up and /healthz 200 after {started:.1f} s; "
              f"delivery to completed check run {done - sent:.1f} s; "
              f"start to first completed check run {done - t0:.1f} s")
        assert run["conclusion"] in ("success", "neutral", "failure"), run
        assert len(annotations) == 2, annotations  # one per hunk
        operator_checks(stack)
        assert "Traceback" not in stack.log("serve") + stack.log("worker") + stack.log("stray")
    finally:
        stack.close()


def operator_checks(stack: Stack) -> None:
    """What docs/deploy.md promises the operator after the first check run: a delivery signed
    with another secret is a line in serve's log with its id; a worker that forgot REDIS_URL
    is not counted; with no worker on the queue /healthz is 503 and says why while /livez is 200."""
    wrong = deliver(stack.url, "pull_request", {"zen": "x"}, secret="not the App's secret", delivery="walk-401")
    assert wrong.status_code == 401
    assert "refused delivery walk-401 (event pull_request): 401 missing or wrong X-Hub-Signature-256" \
        in stack.log("serve"), stack.log("serve")[-2000:]
    stack.start_worker("stray", without=("REDIS_URL",))  # on the SQLite queue of its data folder
    # its heartbeat row comes after the line start_worker waits for, and before its "ready" line
    # (marked ready with a beat): without this wait a loaded machine could ask /healthz first
    stack.gh.wait_for(lambda: "rtcbot: worker ready" in stack.log("stray"), timeout=120, interval=0.1)
    stack.stop("worker", signal.SIGINT)  # its heartbeat row goes with it
    t0 = time.monotonic()
    health = httpx.get(f"{stack.url}/healthz", timeout=10)
    assert health.status_code == 503, health.text
    [reason] = health.json()["reasons"]
    assert reason.startswith("no live worker on this service's queue: 1 live worker(s) consume another queue (sqlite:")
    assert httpx.get(f"{stack.url}/livez", timeout=10).status_code == 200
    print(f"walkthrough: refused delivery logged; /healthz 503 naming the stray worker's queue, /livez 200 "
          f"({time.monotonic() - t0:.2f} s)")
