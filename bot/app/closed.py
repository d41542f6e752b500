"""The `feedback` job: a pull request closed — merged or not, and the reactions on the bot's
suggestions (bot/app/feedback.py)."""

from __future__ import annotations

from bot.app import feedback
from bot.app.job_kinds import FeedbackJob, Job
from bot.app.pipeline import JobEnd, JobError
from bot.app.pr_inputs import GithubFactory, Owns, installation_github
from bot.store.schema import JobRow
from bot.store.store import Store


class Closed:
    """Runs `feedback` jobs: what became of the suggestions on a closed pull request."""

    def __init__(self, store: Store, github: GithubFactory, owns: Owns) -> None:
        self.store = store
        self.github = github
        self.owns = owns

    def __call__(self, row: JobRow, job: Job) -> JobEnd:
        if not isinstance(job, FeedbackJob):
            raise JobError(f"a {job.kind} job is not a closed pull request's")
        if not self.store.published.rows(job.repo, job.pr_number):
            return "done", "nothing of rtcbot's to follow on this pull request", {}
        gh = installation_github(self.github, job)
        n = feedback.mark_closed(self.store, job.repo, job.pr_number, job.merged,
                                 gh.review_comments(job.repo, job.pr_number), self.owns,
                                 lambda cid: gh.review_comment_reactions(job.repo, cid))
        return "done", f"{n} suggestion(s) followed to the end ({'merged' if job.merged else 'closed'})", {}
