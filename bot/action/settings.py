"""What one Action run is given (the workflow's inputs and the operator's settings, read by
bot/action/command.py) and what it ends with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from analyzers.context import Tools
from analyzers.llm.client import LLMClient
from analyzers.llm.local import ALIAS
from analyzers.report import AnalyzerReport
from bot.core.settings import CommandSettings
from bot.github import GitHubSettings


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
    # retries, rate-limit waits (RTCBOT_*; bot/github); unset, the Action's own: its few writes
    # unspaced, as load_github_settings(action=True) reads them when RTCBOT_WRITE_INTERVAL_S is unset
    github: GitHubSettings = field(default_factory=lambda: GitHubSettings(write_interval_s=0.0))
    model_name: str = ALIAS  # the model llm_factory reaches (require_qualified)
    command_name: str = "rtcbot"  # what a command on a pull request addresses (`@rtcbot rerun`; input command-name)
    commands: CommandSettings = field(default_factory=CommandSettings)  # RTCBOT_AUTHOR_RERUNS_PER_DAY, ...


@dataclass
class ActionResult:
    exit_code: int
    reports: list[AnalyzerReport]
    mode: str  # "check-runs" | "workflow-commands"
    matched: list[str]
    check_runs: dict[str, int] = field(default_factory=dict)
