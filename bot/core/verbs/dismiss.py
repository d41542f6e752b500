"""`@rtcbot ignore <rule|this> [in <glob>] [because <reason>]` and `@rtcbot unignore <rule|this>
[in <glob>]`: dismiss a rule, an analyzer or one finding, or take the dismissal back. Both
need write access; what `this` names is the port's to resolve (the thread's marker)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from bot.core.dismissals import Dismissal, kind_of, problem
from bot.core.verbs.base import (
    MAX_REASON,
    MAX_TARGET,
    Answer,
    Call,
    Command,
    Ignore,
    Malformed,
    Scheduler,
    Unignore,
    safe_path,
)
from reporters.untrusted import inert

_TARGET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$")  # a rule id, an analyzer's key, a fingerprint
_IGNORE = re.compile(r"^(?P<target>\S+)(?:\s+in\s+(?P<glob>\S+))?(?:\s+because\s+(?P<reason>.+))?$", re.I | re.S)
_UNIGNORE = re.compile(r"^(?P<target>\S+)(?:\s+in\s+(?P<glob>\S+))?$", re.I)


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

    def spends(self, scheduler: Scheduler) -> bool:
        return False

    def answer(self, call: Call) -> Answer:
        command, store = call.asked.command, call.ports.dismissals
        assert isinstance(command, Ignore | Unignore)  # parse made it
        aim = store.aim(command, call.head)
        if aim.refusal:
            return Answer("nothing dismissed", aim.refusal)
        if isinstance(command, Unignore):
            return store.remove(aim.target, command.path_glob)
        d = Dismissal(target=aim.target, kind=kind_of(aim.target), path_glob=command.path_glob,
                      by=call.asked.author, at=time.time(), reason=command.reason)
        found = problem(d)
        if found:
            return Answer("invalid", f"rtcbot cannot dismiss that: {inert(found)}.")
        return store.add(d, aim, call.head)


IGNORE = DismissVerb("ignore")
UNIGNORE = DismissVerb("unignore")
