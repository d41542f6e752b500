"""The App's tables (SQLAlchemy 2 declarative rows), one class per table, and the few values
their columns share. A column added later is nullable (bot/store/migrations.py).

Tables: deliveries (every webhook, with its payload until it is routed and the retention has
passed, so none is lost; then only its metadata), jobs (the durable truth behind the queue's
messages), check_runs (one per repository, check name and head SHA), findings (scores per hunk
and per comment), published (what people did with a suggestion), the LLM cache (keyed by
installation, so no tenant can probe another's answers), the LLM usage of each installation per
UTC day (its daily budget) and of each pull request and author in it (theirs), the LLM
requests that failed (by reason, for /metrics), installations,
qualifications, the workers' heartbeats,
dismissals (the findings and rules each repository's team dismissed), the analyses' leases (one
run per repository, head and analyzer at a time) and the schema's version (bot/store/versions.py).
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ACTIVE = ("queued", "running")  # a job's statuses while its work is not over
UNSENT = 0.0  # a queued job's updated_at while its queue message could not be sent


def utc_day(at: float | None = None) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(time.time() if at is None else at))


class Base(DeclarativeBase):
    pass


class Delivery(Base):
    __tablename__ = "deliveries"
    id: Mapped[str] = mapped_column(String(100), primary_key=True)  # X-GitHub-Delivery
    event: Mapped[str] = mapped_column(String(100))
    action: Mapped[str | None] = mapped_column(String(100), nullable=True)
    received_at: Mapped[float] = mapped_column(Float, default=time.time)
    status: Mapped[str] = mapped_column(String(20), default="received")  # received | routed | ignored
    jobs: Mapped[int] = mapped_column(Integer, default=0)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    payload: Mapped[str] = mapped_column(Text)


class JobRow(Base):
    __tablename__ = "jobs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    delivery_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    kind: Mapped[str] = mapped_column(String(20))
    repo: Mapped[str] = mapped_column(String(300))
    pr_number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    head_sha: Mapped[str | None] = mapped_column(String(64), nullable=True)
    analyzer: Mapped[str | None] = mapped_column(String(100), nullable=True)
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(20), default="queued")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[float] = mapped_column(Float, default=time.time)
    updated_at: Mapped[float] = mapped_column(Float, default=time.time)
    heartbeat_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    result: Mapped[str | None] = mapped_column(Text, nullable=True)
    duration_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    llm_requests: Mapped[int] = mapped_column(Integer, default=0)
    llm_tokens: Mapped[int] = mapped_column(Integer, default=0)
    # the tokens split (#53; None: rows made before): prompt, completion, and of the prompt tokens
    # those the endpoint's prefix cache served (where it says: prompt_tokens_details.cached_tokens)
    llm_prompt_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    llm_completion_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    llm_cached_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # the tenant, by GitHub's ids (None: not known, e.g. rows made before these columns)
    repository_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    installation_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)

    __table_args__ = (Index("ix_jobs_status", "status"), Index("ix_jobs_pr", "repo", "pr_number"),
                      Index("ix_jobs_repository", "repository_id"))


class CheckRunRow(Base):
    __tablename__ = "check_runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    repo: Mapped[str] = mapped_column(String(300))
    name: Mapped[str] = mapped_column(String(200))
    head_sha: Mapped[str] = mapped_column(String(64))
    github_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    pr_number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(20), default="queued")
    conclusion: Mapped[str | None] = mapped_column(String(20), nullable=True)
    scores: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    annotations: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[float] = mapped_column(Float, default=time.time)
    repository_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # the tenant (None: not known)
    installation_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)

    __table_args__ = (UniqueConstraint("repo", "name", "head_sha", name="uq_check_run"),
                      Index("ix_check_runs_repository", "repository_id"))


class FindingRow(Base):
    __tablename__ = "findings"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    check_run_id: Mapped[int] = mapped_column(ForeignKey("check_runs.id", ondelete="CASCADE"))
    analyzer: Mapped[str] = mapped_column(String(100))
    path: Mapped[str | None] = mapped_column(Text, nullable=True)
    start_line: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end_line: Mapped[int | None] = mapped_column(Integer, nullable=True)
    key: Mapped[str] = mapped_column(String(200), default="")
    comment_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    scores: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class CacheRow(Base):
    __tablename__ = "llm_cache"
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class LLMUsageRow(Base):
    """LLM requests and tokens one installation's jobs used on one UTC day (its daily budget)."""

    __tablename__ = "llm_usage_daily"
    installation_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    requests: Mapped[int] = mapped_column(Integer, default=0)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    cache_hits: Mapped[int] = mapped_column(Integer, default=0)  # for /metrics only, never public


