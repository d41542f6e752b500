"""Run a list of analyzers over one ChangeSet; a failing analyzer becomes a report with an error.

Analyzers are independent of each other, so `run_all` runs them at once, one thread each
(as many threads as analyzers), and returns their reports in the order of `names`. They
share the run's LLM client (its request slots bound the concurrency, its budget is the
run's); each sees it through `LLMClient.scoped()`, so each report's usage is its own.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

from analyzers import registry
from analyzers.code.diff import CODE_LANGUAGES, ChangeSet, FileChange, language_of
from analyzers.code.place import head_text, place_findings
from analyzers.context import AnalysisContext
from analyzers.llm.answer import cut_note
from analyzers.llm.client import LLMClient, LLMError
from analyzers.llm.local import ALIAS as EMBEDDED_ALIAS
from analyzers.options import OptionsError
from analyzers.report import AnalyzerReport, SkipKind, Skipped

log = logging.getLogger(__name__)
FILE_LOADS = 8  # files at the head of the change loaded at once (each may be an API call)


def run_one(name: str, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
    analyzer = registry.get(name)
    before = ctx.llm.usage.copy() if ctx.has_llm else None
    try:
        report = analyzer.run(changes, ctx)
        report.findings = place_findings(report.findings, head_text(ctx.file_at_head, changes))  # fingerprints
    except (LLMError, OptionsError) as e:  # OptionsError: one line per problem, key paths
        if isinstance(e, LLMError) and e.endpoint:  # the endpoint for the operator's log; the report's line names none
            log.info("analyzer %s: %s", name, e.for_operator())
        report = AnalyzerReport(analyzer.name, analyzer.title, error=str(e))
    except Exception as e:  # an analyzer bug must not take the other analyses down
        log.exception("analyzer %s failed", name)
        report = AnalyzerReport(analyzer.name, analyzer.title, error=f"internal error: {type(e).__name__}: {e}")
    if ctx.has_llm and not report.usage:
        spent = ctx.llm.usage.minus(before) if before else ctx.llm.usage
        report.usage = spent.as_dict()
    # samples, never requests: a note that a cache hit would leave out tells whether it hit
    if ctx.has_llm and ctx.llm.settings.model == EMBEDDED_ALIAS and report.usage.get("samples", 0):
        report.embedded = True
    if report.usage.get("cut", 0):
        report.notes.append(cut_note(report.usage["cut"]))
    scans, languages = analyzer.scans_every_path, analyzer.languages
    read = {f.path for f in changes.scannable if languages is None or f.language in languages} if scans else set()
    for f in changes.skipped:
        if f.path not in read and not any(s.item == f.path for s in report.skipped):
            spared = f.spared_by is not None and not scans and f.language in CODE_LANGUAGES
            kind = kind_for(f, languages, scans)
            report.skipped.append(Skipped(f.path, f.skipped or "", kind, f.path, spared=spared))
    return report


def kind_for(f: FileChange, languages: Collection[str] | None, scans_every_path: bool) -> SkipKind:
    """A skipped file's kind for one analyzer: "failed" where the file could not be read and
    is in a language the analyzer is made for (its `languages`, when it declares them), unless
    an ignore glob spares it from an analyzer that asks a model, or the config names its path."""
    made_for = languages is None or (f.language or language_of(f.path)) in languages
    excused = f.spared_by_name or (f.spared_by is not None and not scans_every_path)
    return "failed" if f.skip_kind == "failed" and made_for and not excused else "policy"


def scoped_context(ctx: AnalysisContext) -> AnalysisContext:
    """The same inputs, with the run's LLM client seen through a view of its own (created on
    first use, so a run whose analyzers need no LLM never starts one)."""

    def view() -> LLMClient:
        return ctx.llm.scoped()

    has_llm = ctx.llm_factory is not None or ctx.has_llm
    return dataclasses.replace(ctx, llm_factory=view if has_llm else None, _llm=None, _lock=threading.Lock())


def run_all(names: Sequence[str], changes: ChangeSet, ctx: AnalysisContext,
            on_done: Callable[[AnalyzerReport], None] | None = None) -> list[AnalyzerReport]:
    """Every analyzer in `names`, concurrently; the reports in the order of `names`.
    `on_done(report)` is called as each ends (e.g. to show progress)."""

    def one(name: str, c: AnalysisContext) -> AnalyzerReport:
        report = run_one(name, changes, c)
        if on_done is not None:
            on_done(report)
        return report

    if len(names) <= 1:
        return [one(n, ctx) for n in names]
    with ThreadPoolExecutor(max_workers=len(names), thread_name_prefix="analyzer") as ex:
        futures = [ex.submit(one, n, scoped_context(ctx)) for n in names]
        return [f.result() for f in futures]


def files_at_head(ctx: AnalysisContext, paths: Iterable[str]) -> dict[str, str | None]:
    """Each path's text at the head of the change (None where it is not available), loaded
    concurrently, at most FILE_LOADS at once; in the order of `paths`."""
    todo = list(dict.fromkeys(paths))
    if len(todo) <= 1:
        return {p: ctx.file_at_head(p) for p in todo}
    with ThreadPoolExecutor(max_workers=min(len(todo), FILE_LOADS), thread_name_prefix="file-load") as ex:
        return dict(zip(todo, ex.map(ctx.file_at_head, todo), strict=True))
