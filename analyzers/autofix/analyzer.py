"""AutoFix: fix Semgrep findings with the LLM; verify with a Semgrep re-scan and Patched RTC.

Per finding: a fix prompt (the rule's message, the flagged lines, the enclosing function or
a window around them) → replacement lines, or "not vulnerable" / "no fix". The replacement
is re-indented to the flagged lines and applied. Two independent checks follow:

- oracle (analyzers/autofix/oracle.py): Semgrep re-scans the patched file with the full rule
  set and suppressions off; *fixed* only when no finding of any rule remains on the fixed
  lines and no new finding appears anywhere in the file, and then only if the fix adds no
  suppression comment, the file still parses, it adds only what its rule's allowlist allows
  (analyzers/autofix/allowlist.py), pyflakes finds no name it left undefined (Python) and,
  where a test command is configured, the tests pass (analyzers/autofix/checks.py); the check
  that refuses a fix says why (in words, and as a `Reason`);
- Patched RTC: (before, after) → a description Q1 → regenerate after′ from (before, Q1);
  pass when after′ equals the fix (exact after stripping; whitespace-normalised reported too).

Suppressions count from the base branch: the scan reports what a `# nosemgrep` would hide,
and only the base's markers on code the pull request did not change are honoured; one the pull
request adds is said in a note (analyzers/code/suppressions.py).

Every Semgrep run is batched: one scan for the changed files, one for all patched variants.
That re-scan needs only the fixes, so it runs while the Patched RTC requests are out.
The prompts, the reading of answers and the editing are analyzers/autofix/text.py.
"""

from __future__ import annotations

import hashlib
import tempfile
import textwrap
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from analyzers.autofix import view as autofix_view
from analyzers.autofix.checks import Checks
from analyzers.autofix.oracle import (  # noqa: F401  (verify_fix, Verdict: part of this module's API)
    FixOutcome,
    FixTarget,
    Verdict,
    oracle,
    verify_fix,
)
from analyzers.autofix.scope import SCANNED_LANGUAGES as SCANNED_LANGUAGES
from analyzers.autofix.scope import excuse_named, in_scope, texts_at_head
from analyzers.autofix.text import (
    Edit,
    FixAnswer,
    apply_edits,
    code_block,
    context_of,
    describe_messages,
    fix_messages,
    parse_fix_answer,
    regenerate_messages,
    reindent,
    unified_diff,
)
from analyzers.code import suppressions
from analyzers.code.diff import CODE_LANGUAGES, ChangeSet, FileChange
from analyzers.code.paths import write_inside
from analyzers.context import AnalysisContext, Tools
from analyzers.info import AnalyzerInfo
from analyzers.llm import answer as llm_answer
from analyzers.llm.client import LLMClient, LLMError
from analyzers.options import AnalyzerOptions, validate
from analyzers.report import AnalyzerReport, Finding, Fix, Skipped
from analyzers.rtc import similarity
from analyzers.semgrep.scan import (
    ScanResult,
    SemgrepFailed,
    SemgrepFinding,
    SemgrepUnavailable,
    scan,
)


class Options(AnalyzerOptions):
    """`options: {autofix: ...}`. The Semgrep executable and rule files are the operator's
    (`ctx.tools`), never a repository's."""

    OPERATOR_KEYS: ClassVar[Mapping[str, str]] = {
        "semgrep": "the Semgrep executable is an operator setting (RTCBOT_SEMGREP; "
                   "`rtcbot review --semgrep`)",
        "extra_rules": "Semgrep rule files are an operator setting (RTCBOT_SEMGREP_RULES; "
                       "`rtcbot review --rules`)",
    }

    context_lines: int = Field(default=10, ge=0, le=50)
    rtc: bool = True
    rtc_match: Literal["exact", "normalised"] = "exact"
    fix_tokens: int = Field(default=768, ge=1, le=2048)
    describe_tokens: int = Field(default=256, ge=1, le=1024)
    max_findings: int = Field(default=10, ge=1, le=50)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Options:
        """Validated options (OptionsError on an unknown key, a wrong type, a value out of
        bounds, or an operator's key)."""
        return validate(cls, raw, "autofix")

    def rtc_pass(self, out: FixOutcome) -> bool | None:
        return out.rtc_exact if self.rtc_match == "exact" else out.rtc_normalised


