"""Webhook payload → zero or more typed jobs. Pure: no I/O, unit-tested on GitHub's example
payloads.

Job kinds (each a frozen dataclass; stored as JSON in the jobs table, see `to_spec` and
`from_spec`):

- `PRJob` (`pr`): a pull request head to analyse; the worker reads the repository's
  configuration and fans it out into one `AnalyzeJob` per enabled analyzer and runs them at
  once (drafts stop there unless enabled).
- `AnalyzeJob` (`analyze`): one analyzer on one head SHA: one check run "rtcbot / <title>".
- `InstallationJob` (`installation`): remember an installation (created, deleted, suspended, …).
- `FeedbackJob` (`feedback`): a pull request closed: what became of rtcbot's suggestions.
- `CommandJob` (`command`): a comment addressed to the App (`@<slug> rerun`; bot/app/command_events.py).
- `ProposalJob` (`proposal`): a resolved review thread on one of the App's findings whose last reply
  says "won't fix": the `ignore this` command to confirm, proposed in the thread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args

from pydantic import Field, TypeAdapter, ValidationError

from bot.app.command_events import (
    COMMAND_EVENTS,
    THREAD_EVENT,
    CommandJob,
    ProposalJob,
    command_job,
    proposal_job,
)
from bot.ids import positive_int

# a check run's name, external_id and Re-run button are the check-run reporter's (one renderer)
from reporters.check_run import CHECK_PREFIX, RERUN_ACTION

PR_ACTIONS = frozenset({"opened", "synchronize", "reopened", "ready_for_review"})
COMMENT_ACTIONS = frozenset({"created", "edited"})
__all__ = ["JOB_KINDS", "AnalyzeJob", "BadJob",
           "CommandJob", "FeedbackJob", "InstallationJob", "Job", "PRJob", "ProposalJob",
           "RepositoryJob", "Routed",
           "from_spec", "parse_external_id", "route", "to_spec"]


@dataclass(frozen=True, kw_only=True)
class PRJob:
    """A pull request head to analyse with every analyzer its repository enables."""

    kind: Literal["pr"] = "pr"
    repo: str
    default_branch: str = "main"
    installation_id: int | None = None
    repository_id: int | None = None  # GitHub's id: the tenant's data follows it, never the name
    pr_number: int
    head_sha: str
    draft: bool = False
    fork: bool = False
    action: str | None = None  # the pull_request action ("opened", …) or "rerequested"
    force: bool = False  # work to do again even where it was done (a re-requested suite)
    author_id: int | None = None  # the pull request's author (its user.id): whose daily LLM budget it spends


@dataclass(frozen=True, kw_only=True)
class AnalyzeJob:
    """One analyzer on one pull request head: one check run."""

    kind: Literal["analyze"] = "analyze"
    repo: str
    default_branch: str = "main"
    installation_id: int | None = None
    repository_id: int | None = None
    pr_number: int
    head_sha: str
    analyzer: str
    force: bool = False
    reason: str = ""  # what asked for it: "pull_request.opened", "check_run.rerequested", …
    root: int | None = None  # the id of the `pr` job that fanned it out
    author_id: int | None = None  # as PRJob's; a re-run's: whoever asked for it (the payload's sender)

    @property
    def explicit(self) -> bool:
        """Asked for by name (a re-run of its check run): runs even where the config turns
        the analyzer off."""
        return self.reason.startswith("check_run")

    @classmethod
    def of(cls, pr: PRJob, analyzer: str, root: int) -> AnalyzeJob:
        """The analysis `pr`'s job (id `root`) fans out for `analyzer`."""
        return cls(repo=pr.repo, default_branch=pr.default_branch, installation_id=pr.installation_id,
                   repository_id=pr.repository_id, pr_number=pr.pr_number, head_sha=pr.head_sha,
                   analyzer=analyzer, force=pr.force,
                   reason=f"pull_request.{pr.action}", root=root, author_id=pr.author_id)


@dataclass(frozen=True, kw_only=True)
class InstallationJob:
    """An installation created, deleted, suspended, or its repositories changed."""

    kind: Literal["installation"] = "installation"
    repo: str = ""
    installation_id: int | None = None
    account: str = ""
    active: bool = True
    action: str | None = None


@dataclass(frozen=True, kw_only=True)
class FeedbackJob:
    """A pull request closed: what became of rtcbot's suggestions on it (merged or not, the
    reactions on its comments; bot/app/feedback.py)."""

    kind: Literal["feedback"] = "feedback"
    repo: str
    installation_id: int | None = None
    repository_id: int | None = None
    pr_number: int
    merged: bool = False


