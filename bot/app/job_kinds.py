"""The App's job kinds, each a frozen dataclass stored as JSON in the jobs table (`to_spec`,
`from_spec`); made from webhook deliveries by bot/app/events.py, run by the handler of their
kind (bot/app/pipeline.py):

- `PRJob` (`pr`): a pull request head to analyse; the worker reads the repository's
  configuration and fans it out into one `AnalyzeJob` per enabled analyzer and runs them at
  once (drafts stop there unless enabled).
- `AnalyzeJob` (`analyze`): one analyzer on one head SHA: one check run "rtcbot / <title>".
- `InstallationJob` (`installation`): remember an installation (created, deleted, suspended, …).
- `FeedbackJob` (`feedback`): a pull request closed: what became of rtcbot's suggestions.
- `RepositoryJob` (`repository`): a repository renamed, transferred, deleted or removed.
- `CommandJob` (`command`): a comment addressed to the App (`@<slug> rerun`; bot/app/command_events.py).
- `ProposalJob` (`proposal`): a resolved review thread on one of the App's findings whose last reply
  says "won't fix": the `ignore this` command to confirm, proposed in the thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

from pydantic import Field, TypeAdapter, ValidationError

from bot.app.command_events import CommandJob, ProposalJob


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


ByName = Literal["check_run.rerequested", "check_run.requested_action"]  # a check run's re-run, asked by name
BY_NAME: tuple[str, ...] = get_args(ByName)


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
        """Asked for by name (a re-run of its check run, `BY_NAME`): runs even where the config
        turns the analyzer off."""
        return self.reason in BY_NAME

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