def propose(target: FixTarget, llm: LLMClient, opts: Options) -> FixOutcome:
    """Fix prompt → replacement → patched file (one request)."""
    f = target.finding
    ctx_start, context = context_of(target.text, target.language, f.start_line, f.end_line,
                                    opts.context_lines)
    view = llm.scoped()  # this answer's usage: whether it was cut, or stopped at its token limit
    raw = view.sample(fix_messages(f, target.language, target.snippet, context, ctx_start),
                      temperature=0.0, max_tokens=opts.fix_tokens)[0]
    if why := llm_answer.unfinished(view.usage.cut, view.usage.at_limit, opts.fix_tokens):  # not the whole code
        why += ": part of a fix is no fix"  # (an unclosed fence would be read as if it were)
        return FixOutcome(target, FixAnswer("no_code", reason=why), raw_answer=raw, verdict="not fixed", error=why)
    answer = parse_fix_answer(raw)
    out = FixOutcome(target, answer, raw_answer=raw)
    if answer.kind != "code":
        return out
    out.replacement = reindent(answer.code, target.snippet)
    out.patched, _ = apply_edits(target.text, [Edit(f.start_line, f.end_line, out.replacement)])
    out.diff = unified_diff(target.path, target.text, out.patched)
    return out


def patched_rtc(out: FixOutcome, llm: LLMClient, opts: Options) -> None:
    """Patched RTC of a proposed fix (two sequential requests); nothing without a fix."""
    if not opts.rtc or out.replacement is None:
        return
    target = out.target
    before, after = textwrap.dedent(target.snippet), textwrap.dedent(out.replacement)
    out.description = llm.sample(describe_messages(before, after, target.language),
                                 temperature=0.0, max_tokens=opts.describe_tokens)[0].strip()
    regen_raw = llm.sample(regenerate_messages(before, out.description, target.language),
                           temperature=0.0, max_tokens=opts.fix_tokens)[0]
    block = code_block(regen_raw)
    out.regenerated = textwrap.dedent(block if block is not None else regen_raw)
    out.rtc_exact = similarity.exact(after, out.regenerated) == 1.0
    out.rtc_normalised = similarity.normalised(after, out.regenerated) == 1.0


def fix_all(targets: Sequence[FixTarget], llm: LLMClient, opts: Options,
            progress: Callable[[], None] | None = None, tools: Tools | None = None,
            checks: Checks | None = None) -> list[FixOutcome]:
    """Attempts run concurrently (llm.map), each its fix then its Patched RTC; one oracle
    scan for all of them (and the checks after it) starts as soon as every fix is in, while
    the RTC requests are out. `checks`: the tests to run on a fixed tree, where there are."""
    proposed: list[Future[FixOutcome]] = [Future() for _ in targets]

    def one(i: int) -> FixOutcome:
        try:
            out = propose(targets[i], llm, opts)
        except BaseException as e:
            proposed[i].set_exception(e)
            raise
        proposed[i].set_result(out)
        patched_rtc(out, llm, opts)
        if progress is not None:
            progress()
        return out

    def scan_fixes() -> None:
        oracle([f.result() for f in proposed], opts, tools, checks)

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="autofix-oracle") as ex:
        scanned = ex.submit(scan_fixes)
        try:
            outcomes = llm.map(one, range(len(targets)))
        finally:  # an attempt that failed (or never ran) must not leave the scan waiting
            for f in proposed:
                if not f.done():
                    f.set_exception(RuntimeError("the fix attempt did not run"))
        scanned.result()
    return outcomes


def apply_all(outcomes: Sequence[FixOutcome]) -> dict[str, str]:
    """Every proposed fix of each file that parses applied together, bottom up: path → text."""
    edits: dict[str, list[Edit]] = {}
    texts: dict[str, str] = {}
    for o in outcomes:
        texts[o.target.path] = o.target.text
        if o.replacement is not None and o.verdict != "unparsable":
            f = o.target.finding
            edits.setdefault(o.target.path, []).append(Edit(f.start_line, f.end_line, o.replacement))
    return {p: apply_edits(t, edits.get(p, []))[0] for p, t in texts.items()}


# --------------------------------------------------------------------------- figures
def rtc_split(outcomes: Sequence[FixOutcome], opts: Options) -> tuple[list[FixOutcome], list[FixOutcome]]:
    """The proposed fixes Patched RTC passed, and those it failed (fixes it did not judge in neither)."""
    judged = [(o, ok) for o in outcomes if o.has_fix and (ok := opts.rtc_pass(o)) is not None]
    return [o for o, ok in judged if ok], [o for o, ok in judged if not ok]


