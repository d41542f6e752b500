"""The analyzers rtcbot knows, by name. A new analyzer is one module and one line here."""

from __future__ import annotations

import importlib
from typing import Protocol

from analyzers.context import AnalysisContext
from analyzers.diff import ChangeSet
from analyzers.report import AnalyzerReport


class Analyzer(Protocol):
    name: str  # machine name, e.g. "editing_rtc"
    title: str  # check-run name after "rtcbot / ", e.g. "EditingRTC"

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport: ...


ANALYZERS: dict[str, str] = {
    "editing_rtc": "analyzers.editing_rtc:EditingRTC",
    "crscore": "analyzers.crscore.analyzer:CRScoreAnalyzer",
    "autofix": "analyzers.autofix:AutoFix",
    "synthesis_rtc": "analyzers.synthesis_rtc:SynthesisRTCAnalyzer",
}
DEFAULT_ANALYZERS: tuple[str, ...] = ("editing_rtc", "crscore", "autofix")


class UnknownAnalyzer(ValueError):
    pass


def normalise(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def parse_names(spec: str) -> list[str]:
    """'editing-rtc,crscore' → ['editing_rtc', 'crscore']; 'all' → every analyzer."""
    names = [normalise(n) for n in spec.split(",") if n.strip()]
    if names == ["all"]:
        return list(ANALYZERS)
    bad = [n for n in names if n not in ANALYZERS]
    if bad:
        known = ", ".join(n.replace("_", "-") for n in ANALYZERS)
        raise UnknownAnalyzer(f"unknown analyzer {bad[0]!r} (known: {known})")
    return names


def get(name: str) -> Analyzer:
    target = ANALYZERS.get(normalise(name))
    if target is None:
        raise UnknownAnalyzer(f"unknown analyzer {name!r}")
    module, attr = target.split(":")
    cls = getattr(importlib.import_module(module), attr)
    return cls()  # type: ignore[no-any-return]
