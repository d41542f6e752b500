"""Webhook payload → zero or more typed jobs (bot/app/job_kinds.py), through one table:
(event, action) → handler (`ROUTES`). An action the App does nothing with is an explicit
`Ignored` entry saying why; each event the App is sent has an entry for its other actions
(`ANY`), and an event with no entry at all is refused with a note ("not handled"). Pure: no
I/O, unit-tested on GitHub's example payloads (tests/bot/test_events.py holds the table to the
App's manifest, bot/app/manifest.json).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from analyzers import registry
from bot.app.command_events import THREAD_EVENT, CommandJob, ProposalJob, command_job, proposal_job
from bot.app.job_kinds import (
    JOB_KINDS,
    AnalyzeJob,
    BadJob,
    ByName,
    FeedbackJob,
    InstallationJob,
    Job,
    PRJob,
    RepositoryJob,
    from_spec,
    to_spec,
)
from bot.core.logs import shown
from bot.ids import positive_int

# a check run's name, external_id and Re-run button are the check-run reporter's (one renderer)
from reporters.check_run import CHECK_PREFIX, RERUN_ACTION

PR_ACTIONS = frozenset({"opened", "synchronize", "reopened", "ready_for_review"})
COMMENT_ACTIONS = frozenset({"created", "edited"})
ANY = "*"  # in ROUTES: every action of the event that has no entry of its own
__all__ = ["ANY", "JOB_KINDS", "ROUTES", "AnalyzeJob", "BadJob", "CommandJob", "Delivery", "FeedbackJob",
           "Ignored", "InstallationJob", "Job", "PRJob", "ProposalJob", "RepositoryJob", "Routed",
           "from_spec", "handler_of", "parse_external_id", "route", "to_spec"]


@dataclass
class Routed:
    jobs: list[Job] = field(default_factory=list)
    note: str = ""


def parse_external_id(value: str | None) -> tuple[int | None, str | None]:
    if not value or ":" not in value:
        return None, None
    pr, _, analyzer = value.partition(":")
    return (int(pr) if pr.isdigit() else None), (analyzer or None)


@dataclass(frozen=True)
class _Base:
    repo: str
    default_branch: str
    installation_id: int | None
    repository_id: int | None


def _base(payload: Mapping[str, Any]) -> _Base:
    repo = payload.get("repository") or {}
    inst = payload.get("installation") or {}
    return _Base(repo=str(repo.get("full_name") or ""), default_branch=str(repo.get("default_branch") or "main"),
                 installation_id=positive_int(inst.get("id")), repository_id=positive_int(repo.get("id")))


def _sha(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _pr_head(pr: Mapping[str, Any]) -> tuple[int | None, str | None, bool, bool]:
    """(number, head SHA, draft, fork) of a pull request object."""
    head = pr.get("head") or {}
    base = pr.get("base") or {}
    head_repo = (head.get("repo") or {}).get("full_name")
    base_repo = (base.get("repo") or {}).get("full_name")
    return (positive_int(pr.get("number")), _sha(head.get("sha")), bool(pr.get("draft")),
            bool(head_repo and base_repo and head_repo != base_repo))


def _author(pr: Mapping[str, Any]) -> int | None:
    """The id of a pull request's author (a fork's pushes are its author's)."""
    return positive_int((pr.get("user") or {}).get("id"))


def _sender(payload: Mapping[str, Any]) -> int | None:
    """The id of whoever asked for a re-run (a check run's or suite's payload names no pull
    request author): whose daily LLM budget it spends."""
    return positive_int((payload.get("sender") or {}).get("id"))


def _closed(pr: Mapping[str, Any]) -> str | None:
    state = pr.get("state", "open")
    return None if state == "open" else f"pull_request #{pr.get('number')} is {state}"


def route(event: str, payload: Mapping[str, Any], *,
          comment_analyzers: Sequence[str] = registry.DEFAULT_COMMENT_ANALYZERS,
          titles: Mapping[str, str] | None = None, slug: str | None = None) -> Routed:
    """The jobs one delivery asks for. `titles` maps check titles ("EditingRTC") to analyzer
    names, for check runs whose external_id does not say (created before it did). `slug`: the
    App's name, which a command addresses (`@<slug> help`; bot/app/command_events.py).

    A delivery that names no installation (a repository or organization webhook, not the
    App's) makes no job: every job acts through an installation's token, so it could only
    fail; the note says why."""
    routed = _route(event, payload, comment_analyzers=comment_analyzers, titles=titles, slug=slug)
    if routed.jobs and _base(payload).installation_id is None:
        return Routed(note=f"{shown(event)}: no installation in the payload (a repository or organization webhook, "
                           "not the GitHub App's); rtcbot acts only on deliveries from an installation of its App")
    return routed


