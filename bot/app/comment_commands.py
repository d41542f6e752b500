"""The App's side of commands written on a pull request (`@<slug> rerun`, bot/core/pr_commands.py):
a `command` job (bot/app/command_events.py) answered in the conversation or in its review
thread. The rules are the core's (bot/core/answer_command.py, the same for the Action); this
module is the App's ports: its conversation and ledger (`_Talk`), the findings it stored and the
command's thread (`_Shown`), its store's dismissals (`_Dismissals`) and its queue (`_Work`).

Each command is acknowledged with 👀 when its job starts, and answered with a reply (help,
explain, a refusal, the dismissals) or a reaction (👍: done). Who may ask: `ignore` and
`unignore` need write, maintain or admin permission on the repository (GitHub's collaborator
permission, cached RTCBOT_PERMISSION_CACHE_S); `rerun` is the pull request author's too, up to
RTCBOT_AUTHOR_RERUNS_PER_DAY a day on that pull request, and anyone's with write access. A
re-run is forced work, made like a re-requested check suite or check run: debounced per head
and analysis (RTCBOT_FORCE_DEBOUNCE_S) and sent through the queue. A command on a closed pull
request, a malformed one (answered with the help text) and one from a person without the
permission it needs get one short reply each. Nothing a comment says is run, and no path it
names leaves the repository (pr_commands validates them).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyzers.code.diff import ChangeSet
from analyzers.report import Finding
from bot.app import job_kinds
from bot.app.command_events import CommandJob, ProposalJob
from bot.app.pipeline import JobEnd, JobError
from bot.app.settings import ServiceSettings
from bot.core import dismiss_target, pr_commands
from bot.core.answer_command import Answer, Asked, Ports, Rules, respond
from bot.core.config import CONFIG_PATH, LoadedConfig, parse_config
from bot.core.context import changes_from_github, select
from bot.core.dismissals import Dismissal, fingerprint
from bot.github import GitHub, GitHubError
from bot.github.conversation import Conversation
from bot.ids import positive_int
from bot.store.jobs import CHARGED
from bot.store.schema import JobRow
from bot.store.store import Store
from reporters.untrusted import code

log = logging.getLogger(__name__)

DAY_S = 24 * 3600.0


class CommentCommands:
    """Answers `command` jobs (the pipeline hands them here) through bot/core/answer_command.py."""

    def __init__(self, settings: ServiceSettings, store: Store, github: Callable[[int], GitHub],
                 send: Callable[[Sequence[int]], bool], slug: Callable[[], str],
                 owns: Callable[[Mapping[str, Any]], bool]) -> None:
        self.settings = settings
        self.store = store
        self._github = github
        self.send = send
        self.slug = slug
        self.owns = owns

    def __call__(self, row: JobRow, job: job_kinds.Job) -> JobEnd:
        if not isinstance(job, CommandJob | ProposalJob):
            raise JobError(f"a {job.kind} job is not a command")
        if not job.installation_id:
            return "failed", "the delivery names no installation", {}
        gh = self._github(job.installation_id)
        talk = Conversation(gh, job.repo, self.settings.permission_cache_s)
        if isinstance(job, ProposalJob):
            return (*self._propose(talk, job), {})
        said = _Talk(self, row, job, talk)
        asked = Asked(job.command, job.author, job.author_id or 0, job.state, job.head_sha or "")
        ports = Ports(talk, said, said, _Shown(self, job, gh), _Dismissals(self, job), _Work(self, row, job, gh))
        answer = respond(asked, Rules(self.slug(), self.settings.author_reruns_per_day), ports)
        return "done", f"{job.verb}: {answer.result}", {}

    def _propose(self, talk: Conversation, job: ProposalJob) -> tuple[str, str]:
        """The `ignore this` command that would dismiss the thread's finding, proposed in the
        thread: someone with write access confirms it (or not); nothing is dismissed here."""
        if job.thread_author.lower() != f"{self.slug()}[bot]".lower():
            return "done", "proposal: the thread is not on one of this App's comments"
        pull = talk.pull(job.pr_number)
        if pull.get("state", "open") != "open":
            return "done", "proposal: the pull request is not open"
        talk.reply("review", job.pr_number, job.thread, proposal_reply(self.slug(), job))
        return "done", "proposal: replied"


@dataclass
class _Talk:
    """The command's conversation (where it was written) and the ledger: the author's commands
    on the pull request that spent in the last day (each charged on its job), counted in the
    store's jobs, whatever their verb."""

    app: CommentCommands
    row: JobRow
    job: CommandJob
    talk: Conversation
    uncountable: str = ""  # the store always counts

    def pull(self) -> Mapping[str, Any]:
        return self.talk.pull(self.job.pr_number)

    def reply(self, body: str) -> None:
        self.talk.reply(self.job.source, self.job.pr_number, self.job.thread or self.job.comment_id, body)

    def react(self, content: str) -> None:
        try:
            self.talk.react(self.job.source, self.job.comment_id, content)
        except GitHubError as e:
            log.warning("could not react %s to comment %s: %s", content, self.job.comment_id, e)

    def charged_today(self, asked: Asked) -> int:
        job, since = self.job, time.time() - DAY_S
        return sum(1 for r in self.app.store.jobs.where(kind="command", repo=job.repo, pr_number=job.pr_number)
                   if r.id != self.row.id and r.created_at >= since and r.spec.get("author") == job.author
                   and r.spec.get(CHARGED))

    def charge(self, asked: Asked, verb: str, head: str, n: int) -> None:
        """The command spends: recorded on its own job, before its work is done."""
        self.app.store.jobs.charge(self.row.id, n)


