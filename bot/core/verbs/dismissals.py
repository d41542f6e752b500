"""`@rtcbot dismissals`: what is dismissed in this repository (anyone may ask; nothing spends)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.verbs.base import Answer, Call, Command, Malformed, Ports
from reporters.untrusted import code, inert


@dataclass(frozen=True)
class Dismissals:
    verb = "dismissals"


@dataclass(frozen=True)
class DismissalsVerb:
    name = "dismissals"
    needs_write = False

    def usage(self, at: str) -> str:
        return f"`{at} dismissals`: what is dismissed in this repository"

    def parse(self, rest: str) -> Command:
        return Dismissals() if not rest else Malformed("dismissals takes nothing after it")

    def spends(self, ports: Ports) -> bool:
        return False

    def answer(self, call: Call) -> Answer:
        store = call.ports.dismissals
        listed = store.listed()
        if not listed:
            return Answer("none", f"Nothing is dismissed in {store.where}.")
        lines = [f"Dismissed in {store.where} ({len(listed)}):", ""]
        lines += [f"- {code(d.target)} ({d.kind}): {inert(d.line())}" for d in listed[:100]]
        return Answer(f"{len(listed)} listed", "\n".join(lines))


VERB = DismissalsVerb()