def _route(event: str, payload: Mapping[str, Any], *, comment_analyzers: Sequence[str],
           titles: Mapping[str, str] | None, slug: str | None = None) -> Routed:
    if event != "ping" and not isinstance(payload.get("repository"), Mapping) \
            and not event.startswith("installation"):
        return Routed(note=f"{shown(event)}: no repository in the payload")
    handler = handler_of(event, payload.get("action"))
    if handler is None:
        return Routed(note=f"event {shown(event)!r} is not handled")
    return handler(Delivery(event, payload.get("action"), payload, _base(payload), comment_analyzers, titles, slug))


@dataclass(frozen=True)
class Delivery:
    """One delivery as a route reads it: its event and action (as the payload says it), the
    payload, its repository and installation, and what routing is told (the comment analyzers,
    check titles → analyzer names, the App's name)."""

    event: str
    action: Any
    payload: Mapping[str, Any]
    base: _Base
    comment_analyzers: Sequence[str] = ()
    titles: Mapping[str, str] | None = None
    slug: str | None = None


Route = Callable[[Delivery], Routed]


@dataclass(frozen=True)
class Ignored:
    """An action the App makes no job for, and why."""

    why: str = "nothing to do"

    def __call__(self, d: Delivery) -> Routed:
        return Routed(note=f"{d.event}.{d.action}: {self.why}")


def handler_of(event: str, action: Any) -> Route | None:
    """The route of (event, action): its own entry, else the event's `ANY`; None: an event the
    App does not handle."""
    own = ROUTES.get((event, action)) if isinstance(action, str) else None
    return own or ROUTES.get((event, ANY))


def _pong(d: Delivery) -> Routed:
    return Routed(note="pong")


def _pull_request_head(d: Delivery) -> Routed:
    """A pull request opened, pushed to, reopened or ready for review: its head to analyse."""
    pr = d.payload.get("pull_request") or {}
    if closed := _closed(pr):
        return Routed(note=closed)
    number, sha, draft, fork = _pr_head(pr)
    if number is None or sha is None:
        return Routed(note="pull_request without a number or head SHA")
    b = d.base
    return Routed([PRJob(repo=b.repo, default_branch=b.default_branch, installation_id=b.installation_id,
                         repository_id=b.repository_id,
                         pr_number=number, head_sha=sha, draft=draft, fork=fork, action=d.action,
                         author_id=_author(pr))])


def _pull_request_closed(d: Delivery) -> Routed:
    """A pull request closed: what became of the suggestions."""
    pr = d.payload.get("pull_request") or {}
    number = positive_int(pr.get("number"))
    if number is None:
        return Routed(note="pull_request.closed without a number")
    b = d.base
    return Routed([FeedbackJob(repo=b.repo, installation_id=b.installation_id, repository_id=b.repository_id,
                               pr_number=number, merged=bool(pr.get("merged")))],
                  note="pull_request.closed: reading what became of rtcbot's suggestions")


def _review(d: Delivery) -> Routed:
    """A review comment written or edited, or a review submitted: the comment analyzers again,
    charged to whoever wrote it (the payload's sender; bot/app/budget.py `Payer.commenter`)."""
    pr = d.payload.get("pull_request") or {}
    if closed := _closed(pr):
        return Routed(note=closed)
    number, sha, _, _ = _pr_head(pr)
    if number is None or sha is None:
        return Routed(note=f"{d.event} without a pull request number or head SHA")
    b = d.base
    return Routed([AnalyzeJob(repo=b.repo, default_branch=b.default_branch, installation_id=b.installation_id,
                              repository_id=b.repository_id,
                              pr_number=number, head_sha=sha, analyzer=name, force=True, reason=d.event,
                              author_id=_sender(d.payload))
                   for name in d.comment_analyzers])


def _command(d: Delivery) -> Routed:
    """A conversation comment created: its command's job, or why it is none."""
    made = command_job(d.event, d.payload, dataclasses.asdict(d.base), d.slug)
    return Routed([made]) if isinstance(made, CommandJob) else Routed(note=made)


def _command_or_review(d: Delivery) -> Routed:
    """A review comment created: its command's job; one that is not a command is scored like
    any other (the comment analyzers)."""
    made = command_job(d.event, d.payload, dataclasses.asdict(d.base), d.slug)
    return Routed([made]) if isinstance(made, CommandJob) else _review(d)


def _proposal(d: Delivery) -> Routed:
    """A review thread resolved: the `ignore this` to propose, when its last reply says "won't fix"."""
    made = proposal_job(d.payload, dataclasses.asdict(d.base))
    return Routed([made]) if isinstance(made, ProposalJob) else Routed(note=made)


