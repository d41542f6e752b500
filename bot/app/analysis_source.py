"""What one analysis reads on the App (bot/core/review.py `Source`): the pull request's inputs as
the `pr` job or the PR reader read them (bot/app/pr_inputs.py) — its config at the default
branch, its files, its review comments — its files at the head through the contents API, and
the store's dismissals and qualification records."""

from __future__ import annotations

from dataclasses import dataclass

from analyzers.context import head_file_limit
from bot.app.job_kinds import AnalyzeJob
from bot.app.pr_inputs import PRInputs, PRReader
from bot.app.settings import ServiceSettings
from bot.core import qualification
from bot.core import review as review_core
from bot.core.config import LoadedConfig
from bot.core.context import changes_from_github, head_files, unlisted_files
from bot.core.dismissals_file import LoadedDismissals
from bot.github import GitHub
from bot.store.store import Store


@dataclass(frozen=True)
class AnalysisSource:
    settings: ServiceSettings
    store: Store
    reader: PRReader
    job: AnalyzeJob
    gh: GitHub
    inputs: PRInputs

    def config(self) -> LoadedConfig:
        return self.inputs.config

    def dismissals(self, loaded: LoadedConfig) -> LoadedDismissals:
        return LoadedDismissals(tuple(self.store.dismissals.listed(self.job.repository_id, self.job.repo)))

    def standing(self, model: str | None) -> qualification.Standing:
        """What the App's database records of the model on the repository (bot/core/qualification.py)."""
        name = qualification.model_name(self.settings.llm_settings(model))
        return qualification.standing_from_store(self.store, self.job.repo, name)

    def change(self, p: review_core.Plan) -> review_core.Change:
        gh, job = self.gh, self.job
        files = self.inputs.files.result()
        return review_core.Change(
            changes_from_github(files, p.loaded),
            files=head_files(None, self.reader.head_file(gh, job), limit=head_file_limit(self.settings.tools())),
            comments=self.inputs.comments.result,  # only for an analyzer that reads them
            unlisted=unlisted_files(len(files), lambda: gh.changed_files(job.repo, job.pr_number)))
