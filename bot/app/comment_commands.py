"""The App's side of commands written on a pull request (`@<slug> rerun`, bot/core/pr_commands.py):
a `command` job (bot/app/command_events.py) answered in the conversation or in its review
thread.

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

from analyzers.report import Finding
from bot.app import events
from bot.app.command_events import CommandJob, ProposalJob
from bot.core import dismiss_target, dismissals, explain, pr_commands
from bot.core.config import CONFIG_PATH, LoadedConfig, parse_config
from bot.core.context import changes_from_github, select
from bot.core.feedback import keys_in
from bot.core.pr_commands import Dismissals, Explain, Help, Ignore, Malformed, Rerun, Unignore
from bot.core.settings import ServiceSettings
from bot.github import GitHub, GitHubClient, GitHubError
from bot.github.conversation import Conversation
from bot.ids import positive_int
from bot.store.schema import JobRow
from bot.store.store import Store
from reporters.untrusted import code, inert

log = logging.getLogger(__name__)

DAY_S = 24 * 3600.0


@dataclass(frozen=True)
class Answer:
    """What a command gets back: a reply (rtcbot's Markdown, untrusted parts inert), a reaction,
    and the job's result in a few words."""

    result: str
    reply: str | None = None
    reaction: str | None = None


@dataclass(frozen=True)
class Asked:
    """One command being answered: the job, its parsed command, the GitHub client and the
    conversation calls of its repository."""

    row: JobRow
    job: CommandJob
    gh: GitHub
    talk: Conversation


class CommentCommands:
    """Answers `command` jobs (the pipeline hands them here)."""

    def __init__(self, settings: ServiceSettings, store: Store, github: Callable[[int], GitHub],
                 send: Callable[[Sequence[int]], bool], slug: Callable[[], str],
                 owns: Callable[[Mapping[str, Any]], bool]) -> None:
        self.settings = settings
        self.store = store
        self._github = github
        self.send = send
        self.slug = slug
        self.owns = owns

    def __call__(self, row: JobRow, job: CommandJob | ProposalJob) -> tuple[str, str]:
        if not job.installation_id:
            return "failed", "the delivery names no installation"
        gh = self._github(job.installation_id)
        if not isinstance(gh, GitHubClient):
            return "failed", "commands need the REST client"
        talk = Conversation(gh, job.repo, self.settings.permission_cache_s)
        if isinstance(job, ProposalJob):
            return self._propose(talk, job)
        asked = Asked(row, job, gh, talk)
        self._react(asked, "eyes")
        answer = self._answer(asked)
        if answer.reply:
            asked.talk.reply(job.source, job.pr_number, job.thread or job.comment_id, answer.reply)
        if answer.reaction:
            self._react(asked, answer.reaction)
        return "done", f"{job.verb}: {answer.result}"

    def _react(self, asked: Asked, content: str) -> None:
        """A reaction on the command's comment (best effort: the answer matters more)."""
        try:
            asked.talk.react(asked.job.source, asked.job.comment_id, content)
        except GitHubError as e:
            log.warning("could not react %s to comment %s: %s", content, asked.job.comment_id, e)

    def _answer(self, asked: Asked) -> Answer:
        job, command = asked.job, asked.job.command
        if job.state != "open":
            return _closed(job.state)
        if isinstance(command, Malformed):
            return Answer("malformed", f"rtcbot could not read that command: {inert(command.why)}.\n\n"
                          + pr_commands.help_text(self.slug()), "confused")
        if isinstance(command, Help):
            return Answer("help", pr_commands.help_text(self.slug()))
        if pr_commands.changes_state(command) and not asked.talk.can_write(job.author):
            return Answer("refused: no write access", pr_commands.no_write_reply(command.verb))
        pull = asked.talk.pull(job.pr_number)
        if pull.get("state", "open") != "open":
            return _closed(str(pull.get("state")))
        head = str((pull.get("head") or {}).get("sha") or job.head_sha or "")
        if isinstance(command, Rerun):
            return self._rerun(asked, command, pull, head)
        if isinstance(command, Explain):
            return self._explain(asked, command, head)
        if isinstance(command, Dismissals):
            return self._listed(job)
        return self._dismiss(asked, command, head)

    # -- rerun ------------------------------------------------------------------------------
    def _reruns_today(self, job: CommandJob, row_id: int) -> int:
        """The author's re-runs of this pull request in the last day (those that were made)."""
        since = time.time() - DAY_S
        return sum(1 for r in self.store.jobs.where(kind="command", repo=job.repo, pr_number=job.pr_number)
                   if r.id != row_id and r.created_at >= since and r.spec.get("verb") == "rerun"
                   and r.spec.get("author") == job.author and (r.result or "").startswith("rerun: queued"))

    def _rerun_refusal(self, asked: Asked, pull: Mapping[str, Any]) -> str | None:
        """Why this person may not re-run now (None: they may)."""
        job = asked.job
        author = str((pull.get("user") or {}).get("login") or "")
        if asked.talk.can_write(job.author):
            return None
        if job.author.lower() != author.lower():
            return pr_commands.RERUN_REFUSED
        budget = self.settings.author_reruns_per_day
        if self._reruns_today(job, asked.row.id) >= budget:
            return pr_commands.author_budget_reply(budget)
        return None

    def _rerun(self, asked: Asked, command: Rerun, pull: Mapping[str, Any], head: str) -> Answer:
        refusal = self._rerun_refusal(asked, pull)
        if refusal:
            return Answer("refused", refusal)
        job = asked.job
        if not head:
            return Answer("no head", "GitHub did not say which commit is this pull request's head.")
        off, note = self._turned_off(asked, command), None
        if off:
            note = pr_commands.turned_off_reply(off, CONFIG_PATH)
            command = Rerun(tuple(n for n in command.analyzers if n not in off))
            if not command.analyzers:
                return Answer("turned off", note)
        pr = events.PRJob(repo=job.repo, default_branch=job.default_branch, installation_id=job.installation_id,
                          repository_id=job.repository_id, pr_number=job.pr_number, head_sha=head,
                          action="rerequested", force=True, author_id=_payer_id(job, pull))
        specs: list[events.Job] = [pr]
        if command.analyzers:
            specs = [dataclasses.replace(events.AnalyzeJob.of(pr, n, root=0), reason="command.rerun", root=None)
                     for n in command.analyzers]
        ids = [i for i in (self.store.jobs.add(events.to_spec(s), asked.row.delivery_id,
                                               force_window_s=self.settings.force_debounce_s) for s in specs)
               if i is not None]
        if not ids:
            return Answer("debounced", "The same analysis is already queued, or was re-run less than "
                          f"{self.settings.force_debounce_s:g} s ago; it is not made again.")
        self.send(ids)
        return Answer(f"queued job(s) {', '.join(map(str, ids))} at {head[:12]}", note, "+1")

    def _turned_off(self, asked: Asked, command: Rerun) -> list[str]:
        """The analyzers a `rerun` names that the repository's config (default branch) turns off."""
        if not command.analyzers:
            return []
        text = asked.gh.config_text(asked.job.repo, CONFIG_PATH, asked.job.default_branch)
        sel = select(parse_config(text, self.settings.tools()),
                     defaults=self.settings.analyzers + self.settings.comment_analyzers, runs_code=False)
        return [n for n in command.analyzers if n not in sel.names]

    # -- "won't fix" ------------------------------------------------------------------------
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

    # -- explain ----------------------------------------------------------------------------
    def _findings(self, repo: str, head: str) -> list[Finding]:
        """The findings rtcbot stored for the head, every analysis's."""
        out: list[Finding] = []
        for name in dismiss_target.check_names():
            run = self.store.checks.get(repo, name, head)
            if run is not None:
                out += [Finding.from_dict(dict(r.data)) for r in self.store.checks.findings(run.id)]
        return out

    def _thread(self, asked: Asked) -> dict[str, Any] | None:
        """The first comment of the command's review thread, when it is one of this App's."""
        job = asked.job
        if job.source != "review" or job.thread is None:
            return None
        top = next((c for c in asked.gh.review_comments(job.repo, job.pr_number) if c.get("id") == job.thread), None)
        return top if top is not None and self.owns(top) else None

    def _target(self, asked: Asked, command: Explain, findings: list[Finding]) -> tuple[list[Finding], str]:
        """The findings the command points at, and where it points, in words."""
        if command.path is not None and command.line is not None:
            return explain.at_line(findings, command.path, command.line), f"{command.path}:{command.line}"
        top = self._thread(asked)
        if top is None:
            return [], ""
        keys = keys_in([top.get("body")])
        hits = explain.marked(findings, keys[0]) if keys else []
        path, line = top.get("path"), top.get("line") or top.get("original_line")
        if not hits and isinstance(path, str) and isinstance(line, int):
            hits = explain.at_line(findings, path, line)
        return hits, f"{path}:{line}"

    def _explain(self, asked: Asked, command: Explain, head: str) -> Answer:
        findings = self._findings(asked.job.repo, head)
        hits, where = self._target(asked, command, findings)
        if not where:
            return Answer("no place", "`explain` needs `path:line` here, or write it in the thread of one of "
                          "rtcbot's comments.")
        if not hits:
            return Answer("no finding", f"rtcbot has no score at {code(where)} at the head {code(head[:12])}.")
        f = hits[0]
        files = asked.gh.pr_files(asked.job.repo, asked.job.pr_number)
        real = explain.real_edit(changes_from_github(files, LoadedConfig()), f)
        return Answer(f"explained {f.analyzer} at {where}", explain.explain_markdown(f, real=real))

    # -- dismissals -------------------------------------------------------------------------
    def _listed(self, job: CommandJob) -> Answer:
        listed = self.store.dismissals.listed(job.repository_id, job.repo)
        if not listed:
            return Answer("none", "Nothing is dismissed in this repository.")
        lines = [f"Dismissed in this repository ({len(listed)}):", ""]
        lines += [f"- {code(d.target)} ({d.kind}): {inert(d.line())}" for d in listed[:100]]
        return Answer(f"{len(listed)} listed", "\n".join(lines))

    def _dismiss(self, asked: Asked, command: Ignore | Unignore, head: str) -> Answer:
        job = asked.job
        findings = self._findings(job.repo, head)
        if command.target == "this":  # only through the thread's own marker (bot/core/dismiss_target.py)
            top = self._thread(asked)
            keys = keys_in([top.get("body")]) if top is not None else []
            aim = dismiss_target.in_thread(findings, keys[0] if keys else None, command.verb, head)
        else:
            aim = dismiss_target.by_name(findings, command.target, head) if isinstance(command, Ignore) \
                else dismiss_target.Aim(command.target)
        if aim.refusal:
            return Answer("nothing dismissed", aim.refusal)
        target = aim.target
        if isinstance(command, Unignore):
            n = self.store.dismissals.remove(job.repository_id, job.repo, target, command.path_glob)
            return Answer(f"removed {n}", None if n else f"Nothing dismissed matches {code(target)}.",
                          "+1" if n else None)
        d = dismissals.Dismissal(target=target, kind=dismissals.kind_of(target), path_glob=command.path_glob,
                                 by=job.author, at=time.time(), reason=command.reason)
        problem = dismissals.problem(d)
        if problem:
            return Answer("invalid", f"rtcbot cannot dismiss that: {inert(problem)}.")
        added = self.store.dismissals.add(job.repository_id, job.repo, d)
        return Answer("added" if added else "already there", dismiss_target.reply(d, aim, head, added=added), "+1")


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


def _closed(state: str) -> Answer:
    return Answer("closed", pr_commands.closed_reply(state))
