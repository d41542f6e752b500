"""What a service needs beside its workers, for /healthz and /metrics: room on the data folder's
disk (RTCBOT_HEALTH_MIN_FREE_MB), a database that has every table and takes a write (a read
alone answers on a database that lost a table or cannot write: bot/store/probe.py), a queue
that answers; and the figures the shipped alerts read (deploy/prometheus/alerts.yml): failed
analyses by analyzer, the workers' failed LLM requests by reason (analyzers/llm/retry.py) and
the installations whose daily LLM budget is spent. Every label value comes from a known set
(bot/app/labels.py, FAILURE_REASONS)."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from analyzers.llm.retry import FAILURE_REASONS
from analyzers.registry import ANALYZERS
from bot.app.labels import OTHER, analyzer_label
from bot.app.queue import ping
from bot.app.runtime import Runtime
from bot.app.sweep import why

log = logging.getLogger("bot.app.web")
MIB = 2**20


@dataclass(frozen=True)
class Disk:
    free_bytes: int
    total_bytes: int


def data_disk(path: Path) -> Disk:
    """The free and total bytes of the disk that holds `path` (its nearest existing folder)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    usage = shutil.disk_usage(path)
    return Disk(usage.free, usage.total)


def disk_problem(disk: Disk, min_free_mb: float) -> str | None:
    """Why the data disk makes the service unhealthy, or None."""
    if disk.free_bytes >= min_free_mb * MIB:
        return None
    return (f"the data disk (RTCBOT_DATA_DIR) is nearly full: {disk.free_bytes / MIB:.1f} MiB free, less than "
            f"RTCBOT_HEALTH_MIN_FREE_MB ({min_free_mb:g} MiB); deliveries are refused (503) once it is full")


def store_problems(rt: Runtime) -> list[str]:
    """Why the database cannot do its job although it answers: tables missing, no write taken."""
    problems: list[str] = []
    missing = rt.store.missing_tables()
    if missing:
        problems.append(f"the database lacks the table(s) {', '.join(missing)}: restore it, or start `rtcbot "
                        "serve` once on an empty database to create them")
    try:
        rt.store.probe_write()
    except Exception as e:
        problems.append(f"the database does not take a write ({why(e)})")
    return problems


def database_works(rt: Runtime) -> bool:
    try:
        rt.store.ping()
        return not store_problems(rt)
    except Exception:
        return False


def queue_answers(rt: Runtime) -> bool:
    try:
        ping(rt.queue)
        return True
    except Exception:
        return False


def budget_spent(usage: list[tuple[int, int, int]], daily_requests: int, daily_tokens: int) -> int:
    """How many installations have spent today's LLM budget (requests or tokens)."""
    return sum(1 for _, requests, tokens in usage if requests >= daily_requests or tokens >= daily_tokens)


def _gauge(name: str, text: str, value: float) -> GaugeMetricFamily:
    gauge = GaugeMetricFamily(name, text)
    gauge.add_metric([], value)
    return gauge


def llm_failures(totals: list[tuple[str, int]]) -> CounterMetricFamily:
    """rtcbot_llm_request_failures_total{reason}: every reason from 0 (as the failed analyses'
    series: one that appears at its first failures has not increased for Prometheus); a reason
    outside the known set (a newer rtcbot's, on the same database) counted as "other"."""
    family = CounterMetricFamily("rtcbot_llm_request_failures", "LLM requests (HTTP attempts, retries included) "
                                 "that the workers' analyses made and that failed, by reason", labels=["reason"])
    per = dict.fromkeys(FAILURE_REASONS, 0)
    for reason, n in totals:
        label = reason if reason in per else OTHER
        per[label] += n
    for label, n in per.items():
        family.add_metric([label], n)
    return family


class VitalsCollector(Collector):
    """rtcbot_database_up, rtcbot_queue_up, rtcbot_data_disk_free_bytes, and from the store
    rtcbot_analyses_failed_total{analyzer}, rtcbot_llm_request_failures_total{reason} and
    rtcbot_llm_budget_spent_installations."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        rt = self.runtime
        database_up = database_works(rt)
        yield _gauge("rtcbot_database_up", "1 when the database answers, has every table and takes a write",
                     float(database_up))
        yield _gauge("rtcbot_queue_up", "1 when the queue answers", float(queue_answers(rt)))
        try:
            disk = data_disk(rt.settings.data_dir)
            yield _gauge("rtcbot_data_disk_free_bytes", "Free bytes on the data folder's disk", disk.free_bytes)
            yield _gauge("rtcbot_data_disk_size_bytes", "Size of the data folder's disk", disk.total_bytes)
        except OSError:
            log.warning("metrics: cannot read the data disk's free space", exc_info=True)
        if database_up:
            yield from self._from_store()

    def _from_store(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        try:
            figures = self.runtime.store.alert_figures()
        except Exception:
            log.warning("metrics: the database did not answer", exc_info=True)
            return
        failed = CounterMetricFamily("rtcbot_analyses_failed", "Analyses that failed (their check run completed "
                                     "as neutral, saying why), by analyzer", labels=["analyzer"])
        # every label from 0, not from its first failure: a series that appears at 3 has not
        # increased for Prometheus, and `increase(...[30m]) >= 3` missed an analyzer's first
        # failures (found walking RtcbotAnalysesFailing's runbook: tests/deploy/test_runbooks.py)
        per: dict[str, int] = dict.fromkeys((*ANALYZERS, OTHER), 0)
        for analyzer, n in figures["failed_analyses"]:
            per[analyzer_label(analyzer)] = per.get(analyzer_label(analyzer), 0) + n
        for label, n in sorted(per.items()):
            failed.add_metric([label], n)
        yield failed
        yield llm_failures(figures["llm_failures"])
        s = self.runtime.settings
        yield _gauge("rtcbot_llm_budget_spent_installations", "Installations whose daily LLM budget is spent today",
                     budget_spent(figures["usage_today"], s.llm_daily_requests, s.llm_daily_tokens))
