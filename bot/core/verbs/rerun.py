"""`@rtcbot rerun [analyzer …]`: analyse the pull request's head again, every analysis the
repository enables or those named. It spends: the author's, up to a daily budget."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from analyzers import registry
from bot.core.verbs.base import Answer, Call, Command, Malformed, Ports


@dataclass(frozen=True)
class Rerun:
    analyzers: tuple[str, ...] = ()  # () : every analysis the repository enables
    verb = "rerun"


@dataclass(frozen=True)
class RerunVerb:
    name = "rerun"
    needs_write = False

    def usage(self, at: str) -> str:
        names = ", ".join(n.replace("_", "-") for n in registry.ANALYZERS)
        return f"`{at} rerun [analyzer …]`: analyse the head again (all analyses, or those named: {names})"

    def parse(self, rest: str) -> Command:
        try:
            names = registry.parse_names(",".join(rest.replace(",", " ").split()))
        except registry.UnknownAnalyzer as e:
            return Malformed(f"rerun: {e}")
        return Rerun(tuple(dict.fromkeys(names)))

    def spends(self, ports: Ports) -> bool:
        return True

    def answer(self, call: Call) -> Answer:
        command = call.asked.command
        assert isinstance(command, Rerun)  # parse made it
        if not call.head:
            return Answer("no head", "GitHub did not say which commit is this pull request's head.")
        work = call.ports.work
        off, note = work.turned_off(command.analyzers, call.pull) if command.analyzers else ([], None)
        names = [n for n in command.analyzers if n not in off]
        if command.analyzers and not names:
            return Answer("turned off", note)
        answer = work.rerun(names, call.head, call.pull, call.charge)
        return dataclasses.replace(answer, reply=note) if note and answer.reply is None else answer


VERB = RerunVerb()
