"""The one gating grammar: when a run fails. Pure (no I/O), used by the App, the Action and the CLI.

`fail_on` (in `.github/rtcbot.yml`, or the Action's `fail-on` input), parsed strictly:

    expr       := all ( ("||" | "or") all )*          fails when any `all` holds
    all        := comparison ( ("&&" | "and") comparison )*
    comparison := METRIC OP NUMBER                    e.g. editing_rtc.rtc<0.2
    METRIC     := ANALYZER "." NAME                   ANALYZER: a registered analyzer or "total"
    OP         := "<" | "<=" | ">" | ">=" | "==" | "!="

NAME is one of the analyzer's aggregate scores (rtc, lift, con, comp, rel, ...) or a count:
findings, failures, warnings, notices, fixes, skipped, errors, unscanned. A metric a run does
not produce (no hunks, the analyzer not run) makes its comparison false, and the output says so,
unless ignore globs spared changed code from that analyzer (its Skipped items marked `spared`):
then there was code and nothing measured it, and the gate cannot pass (`all_spared`).

Gates fail closed. `inconclusive` counts the items whose evidence says nothing about the
change, only about the model (analyzers/report.py `Inconclusive`: EditingRTC's hunks scored by
the embedded model, by a model the repository's qualification record does not qualify, or by a
model that failed the hunk's baseline or every hunk); the other
counts and the scores are over the conclusive items. A gate that reads an analyzer with
inconclusive items cannot pass, and says why, unless the config says `gate_inconclusive: ignore`
(then it reads the conclusive items only). `unscanned` counts what the analyzer could not analyse (its Skipped items
of kind "failed": a file over Semgrep's size limit or one Semgrep failed on, a diff that could
not be read, a hunk or comment a size limit or an LLM budget cut off), never what was left out
on purpose ("policy": ignore globs, lock files, binary files, languages it is not made for).
A gate that reads an analyzer's findings or scores (any NAME but the coverage counts
unscanned, skipped and errors; `total.` reads every analyzer) cannot pass while that analyzer
left something unanalysed or could not run: the run fails (`failure`, exit 1) and says which
items and why ("The gate cannot pass: AutoFix could not scan 1 changed file: big.py (over
Semgrep's size limit: ...)"). `failure`, not `action_required`: nothing but a change of the
pull request, the config or the operator's limits can clear it, and it is the conclusion the
Action's and the CLI's exit 1 give.

`thresholds: {editing_rtc: {rtc: 0.2}}` is sugar for `editing_rtc.rtc<0.2`: each threshold is
one more `||` alternative (see `from_thresholds`).

A check run's conclusion is `failure` when an alternative that holds names its analyzer (or
`total`), else `neutral`. The App runs one analyzer per job, so there an alternative can only
hold on that analyzer's own metrics (and `total` counts that analyzer alone).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from analyzers import registry
from analyzers.report import AnalyzerReport, CannotPass

OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b, "<": lambda a, b: a < b, ">": lambda a, b: a > b,
}
COUNTS = ("findings", "failures", "warnings", "notices", "fixes", "skipped", "errors", "unscanned",
          "inconclusive")
COVERAGE = ("unscanned", "skipped", "errors", "inconclusive")  # a gate on these alone does not fail closed
InconclusivePolicy = Literal["fail", "ignore"]  # the config's `gate_inconclusive`
SHOWN_ITEMS = 10  # unanalysed items named in one reason (then "and N more")
_TOKEN = re.compile(r"""\s*(?:
    (?P<and>&&|\band\b) | (?P<or>\|\||\bor\b) |
    (?P<cmp>(?P<metric>[A-Za-z][\w-]*\.[\w@.-]+)\s*(?P<op><=|>=|==|!=|<|>)\s*
        (?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?))
    )\s*""", re.VERBOSE)

Metrics = dict[str, dict[str, float]]


class FailOnError(ValueError):
    """A gate that cannot be read (one line, starting with `fail-on:`)."""


@dataclass(frozen=True)
class Comparison:
    analyzer: str  # registry name or "total"
    name: str
    op: str
    value: float
    threshold: bool = field(default=False, compare=False)  # written as `thresholds:` sugar

    def __str__(self) -> str:
        return f"{self.analyzer}.{self.name}{self.op}{self.value:g}"

    def holds(self, metrics: Metrics) -> bool | None:
        """True/False, or None when the run has no such metric."""
        v = metrics.get(self.analyzer, {}).get(self.name)
        return None if v is None else OPS[self.op](v, self.value)


@dataclass(frozen=True)
class FailOn:
    any_of: tuple[tuple[Comparison, ...], ...] = ()
    text: str = ""

    def __bool__(self) -> bool:
        return bool(self.any_of)

    def comparisons(self) -> Iterator[Comparison]:
        for group in self.any_of:
            yield from group

    def evaluate(self, metrics: Metrics) -> tuple[list[str], list[str]]:
        """(the groups that hold, as text; the comparisons whose metric is missing)."""
        matched, missing = [], []
        for group in self.any_of:
            results = [c.holds(metrics) for c in group]
            missing += [str(c) for c, r in zip(group, results, strict=True) if r is None]
            if all(r is True for r in results):
                matched.append(" && ".join(str(c) for c in group))
        return matched, list(dict.fromkeys(missing))

    def __or__(self, other: FailOn) -> FailOn:
        texts = [t for t in (self.text, other.text) if t]
        return FailOn(self.any_of + other.any_of, " || ".join(texts))


def parse_fail_on(text: str) -> FailOn:
    """The gate in `text` ('' or blanks: no gate); FailOnError with the column otherwise."""
    text = (text or "").strip()
    if not text:
        return FailOn()
    groups: list[list[Comparison]] = [[]]
    pos, expect_cmp = 0, True
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            what = "a comparison like editing_rtc.rtc<0.2" if expect_cmp else "'&&' or '||'"
            raise FailOnError(f"fail-on: expected {what} at column {pos + 1}: "
                              f"{text[pos:pos + 30]!r}")
        if m["cmp"]:
            if not expect_cmp:
                raise FailOnError(f"fail-on: missing '&&' or '||' before {m['cmp']!r} "
                                  f"(column {m.start('cmp') + 1})")
            groups[-1].append(_comparison(m["metric"], m["op"], m["num"]))
            expect_cmp = False
        else:
            if expect_cmp:
                raise FailOnError(f"fail-on: '{(m['and'] or m['or'])}' at column {m.start() + 1} "
                                  "has no comparison before it")
            if m["or"]:
                groups.append([])
            expect_cmp = True
        pos = m.end()
    if expect_cmp:
        raise FailOnError(f"fail-on: {text!r} ends without a comparison")
    return FailOn(tuple(tuple(g) for g in groups), text)


def _comparison(metric: str, op: str, num: str) -> Comparison:
    analyzer, _, name = metric.partition(".")
    analyzer = registry.normalise(analyzer)
    if analyzer != "total" and analyzer not in registry.ANALYZERS:
        known = ", ".join([*registry.ANALYZERS, "total"])
        raise FailOnError(f"fail-on: unknown analyzer {analyzer!r} in {metric!r} (known: {known})")
    if analyzer == "total" and name not in COUNTS:
        raise FailOnError(f"fail-on: 'total' has only counts ({', '.join(COUNTS)}), not {name!r}")
    return Comparison(analyzer, name, op, float(num))


def from_thresholds(thresholds: Mapping[str, Mapping[str, float]]) -> FailOn:
    """`{analyzer: {score: minimum}}` as the gate it is sugar for: `analyzer.score<minimum`,
    each its own alternative."""
    groups = tuple((Comparison(registry.normalise(a), score, "<", float(minimum), threshold=True),)
                   for a, scores in thresholds.items() for score, minimum in scores.items())
    return FailOn(groups, " || ".join(str(g[0]) for g in groups))


def metrics_of(reports: Sequence[AnalyzerReport]) -> Metrics:
    """analyzer → its aggregate scores plus counts; "total" → the counts summed."""
    out: Metrics = {}
    total = dict.fromkeys(COUNTS, 0.0)
    for r in reports:
        found = r.conclusive  # the inconclusive items are counted apart
        counts = {
            "findings": len(found),
            "failures": sum(f.level == "failure" for f in found),
            "warnings": sum(f.level == "warning" for f in found),
            "notices": sum(f.level == "notice" for f in found),
            "fixes": sum(f.fix is not None for f in found),
            "skipped": len(r.skipped),
            "errors": 1 if r.error else 0,
            "unscanned": sum(s.count for s in r.unanalysed),
            "inconclusive": len(r.inconclusive),
        }
        out[r.name] = {**{k: float(v) for k, v in r.scores.items()},
                       **{k: float(v) for k, v in counts.items()}}
        for k, v in counts.items():
            total[k] += v
    out["total"] = total
    return out


@dataclass(frozen=True)
class Verdict:
    """What the gate says about a run: the alternatives that hold, the comparisons it could
    not measure, and each check run's conclusion."""

    gate: FailOn
    matched: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    failed: frozenset[str] = field(default_factory=frozenset)  # analyzers (or "total") named
    explained: Mapping[str, str] = field(default_factory=dict)  # matched → with the values
    # analyzer → why the gate cannot pass over it (it left changed files unanalysed, or could
    # not run, and the gate reads its findings or scores): fails closed
    blocked: Mapping[str, CannotPass] = field(default_factory=dict)

    @property
    def fails(self) -> bool:
        """The gate fails: an alternative holds, or it cannot pass (fails closed)."""
        return bool(self.matched or self.blocked)

    @property
    def conclusion(self) -> str:
        """The run's: failure when the gate holds or cannot pass, success when it is set and
        does not, else neutral (no gate)."""
        return "failure" if self.fails else ("success" if self.gate else "neutral")

    def conclusion_of(self, analyzer: str) -> str:
        """One analyzer's check run: failure when an alternative that holds names it (or
        `total`), or the gate cannot pass over it, else neutral."""
        named = "total" in self.failed or analyzer in self.failed or analyzer in self.blocked
        return "failure" if named else "neutral"

    def crossed(self, analyzer: str) -> list[str]:
        """Why this analyzer's check run fails: the gate cannot pass over it (a CannotPass), and
        the alternatives that hold, with the measured values (`editing_rtc.rtc<0.2 (editing_rtc.rtc
        is 0.10)`)."""
        if self.conclusion_of(analyzer) != "failure":
            return []
        return [*([self.blocked[analyzer]] if analyzer in self.blocked else []),
                *(self.explained.get(m, m) for m in self.matched
                  if any(part.split(".", 1)[0] in (analyzer, "total") for part in m.split(" && ")))]

    def of(self, report: AnalyzerReport) -> tuple[str, list[str]]:
        """(the check run's conclusion, the alternatives that fail it) for one report: what a
        check-run reporter's `gate` gives."""
        return self.conclusion_of(report.name), self.crossed(report.name)


