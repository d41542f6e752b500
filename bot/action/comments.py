"""`rtcbot action` on an `issue_comment` event: a command written in a pull request's
conversation (`@rtcbot rerun`; the App's grammar, bot/core/pr_commands.py), answered with the
workflow's GITHUB_TOKEN (docs/workflows/rtcbot-commands.yml).

The rules are the core's (bot/core/answer_command.py), the same as the App's; this module is the
Action's ports. In short: only a new comment by a person is a command (a bot's never is);
`ignore` and `unignore` need write, maintain or admin permission (GitHub's collaborator
permission, asked with the token); `rerun` and `explain` — which here analyses afresh, so it
costs what a re-run of one hunk costs — are the pull request author's,
RTCBOT_AUTHOR_RERUNS_PER_DAY a day (counted by rtcbot's own replies, bot/action/charges.py: an
author cannot edit or delete them away), and anyone's with write access.

`issue_comment` runs the default branch's workflow with a write token and the repository's
secrets whoever wrote the pull request, forks included: nothing from the pull request runs
(it is read as on `pull_request_target`: no test command, no SynthesisRTC, the config and the
dismissals at the base commit, no checkout). The Action keeps no store, so `ignore` answers with
the entry to commit in `.github/rtcbot-dismissals.yml`, `unignore` names the entries to remove,
`dismissals` lists that file on the default branch, and `explain path:line` analyses the one
hunk that holds the line again and explains what it finds there.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from analyzers import registry
from analyzers.code.diff import ChangeSet
from analyzers.report import Finding
from bot.action import charges
from bot.action.run import PullRequestRun
from bot.action.settings import ActionResult, ActionSettings
from bot.action.workflow import (
    COMMENT_EVENT,
    ActionError,
    Inputs,
    Planned,
    pull_request_of,
    read_event,
    read_inputs,
)
from bot.core import dismiss_target, pr_commands
from bot.core import review as review_core
from bot.core.answer_command import Answer, Asked, Ports, Rules, respond
from bot.core.config import CONFIG_PATH
from bot.core.dismissals import Dismissal
from bot.core.dismissals_file import DISMISSALS_PATH, parse_dismissals
from bot.github import GitHub, GitHubError, token_client
from bot.github.conversation import Conversation
from reporters.untrusted import code

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}$")  # a GitHub login's shape


@dataclass(frozen=True)
class Comment:
    """The comment an `issue_comment` event carries, and why it is no command (None: it is one)."""

    repo: str  # owner/name
    number: int
    comment_id: int
    author: str
    text: str  # what follows the address
    state: str
    default_branch: str
    not_a_command: str | None = None
    author_id: int = 0  # GitHub's id of who wrote it: whose day a `rerun` or `explain` is charged to


def load_comment(path: str | None, name: str) -> Comment:
    """The event file's comment, addressed to `name`; ActionError when the file is not an
    `issue_comment` event."""
    payload = read_event(path)
    comment, issue = (payload or {}).get("comment"), (payload or {}).get("issue")
    repo = (payload or {}).get("repository") or {}
    if not isinstance(comment, dict) or not isinstance(issue, dict) or not isinstance(repo.get("full_name"), str):
        raise ActionError(f"the event in {path} is not an issue_comment event (no comment, issue or repository)")
    user = comment.get("user") or {}
    why = None
    if payload.get("action") != "created":
        why = f"issue_comment.{payload.get('action')}: only a new comment is a command (an edit never runs one again)"
    elif pr_commands.is_bot(user):
        why = "a bot's comment is never a command"
    elif not isinstance(issue.get("pull_request"), dict):
        why = "a comment on an issue, not on a pull request"
    text = pr_commands.addressed(comment.get("body"), name)
    if why is None and text is None:
        why = f"the comment does not address @{name}"
    number, cid = issue.get("number"), comment.get("id")
    if why is None and not (isinstance(number, int) and isinstance(cid, int) and user.get("login")):
        why = "a comment without a pull request number, a comment id or an author"
    return Comment(repo["full_name"], number if isinstance(number, int) else 0, cid if isinstance(cid, int) else 0,
                   str(user.get("login") or ""), text or "", str(issue.get("state") or "open"),
                   str(repo.get("default_branch") or "main"), why,
                   user["id"] if isinstance(user.get("id"), int) else 0)


def answer_comment(s: ActionSettings, *, log: IO[str] | None = None, stdout: IO[str] | None = None) -> ActionResult:
    """Answer the command in the event's comment (nothing, and no request, when it is none)."""
    out = log or sys.stderr

    def say(msg: str) -> None:
        print(msg, file=out, flush=True)

    if not NAME.match(s.command_name):
        raise ActionError(f"command-name: {s.command_name!r} is not a GitHub name (letters, digits, '-')")
    c = load_comment(s.event_path, s.command_name)
    if c.not_a_command:
        say(f"rtcbot: {c.not_a_command}: nothing to do")
        return ActionResult(0, [], "none", [])
    if not s.token:
        raise ActionError("GITHUB_TOKEN is not set: pass `github-token` (default: the workflow's token)")
    inputs = read_inputs(COMMENT_EVENT, analyzers=s.analyzers, fail_on=s.fail_on, config=s.config,
                         test_command=s.test_command, reporters=s.reporters)
    gh = token_client(s.api_url, s.token, s.github)
    try:
        talk = Conversation(gh, c.repo, s.commands.permission_cache_s)
        said = _Talk(s, gh, talk, c, say)
        work = _Work(s, gh, c, inputs, say, stdout or sys.stdout)
        asked = Asked(pr_commands.parse(c.text), c.author, c.author_id, c.state)
        ports = Ports(talk, said, said, _Shown(gh, c, work), _Dismissals(gh, c), work, again=work)
        answer = respond(asked, Rules(s.command_name, s.commands.author_reruns_per_day), ports)
        say(f"rtcbot: {asked.command.verb} by {c.author}: {answer.result}")
        return ActionResult(answer.exit_code, [], "command", [])
    finally:
        gh.close()


