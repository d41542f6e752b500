"""`@rtcbot explain [path:line]`: the evidence behind a score (in a thread on one of rtcbot's
comments, that one). It spends where the surface analyses again (the Action)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.verbs.base import MAX_LINE_NUMBER, Answer, Call, Command, Explain, Malformed, Scheduler, safe_path


@dataclass(frozen=True)
class ExplainVerb:
    name = "explain"
    needs_write = False

    def usage(self, at: str) -> str:
        return (f"`{at} explain [path:line]`: the evidence behind a score (in a thread on one of rtcbot's "
                "comments, that one)")

    def parse(self, rest: str) -> Command:
        if not rest:
            return Explain()
        path, sep, line = rest.rpartition(":")
        if not sep or not line.isdigit() or not 1 <= int(line) <= MAX_LINE_NUMBER:
            return Malformed("explain takes path:line (e.g. src/app.py:12)")
        if safe_path(path) is None:
            return Malformed("explain: the path must be relative and inside the repository")
        return Explain(path, int(line))

    def spends(self, scheduler: Scheduler) -> bool:
        return scheduler.explain_spends

    def answer(self, call: Call) -> Answer:
        command = call.asked.command
        assert isinstance(command, Explain)  # parse made it
        return call.ports.scheduler.explain(command, call.head, call.pull, call.charge)


VERB = ExplainVerb()