def judge(gate: FailOn, reports: Sequence[AnalyzerReport], inconclusive: InconclusivePolicy = "fail") -> Verdict:
    """The gate over these reports. `inconclusive`: "fail", a gate that reads an analyzer with
    inconclusive items cannot pass (the config's default); "ignore", it reads the conclusive
    items only (the analyzer's figures are theirs)."""
    metrics = metrics_of(reports)
    matched, missing = gate.evaluate(metrics)
    failed: set[str] = set()
    explained: dict[str, str] = {}
    for g in gate.any_of:
        text = " && ".join(map(str, g))
        if text in matched:
            failed |= {c.analyzer for c in g}
            explained[text] = "; ".join(_explain(c, metrics[c.analyzer][c.name]) for c in g)
    read = {c.analyzer for c in gate.comparisons() if c.name not in COVERAGE}
    counted = inconclusive == "fail"
    blocked = {r.name: cannot_pass(r, counted) for r in reports
               if (r.name in read or "total" in read) and (r.error or r.unanalysed or (counted and r.inconclusive))}
    unmeasured = {c.analyzer: str(c) for c in gate.comparisons() if c.name not in COVERAGE and c.holds(metrics) is None}
    blocked |= {r.name: all_spared(r, unmeasured[r.name]) for r in reports
                if r.name in unmeasured and r.name not in blocked and any(s.spared for s in r.skipped)}
    return Verdict(gate, tuple(matched), tuple(missing), frozenset(failed), explained, blocked)


