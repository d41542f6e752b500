"""The Action's inputs made into a run: the workflow's event file, its inputs (checked before
any request), and the plan — the one RepoConfig read at the base commit, chosen into analyzers,
a gate, a test command and notes by the one context builder (bot/core/context.py).

A pull request is data, never policy: on `pull_request_target` (a write token and the
repository's secrets) nothing from the pull request runs — `test-command` is refused, a
config's `test_command` is not used, the analyzers that run its code are left out, with a note.
Pure but for the event file and a look at the checkout's `.git`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzers import registry
from analyzers.context import Tools
from bot.core import review as review_core
from bot.core.config import CONFIG_PATH, LoadedConfig, parse_config
from bot.core.context import Selection, git_head, select, test_command_titles
from bot.core.dismissals_file import DISMISSALS_PATH, LoadedDismissals, parse_dismissals
from bot.core.gate import FailOn, FailOnError, parse_fail_on
from bot.github import GitHub, GitHubError
from reporters.base import UnknownReporter, further_outputs

PR_EVENTS = ("pull_request", "pull_request_target")
TRUSTED_EVENT = "pull_request_target"  # runs with secrets: the PR's code never executes
COMMENT_EVENT = "issue_comment"  # a command on a pull request (bot/action/comments.py): the same
TRUSTED_EVENTS = (TRUSTED_EVENT, COMMENT_EVENT)


class ActionError(Exception):
    """A problem the user can act on: one clear line, exit status 2."""


# -- the event ----------------------------------------------------------------------------
@dataclass(frozen=True)
class PullRequest:
    owner: str
    repo: str
    number: int
    head_sha: str
    base_sha: str
    title: str = ""
    html_url: str = ""
    draft: bool = False
    fork: bool = False

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"

    def run_links(self, runs: dict[str, int]) -> dict[str, str]:
        """Each analyzer's check run page, on the server of the pull request's page."""
        marker = f"/{self.full_name}/"
        server = self.html_url.split(marker, 1)[0] if marker in self.html_url else ""
        return {name: f"{server}/{self.full_name}/runs/{rid}" for name, rid in runs.items()}


def read_event(path: str | os.PathLike[str] | None) -> Any:
    """The event file's payload, or ActionError with one line."""
    if not path:
        raise ActionError("GITHUB_EVENT_PATH is not set: run inside a GitHub workflow or pass --event")
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ActionError(f"cannot read the event file {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ActionError(f"the event file {path} is not JSON ({e.msg})") from None


def load_event(path: str | os.PathLike[str] | None, event_name: str | None) -> PullRequest:
    payload = read_event(path)
    if event_name and event_name not in PR_EVENTS:
        raise ActionError(f"rtcbot action runs on pull_request events (and issue_comment, for commands), "
                          f"not {event_name!r}")
    pr = payload.get("pull_request") if isinstance(payload, dict) else None
    if not isinstance(pr, dict):
        raise ActionError(f"the event in {path} has no pull_request: run the action on pull_request")
    try:
        return pull_request_of(payload["repository"]["full_name"], pr, payload.get("number"))
    except (KeyError, TypeError, ValueError) as e:
        raise ActionError(f"the pull_request event in {path} lacks {e}") from None


def pull_request_of(full: str, pr: dict[str, Any], number: Any = None) -> PullRequest:
    """A pull request as GitHub describes it (an event's, or GET /pulls/{n}) in repository
    `full` (owner/name); KeyError, TypeError or ValueError when it lacks its head or base."""
    owner, _, repo = full.partition("/")
    head_repo = (pr.get("head") or {}).get("repo") or {}
    return PullRequest(
        owner=owner, repo=repo, number=int(pr.get("number") or number),
        head_sha=str(pr["head"]["sha"]), base_sha=str(pr["base"]["sha"]),
        title=str(pr.get("title") or ""), html_url=str(pr.get("html_url") or ""),
        draft=bool(pr.get("draft")), fork=head_repo.get("full_name", full) != full,
    )


# -- the inputs ---------------------------------------------------------------------------
def config_path(path: str) -> str:
    """The settings file's path in the repository (relative, inside it), or ActionError."""
    parts = path.strip().replace("\\", "/").split("/")
    if not path.strip() or path.strip().startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ActionError(f"config: {path!r} must be a relative path inside the repository, "
                          "e.g. .github/rtcbot.yml")
    return "/".join(parts)


@dataclass(frozen=True)
class Inputs:
    """The workflow's own inputs, checked before any request."""

    analyzers: list[str] | None  # an exact list, or None: the config's
    gate: FailOn | None  # replaces the config's `fail_on`, or None
    config: str | None  # the settings file's path, or None: none
    test_command: str | None
    trusted_event: bool  # pull_request_target, issue_comment: nothing from the pull request runs
    reporters: tuple[str, ...] = ()  # further outputs by name (reporters.REPORTERS), e.g. pr-review
    event_name: str = TRUSTED_EVENT  # the event, where it is trusted (what its note names)


def read_inputs(event_name: str | None, *, analyzers: str, fail_on: str, config: str,
                test_command: str, reporters: str = "") -> Inputs:
    """The inputs, or ActionError with one line."""
    trusted = event_name in TRUSTED_EVENTS
    if test_command and trusted:
        raise ActionError(f"test-command runs the pull request's code; refusing on {event_name}")
    try:
        wanted = registry.parse_names(analyzers) if analyzers.strip() else None
    except registry.UnknownAnalyzer as e:
        raise ActionError(f"analyzers: {e}") from None
    try:
        gate = parse_fail_on(fail_on) if fail_on.strip() else None
    except FailOnError as e:
        raise ActionError(str(e)) from None
    try:
        extra = further_outputs([n.strip() for n in reporters.split(",") if n.strip()])
    except UnknownReporter as e:
        raise ActionError(f"reporters: {e}") from None
    return Inputs(wanted, gate, config_path(config) if config.strip() else None,
                  test_command or None, trusted, tuple(extra), event_name if trusted and event_name else TRUSTED_EVENT)


# -- the plan -----------------------------------------------------------------------------
@dataclass
class Plan:
    loaded: LoadedConfig
    selection: Selection
    names: list[str]  # the analyzers to run
    gate: FailOn
    checkout: Path | None  # the workspace, when it is checked out at the head
    notes: list[str] = field(default_factory=list)  # for the log, the summary and every check run


def plan(inputs: Inputs, pr: PullRequest, config_text: str | None, *, workspace: Path, tools: Tools,
         allowed_models: tuple[str, ...] = ()) -> Plan:
    """What the run does: `config_text` is the settings file at the base commit (None: none)."""
    loaded = parse_config(config_text, tools, name=inputs.config or CONFIG_PATH)
    return choose(inputs, pr, loaded, workspace=workspace, allowed_models=allowed_models)


def choose(inputs: Inputs, pr: PullRequest, loaded: LoadedConfig, *, workspace: Path,
           allowed_models: tuple[str, ...] = ()) -> Plan:
    """What the run does with the settings file at the base commit, `loaded`."""
    name = inputs.config or CONFIG_PATH
    sel = select(loaded, defaults=registry.DEFAULT_ANALYZERS, explicit=inputs.analyzers,
                 test_command=inputs.test_command, runs_code=not inputs.trusted_event,
                 no_code_note=None, allowed_models=allowed_models, config_name=name)
    notes, names = list(sel.notes), sel.names
    if inputs.trusted_event:
        dropped = [registry.title(n) for n in names if registry.runs_code(n)]
        names = [n for n in names if not registry.runs_code(n)]
        notes.append(f"{inputs.event_name}: the pull request is read as data only; nothing from it "
                     "runs (no test command" + "".join(f", no {t}" for t in dropped) + ").")
    at_head = not inputs.trusted_event and git_head(workspace) == pr.head_sha
    if sel.test_command and not at_head:
        notes.append(f"test-command is set, but {workspace} is not checked out at the head "
                     f"{pr.head_sha[:12]} (actions/checkout with `ref: <head sha>`): {test_command_titles()} "
                     "cannot run")
    return Plan(loaded, sel, names, loaded.config.gate(inputs.gate),
                workspace if at_head else None, notes)


def dismissals_at_base(gh: GitHub, pr: PullRequest, loaded: LoadedConfig,
                       say: Callable[[str], None]) -> LoadedDismissals:
    """The team's dismissals at the base commit (the pull request's own copy never counts);
    none when the config turns them off."""
    if loaded.config.dismissals == "off":
        return LoadedDismissals()
    text = gh.config_text(pr.full_name, DISMISSALS_PATH, pr.base_sha)
    found = parse_dismissals(text)
    if text is not None and found.error is None:
        say(f"rtcbot: {len(found.dismissals)} dismissal(s) from {DISMISSALS_PATH} "
            f"at the base commit {pr.base_sha[:12]}")
    return found


@dataclass(frozen=True)
class Planned:
    """A pull request's review, planned: the core's plan and the checkout it may use."""

    review: review_core.Plan
    checkout: Path | None


def head_file_reader(gh: GitHub, pr: PullRequest, limit: int) -> Callable[[str], str | None]:
    """A file at the head from the contents API; None when it cannot be read; HeadFileTooLarge,
    its bytes never asked for, when GitHub says it is over `limit` bytes."""
    def load(path: str) -> str | None:
        try:
            return gh.file_text(pr.full_name, path, pr.head_sha, limit=limit)
        except GitHubError:
            return None

    return load
