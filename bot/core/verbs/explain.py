"""`@rtcbot explain [path:line]`: the evidence behind a score (in a thread on one of rtcbot's
comments, that one). Which finding is pure: the one at `path:line`, or the one the thread's
first comment marks (else the one at that comment's line), among the findings the surface keeps
at the head; a surface that keeps none (the Action) analyses the hunk at `path:line` again, so
there it spends."""

from __future__ import annotations

from dataclasses import dataclass

from analyzers.report import Finding
from bot.core import explain
from bot.core.verbs.base import (
    MAX_LINE_NUMBER,
    Answer,
    Call,
    Command,
    FindingsAtHead,
    Malformed,
    Ports,
    safe_path,
    thread_marker,
)
from reporters.untrusted import code


@dataclass(frozen=True)
class Explain:
    path: str | None = None  # None: the finding of the thread the command is in
    line: int | None = None
    verb = "explain"


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

    def spends(self, ports: Ports) -> bool:
        return ports.again is not None

    def answer(self, call: Call) -> Answer:
        command = call.asked.command
        assert isinstance(command, Explain)  # parse made it
        if call.ports.again is not None:
            return _afresh(command, call)
        hits, where = _target(command, call.ports.shown, call.head)
        if not where:
            return Answer("no place", "`explain` needs `path:line` here, or write it in the thread of one of "
                          "rtcbot's comments.")
        if not hits:
            return Answer("no finding", f"rtcbot has no score at {code(where)} at the head {code(call.head[:12])}.")
        f = hits[0]
        real = explain.real_edit(call.ports.shown.changes(call.pull), f)
        return Answer(f"explained {f.analyzer} at {where}", explain.explain_markdown(f, real=real))


def _target(command: Explain, shown: FindingsAtHead, head: str) -> tuple[list[Finding], str]:
    """The findings kept at the head that the command points at, and where it points, in words
    ("": nowhere)."""
    findings = shown.findings(head) or ()
    if command.path is not None and command.line is not None:
        return explain.at_line(findings, command.path, command.line), f"{command.path}:{command.line}"
    top = shown.thread()
    if top is None:
        return [], ""
    marker = thread_marker(top)
    hits = explain.marked(findings, marker) if marker else []
    path, line = top.get("path"), top.get("line") or top.get("original_line")
    if not hits and isinstance(path, str) and isinstance(line, int):
        hits = explain.at_line(findings, path, line)
    return hits, f"{path}:{line}"


def _afresh(command: Explain, call: Call) -> Answer:
    """Where no findings are kept: the hunk at `path:line` analysed again (charged first)."""
    assert call.ports.again is not None
    if command.path is None or command.line is None:
        return Answer("no place", "`explain` needs `path:line` here (e.g. `src/app.py:12`).")
    where, at = f"{command.path}:{command.line}", code(call.head[:12])
    hunk = explain.hunk_at(call.ports.shown.changes(call.pull), command.path, command.line)
    if hunk is None:
        return Answer("no hunk", f"This pull request changes no hunk at {code(where)} at the head {at}.")
    found = call.ports.again.findings(hunk, call.pull, call.charge)
    hits = explain.at_line(found, command.path, command.line) or list(found)
    if not hits:
        return Answer("no finding", f"rtcbot has no score at {code(where)} at the head {at}.")
    f = hits[0]
    afresh = (f"rtcbot analysed the hunk at {code(where)} again at the head {at} (the Action keeps no "
              "results: the model's samples are new, so the figures may differ from the check run's).\n\n")
    real = explain.real_edit(hunk, f)
    return Answer(f"explained {f.analyzer} at {where}", afresh + explain.explain_markdown(f, real=real))


VERB = ExplainVerb()