@dataclass
class _Talk:
    """The command's conversation, and the rerun ledger: rtcbot's own replies that charge the
    author (bot/action/charges.py)."""

    s: ActionSettings
    gh: GitHub
    talk: Conversation
    c: Comment
    say: Callable[[str], None]
    uncountable: str = charges.UNCOUNTABLE

    def pull(self) -> Mapping[str, Any]:
        return self.talk.pull(self.c.number)

    def reply(self, body: str) -> None:
        self.talk.reply("issue", self.c.number, self.c.comment_id, body)

    def react(self, content: str) -> None:
        try:
            self.talk.react("issue", self.c.comment_id, content)
        except GitHubError as e:
            self.say(f"rtcbot: could not react {content} to comment {self.c.comment_id}: {e}")

    def charged_today(self, asked: Asked) -> int | None:
        return charges.charged_today(self.gh, self.c.repo, self.c.number, self.c.author_id)

    def charge(self, asked: Asked, verb: str, head: str, n: int) -> None:
        """Before the author (without write access) spends: rtcbot's reply that counts it."""
        self.reply(charges.receipt(self.c.author_id, verb, n, self.s.commands.author_reruns_per_day, head))


@dataclass
class _Work:
    """The Action's work: the review run here, in this step (a re-run; the hunk `explain` has
    analysed again, as the Action keeps no findings), with its plan and change made once per head."""

    s: ActionSettings
    gh: GitHub
    c: Comment
    inputs: Inputs
    say: Callable[[str], None]
    stdout: IO[str]
    _planned: tuple[str, Planned] | None = None
    _change: tuple[str, review_core.Change] | None = None

    def _run(self, pull: Mapping[str, Any]) -> PullRequestRun:
        return PullRequestRun(self.s, self.gh, pull_request_of(self.c.repo, dict(pull), self.c.number), self.inputs,
                              self.say, self.stdout)

    def _plan(self, run: PullRequestRun) -> Planned:
        """The run's plan, made once per head."""
        if self._planned is None or self._planned[0] != run.pr.head_sha:
            self._planned = (run.pr.head_sha, run.planned())
        return self._planned[1]

    def change(self, pull: Mapping[str, Any]) -> review_core.Change:
        """The pull request's change at its head, as the review reads it (made once per head)."""
        run = self._run(pull)
        if self._change is None or self._change[0] != run.pr.head_sha:
            self._change = (run.pr.head_sha, run.change(self._plan(run).review, None))
        return self._change[1]

    def turned_off(self, analyzers: Sequence[str], pull: Mapping[str, Any]) -> tuple[list[str], str | None]:
        """The named analyzers the config turns off, or that run the pull request's code, which
        nothing on `issue_comment` does — and why, in words."""
        enabled = self._plan(self._run(pull)).review.names
        off = [n for n in analyzers if n not in enabled]
        runs_code = [n for n in off if registry.runs_code(n)]
        turned_off = [n for n in off if n not in runs_code]
        said = [pr_commands.turned_off_reply(turned_off, self.inputs.config or CONFIG_PATH)] if turned_off else []
        if runs_code:
            said.append(f"{', '.join(code(n) for n in runs_code)} would run the pull request's code, which a "
                        "command never does.")
        return off, " ".join(said) or None

    def rerun(self, analyzers: Sequence[str], head: str, pull: Mapping[str, Any],
              charge: Callable[[], None]) -> Answer:
        run = self._run(pull)
        planned = self._plan(run)
        names = list(analyzers) or planned.review.names
        if not names:
            return Answer("turned off")
        review = planned.review
        review = dataclasses.replace(review, selection=dataclasses.replace(review.selection, names=names))
        charge()
        result = run.review(dataclasses.replace(planned, review=review))
        return Answer(f"re-ran {', '.join(names)} at {run.pr.head_sha[:12]}", None, "+1", result.exit_code)

    def findings(self, hunk: ChangeSet, pull: Mapping[str, Any], charge: Callable[[], None]) -> list[Finding]:
        """`explain`'s hunk analysed again (charged first)."""
        p = self._plan(self._run(pull)).review
        change = self.change(pull)
        charge()
        result = review_core.run(p, dataclasses.replace(change, changes=hunk), tools=self.s.tools)
        return [f for r in result.reports for f in r.findings]