class LLMSpenderUsageRow(Base):
    """LLM requests and tokens spent on one UTC day, within one installation, by one pull
    request (`pr:<repository id>#<number>`) or one author (`author:<user id>`): their daily
    budgets beside the installation's."""

    __tablename__ = "llm_usage_spenders"
    installation_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    spender: Mapped[str] = mapped_column(String(200), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    requests: Mapped[int] = mapped_column(Integer, default=0)
    tokens: Mapped[int] = mapped_column(Integer, default=0)


class LLMFailureRow(Base):
    """The workers' failed LLM requests (HTTP attempts, retries included) by reason, one of
    analyzers/llm/retry.py's FAILURE_REASONS: a counter for /metrics, added to as each analysis
    ends (bot/store/llm_failures.py)."""

    __tablename__ = "llm_request_failures"
    reason: Mapped[str] = mapped_column(String(40), primary_key=True)
    requests: Mapped[int] = mapped_column(Integer, default=0)


class Installation(Base):
    __tablename__ = "installations"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    account: Mapped[str] = mapped_column(String(300), default="")
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    updated_at: Mapped[float] = mapped_column(Float, default=time.time)


class PublishedRow(Base):
    """Something rtcbot published that a person can take or leave (a committable suggestion),
    and what became of it: applied by a later push, its review thread resolved, reactions, the
    pull request merged (bot/app/feedback.py). One per repository, pull request and marker key."""

    __tablename__ = "published"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    installation_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    repo: Mapped[str] = mapped_column(String(300))
    pr_number: Mapped[int] = mapped_column(Integer)
    head_sha: Mapped[str] = mapped_column(String(64))  # the head it was posted on
    analyzer: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(20))  # suggestion | comment
    key: Mapped[str] = mapped_column(String(64))  # the marker in the comment's body
    path: Mapped[str] = mapped_column(Text)
    start_line: Mapped[int] = mapped_column(Integer)
    end_line: Mapped[int] = mapped_column(Integer)
    replacement: Mapped[str] = mapped_column(Text, default="")
    rtc: Mapped[str | None] = mapped_column(String(10), nullable=True)  # pass | fail (Patched RTC)
    band: Mapped[str | None] = mapped_column(String(20), nullable=True)  # CRScore band of a comment
    created_at: Mapped[float] = mapped_column(Float, default=time.time)
    applied_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    resolved: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    thumbs_up: Mapped[int] = mapped_column(Integer, default=0)
    thumbs_down: Mapped[int] = mapped_column(Integer, default=0)
    merged: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    # at the head it was posted on: the lines it flags, and whether its lines were there already
    # (None: not known, e.g. rows made before these columns; such a suggestion never counts applied)
    original: Mapped[str | None] = mapped_column(Text, nullable=True)
    preexisting: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    repository_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # the tenant (None: not known)

    __table_args__ = (UniqueConstraint("repo", "pr_number", "key", name="uq_published"),
                      Index("ix_published_repository", "repository_id"))


class QualificationRow(Base):
    """`rtcbot qualify --database`'s verdict on one model for one repository (bot/core/qualification.py):
    the App reads the latest per (repo, model) under `require_qualified: true`."""

    __tablename__ = "qualifications"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    repo: Mapped[str] = mapped_column(String(300))  # owner/name
    model: Mapped[str] = mapped_column(String(300))
    base_url: Mapped[str | None] = mapped_column(Text, nullable=True)  # the endpoint it ran at
    qualified: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[float] = mapped_column(Float, default=time.time)
    figures: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # RTC, lift, CI, reasons...
    repository_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # the tenant (None: not known)
    installation_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)

    __table_args__ = (Index("ix_qualifications_repo_model", "repo", "model", "created_at"),
                      Index("ix_qualifications_repository", "repository_id", "model"))


