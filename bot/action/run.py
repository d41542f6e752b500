"""The GitHub Action: one pull request, analysed inline in a workflow step.

Steps (the app's steps 2–4, with no queue): read the event (GITHUB_EVENT_PATH) → the PR's
files from the REST API (GITHUB_API_URL, GITHUB_TOKEN) → ChangeSet → analyzers → one check
run per analyzer. A token that may not create check runs (403: pull requests from forks get a
read-only GITHUB_TOKEN) falls back to workflow-command annotations within GitHub's per-step
limits, and says so. Always: a Markdown report in GITHUB_STEP_SUMMARY, outputs in
GITHUB_OUTPUT, and an exit code that follows `fail-on`.

A pull request is data, never policy: `.github/rtcbot.yml` is read from the BASE commit
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from analyzers import registry
from analyzers.context import Tools
from analyzers.llm import LLMClient
from analyzers.local_llm import ALIAS
from analyzers.pipeline import run_all
from analyzers.report import AnalyzerReport
from bot.action.workflow import ActionError, PullRequest, load_event, plan, read_inputs
from bot.core.context import (
    build,
    changes_from_github,
    comments_from_github,
    head_files,
    unlisted_files_note,
)
from bot.core.gate import judge
from bot.core.qualification import refusal_from_commit, refusing_factory
from bot.github import GitHub, GitHubError, GitHubSettings, token_client
from reporters import check_run
from reporters.base import Sinks, Target, failure, publish
from reporters.base import build as build_reporters
from reporters.check_run import CheckRunReporter, diff_lines
from reporters.sarif import SarifReporter
from reporters.step_summary import OutputsReporter, RunOutcome, StepSummaryReporter
from reporters.workflow_commands import STEP_ANNOTATIONS_PER_LEVEL, WorkflowCommandsReporter


# ============================================================================ the run
@dataclass
class ActionSettings:
    event_path: str | None
    event_name: str | None
    api_url: str
    token: str | None
    workspace: Path
    llm_factory: Callable[[], LLMClient]
    analyzers: str = ""
    config: str = ".github/rtcbot.yml"
    fail_on: str = ""
    sarif_file: str = ""
    test_command: str = ""
    step_summary_path: str | None = None
    output_path: str | None = None
    reporters: str = "pr-review"  # further outputs by name (input `reporters`)
    tools: Tools = field(default_factory=Tools)  # the operator's (RTCBOT_SEMGREP, ...)
    allowed_models: tuple[str, ...] = ()  # models the config may pick (RTCBOT_ALLOWED_MODELS)
    llm_for_model: Callable[[str], Callable[[], LLMClient]] | None = None  # the config's model
    github: GitHubSettings | None = None  # retries, rate-limit waits (RTCBOT_*; bot/github)
    model_name: str = ALIAS  # the model llm_factory reaches (require_qualified)


@dataclass
class ActionResult:
    exit_code: int
    reports: list[AnalyzerReport]
    mode: str  # "check-runs" | "workflow-commands"
    matched: list[str]
    check_runs: dict[str, int] = field(default_factory=dict)


def _head_file(gh: GitHub, pr: PullRequest) -> Callable[[str], str | None]:
    """A file at the head from the contents API; None when it cannot be read."""
    def load(path: str) -> str | None:
        try:
            return gh.file_text(pr.full_name, path, pr.head_sha)
        except GitHubError:
            return None

    return load


def _extra_outputs(names: Sequence[str], sinks: Sinks, target: Target, titles: dict[str, str],
                   reports: list[AnalyzerReport]) -> list[str]:
    """Drive the further reporters by name, each through a finished run; what each did. One
    that GitHub refuses (a fork's read-only token), or that fails otherwise, is said with its
    type and message, not fatal: the check runs and the summary hold the same findings."""
    said = []
    for reporter in build_reporters(names, sinks):
        try:
            said.append(f"{reporter.name}: {publish(reporter, target, titles, reports)}")
        except GitHubError as e:
            said.append(f"{reporter.name}: GitHub refused it ({e.status}: {e.message}); "
                        "the check runs and the summary hold the same findings")
        except Exception as e:  # as the App logs a further output that fails (bot/app/publish.py)
            said.append(f"{reporter.name} failed ({failure(e)}); "
                        "the check runs and the summary hold the same findings")
    return said


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
        text = None
        if inputs.config is not None:
            # the base commit's file: the pull request's own copy (in the checkout) never counts
            text = gh.config_text(pr.full_name, inputs.config, pr.base_sha)
            say(f"rtcbot: settings from {inputs.config} at the base commit {pr.base_sha[:12]}" if text is not None
                else f"rtcbot: no {inputs.config} at the base commit {pr.base_sha[:12]}: the defaults apply")
        p = plan(inputs, pr, text, workspace=s.workspace, tools=s.tools, allowed_models=s.allowed_models)
        loaded, names, notes, fail_on = p.loaded, p.names, p.notes, p.gate
        refused = (refusal_from_commit(gh, pr.full_name, pr.base_sha, p.selection.model or s.model_name)
                   if loaded.config.require_qualified else None)
        if refused is not None:
            notes.append(refused)
        for n in notes:
            say(f"rtcbot: {n}")
        titles = {n: registry.get(n).title for n in names}
        target = Target(repo=pr.full_name, number=pr.number, head_sha=pr.head_sha, title=pr.title,
                        url=pr.html_url, fork=pr.fork)
        # check runs first, in progress, so the PR shows that rtcbot is at work: the App's
        # reporter, so the same report gives the same check run on both surfaces
        mode = "check-runs"
        checks = CheckRunReporter(gh, notes=notes)
        try:
            checks.start(target, titles)
        except GitHubError as e:
            if e.status not in (403, 404):
                raise
            mode = "workflow-commands"
            why = ("this pull request comes from a fork, whose GITHUB_TOKEN is read-only" if pr.fork
                   else "give the workflow `permissions: checks: write`")
            say(f"rtcbot: this token cannot create check runs ({e.status}: {e.message}); {why}. "
                f"Falling back to workflow-command annotations (at most {STEP_ANNOTATIONS_PER_LEVEL} "
                "per level) and the step summary.")
            checks.abandon("this token cannot create every check run")  # any it did create
        say(f"rtcbot: {pr.full_name}#{pr.number} at {pr.head_sha[:12]}: {', '.join(names)}")
        model = p.selection.model
        llm = s.llm_for_model(model) if model and s.llm_for_model else s.llm_factory
        if refused is not None:
            llm = refusing_factory(refused)
        try:
            files = gh.pr_files(pr.full_name, pr.number)
            changes = changes_from_github(files, loaded)
            unlisted = unlisted_files_note(len(files), lambda: gh.changed_files(pr.full_name, pr.number))
            if unlisted:  # said in every check run and in the step summary, as on the App
                say(f"rtcbot: {unlisted}")
                notes.append(unlisted)
                checks.notes.append(unlisted)
            checks.diff = diff_lines(changes)  # annotations only where the diff shows them
            ctx = build(loaded, p.selection, tools=s.tools, llm_factory=llm,
                        comments=lambda: comments_from_github(gh.review_comments(pr.full_name, pr.number)),
                        file_loader=head_files(p.checkout, _head_file(gh, pr)), repo_path=p.checkout)
            reports = run_all(names, changes, ctx)
        except BaseException as e:
            checks.abandon(f"The run stopped: {type(e).__name__}: {e}")
            raise
        verdict = judge(fail_on, reports)
        matched, missing, conclusion = list(verdict.matched), list(verdict.missing), verdict.conclusion

        if mode == "check-runs":
            checks.gate = verdict.of
            publish(checks, target, titles, reports)  # start again opens nothing: all are open
            mode_note = (f"Posted {len(checks.runs)} check run(s): "
                         + ", ".join(check_run.check_name(titles[n]) for n in names) + ".")
        else:
            shown, left = publish(WorkflowCommandsReporter(stdout), target, titles, reports)
            why = ("a pull request from a fork gets a read-only token" if pr.fork
                   else "the workflow needs `permissions: checks: write`")
            mode_note = (f"**This token cannot create check runs** ({why}), so the findings are "
                         f"workflow-command annotations: {shown} shown"
                         + (f", {left} more only in this summary (GitHub shows at most "
                            f"{STEP_ANNOTATIONS_PER_LEVEL} per level and step)." if left else "."))
            say("rtcbot: " + mode_note.replace("**", ""))

        sinks = Sinks(github=gh, stream=stdout, notes=tuple(notes), suggestions=loaded.config.suggestions)
        for line in _extra_outputs(inputs.reporters, sinks,
                                   target, titles, reports):
            say(f"rtcbot: {line}")

        sarif_written = ""
        if s.sarif_file:
            try:  # relative: inside the workspace (the PR's checkout), no symbolic link followed
                sarif = SarifReporter(Path(s.sarif_file), root=None if Path(s.sarif_file).is_absolute()
                                      else s.workspace)
                sarif_written = str(publish(sarif, target, titles, reports))
            except (ValueError, OSError) as e:
                raise ActionError(f"sarif-file: cannot write {s.sarif_file!r}: {e}") from None
            say(f"rtcbot: SARIF written to {sarif_written}")

        outcome = RunOutcome(mode=mode, mode_note=mode_note, conclusion=conclusion, gate=fail_on.text,
                             matched=tuple(matched), missing=tuple(missing), notes=tuple(notes),
                             blocked=tuple(verdict.blocked.values()),
                             sarif_file=sarif_written, links=pr.run_links(checks.runs if mode == "check-runs" else {}),
                             conclusions={n: out.conclusion for n, out in checks.sent.items()})
        publish(StepSummaryReporter(Path(s.step_summary_path) if s.step_summary_path else None, stdout),
                target, titles, reports, outcome)
        if s.output_path:
            publish(OutputsReporter(Path(s.output_path)), target, titles, reports, outcome)
        if missing:
            say("rtcbot: fail-on: not measured in this run: " + ", ".join(missing))
        exit_code = 0
        for why in verdict.blocked.values():  # fails closed: it read what was not analysed
            say(f"rtcbot: fail-on: {why}")
            exit_code = 1
        if matched:
            say("rtcbot: fail-on matched: " + "; ".join(matched))
            exit_code = 1
        elif reports and all(r.error for r in reports):
            for err in dict.fromkeys(r.error for r in reports if r.error):
                say(f"rtcbot: error: {err}")
            exit_code = 1
        return ActionResult(exit_code, reports, mode, matched, checks.runs)
    finally:
        gh.close()

