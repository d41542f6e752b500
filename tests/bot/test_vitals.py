"""/healthz and /metrics say what the workers' figures do not (bot/app/vitals.py,
bot/store/probe.py): a database that lost a table or takes no write, a nearly full data disk;
the figures the shipped alerts read (deploy/prometheus/alerts.yml), an LLM endpoint that is down
among them; and no request can add a series to /metrics (bot/app/labels.py)."""

from __future__ import annotations

import random
import socket
import string
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from analyzers.llm.retry import FAILURE_REASONS
from analyzers.registry import ANALYZERS
from bot.app.labels import OTHER, REFUSED, known_events
from bot.app.runtime import Runtime
from bot.app.web import create_app
from bot.store.store import Store
from tests.bot.app_support import deliver, drop_schema, make_settings, postgres_url, running_app, scrape, serve
from tests.bot.test_app import payload
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import ScriptedLLM
from tests.support import require


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[str, Runtime]]:
    """The webhook app over HTTP on a SQLite store, no worker running."""
    rt = Runtime(make_settings(tmp_path))
    with serve(create_app(rt.settings, runtime=rt)) as url:
        yield url, rt
    rt.store.close()


def series(metrics: str) -> set[str]:
    """Every series of a /metrics answer: its name and labels."""
    return {line.rsplit(" ", 1)[0] for line in metrics.splitlines() if line and not line.startswith("#")}


def value(metrics: str, name: str) -> float:
    return float(next(line.rsplit(" ", 1)[1] for line in metrics.splitlines() if line.startswith(name + " ")))


@pytest.mark.slow  # fifty requests over HTTP: seconds on a loaded machine
def test_fifty_unsigned_requests_with_random_event_names_add_no_series(tmp_path: Path) -> None:
    rt = Runtime(make_settings(tmp_path, max_body_bytes=4096))
    names = ["".join(random.choices(string.ascii_lowercase, k=12)) for _ in range(50)]
    with serve(create_app(rt.settings, runtime=rt)) as url:
        before = series(scrape(url).text)
        for i, name in enumerate(names):  # unsigned or wrongly signed: refused, each its own event
            r = deliver(url, name, {"zen": name}, signature="" if i % 2 else "sha256=" + "0" * 64)
            assert r.status_code == 401, r.text
        assert deliver(url, "evil-big", None, body=b"x" * 5000).status_code == 413  # oversized
        m = scrape(url).text
    rt.store.close()
    assert not any(name in m for name in names) and "evil" not in m
    refused = f'rtcbot_webhook_requests_total{{event="{REFUSED}",status="401"}}'
    assert series(m) - before == {f'rtcbot_webhook_requests_{kind}{{event="{REFUSED}",status="{status}"}}'
                                  for kind in ("total", "created") for status in (401, 413)}
    assert value(m, refused) == 50


def test_a_signed_delivery_of_an_unknown_event_is_counted_as_other(service: tuple[str, Runtime]) -> None:
    url, _ = service
    assert {"pull_request", "issue_comment", "check_run", "ping"} <= known_events()
    assert deliver(url, "evil_event", {"zen": "hi"}).status_code == 200
    assert deliver(url, "ping", {"zen": "hi", "hook_id": 1}).status_code == 200
    m = scrape(url).text
    assert "evil_event" not in m
    assert f'rtcbot_webhook_requests_total{{event="{OTHER}",status="200"}} 1.0' in m
    assert 'rtcbot_webhook_requests_total{event="ping",status="200"} 1.0' in m
    # the store's count of recorded deliveries too: its event column is the header's
    assert any(s.startswith(f'rtcbot_deliveries_total{{event="{OTHER}"') for s in series(m)), m


def test_healthy_database_queue_and_disk_are_said_in_metrics(service: tuple[str, Runtime]) -> None:
    url, _ = service
    m = scrape(url).text
    assert value(m, "rtcbot_database_up") == 1.0 and value(m, "rtcbot_queue_up") == 1.0
    assert value(m, "rtcbot_data_disk_free_bytes") > 0
    assert value(m, "rtcbot_data_disk_size_bytes") >= value(m, "rtcbot_data_disk_free_bytes")
    assert value(m, "rtcbot_llm_budget_spent_installations") == 0.0


def test_a_dropped_table_makes_healthz_503_naming_it(service: tuple[str, Runtime]) -> None:
    url, rt = service
    assert "check_runs" not in httpx.get(f"{url}/healthz").text
    with rt.store.engine.begin() as c:
        c.execute(text("DROP TABLE check_runs"))
    h = httpx.get(f"{url}/healthz")
    assert h.status_code == 503, h.text
    reasons = [r for r in h.json()["reasons"] if "check_runs" in r]
    assert reasons and "lacks the table" in reasons[0], h.text
    assert h.json()["database"] != "ok"
    assert value(scrape(url).text, "rtcbot_database_up") == 0.0


def test_a_nearly_full_data_disk_makes_healthz_503_naming_the_disk(tmp_path: Path) -> None:
    rt = Runtime(make_settings(tmp_path, health_min_free_mb=1e12))  # a million TiB: more than any disk has
    with serve(create_app(rt.settings, runtime=rt)) as url:
        h = httpx.get(f"{url}/healthz")
    rt.store.close()
    assert h.status_code == 503
    [reason] = [r for r in h.json()["reasons"] if "disk" in r]
    assert "RTCBOT_HEALTH_MIN_FREE_MB" in reason and "RTCBOT_DATA_DIR" in reason, reason
    assert h.json()["disk_free_mb"] > 0


