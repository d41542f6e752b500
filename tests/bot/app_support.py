"""Helpers for the GitHub App's tests: settings on the fakes, a real HTTP server for the
Flask app, signed deliveries, running queued jobs the way a worker's thread does, and the App
end to end on them (`App`, `running_app`)."""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from flask import Flask
from werkzeug.serving import make_server

from bot.app.runtime import Runtime
from bot.app.settings import ServiceSettings
from bot.app.web import create_app
from bot.github import installation_client
from bot.github.transport import tls_context
from tests.fakes import STOP_POLL_S
from tests.fakes.github_server import FakeGitHub, sign
from tests.fakes.llm_server import ScriptedLLM
from tests.support import NO_PMD_WARM_UP, ROOT

SECRET = "It's a Secret to Everybody"
METRICS_TOKEN = "metrics-token-for-the-tests"  # RTCBOT_METRICS_TOKEN: without it /metrics is off


def redis_db() -> int:
    """The Redis database number of this test session, and of this xdist worker in it."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")  # set before xdist's workers collect
    db = int(os.environ.get("RTCBOT_TEST_REDIS_DB", "15")) - int(worker.removeprefix("gw") or 0)
    if not 0 <= db <= 15:
        raise RuntimeError(f"Redis database {db} for worker {worker}: "
                           "set RTCBOT_TEST_REDIS_DB higher or use fewer workers")
    return db


PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
# each concurrent test session on one machine takes its own database (RTCBOT_TEST_REDIS_DB, 0-15):
# the tests flush it. Each pytest-xdist worker of a session takes the next one down (gw0: 15,
# gw1: 14, …), so one worker's FLUSHDB never empties another's queue.
REDIS_URL = f"redis://127.0.0.1:6379/{redis_db()}"


def make_settings(tmp_path: Path, gh: FakeGitHub | None = None, llm: ScriptedLLM | None = None,
                  **kw: Any) -> ServiceSettings:
    values: dict[str, Any] = {
        "webhook_secret": SECRET,
        "metrics_token": METRICS_TOKEN,
        "data_dir": tmp_path / "data",
        "database_url": None,
        "redis_url": None,
        "write_interval_s": 0.0,
        "http_retries": 3,
        "analyzers": ["editing_rtc"],
        "llm_base_url": None,
        "llm_model": None,
        "health_min_free_mb": 0.0,  # a test's /healthz does not depend on the machine's free disk
    }
    if gh is not None:
        values.update(app_id=gh.app_id, private_key=gh.private_key_pem, github_api_url=gh.base_url)
    if llm is not None:
        values.update(llm_base_url=llm.base_url, llm_model=llm.model)
    values.update(kw)
    return ServiceSettings(**values)


def worker_env(settings: ServiceSettings, **overrides: str) -> dict[str, str]:
    """The environment of an `rtcbot worker` a test starts on `settings`: none of this process's
    RTCBOT_ variables or service URLs, one thread, no PMD warm-up (its pull requests carry no
    Java: tests/support.py), then `overrides`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RTCBOT_") and k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({
        "RTCBOT_APP_ID": str(settings.app_id),
        "RTCBOT_PRIVATE_KEY": settings.private_key or "",
        "RTCBOT_GITHUB_API_URL": settings.github_api_url,
        "RTCBOT_DATA_DIR": str(settings.data_dir),
        "RTCBOT_LLM_BASE_URL": settings.llm_base_url or "",
        "RTCBOT_LLM_MODEL": settings.llm_model or "",
        "RTCBOT_ANALYZERS": ",".join(settings.analyzers),
        "RTCBOT_WORKERS": "1",
        "RTCBOT_CACHE_DIR": os.environ.get("RTCBOT_CACHE_DIR", ""),
        "PYTHONPATH": str(ROOT),
        **NO_PMD_WARM_UP,
        **overrides,
    })
    if settings.database_url:
        env["DATABASE_URL"] = settings.database_url
    if settings.redis_url:
        env["REDIS_URL"] = settings.redis_url
    return env


def scrape(url: str, token: str = METRICS_TOKEN, **kw: Any) -> httpx.Response:
    """GET /metrics of the app at `url` as Prometheus would, with the bearer token."""
    return httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {token}"}, verify=tls_context(), **kw)