def table(outcomes: Sequence[FixOutcome], opts: Options) -> dict[str, float]:
    """The paper's table: findings, Fix %, RTC pass %, Fix % among RTC pass / RTC fail."""
    n = len(outcomes)
    fixes = [o for o in outcomes if o.has_fix]
    passed, failed = rtc_split(outcomes, opts)

    def pct(part: int, whole: int) -> float:
        return round(100.0 * part / whole, 1) if whole else 0.0

    return {
        "findings": float(n),
        "fixes_proposed": float(len(fixes)),
        "fixed": float(sum(o.fixed for o in outcomes)),
        "fix_pct": pct(sum(o.fixed for o in outcomes), n),
        "rtc_pass_pct": pct(len(passed), len(passed) + len(failed)),
        "fix_pct_rtc_pass": pct(sum(o.fixed for o in passed), len(passed)),
        "fix_pct_rtc_fail": pct(sum(o.fixed for o in failed), len(failed)),
        "not_vulnerable": float(sum(o.answer.kind == "not_vulnerable" for o in outcomes)),
        "no_fix": float(sum(o.answer.kind == "no_fix" for o in outcomes)),
        "no_code": float(sum(o.answer.kind == "no_code" for o in outcomes)),
        "unparsable": float(sum(o.verdict == "unparsable" for o in outcomes)),
    }


def to_finding(o: FixOutcome, opts: Options) -> Finding:
    f, t = o.target.finding, o.target
    rtc = opts.rtc_pass(o)
    scores: dict[str, float] = {}
    if o.has_fix:
        scores["fixed"] = 1.0 if o.fixed else 0.0
        if rtc is not None:
            scores["rtc_pass"] = 1.0 if rtc else 0.0
            scores["rtc_exact"] = 1.0 if o.rtc_exact else 0.0
            scores["rtc_normalised"] = 1.0 if o.rtc_normalised else 0.0
    status = {
        "not_vulnerable": "model says not vulnerable",
        "no_fix": "model says no fix is possible",
        "no_code": "no usable fix in the answer",
        "no_model": "no fix proposed (no model)",
    }.get(o.answer.kind, autofix_view.proposed(o.verdict, rtc, o.refused))
    evidence: dict[str, Any] = {
        "rule": f.rule_id, "cwe": list(f.cwe), "finding": f.message,
        "oracle": o.verdict, "rtc": None if rtc is None else ("pass" if rtc else "fail"),
    }
    if o.error:
        evidence["error"] = o.error
    if o.refused:
        evidence["refused"] = o.refused
    if o.reason is not None:  # the refusal as a type (oracle.Reason); what the allowlist refused
        evidence.update(reason=o.reason.value, added=[{"kind": c.kind.name, "text": c.text} for c in o.added])
    if o.has_fix:
        evidence.update(diff=o.diff, description=o.description, regenerated=o.regenerated,
                        remaining=o.remaining, new_findings=o.new_findings)
    else:
        evidence["answer"] = o.answer.reason or o.raw_answer[:1000]
    key = hashlib.sha256(f"{t.path}\0{f.rule_id}\0{t.snippet}".encode()).hexdigest()[:32]
    return Finding(
        analyzer="autofix", title=f"{f.rule_id}: {status}",
        message=f.message + (f" — {status}." if status else ""),
        path=t.path, start_line=f.start_line, end_line=f.end_line,
        level=f.level,  # type: ignore[arg-type]
        scores=scores, evidence=evidence, rule_id=f.rule_id, key=key,
        cwe=list(f.cwe), tags=["security"] if f.cwe else [], rule_description=f.message,
        fix=Fix(t.path, f.start_line, f.end_line, o.replacement or "", o.diff) if o.fixed else None,
    )