@dataclass
class _Shown:
    """What the Action showed: no findings kept, the check runs' annotations at a head, the
    conversation only (no review thread), and the change the work reads."""

    gh: GitHub
    c: Comment
    work: _Work

    def findings(self, head: str) -> None:
        return None

    def annotated(self, head: str, fingerprint: str) -> tuple[dismiss_target.Named, ...]:
        runs = [self.gh.find_check_run(self.c.repo, head, name) for name in dismiss_target.check_names()]
        return dismiss_target.in_annotations(
            (a for r in runs if r for a in self.gh.check_run_annotations(self.c.repo, int(r["id"]))), fingerprint)

    def thread(self) -> None:
        return None

    def changes(self, pull: Mapping[str, Any]) -> ChangeSet:
        return self.work.change(pull).changes


@dataclass
class _Dismissals:
    """The Action's dismissals: the committed file on the default branch, which only people write."""

    gh: GitHub
    c: Comment
    where: str = f"`{DISMISSALS_PATH}` on the default branch"

    def listed(self) -> Sequence[Dismissal]:
        return parse_dismissals(self.gh.config_text(self.c.repo, DISMISSALS_PATH, self.c.default_branch)).dismissals

    def add(self, d: Dismissal) -> None:
        return None  # the reply proposes the entry to commit

    def remove(self, target: str, path_glob: str | None) -> None:
        return None  # the reply names the entries to remove