def _check_run(d: Delivery) -> Routed:
    """One of our check runs re-requested (or its Re-run button pressed): that analyzer again."""
    action, payload, b, titles = d.action, d.payload, d.base, d.titles
    run = payload.get("check_run") or {}
    if action == "requested_action":
        ident = (payload.get("requested_action") or {}).get("identifier")
        if ident != RERUN_ACTION:
            return Routed(note=f"check_run.requested_action {ident!r}: not ours")
    pr_number, analyzer = parse_external_id(run.get("external_id"))
    if analyzer is None:
        name = str(run.get("name") or "")
        title = name[len(CHECK_PREFIX):] if name.startswith(CHECK_PREFIX) else None
        analyzer = (titles or {}).get(title or "")
        if analyzer is None:
            return Routed(note=f"check run {name!r} is not one of ours")
    if pr_number is None:
        prs = run.get("pull_requests") or []
        pr_number = positive_int(prs[0].get("number")) if prs else None
    if pr_number is None:
        return Routed(note="check run without a pull request (no external_id, no pull_requests)")
    sha = _sha(run.get("head_sha"))
    if sha is None:
        return Routed(note="check run without a head SHA")
    reason: ByName = "check_run.requested_action" if action == "requested_action" else "check_run.rerequested"
    return Routed([AnalyzeJob(repo=b.repo, default_branch=b.default_branch, installation_id=b.installation_id,
                              repository_id=b.repository_id,
                              pr_number=pr_number, head_sha=sha, analyzer=analyzer, force=True,
                              reason=reason, author_id=_sender(payload))])


def _check_suite(d: Delivery) -> Routed:
    """A check suite re-requested: each of its pull requests' heads again, in full."""
    payload, b = d.payload, d.base
    suite = payload.get("check_suite") or {}
    numbers = [n for n in (positive_int(p.get("number")) for p in suite.get("pull_requests") or []) if n]
    sha = _sha(suite.get("head_sha"))
    if not numbers or sha is None:
        return Routed(note="check suite without a pull request")
    return Routed([PRJob(repo=b.repo, default_branch=b.default_branch, installation_id=b.installation_id,
                         repository_id=b.repository_id,
                         pr_number=n, head_sha=sha, action="rerequested", force=True, author_id=_sender(payload))
                   for n in numbers])


def _installation(d: Delivery) -> Routed:
    """An installation created, deleted, suspended, or its repositories changed: remembered."""
    inst = d.payload.get("installation") or {}
    account = (inst.get("account") or {}).get("login", "")
    active = not (d.event == "installation" and d.action in ("deleted", "suspend"))
    return Routed([InstallationJob(installation_id=d.base.installation_id, account=str(account or ""),
                                   active=active, action=d.action)])


def _repository(d: Delivery) -> Routed:
    """A repository renamed or transferred: its data follows its id; deleted: no longer served."""
    action, b = d.action, d.base
    if b.repository_id is None or not b.repo:
        return Routed(note=f"repository.{action} without the repository's id or name")
    return Routed([RepositoryJob(repo=b.repo, installation_id=b.installation_id, repository_id=b.repository_id,
                                 action=str(action))])


def _removed(d: Delivery) -> Routed:
    """Repositories removed from an installation: their data is no longer served."""
    jobs: list[Job] = []
    b = d.base
    for r in d.payload.get("repositories_removed") or []:
        rid = positive_int(r.get("id")) if isinstance(r, Mapping) else None
        name = r.get("full_name") if isinstance(r, Mapping) else None
        if rid is not None and isinstance(name, str) and name:
            jobs.append(RepositoryJob(repo=name, installation_id=b.installation_id, repository_id=rid,
                                      action="removed"))
    return Routed(jobs, note="" if jobs else "installation_repositories.removed without repositories")


_EDIT = "only a new comment is a command (an edit never runs one again)"

ROUTES: Mapping[tuple[str, str], Route] = {
    ("ping", ANY): _pong,
    **{("pull_request", a): _pull_request_head for a in sorted(PR_ACTIONS)},
    ("pull_request", "closed"): _pull_request_closed,
    ("pull_request", ANY): Ignored(),
    ("pull_request_review", "submitted"): _review,
    ("pull_request_review", ANY): Ignored(),
    ("pull_request_review_comment", "created"): _command_or_review,
    ("pull_request_review_comment", "edited"): _review,
    ("pull_request_review_comment", ANY): Ignored(),
    ("issue_comment", "created"): _command,
    ("issue_comment", ANY): Ignored(_EDIT),
    (THREAD_EVENT, "resolved"): _proposal,
    (THREAD_EVENT, ANY): Ignored("nothing to propose"),
    ("check_run", "rerequested"): _check_run,
    ("check_run", "requested_action"): _check_run,
    ("check_run", ANY): Ignored(),
    ("check_suite", "rerequested"): _check_suite,
    ("check_suite", ANY): Ignored(),
    **{("repository", a): _repository for a in ("renamed", "transferred", "deleted")},
    ("repository", ANY): Ignored(),
    ("installation", ANY): _installation,
    ("installation_repositories", "removed"): _removed,
    ("installation_repositories", ANY): _installation,
}
