"""AutoFix's oracle: a proposed fix is verified only by checks that do not trust the model.

One Semgrep run (suppressions off: analyzers/semgrep/scan.py) over the original files and
every patched variant sets each verdict: *fixed* only when no finding of any rule remains on
the fixed lines and no new finding appears anywhere in the file; a patch that no longer
parses is *unparsable*, and one Semgrep could not fully scan (over its size limit, a timeout)
is *not fixed*, with the reason. A fix the re-scan finds clean then meets the checks of
analyzers/autofix/checks.py (no suppression added, the file parses, no name undefined, the
tests where they are configured) and the allowlist of what a fix may add
(analyzers/autofix/allowlist.py); the first that fails says why, in words in
`FixOutcome.refused` and as a type in `FixOutcome.reason` (a `Reason`; the allowlist's
constructs in `FixOutcome.added`).
"""

from __future__ import annotations

import enum
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from analyzers.autofix import allowlist
from analyzers.autofix.checks import Checks, names, parse_failures, region_of, suppression, test_suite, tests
from analyzers.autofix.constructs import Construct
from analyzers.autofix.text import FixAnswer, line_span, python_parses
from analyzers.code.paths import write_inside
from analyzers.context import Tools
from analyzers.semgrep.scan import ScanResult, SemgrepFinding, scan

Verdict = Literal["fixed", "not fixed", "unparsable", "not applicable"]


class Reason(enum.Enum):
    """Why a proposed fix is not verified: the check that refused it."""

    NOT_CHECKED = "not checked"  # its file could not be written for the scan
    NOT_SCANNED = "not scanned"  # Semgrep did not fully scan it (size limit, timeout)
    UNPARSABLE = "unparsable"  # the fixed file does not parse where the original did
    STILL_FLAGGED = "still flagged"  # the rule (or another) still flags the fixed lines
    NEW_FINDING = "new finding"  # any bundled rule finds something new elsewhere in the file
    SUPPRESSION = "suppression added"
    ADDS_UNLISTED = "adds what is not on the list"  # analyzers/autofix/allowlist.py; `FixOutcome.added`
    NAMES = "names"  # pyflakes: a name undefined, a definition removed
    TESTS = "tests"  # the tests fail, or could not run


# --------------------------------------------------------------------------- one attempt
@dataclass
class FixTarget:
    """One finding to fix, with the file it is in (the text at the head of the change)."""

    finding: SemgrepFinding
    language: str
    text: str

    @property
    def path(self) -> str:
        return self.finding.path

    @property
    def snippet(self) -> str:
        return line_span(self.text, self.finding.start_line, self.finding.end_line)


@dataclass
class FixOutcome:
    target: FixTarget
    answer: FixAnswer
    raw_answer: str = ""
    replacement: str | None = None
    patched: str | None = None
    diff: str = ""
    verdict: Verdict = "not applicable"
    remaining: list[str] = field(default_factory=list)
    new_findings: list[str] = field(default_factory=list)
    description: str = ""
    regenerated: str = ""
    rtc_exact: bool | None = None
    rtc_normalised: bool | None = None
    error: str | None = None
    refused: str = ""  # the check that refused the fix, in words (analyzers/autofix/checks.py)
    reason: Reason | None = None  # the same, as a type
    added: list[Construct] = field(default_factory=list)  # what the allowlist refused

    def not_verified(self, verdict: Verdict, reason: Reason, words: str = "") -> None:
        self.verdict, self.reason, self.refused = verdict, reason, words

    @property
    def fixed(self) -> bool:
        return self.verdict == "fixed"

    @property
    def has_fix(self) -> bool:
        return self.replacement is not None


# --------------------------------------------------------------------------- oracle
def _key(f: SemgrepFinding) -> str:
    return f"{f.rule_id}@{f.start_line}"


def verify_fix(out: FixOutcome, before: ScanResult, before_path: str, after: ScanResult, after_path: str,
          original_parses: bool | None) -> None:
    """Set out.verdict from the scans of the original and the patched file."""
    t, f = out.target, out.target.finding
    assert out.replacement is not None and out.patched is not None
    if t.language == "python" and original_parses:
        parsable = python_parses(out.patched)
    else:
        parsable = not (after_path in after.unparsable and before_path not in before.unparsable)
    if not parsable:
        out.not_verified("unparsable", Reason.UNPARSABLE, "the fixed file does not parse")
        return
    s, e = f.start_line, f.end_line
    k = len(out.replacement.splitlines())
    delta = k - (e - s + 1)
    region = set(range(s, s + max(k, 1)))
    old = before.in_path(before_path)
    new = after.in_path(after_path)
    in_region_after = [g for g in new if g.touches(region)]
    out.remaining = [_key(g) for g in in_region_after if g.rule_id == f.rule_id]
    # the full rule set must be quiet on the fixed lines: a finding of any other rule there
    # (even one the original lines had too) means the fix is not clean
    in_region_other = [g.rule_id for g in in_region_after if g.rule_id != f.rule_id]
    new_keys = list(in_region_other)
    expected = Counter(
        f"{g.rule_id}@{g.start_line if g.end_line < s else g.start_line + delta}"
        for g in old if g.end_line < s or g.start_line > e
    )
    outside = Counter(_key(g) for g in new if not g.touches(region))
    new_keys += [k2 for k2, c in (outside - expected).items() for _ in range(c)]
    out.new_findings = new_keys
    out.verdict = "fixed" if not out.remaining and not new_keys else "not fixed"
    if not out.fixed:
        out.reason = Reason.STILL_FLAGGED if out.remaining or in_region_other else Reason.NEW_FINDING


