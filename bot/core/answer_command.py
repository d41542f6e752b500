"""The second use case: answer a command written on a pull request (`@rtcbot rerun`, the grammar
of bot/core/pr_commands.py), once for every surface. The App (bot/app/comment_commands.py) and
the Action (bot/action/comments.py) are adapters: each parses nothing and decides nothing, it
only implements the ports below over its own GitHub client, store or workflow run.

The rules, in order (each a short reply; nothing a comment says is run):

1. a command on a pull request that is not open gets `closed_reply`;
2. a malformed command gets why, and the help text (😕); `help` gets the help text;
3. `ignore` and `unignore` need write access (`Permissions`);
4. the pull request is read (`Conversation.pull`): when it is not open, `closed_reply`;
5. `dismissals` lists the dismissals (`DismissalsPort.listed`); `ignore`/`unignore` resolve what
   they name (`DismissalsPort.aim`), `ignore` checks the dismissal (bot/core/dismissals.py
   `problem`) and records or proposes it;
6. what spends — `rerun`, and `explain` where the surface analyses again
   (`Scheduler.explain_spends`) — is the pull request author's, up to `Rules.author_budget` a
   day (`Ledger`: what was charged today; None: cannot be counted, refused), and anyone's with
   write access; the author is charged just before the work (`Ledger.charge`);
7. `rerun` needs the head; analyzers the repository turns off are said and not run
   (`Scheduler.turned_off`); the rest is re-run (`Scheduler.rerun`); `explain` is answered by
   `Scheduler.explain`.

`respond` wraps it as both surfaces do: 👀 on receipt, then the reply and the reaction.
Pure: everything that reads or writes goes through a port.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.core import pr_commands
from bot.core.dismiss_target import Aim
from bot.core.dismissals import Dismissal, kind_of, problem
from bot.core.pr_commands import Command, Dismissals, Explain, Help, Ignore, Malformed, Rerun, Unignore
from reporters.untrusted import code, inert


@dataclass(frozen=True)
class Answer:
    """What a command gets back: a reply (rtcbot's Markdown, untrusted parts inert), a reaction,
    the result in a few words (the App's job result, the Action's log line), and the status
    the surface exits with (the Action's step: its review's)."""

    result: str
    reply: str | None = None
    reaction: str | None = None
    exit_code: int = 0


@dataclass(frozen=True)
class Asked:
    """One command: what it says, who wrote it (login and GitHub id), the pull request's state
    as the event said, and its head as the event said ('' when it said none)."""

    command: Command
    author: str
    author_id: int = 0
    state: str = "open"
    head: str = ""


@dataclass(frozen=True)
class Rules:
    """The surface's settings the rules read: the name commands address (`@<slug>`), and the
    author's commands that spend, a day (RTCBOT_AUTHOR_RERUNS_PER_DAY)."""

    slug: str
    author_budget: int


class Permissions(Protocol):
    def can_write(self, login: str) -> bool:
        """Whether `login` has write, maintain or admin permission on the repository."""


class Conversation(Protocol):
    """The command's comment and its pull request on GitHub."""

    def pull(self) -> Mapping[str, Any]:
        """The pull request as GitHub describes it now (state, head, user)."""

    def reply(self, body: str) -> None:
        """rtcbot's answer, where the command was written (the conversation or the thread)."""

    def react(self, content: str) -> None:
        """A reaction on the command's comment; best effort (a failure is logged, not raised)."""


class Ledger(Protocol):
    """The rerun ledger: what the pull request's author spent today by commands."""

    uncountable: str  # the refusal when the day cannot be counted

    def charged_today(self, asked: Asked) -> int | None:
        """The author's charged commands on this pull request in the last day (None: cannot be counted)."""

    def charge(self, asked: Asked, verb: str, head: str, n: int) -> None:
        """Record the author's `n`th charged command of the day, before its work is done."""


class DismissalsPort(Protocol):
    """The repository's dismissals: a store (the App) or a committed file (the Action)."""

    where: str  # in words: "this repository", "`.github/rtcbot-dismissals.yml` on the default branch"

    def listed(self) -> Sequence[Dismissal]: ...

    def aim(self, command: Ignore | Unignore, head: str) -> Aim:
        """What the command names, resolved at the head (or why nothing is dismissed)."""

    def add(self, d: Dismissal, aim: Aim, head: str) -> Answer:
        """Record the dismissal (or say how to), answered in words."""

    def remove(self, target: str, path_glob: str | None) -> Answer: ...


class Scheduler(Protocol):
    """The work a command asks for: a re-run (queued or run here) and an explanation."""

    explain_spends: bool  # explain analyses again (charged like a re-run) rather than reading stored results

    def turned_off(self, analyzers: Sequence[str], pull: Mapping[str, Any]) -> tuple[list[str], str | None]:
        """The named analyzers this re-run will not run, and why in words (None: none)."""

    def rerun(self, analyzers: Sequence[str], head: str, pull: Mapping[str, Any],
              charge: Callable[[], None]) -> Answer:
        """Re-run `analyzers` (all the repository enables when empty) at `head`; `charge` first."""

    def explain(self, command: Explain, head: str, pull: Mapping[str, Any], charge: Callable[[], None]) -> Answer:
        """Explain the score at the place the command points to (`charge` before analysing)."""


@dataclass(frozen=True)
class Ports:
    permissions: Permissions
    conversation: Conversation
    ledger: Ledger
    dismissals: DismissalsPort
    scheduler: Scheduler


def respond(asked: Asked, rules: Rules, ports: Ports) -> Answer:
    """👀 on receipt, the answer, then its reply and its reaction."""
    ports.conversation.react("eyes")
    answer = answer_command(asked, rules, ports)
    if answer.reply:
        ports.conversation.reply(answer.reply)
    if answer.reaction:
        ports.conversation.react(answer.reaction)
    return answer


def answer_command(asked: Asked, rules: Rules, ports: Ports) -> Answer:
    """The answer to one command (the module's rules, in their order)."""
    command = asked.command
    if asked.state != "open":
        return _closed(asked.state)
    if isinstance(command, Malformed):
        return Answer("malformed", f"rtcbot could not read that command: {inert(command.why)}.\n\n"
                      + pr_commands.help_text(rules.slug), "confused")
    if isinstance(command, Help):
        return Answer("help", pr_commands.help_text(rules.slug))
    if pr_commands.changes_state(command) and not ports.permissions.can_write(asked.author):
        return Answer("refused: no write access", pr_commands.no_write_reply(command.verb))
    pull = ports.conversation.pull()
    if pull.get("state", "open") != "open":
        return _closed(str(pull.get("state")))
    head = str((pull.get("head") or {}).get("sha") or asked.head or "")
    if isinstance(command, Dismissals):
        return _listed(ports.dismissals)
    if isinstance(command, Ignore | Unignore):
        return _dismiss(asked, command, head, ports.dismissals)
    spends = isinstance(command, Rerun) or ports.scheduler.explain_spends
    charged: int | None = None
    if spends and not ports.permissions.can_write(asked.author):
        refusal, charged = _refusal(asked, rules, ports, pull)
        if refusal:
            return Answer("refused", refusal)

    def charge(verb: str) -> Callable[[], None]:
        return lambda: None if charged is None else ports.ledger.charge(asked, verb, head, charged + 1)

    if isinstance(command, Explain):
        return ports.scheduler.explain(command, head, pull, charge("explain"))
    return _rerun(command, head, pull, ports.scheduler, charge("rerun"))


def _refusal(asked: Asked, rules: Rules, ports: Ports, pull: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """Why this person, without write access, may not spend now (None: they may), and their
    charged commands today."""
    if asked.author.lower() != str((pull.get("user") or {}).get("login") or "").lower():
        return pr_commands.spend_refused(explain=ports.scheduler.explain_spends), None
    charged = ports.ledger.charged_today(asked)
    if charged is None:
        return ports.ledger.uncountable, None
    if charged >= rules.author_budget:
        return pr_commands.author_budget_reply(rules.author_budget), charged
    return None, charged


def _rerun(command: Rerun, head: str, pull: Mapping[str, Any], scheduler: Scheduler,
           charge: Callable[[], None]) -> Answer:
    if not head:
        return Answer("no head", "GitHub did not say which commit is this pull request's head.")
    off, note = scheduler.turned_off(command.analyzers, pull) if command.analyzers else ([], None)
    names = [n for n in command.analyzers if n not in off]
    if command.analyzers and not names:
        return Answer("turned off", note)
    answer = scheduler.rerun(names, head, pull, charge)
    return dataclasses.replace(answer, reply=note) if note and answer.reply is None else answer


def _listed(store: DismissalsPort) -> Answer:
    listed = store.listed()
    if not listed:
        return Answer("none", f"Nothing is dismissed in {store.where}.")
    lines = [f"Dismissed in {store.where} ({len(listed)}):", ""]
    lines += [f"- {code(d.target)} ({d.kind}): {inert(d.line())}" for d in listed[:100]]
    return Answer(f"{len(listed)} listed", "\n".join(lines))


def _dismiss(asked: Asked, command: Ignore | Unignore, head: str, store: DismissalsPort) -> Answer:
    aim = store.aim(command, head)
    if aim.refusal:
        return Answer("nothing dismissed", aim.refusal)
    if isinstance(command, Unignore):
        return store.remove(aim.target, command.path_glob)
    d = Dismissal(target=aim.target, kind=kind_of(aim.target), path_glob=command.path_glob, by=asked.author,
                  at=time.time(), reason=command.reason)
    found = problem(d)
    if found:
        return Answer("invalid", f"rtcbot cannot dismiss that: {inert(found)}.")
    return store.add(d, aim, head)


def _closed(state: str) -> Answer:
    return Answer("closed", pr_commands.closed_reply(state))