@dataclass(frozen=True, kw_only=True)
class RepositoryJob:
    """A repository renamed or transferred (its data follows its id to the new name), deleted
    or removed from the installation (its data is no longer served, and deleted after the
    retention): bot/store/tenants.py."""

    kind: Literal["repository"] = "repository"
    repo: str  # its full name now (the last it had, when deleted or removed)
    installation_id: int | None = None
    repository_id: int
    action: str  # renamed | transferred | deleted | removed


Job = PRJob | AnalyzeJob | InstallationJob | FeedbackJob | RepositoryJob | CommandJob | ProposalJob

JOB_KINDS: tuple[str, ...] = tuple(t.__dataclass_fields__["kind"].default for t in get_args(Job))

_JOB: TypeAdapter[Job] = TypeAdapter(Annotated[Job, Field(discriminator="kind")])


class BadJob(ValueError):
    """A stored job spec that is not a job (an unknown kind, a missing or mistyped field)."""


def to_spec(job: Job) -> dict[str, Any]:
    """The job as the JSON object the store keeps (its fields are all scalars)."""
    return dict(vars(job))


def from_spec(spec: Mapping[str, Any]) -> Job:
    """The typed job of a stored spec (keys it does not know, from older versions, are
    ignored); BadJob when it is not one."""
    try:
        return _JOB.validate_python(dict(spec))
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "spec"
        raise BadJob(f"not a job: {where}: {first['msg']}") from None


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
          comment_analyzers: Sequence[str] = ("crscore",),
          titles: Mapping[str, str] | None = None, slug: str | None = None) -> Routed:
    """The jobs one delivery asks for. `titles` maps check titles ("EditingRTC") to analyzer
    names, for check runs whose external_id does not say (created before it did). `slug`: the
    App's name, which a command addresses (`@<slug> help`; bot/app/command_events.py).

    A delivery that names no installation (a repository or organization webhook, not the
    App's) makes no job: every job acts through an installation's token, so it could only
    fail; the note says why."""
    routed = _route(event, payload, comment_analyzers=comment_analyzers, titles=titles, slug=slug)
    if routed.jobs and _base(payload).installation_id is None:
        return Routed(note=f"{event}: no installation in the payload (a repository or organization webhook, "
                           "not the GitHub App's); rtcbot acts only on deliveries from an installation of its App")
    return routed


def _route(event: str, payload: Mapping[str, Any], *, comment_analyzers: Sequence[str],
           titles: Mapping[str, str] | None, slug: str | None = None) -> Routed:
    if event == "ping":
        return Routed(note="pong")
    if not isinstance(payload.get("repository"), Mapping) and not event.startswith("installation"):
        return Routed(note=f"{event}: no repository in the payload")
    b = _base(payload)
    action = payload.get("action")
    if event == "pull_request":
        return _pull_request(action, payload, b)
    if event in COMMAND_EVENTS and (command := _command(event, payload, b, slug)) is not None:
        return command
    if event == THREAD_EVENT:
        made = proposal_job(payload, dataclasses.asdict(b))
        return Routed([made]) if isinstance(made, ProposalJob) else Routed(note=made)
    if event in ("pull_request_review_comment", "pull_request_review"):
        return _review(event, action, payload, b, comment_analyzers)
    if event == "check_run":
        return _check_run(action, payload, b, titles)
    if event == "check_suite":
        return _check_suite(action, payload, b)
    if event == "repository":
        return _repository(action, b)
    if event == "installation_repositories" and action == "removed":
        return _removed(payload, b)
    if event in ("installation", "installation_repositories"):
        return _installation(event, action, payload, b)
    return Routed(note=f"event {event!r} is not handled")


def _pull_request(action: Any, payload: Mapping[str, Any], b: _Base) -> Routed:
    """A pull request opened or pushed to: its head to analyse; closed: what became of the
    suggestions."""
    pr = payload.get("pull_request") or {}
    if action == "closed":
        number = positive_int(pr.get("number"))
        if number is None:
            return Routed(note="pull_request.closed without a number")
        return Routed([FeedbackJob(repo=b.repo, installation_id=b.installation_id,
                      repository_id=b.repository_id, pr_number=number,
                                   merged=bool(pr.get("merged")))],
                      note="pull_request.closed: reading what became of rtcbot's suggestions")
    if action not in PR_ACTIONS:
        return Routed(note=f"pull_request.{action}: nothing to do")
    if closed := _closed(pr):
        return Routed(note=closed)
    number, sha, draft, fork = _pr_head(pr)
    if number is None or sha is None:
        return Routed(note="pull_request without a number or head SHA")
    return Routed([PRJob(repo=b.repo, default_branch=b.default_branch, installation_id=b.installation_id,
                         repository_id=b.repository_id,
                         pr_number=number, head_sha=sha, draft=draft, fork=fork, action=action,
                         author_id=_author(pr))])