@contextmanager
def serve(app: Flask) -> Iterator[str]:
    """The app on a loopback port over real HTTP; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    t = threading.Thread(target=server.serve_forever, args=(STOP_POLL_S,), daemon=True)  # a prompt shutdown()
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


def deliver(base_url: str, event: str, payload: Any, *, secret: str = SECRET, delivery: str | None = None,
            body: bytes | None = None, signature: str | None = None, headers: dict[str, str] | None = None,
            client: httpx.Client | None = None) -> httpx.Response:
    raw = body if body is not None else json.dumps(payload).encode()
    h = {"Content-Type": "application/json", "X-GitHub-Event": event,
         "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
         "X-Hub-Signature-256": signature if signature is not None else sign(raw, secret)}
    h.update(headers or {})
    if client is not None:
        return client.post(f"{base_url}/webhook", content=raw, headers=h, timeout=30)
    # a new client per delivery (no connection kept between them), on the process's one SSL
    # context: httpx would read the CA bundle again for each (~45 ms of CPU)
    return httpx.post(f"{base_url}/webhook", content=raw, headers=h, timeout=30, verify=tls_context())


def drain(runtime: Runtime, limit: int = 200) -> int:
    """Run the queued jobs in this process, as a worker's thread does (claimed from the store, in
    their fair order), until none is left; how many ran. The queue's wake-ups are taken too."""
    n = 0
    while n < limit:
        if runtime.run_next() is None:
            while runtime.queue.pending():
                runtime.queue.wait(0.01)
            return n
        n += 1
    raise AssertionError("the queue did not drain")


@dataclass
class App:
    """The GitHub App end to end: its Runtime, its webhook server's base URL, the scripted LLM it
    asks and the fake GitHub of its (first) installation."""

    rt: Runtime
    url: str
    llm: ScriptedLLM
    gh: FakeGitHub

    def deliver(self, event: str, payload: dict[str, Any], **kw: Any) -> httpx.Response:
        """A signed delivery (`deliver`'s keywords), which the App must accept (200 or 202)."""
        r = deliver(self.url, event, payload, **kw)
        assert r.status_code in (200, 202), r.text
        return r

    def run(self) -> int:
        """Run the queued jobs, and those they queue; how many ran."""
        return drain(self.rt, limit=1000)

    def say(self, body: str, number: int = 1, user: str = "Codertocat", user_type: str = "User",
            **kw: Any) -> dict[str, Any]:
        """`user` writes `body` in the conversation of pull request `number`; the jobs run."""
        c = self.gh.add_issue_comment(number, body, user=user, user_type=user_type)
        self.deliver("issue_comment", self.gh.issue_comment_event(number, c), **kw)
        self.run()
        return c

    def replies(self) -> list[str]:
        """What the App wrote in pull requests' conversations."""
        return [c["body"] for c in self.gh.issue_comments if c["user"]["login"] == "rtcbot[bot]"]


@contextmanager
def running_app(tmp_path: Path, gh: FakeGitHub, llm: ScriptedLLM, *more: FakeGitHub, **settings: Any) -> Iterator[App]:
    """One Runtime and webhook server (on a loopback port) for the installations of `gh` and of
    `more` (each fake is one installation), on `llm`; `settings` are ServiceSettings fields
    over `make_settings`'. Served until the block ends, then its store is closed."""
    first = make_settings(tmp_path, gh, llm, **settings)
    others = {g.installation_id: make_settings(tmp_path, g, llm, **settings) for g in more}
    rt = Runtime(first, github=lambda inst: installation_client(others.get(inst, first), inst))
    try:
        with serve(create_app(first, runtime=rt)) as url:
            yield App(rt, url, llm, gh)
    finally:
        rt.store.close()


def postgres_url(schema: str) -> str | None:
    """A URL on a fresh schema of the local PostgreSQL, or None when it does not answer."""
    try:
        import psycopg

        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=3, autocommit=True) as c:
            c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            c.execute(f'CREATE SCHEMA "{schema}"')
    except Exception:
        return None
    return f"{PG_URL}?options=-csearch_path%3D{schema}"


def drop_schema(schema: str) -> None:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", connect_timeout=3, autocommit=True) as c:
        c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def redis_ok() -> bool:
    try:
        import redis

        r = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
        r.flushdb()
        return True
    except Exception:
        return False
