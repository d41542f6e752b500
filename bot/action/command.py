"""`rtcbot action`: the GitHub Action's entry point (action.yml runs it in the image). On a
pull request's event it reviews the pull request (bot/action/run.py); on `issue_comment` it
answers the command the comment writes to rtcbot (bot/action/comments.py).

The settings file is the one `RepoConfig` (bot/core/config.py), the same as the App's; the inputs
below win over it. Everything comes from the environment GitHub sets (GITHUB_EVENT_PATH, GITHUB_API_URL,
GITHUB_TOKEN, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, and the inputs as INPUT_<NAME>), or from
the options, which win. Exit status: 0, 1 when `fail-on` matched (or every analyzer failed),
2 for bad input.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import click

from analyzers.context import Tools
from bot.action.comments import answer_comment
from bot.action.run import run_action
from bot.action.settings import ActionSettings
from bot.action.workflow import COMMENT_EVENT, ActionError
from bot.core.llm import llm_factory
from bot.core.qualification import model_name
from bot.core.settings import (
    CommandSettings,
    SettingsError,
    error_lines,
    llm_settings,
    load_command_settings,
    load_tools,
)
from bot.github import GitHubError, GitHubSettings, GitHubSettingsError, load_github_settings
from bot.shell.commands import options


def _inp(name: str, *more: str) -> list[str]:
    """GitHub passes input `llm-base-url` as INPUT_LLM-BASE-URL (hyphens kept)."""
    up = name.upper()
    return [f"INPUT_{up}", f"INPUT_{up.replace('-', '_')}", *more]


_ACTION_OPTIONS = options(
    click.option("--event", "event_path", envvar="GITHUB_EVENT_PATH", metavar="FILE",
                 help="The webhook payload (env GITHUB_EVENT_PATH)."),
    click.option("--event-name", envvar="GITHUB_EVENT_NAME", default=None, help="env GITHUB_EVENT_NAME."),
    click.option("--api-url", envvar="GITHUB_API_URL", default="https://api.github.com", show_default=True,
                 help="REST API root (env GITHUB_API_URL; GitHub Enterprise too)."),
    click.option("--token", envvar=_inp("github-token", "GITHUB_TOKEN"), default=None, show_envvar=False,
                 help="Token for the REST API (env GITHUB_TOKEN)."),
    click.option("--workspace", envvar="GITHUB_WORKSPACE", type=click.Path(file_okay=False, path_type=Path),
                 default=".", help="The checkout (env GITHUB_WORKSPACE)."),
    click.option("--analyzers", envvar=_inp("analyzers"), default="",
                 help="Comma-separated analyzers; default: the config file's, else editing-rtc,crscore,autofix."),
    click.option("--config", envvar=_inp("config"), default=".github/rtcbot.yml", show_default=True,
                 help="Settings file in the repository (bot/core/config.py: analyzers, fail_on, thresholds, "
                      "ignore, model, test_command, options), read at the PR's base commit through the "
                      "API, never from the checkout."),
    click.option("--fail-on", envvar=_inp("fail-on"), default="", metavar="EXPR",
                 help='Exit 1 when e.g. "editing_rtc.rtc<0.2 || autofix.findings>0" holds.'),
    click.option("--sarif-file", envvar=_inp("sarif-file"), default="", help="Also write SARIF 2.1.0 here."),
    click.option("--reporters", envvar=_inp("reporters"), default="pr-review", show_default=True, metavar="LIST",
                 help="Further outputs by name, comma-separated (empty: none): pr-review (AutoFix's verified "
                      "fixes as committable suggestions; needs `pull-requests: write`)."),
    click.option("--test-command", envvar=_inp("test-command"), default="",
                 help="Runs the repository's tests: turns SynthesisRTC on (wins over the config's "
                      "test_command; needs a checkout at the head)."),
    click.option("--step-summary", envvar="GITHUB_STEP_SUMMARY", default=None, metavar="FILE",
                 help="Markdown report (env GITHUB_STEP_SUMMARY; stdout when unset)."),
    click.option("--output", "output_path", envvar="GITHUB_OUTPUT", default=None, metavar="FILE",
                 help="Step outputs (env GITHUB_OUTPUT)."),
    click.option("--llm-base-url", envvar=_inp("llm-base-url", "RTCBOT_LLM_BASE_URL"), default=None, metavar="URL",
                 help="OpenAI-compatible endpoint; default: the embedded model."),
    click.option("--model", envvar=_inp("model", "RTCBOT_LLM_MODEL"), default=None, help="Model at the endpoint."),
    click.option("--api-key", envvar=_inp("api-key", "RTCBOT_LLM_API_KEY", "OPENAI_API_KEY"), default=None,
                 show_envvar=False, help="Key for the endpoint."),
    click.option("--max-requests", type=click.IntRange(min=1), default=None, help="LLM request budget."),
    click.option("--allowed-models", envvar="RTCBOT_ALLOWED_MODELS", default="", metavar="LIST",
                 help="Models the config's `model:` may pick (comma-separated; env RTCBOT_ALLOWED_MODELS)."),
    click.option("--command-name", envvar=_inp("command-name"), default="rtcbot", show_default=True,
                 help="On issue_comment: the name a command addresses (`@rtcbot rerun`)."),
)


def _operator_settings() -> tuple[Tools, GitHubSettings, CommandSettings]:
    """The workflow's environment: tools (RTCBOT_SEMGREP, RTCBOT_SANDBOX, …) and GitHub's retries
    (RTCBOT_MAX_RETRY_WAIT_S, …); every bad setting at once, one line each, as `rtcbot serve`
    says them (exit 2)."""
    from bot.shell.exits import settings_exit

    problems: list[str] = []
    tools, github, commands = None, None, None
    try:
        tools = load_tools()
    except SettingsError as e:
        problems += e.lines
    try:
        github = load_github_settings(action=True)
    except GitHubSettingsError as e:
        problems += error_lines(e.error, GitHubSettings)
    try:
        commands = load_command_settings()
    except SettingsError as e:
        problems += e.lines
    if problems or tools is None or github is None or commands is None:
        settings_exit(SettingsError(*problems))
    return tools, github, commands


@click.command("action")
@_ACTION_OPTIONS
def command(event_path: str | None, event_name: str | None, api_url: str, token: str | None, workspace: Path,
            analyzers: str, config: str, fail_on: str, sarif_file: str, reporters: str, test_command: str,
            step_summary: str | None, output_path: str | None, llm_base_url: str | None, model: str | None,
            api_key: str | None, max_requests: int | None, allowed_models: str, command_name: str) -> None:
    """Run rtcbot on the pull request of a GitHub Actions event and publish check runs."""
    if llm_base_url and not model:
        raise click.UsageError("--llm-base-url (input llm-base-url) needs --model (input model)")
    settings = llm_settings(base_url=llm_base_url, model=model, api_key=api_key, max_requests=max_requests)
    tools, github, commands = _operator_settings()
    s = ActionSettings(
        event_path=event_path, event_name=event_name, api_url=api_url, token=token, workspace=workspace,
        llm_factory=llm_factory(settings), analyzers=analyzers, config=config, fail_on=fail_on,
        sarif_file=sarif_file, reporters=reporters, test_command=test_command, step_summary_path=step_summary,
        output_path=output_path, tools=tools, github=github,
        allowed_models=tuple(m.strip() for m in allowed_models.split(",") if m.strip()),
        llm_for_model=lambda m: llm_factory(dataclasses.replace(settings, model=m)),
        model_name=model_name(settings), command_name=command_name.strip(), commands=commands,
    )
    try:
        result = answer_comment(s) if event_name == COMMENT_EVENT else run_action(s)
    except ActionError as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(2)
    except GitHubError as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(1)
    sys.exit(result.exit_code)