# --------------------------------------------------------------------------- analyzer
class AutoFix(AnalyzerInfo):
    name = "autofix"
    title = "AutoFix"
    help = ("AutoFix: a Semgrep finding on changed lines with a proposed fix, checked by a "
            "re-scan and by Patched RTC.")
    options_type = Options
    languages = SCANNED_LANGUAGES  # a file in another language that could not be read is not ours
    unanalysed_words = ("scan", "changed file")  # what a gate says of a Skipped "failed" (bot/core/gate.py)
    counts = ("Semgrep finding", "Semgrep findings")
    headline = staticmethod(autofix_view.headline)  # its words and its dashboard (analyzers/presentation.py)
    advice = staticmethod(autofix_view.advice)
    dashboard = staticmethod(autofix_view.dashboard)
    in_review, fix_note = staticmethod(autofix_view.in_review), staticmethod(autofix_view.fix_note)
    labels, count_scores = autofix_view.LABELS, autofix_view.COUNTS
    regenerations = staticmethod(autofix_view.regenerations)  # what `explain` diffs
    needs = ("semgrep",)
    scans_every_path = True  # ignore globs spare only the analyzers that ask a model

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        report = self.scan_and_fix(changes, ctx)
        excuse_named(report, changes)
        return report

    def scan_and_fix(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        opts = ctx.config(self.name, Options)
        report = AnalyzerReport(self.name, self.title)
        scannable, read = in_scope(changes, ctx)  # whatever their paths (analyzers/autofix/scope.py)
        files = [f for f in scannable if f.language in SCANNED_LANGUAGES]
        for fc in (f for f in scannable if f.language in CODE_LANGUAGES and f.language not in SCANNED_LANGUAGES):
            report.skipped.append(Skipped(fc.path, "no AutoFix rules for its language", "policy", fc.path))
        if not files:
            report.notes.append("no changed Python, JavaScript or Java files to scan")
            return report
        texts, from_hunks = texts_at_head(files, ctx, report, read)
        try:
            result = _scan_files(texts, {f.path: f.language for f in files}, ctx.tools, report)
        except SemgrepUnavailable as e:
            report.skipped += [Skipped(fc.path, str(e), path=fc.path) for fc in files]
            return report
        except SemgrepFailed as e:
            report.error = str(e)
            return report
        _note_unscanned(result, from_hunks, report)
        by_path = {fc.path: fc for fc in files if fc.path in texts}
        _base_suppressions(result, texts, by_path, report)
        on_changed = _on_changed(result, by_path, opts, report)
        if not on_changed:
            report.notes.append("Semgrep found nothing on the changed lines")
            return report
        targets = [FixTarget(f, by_path[f.path].language or "", texts[f.path]) for f in on_changed]
        try:
            llm = ctx.llm
        except (RuntimeError, LLMError) as e:  # no model (none set, or one refused): Semgrep's findings stand
            report.notes.append(f"no fixes proposed: {e}; the Semgrep findings are listed without a fix")
            report.findings = [to_finding(FixOutcome(t, FixAnswer("no_model")), opts) for t in targets]
            return report
        try:
            checks = Checks(ctx.tools, ctx.repo_path, ctx.test_command)
            outcomes = fix_all(targets, llm, opts, tools=ctx.tools, checks=checks)
        except SemgrepFailed as e:
            report.error = f"oracle scan failed: {e}"
            return report
        report.findings = [to_finding(o, opts) for o in outcomes]
        report.scores.update(table(outcomes, opts))
        return report


def _scan_files(texts: dict[str, str], languages: Mapping[str, str | None], tools: Tools,
                report: AnalyzerReport) -> ScanResult:
    """One Semgrep scan of the files; a file that cannot be written is skipped (and dropped
    from `texts`), never the run."""
    with tempfile.TemporaryDirectory(prefix="rtcbot-scan-") as tmp:
        root = Path(tmp)
        for path, text in list(texts.items()):
            try:
                write_inside(root, path, text)
            except (ValueError, OSError) as e:
                report.skipped.append(Skipped(path, f"cannot be scanned: {e}", path=path))
                del texts[path]
        return scan(root, list(texts), extra_rules=tools.extra_rules, semgrep=tools.semgrep,
                    engine=tools.semgrep_engine, max_target_bytes=tools.semgrep_max_target_bytes,
                    languages=languages)


def _base_suppressions(result: ScanResult, texts: Mapping[str, str], by_path: Mapping[str, FileChange],
                       report: AnalyzerReport) -> None:
    """Semgrep scanned with suppressions off: drop what the base's markers cover, and say each
    marker the pull request added next to a finding (analyzers/code/suppressions.py)."""
    result.findings, added = suppressions.semgrep_split(
        result.findings, texts, {p: fc.hunks for p, fc in by_path.items()},
        {p: fc.language for p, fc in by_path.items()})
    report.notes += suppressions.summary(added)


def _note_unscanned(result: ScanResult, from_hunks: Sequence[str], report: AnalyzerReport) -> None:
    for path in sorted(result.unparsable):  # the file at head: what did not parse was not scanned
        if path in from_hunks:  # hunks pieced together need not parse: a note, no verdict
            report.notes.append(f"semgrep could not fully parse {path}")
        else:
            report.skipped.append(Skipped(path, "Semgrep could not fully parse it (a syntax error)", path=path))
    for path, why in sorted({**result.failed, **result.skipped}.items()):
        report.skipped.append(Skipped(path, why if path in result.oversize
                                      else f"not scanned by semgrep: {why}", path=path))


def _on_changed(result: ScanResult, by_path: Mapping[str, FileChange], opts: Options,
                report: AnalyzerReport) -> list[SemgrepFinding]:
    """The findings on changed lines, at most `max_findings` (the rest skipped, each named)."""
    on_changed = [f for f in result.findings if f.path in by_path and f.touches(by_path[f.path].changed_lines)]
    report.scores["semgrep_findings_total"] = float(len(result.findings))
    if opts.max_findings is not None and len(on_changed) > opts.max_findings:
        for f in on_changed[opts.max_findings:]:
            report.skipped.append(Skipped(f"{f.path}:{f.start_line} {f.rule_id}",
                                          f"over the limit of {opts.max_findings} findings per run"))
        on_changed = on_changed[: opts.max_findings]
    return on_changed