def cannot_pass(report: AnalyzerReport, inconclusive: bool = True) -> CannotPass:
    """Why a gate on `report`'s findings or scores cannot pass, in words: "The gate cannot
    pass: AutoFix could not scan 1 changed file: big.py (over Semgrep's size limit: ...)";
    "The gate cannot pass: EditingRTC: 9 of 9 hunks are inconclusive (the embedded model is
    too small to judge a change)" (`inconclusive`: whether those count)."""
    if report.error:
        return CannotPass(f"{report.title} could not run: {report.error}")
    said = []
    if items := report.unanalysed:
        verb, noun = registry.unanalysed_words(report.name)
        named = ", ".join(f"{s.item} ({s.reason})" for s in items[:SHOWN_ITEMS])
        more = f", and {len(items) - SHOWN_ITEMS} more" if len(items) > SHOWN_ITEMS else ""
        n = sum(s.count for s in items)
        said.append(f"{report.title} could not {verb} {n:,} {noun}{'' if n == 1 else 's'}: {named}{more}")
    if inconclusive and (apart := report.inconclusive):
        one, many = registry.noun(report.name)
        why = "; ".join(dict.fromkeys(f.inconclusive.words for f in apart if f.inconclusive is not None))
        total = len(report.findings)
        said.append(f"{report.title}: {len(apart)} of {total} {one if total == 1 else many} "
                    f"{'is' if len(apart) == 1 else 'are'} inconclusive ({why})")
    return CannotPass("; ".join(said))


def all_spared(report: AnalyzerReport, comparison: str) -> CannotPass:
    """Why a gate whose metric the analyzer never measured cannot pass when ignore globs spared
    changed code from it: no metric is not a pass ("The gate cannot pass: EditingRTC measured
    nothing for editing_rtc.rtc<0.5: the changed code was all left out by ignore globs: ...")."""
    items = [s for s in report.skipped if s.spared]
    named = ", ".join(f"{s.item} ({s.reason})" for s in items[:SHOWN_ITEMS])
    more = f", and {len(items) - SHOWN_ITEMS} more" if len(items) > SHOWN_ITEMS else ""
    return CannotPass(f"{report.title} measured nothing for {comparison}: the changed code "
                      f"was all left out by ignore globs: {named}{more}")


def _explain(c: Comparison, value: float) -> str:
    if c.threshold:
        return f"{c.name} {value:.2f} is below the threshold {c.value:.2f} ({c})"
    return f"{c} ({c.analyzer}.{c.name} is {value:.2f})"
