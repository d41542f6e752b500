"""What every command shares: the `Answer` it gets, the person who `Asked`, the surface's
`Rules`, the ports a surface implements, and the `Verb` protocol a command module fills in.

A command module (rerun.py, explain.py, …) defines its typed command and one `Verb`: how it
reads the text after its verb, whether it needs write access, whether it spends (what the
pull request's author may do a few times a day), and its answer through the ports. The ports
are capabilities, not verbs: who may write (`Permissions`), the conversation (`Conversation`),
the author's day (`Ledger`), what rtcbot showed at a head (`FindingsAtHead`), the dismissals
(`DismissalsPort`), the work (`Work`) and, where no findings are kept, an analysis run again
(`AnalyseAgain`); what a command names is resolved in its module from these, pure. The order
of the rules every command goes through is bot/core/answer_command.py's. Pure.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from analyzers.code.diff import ChangeSet
from analyzers.report import Finding
from bot.core.dismiss_target import Named
from bot.core.dismissals import MAX_GLOB_CHARS, MAX_REASON_CHARS, MAX_TARGET_CHARS, Dismissal
from bot.core.feedback import keys_in

MAX_LINE = 500  # characters of the addressed line that are read
MAX_PATH = MAX_GLOB_CHARS  # a command's path or glob: what a dismissal may hold
MAX_TARGET = MAX_TARGET_CHARS
MAX_REASON = MAX_REASON_CHARS  # one field, one limit, whether a command or the file writes it
MAX_LINE_NUMBER = 10_000_000

_PATH_CHARS = re.compile(r"^[A-Za-z0-9._/@+=,~ -]+$")  # a path: no glob, no control character
_GLOB_CHARS = re.compile(r"^[A-Za-z0-9._/@+=,~*?\[\]{}!-]+$")  # a glob: the same and its wildcards


class Command(Protocol):
    """A parsed command: its verb ("rerun", "malformed", …) and what it says."""

    @property
    def verb(self) -> str: ...


@dataclass(frozen=True)
class Help:
    verb = "help"


@dataclass(frozen=True)
class Malformed:
    why: str
    verb = "malformed"


def safe_path(text: str, *, glob: bool = False) -> str | None:
    """`text` as a path (or glob) inside the repository, or None: relative, no `..` or `.`
    part, no empty part, no backslash, no control character, at most MAX_PATH characters."""
    if not text or len(text) > MAX_PATH or not (_GLOB_CHARS if glob else _PATH_CHARS).match(text):
        return None
    parts = text.split("/")
    if text.startswith(("/", "~")) or any(p in ("", ".", "..") for p in parts):
        return None
    return text


def thread_marker(top: Mapping[str, Any]) -> str | None:
    """The marker of a review thread's first comment of rtcbot's (reporters/pr_review.py `key_of`):
    what `explain` and `ignore this` in that thread name (None: it carries none)."""
    keys = keys_in([top.get("body")])
    return keys[0] if keys else None


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


class FindingsAtHead(Protocol):
    """What rtcbot showed on the pull request: its findings at a head, the thread a command was
    written in, and the change they were found in. Resolving what a command names from these is
    the core's (bot/core/verbs/dismiss.py, explain.py)."""

    def findings(self, head: str) -> Sequence[Finding] | None:
        """rtcbot's findings at `head`, every analysis's (None: the surface keeps none, the Action)."""

    def annotated(self, head: str, fingerprint: str) -> tuple[Named, ...]:
        """The findings rtcbot's check runs at `head` annotate with `fingerprint`."""

    def thread(self) -> Mapping[str, Any] | None:
        """The first comment of the command's review thread when it is one of rtcbot's (None:
        the command is not in such a thread, or the surface reads no threads)."""

    def changes(self, pull: Mapping[str, Any]) -> ChangeSet:
        """The pull request's change at its head (what an explanation compares a regeneration with)."""


class DismissalsPort(Protocol):
    """The repository's dismissals: a store rtcbot writes (the App) or a file people commit (the
    Action), read and written; what a command dismisses and the replies are the core's."""

    where: str  # in words: "this repository", "`.github/rtcbot-dismissals.yml` on the default branch"

    def listed(self) -> Sequence[Dismissal]: ...

    def add(self, d: Dismissal) -> bool | None:
        """Record `d`: True when added, False when already there; None when the surface records
        none (a committed file: the reply proposes the entry)."""

    def remove(self, target: str, path_glob: str | None) -> int | None:
        """Remove the dismissals of `target` (in `path_glob`, None: any): how many; None when the
        surface records none (the reply names the entries to remove)."""


class Work(Protocol):
    """The analyses a command asks for: re-run (jobs through the queue, or the review run here)."""

    def turned_off(self, analyzers: Sequence[str], pull: Mapping[str, Any]) -> tuple[list[str], str | None]:
        """The named analyzers this re-run will not run, and why in words (None: none)."""

    def rerun(self, analyzers: Sequence[str], head: str, pull: Mapping[str, Any],
              charge: Callable[[], None]) -> Answer:
        """Re-run `analyzers` (all the repository enables when empty) at `head`; `charge` before
        the work goes out (not when nothing is made again)."""


class AnalyseAgain(Protocol):
    """Where the surface keeps no findings (the Action), the analyses of one hunk run again here
    for `explain` — so there `explain` spends."""

    def findings(self, hunk: ChangeSet, pull: Mapping[str, Any], charge: Callable[[], None]) -> Sequence[Finding]:
        """Every finding the review at the head finds in `hunk`, `charge` before analysing."""


@dataclass(frozen=True)
class Ports:
    permissions: Permissions
    conversation: Conversation
    ledger: Ledger
    shown: FindingsAtHead
    dismissals: DismissalsPort
    work: Work
    again: AnalyseAgain | None = None  # None: the surface reads the findings it keeps (the App)


@dataclass(frozen=True)
class Call:
    """One command past the common rules: who asked, the pull request as read now and its head,
    the ports, and `charge`, which records the author's spending (call it before the work)."""

    asked: Asked
    pull: Mapping[str, Any]
    head: str
    ports: Ports
    charge: Callable[[], None]


class Verb(Protocol):
    """One command of the grammar (its module's `VERB`)."""

    @property
    def name(self) -> str:
        """The word after the address: "rerun"."""

    @property
    def needs_write(self) -> bool:
        """Only people with write access may use it."""

    def usage(self, at: str) -> str:
        """Its line of the help text, `at` being "@<slug>"."""

    def parse(self, rest: str) -> Command:
        """The command in the text after the verb (a `Malformed` when it cannot be read)."""

    def spends(self, ports: Ports) -> bool:
        """Whether it spends on this surface: the author's up to a daily budget, a writer's freely."""

    def answer(self, call: Call) -> Answer: ...