def oracle(outcomes: Sequence[FixOutcome], opts: object = None, tools: Tools | None = None,
           checks: Checks | None = None) -> ScanResult | None:
    """One Semgrep run over the originals and every patched variant, then the checks that
    follow it (`refuse`); sets each verdict. `tools`: the operator's Semgrep and extra rule
    files; `checks`: the test command and checkout, where the surface has them."""
    tools = tools or Tools()
    todo = [o for o in outcomes if o.patched is not None]
    if not todo:
        return None
    with tempfile.TemporaryDirectory(prefix="rtcbot-oracle-") as tmp:
        root = Path(tmp)
        targets: list[str] = []
        originals: dict[str, str] = {}
        variants: dict[int, str] = {}
        for i, o in enumerate(todo):
            try:  # one file that cannot be written is that fix's problem, not the run's
                if o.target.path not in originals:
                    write_inside(root, f"orig/{o.target.path}", o.target.text)
                    originals[o.target.path] = f"orig/{o.target.path}"
                    targets.append(originals[o.target.path])
                write_inside(root, f"v{i}/{o.target.path}", o.patched or "")
                variants[i] = f"v{i}/{o.target.path}"
                targets.append(variants[i])
            except (ValueError, OSError) as e:
                o.verdict, o.reason, o.error = "not fixed", Reason.NOT_CHECKED, f"the fix could not be checked: {e}"
        result = (scan(root, targets, extra_rules=tools.extra_rules, semgrep=tools.semgrep, engine=tools.semgrep_engine,
                       max_target_bytes=tools.semgrep_max_target_bytes) if targets else ScanResult())
    # the original's own findings, re-keyed to the original path, are the baseline
    for i, o in enumerate(todo):
        var = variants.get(i)
        if var is None:
            continue
        orig = originals[o.target.path]
        unscanned = next((f"{why} ({p.split('/', 1)[0]})" for p in (var, orig)
                          for why in (result.skipped.get(p), result.failed.get(p)) if why), None)
        if unscanned is not None:  # a fix Semgrep did not fully scan is never "fixed"
            o.verdict, o.reason = "not fixed", Reason.NOT_SCANNED
            o.error = f"semgrep could not check the fix: {unscanned}"
            continue
        before = _rebase(result, orig, o.target.path)
        after = _rebase(result, var, o.target.path)
        parses = python_parses(o.target.text) if o.target.language == "python" else None
        verify_fix(o, before, o.target.path, after, o.target.path, parses)
    refuse(todo, checks or Checks(tools))
    return result


def refuse(outcomes: Sequence[FixOutcome], checks: Checks) -> None:
    """The checks after the re-scan: suppression, parse, the allowlist of what a fix may add,
    names, tests; the first that fails refuses the fix and says why. A suppression comment
    added is said even where the re-scan already refused."""
    for o in outcomes:
        if o.replacement is not None and (why := suppression(o.target.language, o.target.snippet, o.replacement)):
            o.not_verified("not fixed", Reason.SUPPRESSION, why)
    fixed = [o for o in outcomes if o.fixed and o.patched is not None]
    parse = parse_failures([(o.target.language, o.target.path, o.target.text, o.patched or "") for o in fixed])
    for i, why in parse.items():
        fixed[i].not_verified("unparsable", Reason.UNPARSABLE, why)
    for o in fixed:
        if o.fixed and o.replacement is not None and (added := _unlisted(o, o.replacement)):
            o.not_verified("not fixed", Reason.ADDS_UNLISTED, allowlist.refusal(added))
            o.added = added
    for o in fixed:
        if o.fixed and o.target.language == "python" and o.replacement is not None:
            region = region_of(o.target.finding.start_line, o.replacement)
            if why := names(o.target.text, o.patched or "", region):
                o.not_verified("not fixed", Reason.NAMES, why)
    suite = test_suite(checks) if any(o.fixed for o in fixed) else None
    for o in fixed:
        if o.fixed and suite is not None:
            why = suite if isinstance(suite, str) else tests(suite, o.target.path, o.patched or "")
            if why:
                o.not_verified("not fixed", Reason.TESTS, why)


def _unlisted(o: FixOutcome, replacement: str) -> list[Construct]:
    """What the fix adds beyond the allowlist (analyzers/autofix/allowlist.py)."""
    f = o.target.finding  # a fix that only deletes occupies no line of the fixed file
    region = region_of(f.start_line, replacement) if replacement.strip() else range(f.start_line, f.start_line)
    return allowlist.unlisted(o.target.language, f.rule_id, o.target.text, o.patched or "",
                              range(f.start_line, f.end_line + 1), region)


def _rebase(result: ScanResult, prefix_path: str, path: str) -> ScanResult:
    return ScanResult(
        findings=[replace(f, path=path) for f in result.findings if f.path == prefix_path],
        unparsable={path} if prefix_path in result.unparsable else set(),
    )

