"""Logging, configured once for every command: a timestamp on every line, and on every line a
job writes, the job's context (repository#PR, head, analyzer, job id, seconds since it began).

`configure` is called by the command-line group before any command runs; the level is `-v`'s
when given, else LOG_LEVEL (or RTCBOT_LOG_LEVEL), else the command's default (warning for the
command line, info for the long-running `serve` and `worker`). RTCBOT_LOG_FORMAT=json writes one
JSON object per line (time, level, logger, message, the job's fields, the exception).

`job_context` binds a job's fields to the running thread's context (a contextvar): every
record logged inside the block carries them, through any logger.
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from bot.core.settings import LogSettings

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s%(job_suffix)s"
JOB_FIELDS = ("repo", "pr", "head", "analyzer", "job")


@dataclass(frozen=True)
class JobContext:
    job: int
    repo: str | None = None
    pr: int | None = None
    head: str | None = None
    analyzer: str | None = None
    started: float = field(default_factory=time.monotonic)

    def fields(self) -> dict[str, Any]:
        """The job's fields as logged (head shortened to 12 characters), with the seconds
        since it began (`elapsed_s`)."""
        out: dict[str, Any] = {"repo": self.repo, "pr": self.pr, "head": self.head[:12] if self.head else None,
                               "analyzer": self.analyzer, "job": self.job,
                               "elapsed_s": round(time.monotonic() - self.started, 3)}
        return {k: v for k, v in out.items() if v is not None}

    def text(self) -> str:
        f = self.fields()
        where = f"{f['repo']}#{f['pr']}" if "repo" in f and "pr" in f else f.get("repo", "")
        parts = [where] if where else []
        parts += [f"{k}={f[k]}" for k in ("head", "analyzer", "job") if k in f]
        parts.append(f"t={f['elapsed_s']:.2f}s")
        return " [" + " ".join(parts) + "]"


_current: contextvars.ContextVar[JobContext | None] = contextvars.ContextVar("rtcbot_job", default=None)


@contextmanager
def job_context(job: int, *, repo: str | None = None, pr: int | None = None, head: str | None = None,
                analyzer: str | None = None) -> Iterator[JobContext]:
    """Every record logged in the block (this thread) names the job."""
    ctx = JobContext(job=job, repo=repo, pr=pr, head=head, analyzer=analyzer)
    token = _current.set(ctx)
    try:
        yield ctx
    finally:
        _current.reset(token)


class JobFilter(logging.Filter):
    """Puts the current job's context on each record (`job_suffix` for text, `job_fields`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        ctx = _current.get()
        record.job_fields = ctx.fields() if ctx is not None else {}
        record.job_suffix = ctx.text() if ctx is not None else ""
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}",
            "level": record.levelname.lower(), "logger": record.name, "message": record.getMessage(),
        }
        out.update(getattr(record, "job_fields", {}) or {})
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


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
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    handler.set_name("rtcbot")
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == "rtcbot"]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level_for(settings, verbose, default))
