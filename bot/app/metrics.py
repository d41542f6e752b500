"""The webhook service's figures for /metrics: its own (webhook answers by event and status,
the time to answer one), the store's (deliveries, jobs, LLM use, read at scrape time: the
worker is another process) and the health figures /healthz sees. Under gunicorn each worker
process counts in files of PROMETHEUS_MULTIPROC_DIR and a scrape sums them all.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from flask import Response, g, jsonify, request
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from bot.app.health import worker_figures
from bot.app.labels import event_label
from bot.app.runtime import Runtime
from bot.app.sweep import why
from bot.app.vitals import VitalsCollector

log = logging.getLogger("bot.app.web")  # the service's lines, under the name they always had
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


WAITING_TOP = 10  # installations named in the waiting figures; the rest are "other"


class StoreCollector(Collector):
    """Figures kept in the database, read at scrape time (the worker is another process)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def collect(self) -> Any:
        try:
            m = self.runtime.store.metrics()
        except Exception:
            log.warning("metrics: the database did not answer", exc_info=True)
            return
        d = CounterMetricFamily("rtcbot_deliveries", "Webhook deliveries recorded", labels=["event", "status"])
        per: dict[tuple[str, str], float] = {}  # events outside the known set summed as "other"
        for event, status, n in m["deliveries"]:
            key = (event_label(event), str(status))
            per[key] = per.get(key, 0) + n
        for key, n in sorted(per.items()):
            d.add_metric(list(key), n)
        yield d
        jobs = GaugeMetricFamily("rtcbot_jobs", "Jobs by kind and status", labels=["kind", "status"])
        dur = CounterMetricFamily("rtcbot_job_duration_seconds", "Time spent in jobs", labels=["kind"])
        req = CounterMetricFamily("rtcbot_llm_requests", "LLM requests made by jobs", labels=["kind"])
        tok = CounterMetricFamily("rtcbot_llm_tokens", "LLM tokens used by jobs", labels=["kind"])
        per_kind: dict[str, list[float]] = {}
        for kind, status, n, seconds, requests_, tokens in m["jobs"]:
            jobs.add_metric([kind, status], n)
            acc = per_kind.setdefault(kind, [0.0, 0.0, 0.0])
            acc[0] += float(seconds)
            acc[1] += float(requests_)
            acc[2] += float(tokens)
        for kind, (seconds, requests_, tokens) in per_kind.items():
            dur.add_metric([kind], seconds)
            req.add_metric([kind], requests_)
            tok.add_metric([kind], tokens)
        yield from (jobs, dur, req, tok)
        # cache figures live here, for the operator, and in no check run: a tenant who saw them
        # could test whether an answer was cached, i.e. whether some code was seen before
        hits = CounterMetricFamily("rtcbot_llm_cache_hits", "LLM samples served from the cache (all installations)")
        hits.add_metric([], float(m.get("llm_cache_hits", 0)))
        yield hits
        yield from self.health()
        yield from self.waiting()

    def waiting(self) -> Any:
        """The queued jobs and the oldest one's wait per installation (by id: the 10 that waited
        longest, the rest as "other"), as the fair dispatch sees them (bot/store/claims.py)."""
        try:
            rows = self.runtime.claims.waiting(top=WAITING_TOP)
        except Exception:
            log.warning("metrics: the database did not answer", exc_info=True)
            return
        queued = GaugeMetricFamily("rtcbot_installation_queued_jobs", "Queued jobs per installation "
                                   f"(the {WAITING_TOP} that waited longest; the rest: other)", labels=["installation"])
        age = GaugeMetricFamily("rtcbot_installation_oldest_queued_age_seconds",
                                "Age of each installation's oldest queued job", labels=["installation"])
        for installation, n, wait_s in rows:
            label = "other" if installation is None else str(installation)
            queued.add_metric([label], float(n))
            age.add_metric([label], wait_s)
        yield from (queued, age)

    def health(self) -> Any:
        """The live workers (heartbeat within RTCBOT_WORKER_STALE_S), those warmed up, and the
        oldest queued job's age (0 when none waits), as /healthz sees them."""
        try:
            workers, oldest_age = worker_figures(self.runtime)
        except Exception:
            log.warning("metrics: the database did not answer", exc_info=True)
            return
        for name, text, value in (
                ("rtcbot_workers_live", "Workers whose heartbeat is recent", len(workers)),
                ("rtcbot_workers_ready", "Live workers whose warm-up is over", sum(w["ready"] for w in workers)),
                ("rtcbot_oldest_queued_job_age_seconds", "Age of the oldest queued job (0: none)", oldest_age or 0.0)):
            gauge = GaugeMetricFamily(name, text)
            gauge.add_metric([], float(value))
            yield gauge


def scrape_registry(own: CollectorRegistry, rt: Runtime) -> CollectorRegistry:
    """What /metrics serves. Under `rtcbot serve` (gunicorn, several worker processes) each
    worker's counters live in files of PROMETHEUS_MULTIPROC_DIR (set before prometheus_client
    is imported, bot/app/commands/serve.py): every scrape, whichever worker answers, sums all of
    them, so successive scrapes agree. In one process (tests, a WSGI server of your own): this
    process's registry."""
    path = os.environ.get(MULTIPROC_ENV)
    if not path:
        return own
    from prometheus_client import multiprocess

    merged = CollectorRegistry()
    multiprocess.MultiProcessCollector(merged, path=path)
    merged.register(StoreCollector(rt))
    merged.register(VitalsCollector(rt))
    return merged


class Meters:
    """The app's own figures (webhook answers by event and status, time to answer one) and the
    registry /metrics serves; `answer` is every JSON answer of the app, counted."""

    def __init__(self, rt: Runtime) -> None:
        registry = CollectorRegistry()
        self.webhooks = Counter("rtcbot_webhook_requests", "Webhook requests by answer", ["event", "status"],
                                registry=registry)
        self.latency = Histogram("rtcbot_webhook_seconds", "Time to answer a webhook", registry=registry,
                                 buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
        registry.register(StoreCollector(rt))
        registry.register(VitalsCollector(rt))
        self.scraped = scrape_registry(registry, rt)

    def answer(self, status: int, message: str, event: str = "", **extra: Any) -> Response:
        """`event`: the delivery's, once its signature is trusted ("" for a refused one): its
        label is from a known set (bot/app/labels.py)."""
        if request.path == "/webhook":  # /metrics', /stats' and the error pages' answers are not webhooks
            self.count(event_label(event), status)
        jobs = extra.get("jobs")
        # the answer in words, for the request's log line: "202: accepted (jobs 12, 13)"
        g.said = f"{status}: {message}" + (f" (jobs {', '.join(map(str, jobs))})" if jobs else "")
        resp = jsonify({"message": message, **extra})
        resp.status_code = status
        return resp

    def count(self, event: str, status: int) -> None:
        """Count a webhook answer (`safely`)."""
        safely("count a webhook answer", lambda: self.webhooks.labels(event, str(status)).inc())

    def observe(self, seconds: float) -> None:
        """The time to answer a webhook (`safely`)."""
        safely("record a webhook's time", lambda: self.latency.observe(seconds))


def safely(what: str, write: Callable[[], None]) -> None:
    """A metric written, or, where it cannot be (its file's folder gone, its disk full), a
    warning: never the request's failure."""
    try:
        write()
    except Exception as e:  # one line, no traceback: it says the same every time
        log.warning("metrics: could not %s (%s)", what, why(e))
