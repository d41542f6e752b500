"""What every command shares: the `Answer` it gets, the person who `Asked`, the surface's
`Rules`, the ports a surface implements, and the `Verb` protocol a command module fills in.

A command module (rerun.py, explain.py, …) defines its typed command and one `Verb`: how it
reads the text after its verb, whether it needs write access, whether it spends (what the
pull request's author may do a few times a day), and its answer through the ports. The order
of the rules every command goes through is bot/core/answer_command.py's. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.core.dismiss_target import Aim
from bot.core.dismissals import MAX_GLOB_CHARS, MAX_REASON_CHARS, MAX_TARGET_CHARS, Dismissal

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


# -- the commands the ports below are given (each read and answered by its module) ----------
@dataclass(frozen=True)
class Rerun:
    analyzers: tuple[str, ...] = ()  # () : every analysis the repository enables
    verb = "rerun"


@dataclass(frozen=True)
class Explain:
    path: str | None = None  # None: the finding of the thread the command is in
    line: int | None = None
    verb = "explain"


@dataclass(frozen=True)
class Ignore:
    target: str  # a rule id, an analyzer's key or a finding's fingerprint; "this": the thread's
    path_glob: str | None = None
    reason: str = ""
    verb = "ignore"


@dataclass(frozen=True)
class Unignore:
    target: str
    path_glob: str | None = None
    verb = "unignore"


@dataclass(frozen=True)
class Dismissals:
    verb = "dismissals"


def safe_path(text: str, *, glob: bool = False) -> str | None:
    """`text` as a path (or glob) inside the repository, or None: relative, no `..` or `.`
    part, no empty part, no backslash, no control character, at most MAX_PATH characters."""
    if not text or len(text) > MAX_PATH or not (_GLOB_CHARS if glob else _PATH_CHARS).match(text):
        return None
    parts = text.split("/")
    if text.startswith(("/", "~")) or any(p in ("", ".", "..") for p in parts):
        return None
    return text


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
        """Re-run `analyzers` (all the repository enables when empty) at `head`; `charge` before
        the work goes out (not when nothing is made again)."""

    def explain(self, command: Explain, head: str, pull: Mapping[str, Any], charge: Callable[[], None]) -> Answer:
        """Explain the score at the place the command points to (`charge` before analysing)."""


@dataclass(frozen=True)
class Ports:
    permissions: Permissions
    conversation: Conversation
    ledger: Ledger
    dismissals: DismissalsPort
    scheduler: Scheduler


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

    def spends(self, scheduler: Scheduler) -> bool:
        """Whether it spends: the author's up to a daily budget, a writer's freely."""

    def answer(self, call: Call) -> Answer: ...