def _review(event: str, action: Any, payload: Mapping[str, Any], b: _Base,
            comment_analyzers: Sequence[str]) -> Routed:
    """A review comment written or a review submitted: the comment analyzers again."""
    wanted = COMMENT_ACTIONS if event == "pull_request_review_comment" else {"submitted"}
    if action not in wanted:
        return Routed(note=f"{event}.{action}: nothing to do")
    pr = payload.get("pull_request") or {}
    if closed := _closed(pr):
        return Routed(note=closed)
    number, sha, _, _ = _pr_head(pr)
    if number is None or sha is None:
        return Routed(note=f"{event} without a pull request number or head SHA")
    return Routed([AnalyzeJob(repo=b.repo, default_branch=b.default_branch, installation_id=b.installation_id,
                              repository_id=b.repository_id,
                              pr_number=number, head_sha=sha, analyzer=name, force=True, reason=event,
                              author_id=_author(pr))
                   for name in comment_analyzers])


def _command(event: str, payload: Mapping[str, Any], b: _Base, slug: str | None) -> Routed | None:
    """A comment that is a command: its job; a conversation comment that is not: why; None
    for a review comment that is not (it is scored like any other)."""
    made = command_job(event, payload, dataclasses.asdict(b), slug)
    if isinstance(made, CommandJob):
        return Routed([made])
    return Routed(note=made) if event == "issue_comment" else None


def _check_run(action: Any, payload: Mapping[str, Any], b: _Base, titles: Mapping[str, str] | None) -> Routed:
    """One of our check runs re-requested (or its Re-run button pressed): that analyzer again."""
    run = payload.get("check_run") or {}
    if action == "requested_action":
        ident = (payload.get("requested_action") or {}).get("identifier")
        if ident != RERUN_ACTION:
            return Routed(note=f"check_run.requested_action {ident!r}: not ours")
    elif action != "rerequested":
        return Routed(note=f"check_run.{action}: nothing to do")
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
    return Routed([AnalyzeJob(repo=b.repo, default_branch=b.default_branch, installation_id=b.installation_id,
                              repository_id=b.repository_id,
                              pr_number=pr_number, head_sha=sha, analyzer=analyzer, force=True,
                              reason=f"check_run.{action}", author_id=_sender(payload))])


def _check_suite(action: Any, payload: Mapping[str, Any], b: _Base) -> Routed:
    """A check suite re-requested: each of its pull requests' heads again, in full."""
    if action != "rerequested":
        return Routed(note=f"check_suite.{action}: nothing to do")
    suite = payload.get("check_suite") or {}
    numbers = [n for n in (positive_int(p.get("number")) for p in suite.get("pull_requests") or []) if n]
    sha = _sha(suite.get("head_sha"))
    if not numbers or sha is None:
        return Routed(note="check suite without a pull request")
    return Routed([PRJob(repo=b.repo, default_branch=b.default_branch, installation_id=b.installation_id,
                         repository_id=b.repository_id,
                         pr_number=n, head_sha=sha, action="rerequested", force=True, author_id=_sender(payload))
                   for n in numbers])


def _installation(event: str, action: Any, payload: Mapping[str, Any], b: _Base) -> Routed:
    """An installation created, deleted, suspended, or its repositories changed: remembered."""
    inst = payload.get("installation") or {}
    account = (inst.get("account") or {}).get("login", "")
    active = not (event == "installation" and action in ("deleted", "suspend"))
    return Routed([InstallationJob(installation_id=b.installation_id, account=str(account or ""),
                                   active=active, action=action)])


def _repository(action: Any, b: _Base) -> Routed:
    """A repository renamed or transferred: its data follows its id; deleted: no longer served."""
    if action not in ("renamed", "transferred", "deleted"):
        return Routed(note=f"repository.{action}: nothing to do")
    if b.repository_id is None or not b.repo:
        return Routed(note=f"repository.{action} without the repository's id or name")
    return Routed([RepositoryJob(repo=b.repo, installation_id=b.installation_id, repository_id=b.repository_id,
                                 action=str(action))])


def _removed(payload: Mapping[str, Any], b: _Base) -> Routed:
    """Repositories removed from an installation: their data is no longer served."""
    jobs: list[Job] = []
    for r in payload.get("repositories_removed") or []:
        rid = positive_int(r.get("id")) if isinstance(r, Mapping) else None
        name = r.get("full_name") if isinstance(r, Mapping) else None
        if rid is not None and isinstance(name, str) and name:
            jobs.append(RepositoryJob(repo=name, installation_id=b.installation_id, repository_id=rid,
                                      action="removed"))
    return Routed(jobs, note="" if jobs else "installation_repositories.removed without repositories")
