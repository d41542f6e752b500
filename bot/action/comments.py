"""`rtcbot action` on an `issue_comment` event: a command written in a pull request's
conversation (`@rtcbot rerun`; the App's grammar, bot/core/pr_commands.py), answered with the
workflow's GITHUB_TOKEN (docs/workflows/rtcbot-commands.yml).

Who may ask, as on the App (bot/app/comment_commands.py): only a new comment by a person is a
command (a bot's never is); `ignore` and `unignore` need write, maintain or admin permission
(GitHub's collaborator permission, asked with the token); `rerun` and `explain` — which here
analyses afresh, so it costs what a re-run of one hunk costs — are the pull request author's,
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
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from bot.action import charges
from bot.action.run import PullRequestRun
from bot.action.settings import ActionResult, ActionSettings
from bot.action.workflow import (
    COMMENT_EVENT,
    ActionError,
    Inputs,
    PullRequest,
    pull_request_of,
    read_event,
    read_inputs,
)
from bot.core import dismiss_target, dismissals, explain, pr_commands
from bot.core import review as review_core
from bot.core.config import CONFIG_PATH
from bot.core.context import EXECUTING_ANALYZERS
from bot.core.dismissals_file import DISMISSALS_PATH, entry_yaml, parse_dismissals
from bot.core.pr_commands import Dismissals, Explain, Help, Ignore, Malformed, Rerun, Unignore
from bot.github import GitHubClient, GitHubError, token_client
from bot.github.conversation import Conversation
from reporters.untrusted import code, fenced, inert

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


@dataclass(frozen=True)
class Answer:
    """What a command gets back: a reply (rtcbot's Markdown, untrusted parts inert), a reaction,
    the step's exit status, and the job's result in a few words."""

    result: str
    reply: str | None = None
    reaction: str | None = None
    exit_code: int = 0


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
        commands = _Commands(s, gh, talk, c, inputs, say, stdout or sys.stdout)
        react = commands.react
        react("eyes")
        answer = commands.answer()
        say(f"rtcbot: {pr_commands.parse(c.text).verb} by {c.author}: {answer.result}")
        if answer.reply:
            talk.reply("issue", c.number, c.comment_id, answer.reply)
        if answer.reaction:
            react(answer.reaction)
        return ActionResult(answer.exit_code, [], "command", [])
    finally:
        gh.close()


class _Commands:
    """One command answered (see the module's docstring)."""

    def __init__(self, s: ActionSettings, gh: GitHubClient, talk: Conversation, c: Comment, inputs: Inputs,
                 say: Callable[[str], None], stdout: IO[str]) -> None:
        self.s, self.gh, self.talk, self.c, self.inputs, self.say, self.stdout = s, gh, talk, c, inputs, say, stdout
        self.charged: int | None = None  # the author's charged commands today (None: not charged: write access)

    def react(self, content: str) -> None:
        """A reaction on the command's comment (best effort: the answer matters more)."""
        try:
            self.talk.react("issue", self.c.comment_id, content)
        except GitHubError as e:
            self.say(f"rtcbot: could not react {content} to comment {self.c.comment_id}: {e}")

    def answer(self) -> Answer:
        c, command = self.c, pr_commands.parse(self.c.text)
        if c.state != "open":
            return Answer("closed", pr_commands.closed_reply(c.state))
        if isinstance(command, Malformed):
            return Answer("malformed", f"rtcbot could not read that command: {inert(command.why)}.\n\n"
                          + pr_commands.help_text(self.s.command_name), "confused")
        if isinstance(command, Help):
            return Answer("help", pr_commands.help_text(self.s.command_name))
        if pr_commands.changes_state(command) and not self.talk.can_write(c.author):
            return Answer("refused: no write access", pr_commands.no_write_reply(command.verb))
        if isinstance(command, Dismissals):
            return self._listed()
        if isinstance(command, Ignore | Unignore):
            return self._ignore(command) if isinstance(command, Ignore) else self._unignore(command)
        pull = self.talk.pull(c.number)
        if pull.get("state", "open") != "open":
            return Answer("closed", pr_commands.closed_reply(str(pull.get("state"))))
        refusal = self._refusal(pull)
        if refusal:
            return Answer("refused", refusal)
        pr = pull_request_of(c.repo, pull, c.number)
        return self._rerun(command, pr) if isinstance(command, Rerun) else self._explain(command, pr)

    # -- rerun and explain: the author's budget, or write access ------------------------------
    def _refusal(self, pull: dict[str, Any]) -> str | None:
        """Why this person may not have the pull request analysed now (None: they may; the
        author without write access with `charged` set: their day so far, bot/action/charges.py)."""
        if self.talk.can_write(self.c.author):
            return None
        if self.c.author.lower() != str((pull.get("user") or {}).get("login") or "").lower():
            return pr_commands.RERUN_REFUSED.replace("`rerun`", "`rerun` or `explain` here")
        self.charged = charges.charged_today(self.gh, self.c.repo, self.c.number, self.c.author_id)
        if self.charged is None:
            return charges.UNCOUNTABLE
        budget = self.s.commands.author_reruns_per_day
        if self.charged >= budget:
            return pr_commands.author_budget_reply(budget)
        return None

    def _charge(self, verb: str, pr: PullRequest) -> None:
        """Before the author (without write access) spends: rtcbot's reply that counts it."""
        if self.charged is not None:
            self.talk.reply("issue", self.c.number, self.c.comment_id, charges.receipt(
                self.c.author_id, verb, self.charged + 1, self.s.commands.author_reruns_per_day, pr.head_sha))

    def _run(self, pr: PullRequest) -> PullRequestRun:
        return PullRequestRun(self.s, self.gh, pr, self.inputs, self.say, self.stdout)

    def _rerun(self, command: Rerun, pr: PullRequest) -> Answer:
        run = self._run(pr)
        planned = run.planned()
        enabled = planned.review.names
        off = [n for n in command.analyzers if n not in enabled]
        note = self._off_note(off) if off else None
        names = [n for n in command.analyzers if n not in off] if command.analyzers else enabled
        if not names:
            return Answer("turned off", note)
        review = planned.review
        review = dataclasses.replace(review, selection=dataclasses.replace(review.selection, names=names))
        self._charge("rerun", pr)
        result = run.review(dataclasses.replace(planned, review=review))
        return Answer(f"re-ran {', '.join(names)} at {pr.head_sha[:12]}", note, "+1", result.exit_code)

    def _off_note(self, off: list[str]) -> str:
        """Why the analyzers a `rerun` names are not run: the config turns them off, or they run
        the pull request's code, which nothing on `issue_comment` does."""
        runs_code = [n for n in off if n in EXECUTING_ANALYZERS]
        turned_off = [n for n in off if n not in runs_code]
        said = [pr_commands.turned_off_reply(turned_off, self.inputs.config or CONFIG_PATH)] if turned_off else []
        if runs_code:
            said.append(f"{', '.join(code(n) for n in runs_code)} would run the pull request's code, which a "
                        "command never does.")
        return " ".join(said)

    def _explain(self, command: Explain, pr: PullRequest) -> Answer:
        if command.path is None or command.line is None:
            return Answer("no place", "`explain` needs `path:line` here (e.g. `src/app.py:12`).")
        where, head = f"{command.path}:{command.line}", code(pr.head_sha[:12])
        run = self._run(pr)
        p = run.planned().review
        change = run.change(p, None)
        hunk = explain.hunk_at(change.changes, command.path, command.line)
        if hunk is None:
            return Answer("no hunk", f"This pull request changes no hunk at {code(where)} at the head {head}.")
        self._charge("explain", pr)
        result = review_core.run(p, dataclasses.replace(change, changes=hunk), tools=self.s.tools)
        found = [f for r in result.reports for f in r.findings]
        hits = explain.at_line(found, command.path, command.line) or found
        if not hits:
            return Answer("no finding", f"rtcbot has no score at {code(where)} at the head {head}.")
        f = hits[0]
        afresh = (f"rtcbot analysed the hunk at {code(where)} again at the head {head} (the Action keeps no "
                  "results: the model's samples are new, so the figures may differ from the check run's).\n\n")
        return Answer(f"explained {f.analyzer} at {where}",
                      afresh + explain.explain_markdown(f, real=explain.real_edit(hunk, f)))

    # -- dismissals: the committed file ---------------------------------------------------------
    def _file(self) -> tuple[dismissals.Dismissal, ...]:
        return parse_dismissals(self.gh.config_text(self.c.repo, DISMISSALS_PATH, self.c.default_branch)).dismissals

    def _ignore(self, command: Ignore) -> Answer:
        if command.target == "this":
            return Answer("no finding", "The Action reads the conversation only: name the rule, the analyzer or "
                          "the finding's fingerprint (the last line of its annotation) instead of `this`.")
        d = dismissals.Dismissal(target=command.target, kind=dismissals.kind_of(command.target),
                                 path_glob=command.path_glob, by=self.c.author, at=time.time(), reason=command.reason)
        problem = dismissals.problem(d)
        if problem:
            return Answer("invalid", f"rtcbot cannot dismiss that: {inert(problem)}.")
        head, named = self._annotated(d)
        return Answer("entry proposed", "\n".join([
            f"The Action keeps no dismissals of its own: commit this entry to `{DISMISSALS_PATH}` on the default "
            "branch (add its `- ` item to the `dismissals:` list, or create the file with it). Runs read the "
            "file at a pull request's base commit, so it applies to pull requests based on a commit that has it.",
            "", *fenced(entry_yaml(d).rstrip("\n"), "yaml"), "",
            f"It dismisses {dismiss_target.what(d)}.", "", *dismiss_target.covered(named, head)]))

    def _annotated(self, d: dismissals.Dismissal) -> tuple[str, tuple[dismiss_target.Named, ...]]:
        """The head, and the findings rtcbot's check runs there annotate with the fingerprint `d` names."""
        head = str((self.talk.pull(self.c.number).get("head") or {}).get("sha") or "")
        if d.kind != "finding" or not head:
            return head, ()
        runs = [self.gh.find_check_run(self.c.repo, head, name) for name in dismiss_target.check_names()]
        return head, dismiss_target.in_annotations(
            (a for r in runs if r for a in self.gh.check_run_annotations(self.c.repo, int(r["id"]))), d.target)

    def _unignore(self, command: Unignore) -> Answer:
        if command.target == "this":
            return Answer("no finding", "The Action reads the conversation only: name the rule, the analyzer or "
                          "the finding's fingerprint instead of `this`.")
        hits = [d for d in self._file() if d.target == command.target
                and (command.path_glob is None or d.path_glob == command.path_glob)]
        if not hits:
            return Answer("none", f"Nothing in `{DISMISSALS_PATH}` on the default branch matches "
                          f"{code(command.target)}.")
        lines = [f"Remove {'this entry' if len(hits) == 1 else 'these entries'} from `{DISMISSALS_PATH}` on the "
                 "default branch:", ""]
        lines += [f"- {code(d.target)} ({d.kind}): {inert(d.line())}" for d in hits[:100]]
        return Answer(f"{len(hits)} to remove", "\n".join(lines))

    def _listed(self) -> Answer:
        listed = self._file()
        if not listed:
            return Answer("none", f"Nothing is dismissed in `{DISMISSALS_PATH}` on the default branch.")
        lines = [f"Dismissed in `{DISMISSALS_PATH}` on the default branch ({len(listed)}):", ""]
        lines += [f"- {code(d.target)} ({d.kind}): {inert(d.line())}" for d in listed[:100]]
        return Answer(f"{len(listed)} listed", "\n".join(lines))
