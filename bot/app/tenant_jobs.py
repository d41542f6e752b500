"""The `installation` and `repository` jobs: the App's tenants as GitHub says they change
(bot/store/tenants.py)."""

from __future__ import annotations

from bot.app.job_kinds import InstallationJob, Job, RepositoryJob
from bot.app.pipeline import JobEnd, JobError
from bot.store.schema import JobRow
from bot.store.store import Store


class Installations:
    """Runs `installation` jobs: an installation created, deleted, suspended… recorded."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __call__(self, row: JobRow, job: Job) -> JobEnd:
        if not isinstance(job, InstallationJob):
            raise JobError(f"a {job.kind} job is not an installation's")
        if job.installation_id:
            self.store.installations.save(job.installation_id, job.account, job.active)
        return "done", f"installation {job.action}", {}


class Repositories:
    """Runs `repository` jobs. Renamed or transferred: its rows follow its id to the new name;
    deleted or removed from the installation: no longer served, deleted after the retention."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __call__(self, row: JobRow, job: Job) -> JobEnd:
        if not isinstance(job, RepositoryJob):
            raise JobError(f"a {job.kind} job is not a repository's")
        if not job.installation_id:
            return "done", f"repository {job.action}: no installation", {}
        if job.action in ("deleted", "removed"):
            self.store.repositories.removed(job.repository_id, job.installation_id, job.repo, row.created_at)
            return "done", f"repository {job.repository_id} {job.action}: its data is no longer served", {}
        self.store.repositories.seen(job.repository_id, job.installation_id, job.repo, row.created_at)
        return "done", f"repository {job.repository_id} {job.action}: its data follows it to {job.repo}", {}
