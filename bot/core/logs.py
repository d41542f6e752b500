"""Logging, configured once for every command: one format for every line, rtcbot's and the
libraries' (gunicorn's too: bot/app/commands/serve.py hands its lines to the root logger), each
starting with its time in ISO 8601 with the zone (2026-11-26T01:23:45.678+00:00), and on every
line a job writes, the job's context (repository#PR, head, analyzer, job id, the webhook
delivery that asked for it, seconds since it began).

`configure` is called by the command-line group before any command runs; the level is `-v`'s
when given, else LOG_LEVEL (or RTCBOT_LOG_LEVEL), else the command's default (warning for the
command line, info for the long-running `serve` and `worker`). RTCBOT_LOG_FORMAT=json writes one
JSON object per line (time, level, logger, message, the job's fields, the exception). httpx's
line per HTTP request (one per LLM call) is a debug line: shown with -vv.

`job_context` binds a job's fields to the running thread's context (a contextvar): every
record logged inside the block carries them, through any logger. `delivery_context` does the
same for the handling of one webhook delivery (its X-GitHub-Delivery id).
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

from analyzers.urls import redact_data, redact_urls
from bot.core.settings import LogSettings

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s%(job_suffix)s"
JOB_FIELDS = ("repo", "pr", "head", "analyzer", "job", "delivery")
QUIETED = "httpx"  # httpx (httpx2 under openai): its INFO line per request ("HTTP Request: POST …") as DEBUG


def iso_time(created: float) -> str:
    """A record's time (`created`, seconds since the epoch) in ISO 8601 with the local zone, to
    the millisecond: 2026-11-26T01:23:45.678+00:00."""
    return datetime.fromtimestamp(created).astimezone().isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class JobContext:
    """What a line logged inside a job (or a webhook delivery's handling) says about it."""

    job: int | None = None
    repo: str | None = None
    pr: int | None = None
    head: str | None = None
    analyzer: str | None = None
    delivery: str | None = None  # GitHub's X-GitHub-Delivery id
    started: float = field(default_factory=time.monotonic)

    def fields(self) -> dict[str, Any]:
        """The job's fields as logged (head shortened to 12 characters), with the seconds
        since it began (`elapsed_s`)."""
        out: dict[str, Any] = {"repo": self.repo, "pr": self.pr, "head": self.head[:12] if self.head else None,
                               "analyzer": self.analyzer, "job": self.job,
                               "delivery": shown(self.delivery) if self.delivery is not None else None,
                               "elapsed_s": round(time.monotonic() - self.started, 3)}
        return {k: v for k, v in out.items() if v is not None}

    def text(self, f: dict[str, Any] | None = None) -> str:
        """The suffix of a text line; `f`: `fields()` when the caller has them already."""
        f = self.fields() if f is None else f
        where = f"{f['repo']}#{f['pr']}" if "repo" in f and "pr" in f else f.get("repo", "")
        parts = [where] if where else []
        parts += [f"{k}={f[k]}" for k in ("head", "analyzer", "job", "delivery") if k in f]
        parts.append(f"t={f['elapsed_s']:.2f}s")
        return " [" + " ".join(parts) + "]"


MAX_SHOWN = 80
_UNPRINTABLE = re.compile(r"[^\x21-\x7e]")


def shown(value: str | None) -> str:
    """A value from a stranger (a webhook's X-GitHub-Event or X-GitHub-Delivery header) as a log
    line shows it: printable ASCII, at most MAX_SHOWN characters (more is marked with …), `-`
    when empty. No line break, separator or quote-forging space survives it."""
    if not value:
        return "-"
    cut = _UNPRINTABLE.sub("?", value[:MAX_SHOWN])
    return cut + ("…" if len(value) > MAX_SHOWN else "")


_current: contextvars.ContextVar[JobContext | None] = contextvars.ContextVar("rtcbot_job", default=None)


@contextmanager
def _bound(ctx: JobContext) -> Iterator[JobContext]:
    token = _current.set(ctx)
    try:
        yield ctx
    finally:
        _current.reset(token)


def job_context(job: int, *, repo: str | None = None, pr: int | None = None, head: str | None = None,
                analyzer: str | None = None, delivery: str | None = None) -> AbstractContextManager[JobContext]:
    """Every record logged in the block (this thread) names the job (and the delivery that asked for it)."""
    return _bound(JobContext(job=job, repo=repo, pr=pr, head=head, analyzer=analyzer, delivery=delivery))


def delivery_context(delivery: str) -> AbstractContextManager[JobContext]:
    """Every record logged in the block (this thread) names the webhook delivery."""
    return _bound(JobContext(delivery=delivery))


class JobFilter(logging.Filter):
    """Puts the current job's context on each record (`job_suffix` for text, `job_fields`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        ctx = _current.get()
        fields = ctx.fields() if ctx is not None else {}
        record.job_fields = fields
        record.job_suffix = ctx.text(fields) if ctx is not None else ""
        return True


class QuietRequests(logging.Filter):
    """httpx's INFO line per request becomes a DEBUG line, kept only when
    debug lines are logged (-vv): every LLM call would otherwise be a line among the job's own.
    Their warnings stay."""

    def filter(self, record: logging.LogRecord) -> bool:
        quiet = record.name.startswith(QUIETED)
        if record.levelno != logging.INFO or not quiet:
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)


class TextFormatter(logging.Formatter):
    """TEXT_FORMAT, its time in ISO 8601 with the zone; every URL in the line (a message, a
    traceback, a library's line) without its userinfo or query values (analyzers/urls.py)."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 - logging's name
        return iso_time(record.created)

    def format(self, record: logging.LogRecord) -> str:
        return redact_urls(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per record, its URLs redacted as a text line's."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": iso_time(record.created),
            "level": record.levelname.lower(), "logger": record.name, "message": record.getMessage(),
        }
        out.update(getattr(record, "job_fields", {}) or {})
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(redact_data(out), default=str)


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is when a record comes (a test runner may swap it)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def level_for(settings: LogSettings, verbose: int, default: int) -> int:
    """-v (info) and -vv (debug) win; else LOG_LEVEL; else `default`."""
    if verbose:
        return logging.DEBUG if verbose > 1 else logging.INFO
    if settings.log_level:
        return int(logging.getLevelName(settings.log_level.upper()))
    return default


def configure(settings: LogSettings, *, verbose: int = 0, default: int = logging.WARNING,
              stream: TextIO | None = None) -> None:
    """Configure the root logger once: one handler on stderr, our format, our level. A second
    call replaces the handler this module installed (never adds one)."""
    handler: logging.Handler = logging.StreamHandler(stream) if stream is not None else StderrHandler()
    handler.addFilter(JobFilter())
    handler.addFilter(QuietRequests())
    handler.setFormatter(JsonFormatter() if settings.log_format == "json" else TextFormatter())
    handler.set_name("rtcbot")
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == "rtcbot"]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level_for(settings, verbose, default))


def json_lines() -> bool:
    """Whether the lines go out as JSON (RTCBOT_LOG_FORMAT=json configured): a command's last
    words (a setting to fix, a start that failed) are then log lines too, not plain text among
    JSON objects."""
    return any(h.get_name() == "rtcbot" and isinstance(h.formatter, JsonFormatter)
               for h in logging.getLogger().handlers)


def say_error(line: str) -> None:
    """One error a person must act on, on stderr: `Error: …`, or a JSON line under json logs."""
    if json_lines():
        logging.getLogger("rtcbot").error(line)
    else:
        print(f"Error: {line}", file=sys.stderr, flush=True)

