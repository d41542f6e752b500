"""`rtcbot worker` as a real subprocess: SIGKILL in the middle of a job loses nothing."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.app.runtime import Runtime
from bot.app.settings import ServiceSettings
from bot.app.web import create_app
from tests.bot import app_support
from tests.bot.app_support import deliver, make_settings, serve
from tests.bot.conftest import Backend
from tests.fakes.github_server import FakeGitHub, many_hunks_diff
from tests.fakes.llm_server import RoundTrips, ScriptedLLM
from tests.support import ROOT

RTCBOT = [sys.executable, "-m", "bot"]


# a worker that beats, goes stale and is swept within seconds
TIMINGS = {"RTCBOT_WRITE_INTERVAL_S": "0", "RTCBOT_HEARTBEAT_S": "0.5", "RTCBOT_STALE_AFTER_S": "3",
           "RTCBOT_SWEEP_INTERVAL_S": "0.5"}


def worker_env(settings: ServiceSettings) -> dict[str, str]:
    return app_support.worker_env(settings, **TIMINGS)


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[[dict[str, str]], subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = open(tmp_path / f"worker-{len(procs)}.log", "wb")  # noqa: SIM115
        p = subprocess.Popen([*RTCBOT, "worker"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def held_llm(scripted_llm: Callable[..., ScriptedLLM], kill_landed: threading.Event, delay_s: float) -> ScriptedLLM:
    """An LLM that passes every baseline and re-creates each one-line hunk (all annotated), and
    holds every request that finds more than 3 made until `kill_landed` is set."""
    round_trips = RoundTrips()

    def held(req: dict[str, Any]) -> str | list[str]:
        if llm.request_count > 3:
            kill_landed.wait(120)
        return round_trips(req)

    llm = scripted_llm(held, delay_s=delay_s)
    return llm


@pytest.mark.slow
def test_sigkill_mid_job_then_restart_finishes_everything(
        tmp_path: Path, backend: Backend, fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM],
        start_worker: Callable[[dict[str, str]], subprocess.Popen[bytes]]) -> None:
    gh = fake_github()
    # The kill must land mid-job: the LLM holds every request that finds more than 3 made until
    # the kill has landed. (With answers only slow, 1 s each, the job had a few seconds left
    # when the wait below ended: a test process descheduled that long on a loaded machine
    # killed a worker that had finished it.)
    kill_landed = threading.Event()
    llm = held_llm(scripted_llm, kill_landed, delay_s=1.0)
    settings = make_settings(tmp_path, gh, llm, database_url=backend.database_url, redis_url=backend.redis_url)
    rt = Runtime(settings)
    a = gh.add_pr(1, diff_text=many_hunks_diff("src/a.py", hunks=6))
    b = gh.add_pr(2, diff_text=many_hunks_diff("src/b.py", hunks=2))
    with serve(create_app(settings, runtime=rt)) as url:
        assert deliver(url, "pull_request", gh.pr_event("opened", 1), delivery="del-a").status_code == 202
        assert deliver(url, "pull_request", gh.pr_event("opened", 2), delivery="del-b").status_code == 202
    env = worker_env(settings)
    w1 = start_worker(env)
    # wait until the first analysis is in the middle of its LLM requests
    gh.wait_for(lambda: any(r["status"] == "in_progress" for r in gh.runs(head_sha=a.head_sha))
                and llm.request_count >= 3,
                timeout=90)
    w1.send_signal(signal.SIGKILL)
    w1.wait(10)
    kill_landed.set()  # the requests it left answer to no one; the next worker's are answered
    assert all(r["status"] != "completed" for r in gh.runs(head_sha=a.head_sha))
    killed_at = time.monotonic()

    start_worker(env)
    gh.wait_for(lambda: all(any(r["status"] == "completed" for r in gh.runs("rtcbot / EditingRTC", sha))
                            for sha in (a.head_sha, b.head_sha)), timeout=180, interval=0.25)
    recovered_in = time.monotonic() - killed_at
    runs_a = gh.runs("rtcbot / EditingRTC", a.head_sha)
    assert len(runs_a) == 1, "the same check run was finished, not a second one made"
    assert runs_a[0]["conclusion"] == "neutral" and len(runs_a[0]["annotations"]) == 6
    assert len(gh.runs("rtcbot / EditingRTC", b.head_sha)[0]["annotations"]) == 2
    # a check run completes on GitHub a moment before its job is marked done in the store
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(j.status == "done" for j in rt.store.jobs.where()):
        time.sleep(0.1)
    jobs = rt.store.jobs.where()
    assert {j.delivery_id for j in jobs} == {"del-a", "del-b"}
    assert all(j.status == "done" for j in jobs), [(j.kind, j.status, j.result) for j in jobs]
    killed = [j for j in jobs if j.kind == "analyze" and j.head_sha == a.head_sha]
    assert killed[0].attempts == 2
    print(f"recovered in {recovered_in:.1f} s")
    rt.store.close()


def test_the_first_line_names_only_what_the_warm_up_warms(tmp_path: Path) -> None:
    from bot.app.worker import warm_up_words

    assert warm_up_words(make_settings(tmp_path, pmd_server="off", llm_base_url="http://llm/v1"), pmd_ready=True) \
        == "the embedding model, the LLM endpoint"
    assert warm_up_words(make_settings(tmp_path), pmd_ready=True) \
        == "the embedding model, PMD (the embedded model starts on first use)"
    assert "PMD" not in warm_up_words(make_settings(tmp_path), pmd_ready=False)


@pytest.mark.slow
def test_a_sigkilled_workers_job_is_taken_over_within_15_s_reusing_the_cached_answers(
        tmp_path: Path, backend: Backend, fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM],
        start_worker: Callable[[dict[str, str]], subprocess.Popen[bytes]]) -> None:
    """With the default timings (heartbeat 2 s, stale after 8 s, a sweep every 3 s): a worker
    SIGKILLed mid-analysis while another runs; the analysis runs again (attempt 2) within
    15 s of the kill, the dead worker is no longer counted live within 15 s, and the answers the
    LLM gave the killed attempt are not asked for again (the LLM cache)."""
    gh = fake_github()
    kill_landed = threading.Event()
    round_trips = RoundTrips()

    def held(req: dict[str, Any]) -> str | list[str]:
        if llm.request_count > 3:
            kill_landed.wait(120)
        return round_trips(req)

    llm = scripted_llm(held)
    settings = make_settings(tmp_path, gh, llm, database_url=backend.database_url, redis_url=backend.redis_url)
    rt = Runtime(settings)
    a = gh.add_pr(1, diff_text=many_hunks_diff("src/a.py", hunks=6))
    with serve(create_app(settings, runtime=rt)) as url:
        assert deliver(url, "pull_request", gh.pr_event("opened", 1), delivery="del-a").status_code == 202
    env = {k: v for k, v in worker_env(settings).items()
           if k not in ("RTCBOT_HEARTBEAT_S", "RTCBOT_STALE_AFTER_S", "RTCBOT_SWEEP_INTERVAL_S")}
    w1 = start_worker(env)
    gh.wait_for(lambda: len(llm.served) >= 3, timeout=90)
    w2 = start_worker(env)  # the peer that takes over, running (and sweeping) when w1 dies
    gh.wait_for(lambda: len(rt.store.workers.live(8.0)) == 2, timeout=90)
    answered = [json.dumps(llm.requests[i], sort_keys=True) for i, _, _ in list(llm.served)]
    w1.send_signal(signal.SIGKILL)
    w1.wait(10)
    killed_at = time.monotonic()
    kill_landed.set()
    assert w2.poll() is None
    [analysis] = [j for j in rt.store.jobs.where(kind="analyze")]
    taken_over = dead_dropped = None
    while time.monotonic() - killed_at < 30 and (taken_over is None or dead_dropped is None):
        if taken_over is None and (rt.store.jobs.get(analysis.id) or analysis).attempts >= 2:
            taken_over = time.monotonic() - killed_at
        if dead_dropped is None and w1.pid not in {w.pid for w in rt.store.workers.live(8.0)}:
            dead_dropped = time.monotonic() - killed_at
        time.sleep(0.1)
    assert taken_over is not None and taken_over < 15, taken_over
    assert dead_dropped is not None and dead_dropped < 15, dead_dropped
    gh.wait_for(lambda: any(r["status"] == "completed" for r in gh.runs("rtcbot / EditingRTC", a.head_sha)),
                timeout=120, interval=0.25)
    asked = [json.dumps(r, sort_keys=True) for r in list(llm.requests)]
    assert answered and all(asked.count(q) == 1 for q in answered), "an answer given before the kill was asked again"
    print(f"taken over in {taken_over:.1f} s; the dead worker dropped in {dead_dropped:.1f} s")
    rt.store.close()
