"""Run a list of analyzers over one ChangeSet; a failing analyzer becomes a report with an error."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from analyzers import registry
from analyzers.context import AnalysisContext
from analyzers.diff import ChangeSet
from analyzers.llm import LLMError
from analyzers.report import AnalyzerReport, Skipped

log = logging.getLogger(__name__)


def run_one(name: str, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
    analyzer = registry.get(name)
    before = ctx.llm.usage.copy() if ctx.has_llm else None
    try:
        report = analyzer.run(changes, ctx)
    except LLMError as e:
        report = AnalyzerReport(analyzer.name, analyzer.title, error=str(e))
    except Exception as e:  # an analyzer bug must not take the other analyses down
        log.exception("analyzer %s failed", name)
        report = AnalyzerReport(analyzer.name, analyzer.title, error=f"internal error: {type(e).__name__}: {e}")
    if ctx.has_llm and not report.usage:
        spent = ctx.llm.usage.minus(before) if before else ctx.llm.usage
        report.usage = spent.as_dict()
    for f in changes.skipped:
        if not any(s.item == f.path for s in report.skipped):
            report.skipped.append(Skipped(f.path, f.skipped or ""))
    return report


def run_all(names: Sequence[str], changes: ChangeSet, ctx: AnalysisContext) -> list[AnalyzerReport]:
    return [run_one(n, changes, ctx) for n in names]