@pytest.mark.services
def test_a_database_that_takes_no_write_makes_healthz_503(tmp_path: Path) -> None:
    schema = f"t_vitals_{uuid.uuid4().hex[:8]}"
    url = postgres_url(schema)
    require(url, "PostgreSQL is not running on 127.0.0.1:5432")
    assert url is not None
    Store(url).close()  # its tables made
    read_only = Store(url.replace("options=", "options=-cdefault_transaction_read_only%3Don%20"), create=False)
    settings = make_settings(tmp_path, database_url=url)
    try:
        with serve(create_app(settings, runtime=Runtime(settings, store=read_only))) as base:
            h = httpx.get(f"{base}/healthz")
            m = scrape(base).text
        assert h.status_code == 503
        [reason] = [r for r in h.json()["reasons"] if "write" in r]
        assert "read-only transaction" in reason, reason
        assert value(m, "rtcbot_database_up") == 0.0
    finally:
        read_only.close()
        drop_schema(schema)


def test_failed_analyses_llm_requests_and_spent_budgets_are_counted(service: tuple[str, Runtime]) -> None:
    url, rt = service
    r = deliver(url, "pull_request", payload("pull_request", "opened.payload.json"))
    assert r.status_code == 202, r.text
    [pr_job] = r.json()["jobs"]  # the `pr` job: no analyzer, not an analysis
    assert rt.store.jobs.finish(pr_job, "failed", "RuntimeError: GitHub did not answer")
    for analyzer, head in (("editing_rtc", "a" * 40), ("editing_rtc", "b" * 40), ("made_up", "c" * 40)):
        job = rt.store.jobs.add({"kind": "analyze", "repo": "o/r", "pr_number": 1, "head_sha": head,
                                 "analyzer": analyzer})
        assert job is not None and rt.store.jobs.finish(job, "failed", "RuntimeError: the model did not answer")
    s = rt.settings
    rt.store.usage.add(7, s.llm_daily_requests, 10)  # one installation spent its day's requests
    rt.store.usage.add(8, 1, 10)
    rt.store.llm_failures.add({"timeout": 3, "status_9xx": 2})  # a reason this rtcbot does not know: other
    m = scrape(url).text
    failed = sorted(x for x in series(m) if x.startswith("rtcbot_analyses_failed_total"))
    # every analyzer's series from 0 (a series that appears at 3 has not increased for Prometheus)
    assert failed == sorted(f'rtcbot_analyses_failed_total{{analyzer="{a}"}}' for a in (*ANALYZERS, OTHER)), failed
    assert value(m, 'rtcbot_analyses_failed_total{analyzer="editing_rtc"}') == 2.0
    assert value(m, f'rtcbot_analyses_failed_total{{analyzer="{OTHER}"}}') == 1.0
    assert value(m, 'rtcbot_analyses_failed_total{analyzer="crscore"}') == 0.0
    assert value(m, "rtcbot_llm_budget_spent_installations") == 1.0
    assert value(m, 'rtcbot_llm_request_failures_total{reason="timeout"}') == 3.0
    assert value(m, f'rtcbot_llm_request_failures_total{{reason="{OTHER}"}}') == 2.0
    assert value(m, 'rtcbot_llm_request_failures_total{reason="status_5xx"}') == 0.0
    assert "status_9xx" not in m


def closed_port_url() -> str:
    """An LLM endpoint's URL on a loopback port nothing listens on (its connections refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


DIFF = "".join(f"--- a/app/m{i}.py\n+++ b/app/m{i}.py\n@@ -1,3 +1,3 @@\n def step(total):\n"
               f"-    total += {i}\n+    total -= {i + 7}\n     return total\n" for i in range(2))


def test_an_llm_endpoint_that_is_down_is_counted_by_reason_not_as_a_failed_analysis(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """The real path (#48 Operable III): an analysis whose LLM endpoint refuses every connection
    ends `done`, its check run saying it could not run, which rtcbot_analyses_failed_total does
    not count; each of its failed attempts is counted in rtcbot_llm_request_failures_total."""
    gh = fake_github()
    pr = gh.add_pr(1, diff_text=DIFF)
    with running_app(tmp_path, gh, scripted_llm(), llm_base_url=closed_port_url()) as app:
        before = scrape(app.url).text
        app.deliver("pull_request", gh.pr_event("opened", 1))
        app.run()
        m = scrape(app.url).text
        jobs = {j.kind: j for j in app.rt.store.jobs.where()}
    reasons = sorted(x for x in series(before) if x.startswith("rtcbot_llm_request_failures_total"))
    assert reasons == sorted(f'rtcbot_llm_request_failures_total{{reason="{r}"}}' for r in FAILURE_REASONS)
    assert jobs["analyze"].status == "done" and '"error": "' in str(jobs["analyze"].result), jobs["analyze"].result
    [run] = gh.runs("rtcbot / EditingRTC", pr.head_sha)
    assert "could not run" in str(run["output"]), run["output"]
    assert value(m, 'rtcbot_analyses_failed_total{analyzer="editing_rtc"}') == 0.0  # the gap: no failed analysis
    attempts = value(m, 'rtcbot_llm_requests_total{kind="analyze"}')
    assert attempts >= 2 and value(m, 'rtcbot_llm_request_failures_total{reason="connection"}') == attempts
    assert sum(value(m, f'rtcbot_llm_request_failures_total{{reason="{r}"}}') for r in FAILURE_REASONS) == attempts


def test_metrics_say_the_database_is_down_when_it_is(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    dead = Store("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=1", create=False)
    with serve(create_app(settings, runtime=Runtime(settings, store=dead))) as url:
        m = scrape(url, timeout=30)
    assert m.status_code == 200 and value(m.text, "rtcbot_database_up") == 0.0
    assert value(m.text, "rtcbot_queue_up") == 1.0  # the SQLite queue in the data folder
    assert "rtcbot_analyses_failed_total" not in m.text
