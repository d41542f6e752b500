"""`@rtcbot ignore <rule|this> [in <glob>] [because <reason>]` and `@rtcbot unignore <rule|this>
[in <glob>]`: dismiss a rule, an analyzer or one finding, or take the dismissal back. Both
need write access. What a command names is resolved here, pure, from what the surface shows
(`FindingsAtHead`): `this` only through the thread's own marker, a fingerprint only when it
names one finding at the head (bot/core/dismiss_target.py); the dismissals port records it, or
(a committed file) the reply proposes the entry."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from bot.core import dismiss_target
from bot.core.dismiss_target import Aim
from bot.core.dismissals import Dismissal, kind_of, problem
from bot.core.verbs.base import (
    MAX_REASON,
    MAX_TARGET,
    Answer,
    Call,
    Command,
    FindingsAtHead,
    Malformed,
    Ports,
    safe_path,
    thread_marker,
)
from reporters.untrusted import code, inert

_TARGET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$")  # a rule id, an analyzer's key, a fingerprint
_IGNORE = re.compile(r"^(?P<target>\S+)(?:\s+in\s+(?P<glob>\S+))?(?:\s+because\s+(?P<reason>.+))?$", re.I | re.S)
_UNIGNORE = re.compile(r"^(?P<target>\S+)(?:\s+in\s+(?P<glob>\S+))?$", re.I)


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


def _target(text: str) -> str | None:
    return text if text.lower() == "this" or (len(text) <= MAX_TARGET and _TARGET.match(text)) else None


@dataclass(frozen=True)
class DismissVerb:
    name: str  # "ignore" or "unignore"
    needs_write = True

    def usage(self, at: str) -> str:
        if self.name == "unignore":
            return f"`{at} unignore <rule|this> [in <glob>]`: take a dismissal back (write access)"
        return (f"`{at} ignore <rule|this> [in <glob>] [because <reason>]`: dismiss a rule or a finding "
                "(write access)")

    def parse(self, rest: str) -> Command:
        verb = self.name
        m = (_IGNORE if verb == "ignore" else _UNIGNORE).match(rest)
        if not m:
            because = " [because <reason>]" if verb == "ignore" else ""
            return Malformed(f"{verb} takes <rule|this> [in <glob>]{because}")
        target = _target(m.group("target"))
        if target is None:
            return Malformed(f"{verb}: a rule id, an analyzer's name, a finding's fingerprint, or `this`")
        glob = None if m.group("glob") is None else safe_path(m.group("glob"), glob=True)
        if m.group("glob") is not None and glob is None:
            return Malformed(f"{verb}: the glob after `in` must be relative and inside the repository")
        target = "this" if target.lower() == "this" else target
        if verb == "unignore":
            return Unignore(target, glob)
        reason = " ".join((m.group("reason") or "").split())
        if len(reason) > MAX_REASON:
            return Malformed(f"ignore: the reason is longer than {MAX_REASON} characters")
        return Ignore(target, glob, reason)

    def spends(self, ports: Ports) -> bool:
        return False

    def answer(self, call: Call) -> Answer:
        command, store = call.asked.command, call.ports.dismissals
        assert isinstance(command, Ignore | Unignore)  # parse made it
        aim = resolve(command, call.head, call.ports.shown)
        if aim.refusal:
            return Answer("nothing dismissed", aim.refusal)
        if isinstance(command, Unignore):
            return _removed(call, aim.target, command.path_glob)
        d = Dismissal(target=aim.target, kind=kind_of(aim.target), path_glob=command.path_glob,
                      by=call.asked.author, at=time.time(), reason=command.reason)
        found = problem(d)
        if found:
            return Answer("invalid", f"rtcbot cannot dismiss that: {inert(found)}.")
        added = store.add(d)
        if added is None:
            return Answer("entry proposed", dismiss_target.proposed(d, aim, call.head))
        return Answer("added" if added else "already there", dismiss_target.reply(d, aim, call.head, added=added),
                      "+1")


def resolve(command: Ignore | Unignore, head: str, shown: FindingsAtHead) -> Aim:
    """What the command names at the head, or why nothing is dismissed: `this` through the
    thread's marker among the findings kept; a name against them, or (a surface that keeps none)
    a fingerprint against what its check runs annotate."""
    kept = shown.findings(head)
    if command.target == "this":
        if kept is None:
            mark = " (the last line of its annotation)" if isinstance(command, Ignore) else ""
            return Aim(refusal="The Action reads the conversation only: name the rule, the analyzer or the "
                       f"finding's fingerprint{mark} instead of `this`.")
        top = shown.thread()
        return dismiss_target.in_thread(kept, None if top is None else thread_marker(top), command.verb, head)
    if isinstance(command, Unignore):
        return Aim(command.target)
    if kept is not None:
        return dismiss_target.by_name(kept, command.target, head)
    if kind_of(command.target) != "finding":
        return Aim(command.target)
    named = shown.annotated(head, command.target) if head else ()
    if not named:
        return Aim(refusal=f"{code(command.target)} is the fingerprint of no finding rtcbot's check runs annotate "
                   f"at the head {code(head[:12])}, so there is no entry to commit: rtcbot dismisses a finding "
                   "only while it shows it, never code still to come.")
    return Aim(command.target, named)


def _removed(call: Call, target: str, path_glob: str | None) -> Answer:
    store = call.ports.dismissals
    n = store.remove(target, path_glob)
    if n is not None:
        return Answer(f"removed {n}", None if n else f"Nothing dismissed matches {code(target)}.",
                      "+1" if n else None)
    hits = [d for d in store.listed() if d.target == target and (path_glob is None or d.path_glob == path_glob)]
    if not hits:
        return Answer("none", f"Nothing in {store.where} matches {code(target)}.")
    return Answer(f"{len(hits)} to remove", dismiss_target.to_remove(hits, store.where))


IGNORE = DismissVerb("ignore")
UNIGNORE = DismissVerb("unignore")
