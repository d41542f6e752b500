"""The verdict: the one sentence every output opens with (check runs' title and summary, the
Markdown and text reports, the step summary, a pull request review's body), so that a pull
request's author knows in ten seconds what rtcbot found. Pure.

It is the gate's result where one is set ("The gate fails: …", "The gate passes"), then what
each analysis found in its own words (its headline: "7 of 9 changes explained; 2 unclear",
"2 findings, 1 with a verified fix", "3 of 9 hunks scored (LLM budget)"). It is computed once,
from the reports and the gate's state (`Gate`, which bot/core/review.py's Result gives), and
every reporter renders the same sentence: bold, inert Markdown where Markdown is read, plain
text elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from analyzers.report import AnalyzerReport, CannotPass
from reporters import readable
from reporters.untrusted import inert, plain


@dataclass(frozen=True)
class Gate:
    """What the gate said of a run, as the outputs read it: its expression ("" when no gate is
    set, or the output does not know it: a check run knows only its own conclusion), whether it
    fails, and why (the reasons it cannot pass, the alternatives that hold)."""

    expression: str = ""
    fails: bool = False
    reasons: tuple[str, ...] = ()


def _found(reports: Sequence[AnalyzerReport]) -> str:
    """What each analysis that ran found, in its own words (named when there are several);
    "" when none ran."""
    named = len(reports) > 1
    said = []
    for r in reports:
        if r.not_run:
            continue
        words = "could not run" if r.error else readable.headline(r)
        said.append(f"{r.title}{' ' if r.error else ': '}{words}" if named else words)
    return "; ".join(said)


def _gate(gate: Gate | None) -> str:
    if gate is None or not (gate.fails or gate.expression):
        return ""
    if not gate.fails:
        return f"The gate passes ({gate.expression})"
    why = gate.reasons[0] if gate.reasons else gate.expression
    why = why.why if isinstance(why, CannotPass) else why
    more = f" (and {len(gate.reasons) - 1} more)" if len(gate.reasons) > 1 else ""
    return f"The gate fails: {why}{more}"


def sentence(reports: Sequence[AnalyzerReport], gate: Gate | None = None) -> str:
    """The verdict in words (rtcbot's own, with the paths and reasons it names: render it
    through `markdown` or `text`)."""
    found = _found(reports)
    if not found:
        found = "nothing was analysed" if reports else "no analysis was asked for"
        if len(reports) == 1:
            found = readable.headline(reports[0])
    first = _gate(gate)
    if not first:
        return found[0].upper() + found[1:] + "."
    return f"{first}. {found[0].upper() + found[1:]}."


def markdown(reports: Sequence[AnalyzerReport], gate: Gate | None = None) -> str:
    """The verdict as the first line of a Markdown output: bold, inert."""
    return f"**{inert(sentence(reports, gate))}**"


def text(reports: Sequence[AnalyzerReport], gate: Gate | None = None) -> str:
    """The verdict as the first line of a plain-text output (mentions defused)."""
    return plain(sentence(reports, gate))
