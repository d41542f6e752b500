"""`rtcbot eval autofix FILES_OR_DIRS`: scan, fix, verify, and print the Patched RTC table.

Every Semgrep finding in the given files is fixed by the model and judged twice: by a
Semgrep re-scan (the oracle) and by Patched RTC. The table is the paper's: findings, Fix %,
RTC pass %, Fix % among RTC-pass fixes, Fix % among RTC-fail fixes; plus the counts of
"not vulnerable" and "no fix" answers, a file-level Fix % with all fixes applied together
((findings before − findings after) / findings before), requests and tokens.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from analyzers.autofix.analyzer import Options, apply_all, fix_all, rtc_split, table
from analyzers.autofix.oracle import FixOutcome, FixTarget
from analyzers.code.diff import language_of
from analyzers.context import Tools
from analyzers.llm.client import LLMClient, LLMError, LLMSettings
from analyzers.semgrep.scan import ScanResult, SemgrepFailed, SemgrepFinding, SemgrepUnavailable, scan
from bot.cli.commands._common import figure_table, plot_option, save_plot
from bot.cli.llm_options import llm_options, pop_llm_settings
from bot.cli.progress import live
from bot.core.llm import llm_factory
from bot.core.settings import load_tools
from reporters.eval_plots import autofix_chart

LANGS = {"python", "javascript", "typescript", "java"}


def collect(paths: tuple[Path, ...]) -> dict[str, Path]:
    """name (unique, relative) → file, for every Python / JavaScript / Java file given."""
    out: dict[str, Path] = {}
    for p in paths:
        found = [p] if p.is_file() else sorted(q for q in p.rglob("*") if q.is_file())
        for f in found:
            if language_of(f.name) not in LANGS:
                continue
            name = f.name if p.is_file() else f"{p.resolve().name}/{f.relative_to(p).as_posix()}"
            while name in out:
                name = f"_{name}"
            out[name] = f
    return out


def _row_label(key: str) -> str:
    return {
        "findings": "findings", "fix_pct": "Fix %", "rtc_pass_pct": "RTC pass %",
        "fix_pct_rtc_pass": "Fix % (RTC pass)", "fix_pct_rtc_fail": "Fix % (RTC fail)",
        "not_vulnerable": "not vulnerable", "no_fix": "no fix possible", "no_code": "no code in answer",
        "unparsable": "unparsable fixes", "fixes_proposed": "fixes proposed", "fixed": "fixed",
        "file_fix_pct": "Fix % (all fixes applied per file)", "programs": "programs",
        "programs_with_findings": "programs with findings",
    }.get(key, key)


def fix_groups(outcomes: list[FixOutcome], opts: Options) -> list[tuple[str, int, int, tuple[float, float] | None]]:
    """(label, fixed, of, 95 % Wilson interval) for all findings and, with Patched RTC, for the
    fixes that passed it and those that failed it: the table's Fix % rows as counts."""
    from analyzers.intervals import wilson

    def group(label: str, among: list[FixOutcome]) -> tuple[str, int, int, tuple[float, float] | None]:
        k = sum(o.fixed for o in among)
        return label, k, len(among), wilson(k, len(among))

    out = [group("all findings", outcomes)]
    if opts.rtc:
        passed, failed = rtc_split(outcomes, opts)
        out += [group("RTC pass", passed), group("RTC fail", failed)]
    return out


def scan_texts(texts: dict[str, str], tools: Tools) -> ScanResult:
    """Semgrep's findings in `texts` (name → text), written to a private temporary folder."""
    with tempfile.TemporaryDirectory(prefix="rtcbot-eval-autofix-") as tmp:
        root = Path(tmp)
        for name, text in texts.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
        return scan(root, list(texts), extra_rules=tools.extra_rules, semgrep=tools.semgrep,
                    engine=tools.semgrep_engine)


def chosen(findings: list[SemgrepFinding], max_findings: int | None, per_file: int | None) -> list[SemgrepFinding]:
    """The findings to fix: the first `per_file` of each file, then the first `max_findings`."""
    if per_file:
        kept, seen = [], Counter[str]()
        for f in findings:
            seen[f.path] += 1
            if seen[f.path] <= per_file:
                kept.append(f)
        findings = kept
    return findings[:max_findings] if max_findings else findings


@dataclass
class Run:
    """One evaluation: the scan before, each finding's outcome, the files with every fix
    applied and their scan after, and the model that fixed them."""

    before: ScanResult
    outcomes: list[FixOutcome]
    patched: dict[str, str]
    after: ScanResult
    llm: LLMClient


