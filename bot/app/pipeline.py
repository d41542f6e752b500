"""What a worker runs for each job (bot/app/worker.py): a table of job kind → handler
(bot/app/job_kinds.py names the kinds), built once by the App's runtime (bot/app/runtime.py):

    pr             bot/app/fan_out.py         the repository's configuration, older heads
                                              cancelled, one analysis per enabled analyzer
    analyze        bot/app/analysis.py        one analyzer on one head: one check run
    feedback       bot/app/closed.py          a pull request closed: what became of the suggestions
    command        bot/app/comment_commands.py a comment addressed to the App, answered
    proposal       bot/app/comment_commands.py the `ignore this` proposed in a "won't fix" thread
    installation   bot/app/tenant_jobs.py     an installation's state recorded
    repository     bot/app/tenant_jobs.py     a repository renamed, transferred, deleted or removed

A job on a repository first records the name the repository had when the job was asked for
(`named`): the tenant's data follows the repository's id, never its name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from bot.app.job_kinds import JOB_KINDS, InstallationJob, Job, RepositoryJob
from bot.store.schema import JobRow
from bot.store.store import Store

JobEnd = tuple[str, str, dict[str, int]]  # (status, result, LLM usage)
Handler = Callable[[JobRow, Job], JobEnd]  # what one kind of job does


class JobError(RuntimeError):
    pass


class Runs(Protocol):
    """The worker: runs a stored job with `work` (started, beaten, ended in the store); its
    final status. `run`: by id, if it is still queued; `run_started`: one already started."""

    def run(self, job_id: int, work: Handler) -> str: ...

    def run_started(self, row: JobRow, work: Handler) -> str: ...


def named(store: Store, row: JobRow, job: Job) -> None:
    """The repository a job names, as named when the job was asked for (bot/store/tenants.py `seen`)."""
    if isinstance(job, InstallationJob | RepositoryJob):  # their own handlers record them
        return
    if job.repository_id and job.installation_id:
        store.repositories.seen(job.repository_id, job.installation_id, job.repo, row.created_at)


class Pipeline:
    """The jobs' work: the handler of each job kind. A table that leaves out a kind is refused."""

    def __init__(self, store: Store, handlers: Mapping[str, Handler]) -> None:
        missing = sorted(set(JOB_KINDS) - set(handlers))
        unknown = sorted(set(handlers) - set(JOB_KINDS))
        if missing or unknown:
            raise ValueError(f"job kinds without a handler: {missing}; handlers of no job kind: {unknown}")
        self.store = store
        self.handlers = dict(handlers)

    def dispatch(self, row: JobRow, job: Job) -> JobEnd:
        named(self.store, row, job)
        return self.handlers[job.kind](row, job)