@dataclass
class _Work:
    """The App's work: a re-run is jobs through the queue, debounced."""

    app: CommentCommands
    row: JobRow
    job: CommandJob
    gh: GitHub

    def turned_off(self, analyzers: Sequence[str], pull: Mapping[str, Any]) -> tuple[list[str], str | None]:
        """The analyzers a `rerun` names that the repository's config (default branch) turns off."""
        s = self.app.settings
        text = self.gh.config_text(self.job.repo, CONFIG_PATH, self.job.default_branch)
        sel = select(parse_config(text, s.tools()), defaults=s.analyzers + s.comment_analyzers, runs_code=False)
        off = [n for n in analyzers if n not in sel.names]
        return off, pr_commands.turned_off_reply(off, CONFIG_PATH) if off else None

    def rerun(self, analyzers: Sequence[str], head: str, pull: Mapping[str, Any],
              charge: Callable[[], None]) -> Answer:
        job, s = self.job, self.app.settings
        pr = job_kinds.PRJob(repo=job.repo, default_branch=job.default_branch, installation_id=job.installation_id,
                             repository_id=job.repository_id, pr_number=job.pr_number, head_sha=head,
                             action="rerequested", force=True, author_id=_payer_id(job, pull))
        specs: list[job_kinds.Job] = [pr]
        if analyzers:
            specs = [dataclasses.replace(job_kinds.AnalyzeJob.of(pr, n, root=0), reason="command.rerun", root=None)
                     for n in analyzers]
        ids = [i for i in (self.app.store.jobs.add(job_kinds.to_spec(spec), self.row.delivery_id,
                                                   force_window_s=s.force_debounce_s) for spec in specs)
               if i is not None]
        if not ids:  # nothing made again: nothing spent
            return Answer("debounced", "The same analysis is already queued, or was re-run less than "
                          f"{s.force_debounce_s:g} s ago; it is not made again.")
        charge()  # before the jobs go out
        self.app.send(ids)
        return Answer(f"queued job(s) {', '.join(map(str, ids))} at {head[:12]}", None, "+1")


@dataclass
class _Shown:
    """What the App showed: the findings it stored for a head, the command's review thread, and
    the pull request's files."""

    app: CommentCommands
    job: CommandJob
    gh: GitHub

    def findings(self, head: str) -> list[Finding]:
        out: list[Finding] = []
        for name in dismiss_target.check_names():
            run = self.app.store.checks.get(self.job.repo, name, head)
            if run is not None:
                out += [Finding.from_dict(dict(r.data)) for r in self.app.store.checks.findings(run.id)]
        return out

    def annotated(self, head: str, print_: str) -> tuple[dismiss_target.Named, ...]:
        return tuple(dismiss_target.Named.of(f) for f in self.findings(head) if fingerprint(f) == print_)

    def thread(self) -> Mapping[str, Any] | None:
        job = self.job
        if job.source != "review" or job.thread is None:
            return None
        top = next((c for c in self.gh.review_comments(job.repo, job.pr_number) if c.get("id") == job.thread), None)
        return top if top is not None and self.app.owns(top) else None

    def changes(self, pull: Mapping[str, Any]) -> ChangeSet:
        return changes_from_github(self.gh.pr_files(self.job.repo, self.job.pr_number), LoadedConfig())


@dataclass
class _Dismissals:
    """The App's dismissals: its store's, for the repository."""

    app: CommentCommands
    job: CommandJob
    where: str = "this repository"

    def listed(self) -> Sequence[Dismissal]:
        return self.app.store.dismissals.listed(self.job.repository_id, self.job.repo)

    def add(self, d: Dismissal) -> bool:
        return self.app.store.dismissals.add(self.job.repository_id, self.job.repo, d)

    def remove(self, target: str, path_glob: str | None) -> int:
        return self.app.store.dismissals.remove(self.job.repository_id, self.job.repo, target, path_glob)


def proposal_reply(slug: str, job: ProposalJob) -> str:
    """What the App says in a thread resolved as "won't fix" (the reason is the reply's, inert in a
    code span)."""
    return "\n".join([
        "This thread was resolved as one that will not be fixed. rtcbot dismisses nothing by itself: "
        "to stop it showing this finding again, someone with write access to this repository can "
        "confirm by replying in this thread with", "",
        code(pr_commands.proposed_ignore(slug, job.reason)), "",
        f"(`@{slug} help` lists the commands; `@{slug} dismissals` what is dismissed.)"])


def _payer_id(job: CommandJob, pull: Mapping[str, Any]) -> int | None:
    """Whose daily LLM budget a `rerun` spends: the commenter's (a job stored before commands
    carried it: the pull request's author's, as a push's). With the repository's id, the re-run
    is charged to the same pull request's day as its pushes and sees the same dismissals."""
    return job.author_id or positive_int((pull.get("user") or {}).get("id"))