def fix_and_rescan(texts: dict[str, str], settings: LLMSettings, opts: Options, tools: Tools,
                   findings: Callable[[list[SemgrepFinding]], list[SemgrepFinding]]) -> Run:
    """Scan, fix the `findings` chosen of the scan's, apply every fix and scan again."""
    before = scan_texts(texts, tools)
    targets = [FixTarget(f, language_of(f.path) or "", texts[f.path]) for f in findings(before.findings)]
    llm = llm_factory(settings)()
    with live(lambda: llm.usage) as display:
        advance = display.step("fixing findings", total=len(targets))
        outcomes = fix_all(targets, llm, opts, progress=lambda: advance(1), tools=tools)
    patched = apply_all(outcomes)
    return Run(before, outcomes, patched, scan_texts(patched, tools), llm)


def figures(programs: int, run: Run, opts: Options) -> dict[str, float]:
    """The paper's table, with the programs scanned and the file-level Fix %."""
    out: dict[str, float] = {"programs": float(programs),
                             "programs_with_findings": float(len({f.path for f in run.before.findings}))}
    out.update(table(run.outcomes, opts))
    n_before = sum(1 for f in run.before.findings if f.path in run.patched)
    out["file_fix_pct"] = round(100.0 * (n_before - len(run.after.findings)) / n_before, 1) if n_before else 0.0
    return out


def as_json_text(run: Run, figs: dict[str, float], opts: Options) -> str:
    return json.dumps({
        "figures": figs, "usage": run.llm.usage.as_dict(), "model": run.llm.model,
        "findings": [{
            "path": o.target.path, "line": o.target.finding.start_line, "rule": o.target.finding.rule_id,
            "answer": o.answer.kind, "oracle": o.verdict,
            "rtc": None if opts.rtc_pass(o) is None else bool(opts.rtc_pass(o)),
            "description": o.description, "diff": o.diff,
        } for o in run.outcomes],
    }, indent=2)


def table_rows(figs: dict[str, float], usage: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [(_row_label(key), f"{figs[key]:.1f}" if "pct" in key else str(int(figs[key])))
            for key in ("programs", "programs_with_findings", "findings", "fix_pct", "rtc_pass_pct",
                        "fix_pct_rtc_pass", "fix_pct_rtc_fail", "fixes_proposed", "not_vulnerable", "no_fix",
                        "no_code", "unparsable", "file_fix_pct")]
    return rows + [("LLM requests", str(usage["requests"])), ("LLM tokens", str(usage["tokens"])),
                   ("cache hits", str(usage["cache_hits"]))]


@click.command("autofix")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--rules", "extra_rules", multiple=True, type=click.Path(exists=True),
              help="Extra local Semgrep rule file or folder (repeatable).")
@click.option("--max-findings", type=click.IntRange(min=1), default=None,
              help="Fix at most this many findings (in file order).")
@click.option("--per-file", type=click.IntRange(min=1), default=None,
              help="Fix at most this many findings per file (the first ones).")
@click.option("--no-rtc", is_flag=True, help="Skip Patched RTC (oracle only).")
@click.option("--rtc-match", type=click.Choice(["exact", "normalised"]), default="exact",
              show_default=True, help="When a regenerated fix counts as the same.")
@plot_option
@llm_options
def command(paths: tuple[Path, ...], as_json: bool, extra_rules: tuple[str, ...],
            max_findings: int | None, per_file: int | None, no_rtc: bool, rtc_match: str,
            plot: Path | None, **kw: Any) -> None:
    """Fix every Semgrep finding in FILES_OR_DIRS and print the Patched RTC table."""
    settings = pop_llm_settings(kw)
    files = collect(paths)
    if not files:
        raise click.ClickException("no Python, JavaScript or Java files in the given paths")
    opts = Options(rtc=not no_rtc, rtc_match=rtc_match)  # type: ignore[arg-type]
    tools = load_tools(semgrep_rules=list(extra_rules))  # the operator's tools, --rules as the rule files
    texts = {name: f.read_text(encoding="utf-8", errors="replace") for name, f in files.items()}
    try:
        run = fix_and_rescan(texts, settings, opts, tools, lambda found: chosen(found, max_findings, per_file))
    except (SemgrepUnavailable, SemgrepFailed, LLMError) as e:
        raise click.ClickException(str(e)) from None
    figs = figures(len(files), run, opts)
    model = run.llm.model
    save_plot(plot, lambda: autofix_chart(fix_groups(run.outcomes, opts), f"AutoFix + Patched RTC with {model}"
                                          if opts.rtc else f"AutoFix with {model}, Patched RTC not run"))
    if as_json:
        click.echo(as_json_text(run, figs, opts))
        return
    rows = table_rows(figs, run.llm.usage.as_dict())
    Console(width=100).print(figure_table(f"AutoFix + Patched RTC ({model})", rows))
