"""`rtcbot worker` through a Redis outage and a PostgreSQL outage: a real server of the test's own,
stopped for a few seconds, then started again. The worker says so in one line when it goes and
one when it is back (no traceback, no line per try), then runs the next job; it says "starting"
before its warm-up and "ready" after it."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.app.runtime import Runtime
from bot.app.web import create_app
from tests.bot.app_support import deliver, make_settings, serve
from tests.bot.test_worker import start_worker, worker_env  # noqa: F401  (start_worker: a fixture)
from tests.fakes.github_server import FakeGitHub, fake_github, many_hunks_diff  # noqa: F401  (a fixture)
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.reliability.services import Postgres, Redis, started

DOWN_S = 4.0


@pytest.fixture
def redis() -> Iterator[Redis]:
    with started(Redis) as server:
        yield server


def _wait_log(path: Path, text: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = path.read_text(errors="replace")
        if text in log:
            return log
        time.sleep(0.1)
    raise AssertionError(f"{text!r} not in the worker's log within {timeout} s:\n{path.read_text()[-3000:]}")


# its own redis-server, stopped and started again
@pytest.mark.chaos
@pytest.mark.services
@pytest.mark.slow
def test_a_redis_outage_is_two_lines_then_the_worker_runs_the_next_job(
        tmp_path: Path, redis: Redis, fake_github: Callable[..., FakeGitHub],  # noqa: F811
        scripted_llm: Callable[..., ScriptedLLM],
        start_worker: Callable[[dict[str, str]], subprocess.Popen[bytes]]) -> None:  # noqa: F811
    gh, llm = fake_github(), scripted_llm(varied)
    settings = make_settings(tmp_path, gh, llm, redis_url=redis.url)
    rt = Runtime(settings)
    worker = start_worker(worker_env(settings))
    log_path = tmp_path / "worker-0.log"
    log = _wait_log(log_path, "rtcbot: worker ready", 180)
    starting, ready = log.index("rtcbot: worker on the redis queue"), log.index("rtcbot: worker ready")
    assert starting < ready and "starting (warming up" in log[starting:ready]
    assert log.count("worker ready") == 1

    redis.stop()  # SIGKILL
    time.sleep(DOWN_S)
    assert worker.poll() is None
    redis.start()
    _two_lines(log_path, ready, f"the Redis queue at REDIS_URL={redis.url} is away (ConnectionError: ")
    _runs_a_job(gh, rt, log_path)


@pytest.mark.chaos
@pytest.mark.services
@pytest.mark.slow
def test_a_database_outage_is_two_lines_then_the_worker_runs_the_next_job(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub],  # noqa: F811
        scripted_llm: Callable[..., ScriptedLLM],
        start_worker: Callable[[dict[str, str]], subprocess.Popen[bytes]]) -> None:  # noqa: F811
    with started(Postgres) as pg:
        gh, llm = fake_github(), scripted_llm(varied)
        settings = make_settings(tmp_path, gh, llm, database_url=pg.create_database("outage"))
        rt = Runtime(settings)
        worker = start_worker(worker_env(settings))  # the SQLite queue: only the database goes
        log_path = tmp_path / "worker-0.log"
        ready = _wait_log(log_path, "rtcbot: worker ready", 180).index("rtcbot: worker ready")
        pg.stop("immediate")  # a crash
        time.sleep(DOWN_S)
        assert worker.poll() is None
        pg.start()
        # the server's reason, not SQLAlchemy's: which one depends on whether the worker's first
        # query after the crash found its pooled connection (closed) or opened one (refused)
        away = f"the database at DATABASE_URL=postgresql+psycopg://***@127.0.0.1:{pg.port}/outage is away ("
        _two_lines(log_path, ready, away, ("Connection refused); ", "server closed the connection unexpectedly); "))
        _runs_a_job(gh, rt, log_path)


def _two_lines(log_path: Path, ready: int, away_text: str, reasons: tuple[str, ...] = ("",)) -> None:
    """The worker's log after `ready` says the outage in one line when it went (`away_text`, then
    one of `reasons`) and one when it was back, and nothing else about it."""
    log = _wait_log(log_path, "is back after", 60)
    outage = log[ready:]
    away = [line for line in outage.splitlines() if " is away (" in line]
    back = [line for line in outage.splitlines() if " is back after " in line]
    assert len(away) == 1 and len(back) == 1, outage
    assert any(away_text + reason in away[0] for reason in reasons), away[0]
    lasted = float(back[0].split(" is back after ")[1].split(" s")[0])
    assert DOWN_S - 1 < lasted < DOWN_S + 35, back[0]  # the backoff's last wait is at most 30 s
    assert "Traceback" not in log and "Error reading" not in log, outage
    assert len(outage.splitlines()) <= 6, outage  # the two lines, nothing per try


def _runs_a_job(gh: FakeGitHub, rt: Runtime, log_path: Path) -> None:
    pr = gh.add_pr(1, diff_text=many_hunks_diff("src/a.py", hunks=1))
    with serve(create_app(rt.settings, runtime=rt)) as url:
        assert deliver(url, "pull_request", gh.pr_event("opened", 1), delivery="after-outage").status_code == 202
    gh.wait_for(lambda: any(r["status"] == "completed" for r in gh.runs("rtcbot / EditingRTC", pr.head_sha)),
                timeout=120, interval=0.25)
    assert "Traceback" not in log_path.read_text(errors="replace")
    rt.store.close()
