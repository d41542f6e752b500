"""The GitHub Action: one pull request, analysed inline in a workflow step.

Steps (the app's steps 2–4, with no queue): read the event (GITHUB_EVENT_PATH) → the PR's
files from the REST API (GITHUB_API_URL, GITHUB_TOKEN) → ChangeSet → analyzers → one check
run per analyzer. A token that may not create check runs (403: pull requests from forks get a
read-only GITHUB_TOKEN) falls back to workflow-command annotations within GitHub's per-step
limits, and says so. Always: a Markdown report in GITHUB_STEP_SUMMARY, outputs in
GITHUB_OUTPUT, and an exit code that follows `fail-on`.

A pull request is data, never policy: `.github/rtcbot.yml` and the team's dismissals
(`.github/rtcbot-dismissals.yml`, bot/core/dismissals_file.py) are read from the BASE commit
through the contents API, never from the checkout (which holds the pull request's own copy),
and on `pull_request_target` — a write token and the repository's secrets — nothing from the
pull request runs: no test command, no SynthesisRTC.

The settings are the one `RepoConfig` (bot/core/config.py), chosen into a run by the one context
builder (bot/core/context.py), and the gate is the one `fail_on` grammar (bot/core/gate.py); the
workflow's inputs (`analyzers`, `fail-on`, `test-command`) win over the file's. With a test
command and a checkout at the head (actions/checkout with `ref: <head sha>`), SynthesisRTC
runs the repository's tests in the sandbox.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import IO

from analyzers.context import head_file_limit
from analyzers.llm.client import LLMClient
from bot.action import workflow
from bot.action.settings import ActionResult, ActionSettings
from bot.action.step_end import StepEnd
from bot.action.workflow import (
    ActionError,
    Inputs,
    Planned,
    PullRequest,
    dismissals_at_base,
    head_file_reader,
    load_event,
    read_inputs,
)
from bot.core import review as review_core
from bot.core.checks import CheckRuns, CheckRunsOutput, MemoryLedger
from bot.core.config import CONFIG_PATH, LoadedConfig, parse_config
from bot.core.context import (
    Selection,
    changes_from_github,
    comments_from_github,
    head_files,
    marked_by,
    unlisted_files,
)
from bot.core.dismissals_file import LoadedDismissals
from bot.core.outputs import Fallback, Further, Reported
from bot.core.qualification import Standing, standing_from_commit
from bot.core.review import Ending
from bot.github import GitHub, GitHubError, token_client
from reporters.base import Sinks, Target
from reporters.workflow_commands import STEP_ANNOTATIONS_PER_LEVEL, WorkflowCommandsReporter

# how the Action words the end of a review (bot/core/review.py `Ending`), in the step's log
ENDINGS = {Ending.FAILED: "rtcbot: error: {}", Ending.UNMEASURED: "rtcbot: fail-on: not measured in this run: {}",
           Ending.BUDGET: "rtcbot: {}", Ending.BLOCKED: "rtcbot: fail-on: {}",
           Ending.MATCHED: "rtcbot: fail-on matched: {}"}


def run_action(s: ActionSettings, *, log: IO[str] | None = None, stdout: IO[str] | None = None) -> ActionResult:
    log = log or sys.stderr
    stdout = stdout or sys.stdout

    def say(msg: str) -> None:
        print(msg, file=log, flush=True)

    pr = load_event(s.event_path, s.event_name)
    if not s.token:
        raise ActionError("GITHUB_TOKEN is not set: pass `github-token` (default: the workflow's token)")
    inputs = read_inputs(s.event_name, analyzers=s.analyzers, fail_on=s.fail_on, config=s.config,
                         test_command=s.test_command, reporters=s.reporters)  # bad: an error before any request
    gh = token_client(s.api_url, s.token, s.github)
    try:
        run = PullRequestRun(s, gh, pr, inputs, say, stdout)
        return run.review()
    finally:
        gh.close()
        stdout.flush()  # what the outputs printed is out before the step's log reads it


class PullRequestRun:
    """One pull request reviewed in a workflow step (see the module's docstring)."""

    def __init__(self, s: ActionSettings, gh: GitHub, pr: PullRequest, inputs: Inputs,
                 say: Callable[[str], None], stdout: IO[str]) -> None:
        self.s, self.gh, self.pr, self.inputs, self.say, self.stdout = s, gh, pr, inputs, say, stdout
        self.target = Target(repo=pr.full_name, number=pr.number, head_sha=pr.head_sha, title=pr.title,
                             url=pr.html_url, fork=pr.fork)
        # read once, for the analyzers that score comments and for the pr-review reporter's markers
        self.review_comments = cache(lambda: gh.review_comments(pr.full_name, pr.number))
        self.checkout: Path | None = None  # the workspace, where it is checked out at the head
        self.settings = review_core.Settings(s.tools, self._choose, self._llm, inputs.gate)

    def review(self, planned: Planned | None = None) -> ActionResult:
        """Analyse and publish (`planned`: a plan made already, e.g. narrowed by a command):
        check runs (workflow commands where this token cannot create them), further reporters,
        SARIF, the step summary and the outputs."""
        s, gh, pr = self.s, self.gh, self.pr
        plan_ = planned or self.planned()
        p = plan_.review
        for n in p.notes:
            self.say(f"rtcbot: {n}")
        checks = CheckRunsOutput(gh, CheckRuns(MemoryLedger()))  # the one check-run lifecycle
        commands = Reported(WorkflowCommandsReporter(self.stdout))
        primary = Fallback(checks, commands, self._refused)
        sinks = Sinks(github=gh, stream=self.stdout, suggestions=p.loaded.config.suggestions,
                      review_comments=self.review_comments)
        further = Further(self.inputs.reporters, sinks, lambda done: self.say(f"rtcbot: {done.said}"))
        end = StepEnd(s, pr, p.gate.text, primary, checks, commands, self.say, self.stdout)
        self.say(f"rtcbot: {pr.full_name}#{pr.number} at {pr.head_sha[:12]}: {', '.join(p.names)}")
        self.checkout = plan_.checkout
        result = review_core.execute(self, [primary, further, end], self.settings, planned=p, target=self.target)
        code = result.end(ENDINGS, self.say)
        return ActionResult(code, result.reports, end.mode, list(result.verdict.matched), checks.runs)

    def planned(self) -> Planned:
        """The base commit's settings, the inputs over them, the model and its qualification."""
        return Planned(review_core.prepare(self, self.settings), self.checkout)

    def _choose(self, loaded: LoadedConfig) -> Selection:
        """The workflow's inputs over the config (bot/action/workflow.py); notes where the
        workspace is not checked out at the head."""
        chosen = workflow.choose(self.inputs, self.pr, loaded, workspace=self.s.workspace,
                                 allowed_models=self.s.allowed_models)
        self.checkout = chosen.checkout
        return replace(chosen.selection, names=chosen.names, notes=chosen.notes)

    def _llm(self, model: str | None) -> Callable[[], LLMClient]:
        s = self.s
        return s.llm_for_model(model) if model and s.llm_for_model else s.llm_factory

    def config(self) -> LoadedConfig:
        """The settings file at the base commit: the pull request's own copy (in the checkout)
        never counts."""
        path, pr = self.inputs.config, self.pr
        text = None if path is None else self.gh.config_text(pr.full_name, path, pr.base_sha)
        if path is not None:
            self.say(f"rtcbot: settings from {path} at the base commit {pr.base_sha[:12]}" if text is not None
                     else f"rtcbot: no {path} at the base commit {pr.base_sha[:12]}: the defaults apply")
        return parse_config(text, self.s.tools, name=path or CONFIG_PATH)

    def dismissals(self, loaded: LoadedConfig) -> LoadedDismissals:
        return dismissals_at_base(self.gh, self.pr, loaded, self.say)

    def standing(self, model: str | None) -> Standing:
        return standing_from_commit(self.gh, self.pr.full_name, self.pr.base_sha, model or self.s.model_name)

    def _refused(self, e: GitHubError) -> None:
        why = ("this pull request comes from a fork, whose GITHUB_TOKEN is read-only" if self.pr.fork
               else "give the workflow `permissions: checks: write`")
        self.say(f"rtcbot: this token cannot create check runs ({e.status}: {e.message}); {why}. "
                 f"Falling back to workflow-command annotations (at most {STEP_ANNOTATIONS_PER_LEVEL} "
                 "per level) and the step summary.")

    def change(self, p: review_core.Plan, checkout: Path | None = None) -> review_core.Change:
        """The pull request's files and review comments, read through the token; its files at
        the head from `checkout` (the plan's, in a review) where it is checked out there."""
        gh, pr, limit, checkout = self.gh, self.pr, head_file_limit(self.s.tools), checkout or self.checkout
        files = gh.pr_files(pr.full_name, pr.number)
        changes = changes_from_github(files, p.loaded)
        unlisted = unlisted_files(len(files), lambda: gh.changed_files(pr.full_name, pr.number))
        if unlisted:  # said in every check run and in the step summary, as on the App
            self.say(f"rtcbot: {unlisted.note}")
        return review_core.Change(
            changes, files=head_files(checkout, head_file_reader(gh, pr, limit), limit=limit), checkout=checkout,
            comments=lambda: comments_from_github(self.review_comments(), marked_by(gh.wrote)),
            unlisted=unlisted)