class RepositoryRow(Base):
    """A repository the App has seen, by GitHub's id: its installation and its name now (a
    rename or a transfer moves the name; its rows follow the id, bot/store/tenants.py). A
    repository removed from the installation or deleted is no longer served, and its rows are
    deleted after the retention (bot/app/sweep.py)."""

    __tablename__ = "repositories"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)  # repository.id (64-bit)
    installation_id: Mapped[int] = mapped_column(BigInteger)
    full_name: Mapped[str] = mapped_column(String(300))
    named_at: Mapped[float] = mapped_column(Float, default=time.time)  # the delivery that named it
    removed_at: Mapped[float | None] = mapped_column(Float, nullable=True)

    __table_args__ = (Index("ix_repositories_name", "full_name"),)


class WorkerBeatRow(Base):
    """One `rtcbot worker` process and its last heartbeat (bot/store/workers.py): /healthz and
    /metrics count the workers whose beat is recent. A row whose beat is a day old is dropped."""

    __tablename__ = "worker_beats"
    id: Mapped[str] = mapped_column(String(300), primary_key=True)  # host:pid:start time
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[float] = mapped_column(Float)
    beat_at: Mapped[float] = mapped_column(Float)
    ready: Mapped[bool] = mapped_column(Boolean, default=False)  # its warm-up is over
    # the queue it consumes (bot/app/queue.py identity); NULL: a worker from before it was said
    queue: Mapped[str | None] = mapped_column(String(600), nullable=True)


class TurnRow(Base):
    """When each installation was last given a worker's slot (bot/store/claims.py): with the slots
    held equal, the installation served longest ago goes first. Installation 0: the jobs of no
    installation."""

    __tablename__ = "installation_turns"
    installation_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    served_at: Mapped[float] = mapped_column(Float)


class DismissalRow(Base):
    """A finding or a rule a repository's team dismissed (bot/store/dismissals.py,
    bot/core/dismissals.py): keyed by the repository's id when known, else by its name.
    `path_glob` is "" for none (a NULL is never equal to itself in a unique constraint)."""

    __tablename__ = "dismissals"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    repo_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    repo: Mapped[str] = mapped_column(String(300))  # owner/name when it was dismissed
    target: Mapped[str] = mapped_column(String(200))  # a rule id, an analyzer or a fingerprint
    kind: Mapped[str] = mapped_column(String(10))  # rule | finding
    path_glob: Mapped[str] = mapped_column(String(300), default="")
    by: Mapped[str] = mapped_column(String(100))  # a GitHub login
    at: Mapped[float] = mapped_column(Float, default=time.time)
    reason: Mapped[str] = mapped_column(Text, default="")

    __table_args__ = (Index("ix_dismissals_repo", "repo_id", "repo"),)


class DashboardSessionRow(Base):
    """One dashboard session (bot/store/sessions.py): the browser's cookie holds only a random
    id, this row a keyed hash of it and what the session knows (login, repositories, CSRF token,
    the OAuth state), until `expires_at`; signing out deletes it, the sweep drops expired ones."""

    __tablename__ = "dashboard_sessions"
    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)  # HMAC-SHA256 of the id, hex
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float, index=True)


class LeaseRow(Base):
    """Who runs one analysis now (bot/store/leases.py): one row per (repository, head SHA,
    analyzer), held by one attempt of one job until it releases it or `expires_at` passes (its
    holder stopped renewing it: it died)."""

    __tablename__ = "leases"
    key: Mapped[str] = mapped_column(String(500), primary_key=True)  # repository id (or name):head:analyzer
    job_id: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer)
    ttl_s: Mapped[float] = mapped_column(Float)  # each renewal extends it this long
    taken_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float)

    __table_args__ = (Index("ix_leases_job", "job_id"),)


class SchemaVersionRow(Base):
    """The schema's version (bot/store/versions.py): one row, the last step applied."""

    __tablename__ = "schema_version"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)  # always 1
    version: Mapped[int] = mapped_column(Integer)
    migrated_at: Mapped[float] = mapped_column(Float)
