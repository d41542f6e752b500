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
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from analyzers.autofix import Options, Outcome, Target, apply_all, fix_all, rtc_split, table
from analyzers.context import Tools
from analyzers.diff import language_of
from analyzers.llm import LLMError
from analyzers.semgrep.scan import SemgrepFailed, SemgrepUnavailable, scan
from bot.cli.commands._common import plot_option
from bot.cli.progress import live
from bot.core.llm import llm_factory, llm_options, pop_llm_settings

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


def fix_groups(outcomes: list[Outcome], opts: Options) -> list[tuple[str, int, int, tuple[float, float] | None]]:
    """(label, fixed, of, 95 % Wilson interval) for all findings and, with Patched RTC, for the
    fixes that passed it and those that failed it: the table's Fix % rows as counts."""
    from analyzers.intervals import wilson

    def group(label: str, among: list[Outcome]) -> tuple[str, int, int, tuple[float, float] | None]:
        k = sum(o.fixed for o in among)
        return label, k, len(among), wilson(k, len(among))

    out = [group("all findings", outcomes)]
    if opts.rtc:
        passed, failed = rtc_split(outcomes, opts)
        out += [group("RTC pass", passed), group("RTC fail", failed)]
    return out


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
    tools = Tools(extra_rules=tuple(extra_rules))  # the person at the terminal is the operator
    texts = {name: f.read_text(encoding="utf-8", errors="replace") for name, f in files.items()}
    try:
        with tempfile.TemporaryDirectory(prefix="rtcbot-eval-autofix-") as tmp:
            root = Path(tmp)
            for name, text in texts.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text, encoding="utf-8")
            before = scan(root, list(texts), extra_rules=tools.extra_rules)
        findings = before.findings
        if per_file:
            kept, seen = [], Counter[str]()
            for f in findings:
                seen[f.path] += 1
                if seen[f.path] <= per_file:
                    kept.append(f)
            findings = kept
        findings = findings[:max_findings] if max_findings else findings
        targets = [Target(f, language_of(f.path) or "", texts[f.path]) for f in findings]
        llm = llm_factory(settings)()
        with live(lambda: llm.usage) as display:
            advance = display.step("fixing findings", total=len(targets))
            outcomes = fix_all(targets, llm, opts, progress=lambda: advance(1), tools=tools)
        patched = apply_all(outcomes)
        with tempfile.TemporaryDirectory(prefix="rtcbot-eval-autofix-") as tmp:
            root = Path(tmp)
            for name, text in patched.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text, encoding="utf-8")
            after = scan(root, list(patched), extra_rules=tools.extra_rules)
    except (SemgrepUnavailable, SemgrepFailed, LLMError) as e:
        raise click.ClickException(str(e)) from None
    figures: dict[str, float] = {"programs": float(len(files)),
                                 "programs_with_findings": float(len({f.path for f in before.findings}))}
    figures.update(table(outcomes, opts))
    n_before = sum(1 for f in before.findings if f.path in patched)
    figures["file_fix_pct"] = round(100.0 * (n_before - len(after.findings)) / n_before, 1) if n_before else 0.0
    usage = llm.usage.as_dict()
    if plot is not None:
        from reporters.eval_plots import autofix_chart
        from reporters.plots import save

        save(autofix_chart(fix_groups(outcomes, opts), f"AutoFix + Patched RTC with {llm.model}" if opts.rtc
                           else f"AutoFix with {llm.model}, Patched RTC not run"), plot)
    if as_json:
        click.echo(json.dumps({
            "figures": figures, "usage": usage, "model": llm.model,
            "findings": [{
                "path": o.target.path, "line": o.target.finding.start_line, "rule": o.target.finding.rule_id,
                "answer": o.answer.kind, "oracle": o.verdict,
                "rtc": None if opts.rtc_pass(o) is None else bool(opts.rtc_pass(o)),
                "description": o.description, "diff": o.diff,
            } for o in outcomes],
        }, indent=2))
        return
    out = Console(width=100)
    t = Table(title=f"AutoFix + Patched RTC ({llm.model})")
    t.add_column("figure")
    t.add_column("value", justify="right")
    for key in ("programs", "programs_with_findings", "findings", "fix_pct", "rtc_pass_pct",
                "fix_pct_rtc_pass", "fix_pct_rtc_fail", "fixes_proposed", "not_vulnerable", "no_fix",
                "no_code", "unparsable", "file_fix_pct"):
        v = figures[key]
        t.add_row(_row_label(key), f"{v:.1f}" if "pct" in key else str(int(v)))
    t.add_row("LLM requests", str(usage["requests"]))
    t.add_row("LLM tokens", str(usage["tokens"]))
    t.add_row("cache hits", str(usage["cache_hits"]))
    out.print(t)
