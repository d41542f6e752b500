"""What the App's jobs read of a pull request on GitHub, for the `pr` job (bot/app/fan_out.py) and
its analyses (bot/app/analysis.py): the repository's configuration (default branch), the PR's
files and review comments (loading side by side, read once by the `pr` job for all its
analyses), the analyzers the configuration selects, and a file at the head.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from analyzers.context import ReviewComment, head_file_limit
from bot.app.job_kinds import AnalyzeJob, FeedbackJob, PRJob
from bot.app.pipeline import JobError
from bot.app.settings import ServiceSettings
from bot.core.config import CONFIG_PATH, LoadedConfig, parse_config
from bot.core.context import Selection, comments_from_github, select
from bot.github import GitHub, GitHubError

GithubFactory = Callable[[int], GitHub]  # an installation's id → its client
Owns = Callable[[Mapping[str, Any]], bool]  # whether this App wrote a comment (bot/app/identity.py)


@dataclass
class PRInputs:
    """What every analysis of one head reads from GitHub, read once by the `pr` job."""

    config: LoadedConfig
    files: Future[list[dict[str, Any]]]
    comments: Future[list[ReviewComment]]
    raw_comments: Future[list[dict[str, Any]]]  # as GitHub lists them (the pr-review reporter's markers)


def installation_github(github: GithubFactory, job: PRJob | AnalyzeJob | FeedbackJob) -> GitHub:
    """The client of the job's installation; JobError when the delivery named none."""
    if not job.installation_id:
        raise JobError("the delivery names no installation")
    return github(job.installation_id)


class PRReader:
    """Reads a pull request's inputs with the App's settings; `owns` tells the App's own comments."""

    def __init__(self, settings: ServiceSettings, owns: Owns) -> None:
        self.settings = settings
        self.owns = owns

    def config(self, gh: GitHub, job: PRJob | AnalyzeJob) -> LoadedConfig:
        try:
            text = gh.config_text(job.repo, CONFIG_PATH, job.default_branch)
        except GitHubError as e:
            return LoadedConfig(error=f"could not read {CONFIG_PATH}: {e}")
        return parse_config(text, self.settings.tools())

    def read(self, io: ThreadPoolExecutor, gh: GitHub, job: PRJob | AnalyzeJob) -> PRInputs:
        """The PR's files and review comments, loading on `io` while the configuration is read."""
        files = io.submit(gh.pr_files, job.repo, job.pr_number)
        raw = io.submit(gh.review_comments, job.repo, job.pr_number)
        comments = io.submit(lambda: comments_from_github(raw.result(), self.owns))
        return PRInputs(self.config(gh, job), files, comments, raw)

    def select(self, cfg: LoadedConfig, defaults: list[str]) -> Selection:
        """The analyzers, model and notes the configuration gives (bot/core/context.py): the App
        runs no pull request's code, and says so where the file sets a test command."""
        return select(cfg, defaults=defaults, runs_code=False, allowed_models=self.settings.allowed_models)

    def head_file(self, gh: GitHub, job: PRJob | AnalyzeJob) -> Callable[[str], str | None]:
        """A file at the job's head from the contents API, never downloaded past the limit of a file
        analysed (analyzers/context.py `head_file_limit`): a larger one raises HeadFileTooLarge."""
        limit = head_file_limit(self.settings.tools())
        return lambda path: gh.file_text(job.repo, path, job.head_sha, limit=limit)
