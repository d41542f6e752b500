"""AnalyzerReport → SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

One SARIF run per analyzer, each its own tool (driver "rtcbot EditingRTC", …) with its own
`automationDetails.id`, so code scanning keeps each analysis in its own category. In each run:

- rules: a finding's `rule_id` (e.g. a Semgrep rule) or else the analyzer's name (its help
  text is the analyzer's own `help`; a rule's CWE and tags come from the finding's typed
  `cwe` / `tags`, never from its display-only `evidence`);
- results: level (notice → note, warning → warning, failure → error), the message, a
  physical location with its line region, stable partial fingerprints (the finding's key,
  and its fingerprint: content and place, what a dismissal names), the finding's scores as
  `properties.scores`, and `fixes` when the finding carries a Fix (AutoFix's verified
  replacements);
- the run's aggregate scores, usage and notes as run properties; what was skipped, why the
  analyzer did not run (`not-run`) and its error (`executionSuccessful` false) as tool
  execution notifications, so nothing is silently left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from analyzers import registry
from analyzers.code.checkout_files import split, write_text
from analyzers.report import AnalyzerReport, Finding, Fix, Skipped
from reporters import readable
from reporters.base import Collecting, Sinks, need
from reporters.untrusted import inert, plain

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "rtcbot"
SRCROOT = "%SRCROOT%"
LEVELS = {"notice": "note", "warning": "warning", "failure": "error"}
FINGERPRINT = "rtcbotKey/v1"
DISMISSAL_FINGERPRINT = "rtcbotFingerprint/v2"  # Finding.fingerprint: what `ignore` names (its place included)

def _version() -> str:
    try:
        return metadata.version("rtcbot")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def _text(s: str, fallback: str) -> str:
    """A SARIF `text`: plain text (mentions defused), never empty."""
    s = plain(s.strip())
    return s if s else fallback


def _artifact(path: str) -> dict[str, Any]:
    return {"uri": path.lstrip("/"), "uriBaseId": SRCROOT}


def _region(start: int | None, end: int | None) -> dict[str, Any] | None:
    if start is None or start < 1:
        return None
    region: dict[str, Any] = {"startLine": start}
    if end is not None and end >= start:
        region["endLine"] = end
    return region


def _location(path: str | None, start: int | None, end: int | None) -> dict[str, Any] | None:
    if not path:
        return None
    physical: dict[str, Any] = {"artifactLocation": _artifact(path)}
    region = _region(start, end)
    if region:
        physical["region"] = region
    return {"physicalLocation": physical}


def _help(report: AnalyzerReport) -> str:
    """What the analyzer's own rule means: its `help` text, else its title."""
    try:
        return registry.help_text(report.name) or report.title
    except registry.UnknownAnalyzer:
        return report.title


def driver_name(report: AnalyzerReport) -> str:
    """The tool a run names: each analyzer its own, "rtcbot EditingRTC"."""
    return f"{TOOL_NAME} {report.title}"


def rule_id(f: Finding) -> str:
    return f.rule_id or f.analyzer


def _rule(rid: str, report: AnalyzerReport, example: Finding) -> dict[str, Any]:
    own = rid == report.name
    short = report.title if own else rid
    full = _help(report) if own else (
        f"{report.title} finding from rule {rid}"
        + (f": {example.rule_description}" if example.rule_description else ""))
    rule: dict[str, Any] = {
        "id": rid,
        "name": "".join(p.capitalize() for p in rid.replace(".", "_").replace("-", "_").split("_") if p) or rid,
        "shortDescription": {"text": _text(short, rid)},
        "fullDescription": {"text": _text(full, rid)},
        "defaultConfiguration": {"level": LEVELS.get(example.level, "note")},
        "properties": {"analyzer": report.name},
    }
    tags = list(dict.fromkeys([*example.tags, *(str(c) for c in example.cwe)]))
    if tags:
        rule["properties"]["tags"] = tags
    return rule


def _fix(fix: Fix) -> dict[str, Any]:
    """A whole-line replacement: lines start..end (without their final newline) become
    the replacement text (without its final newline)."""
    region: dict[str, Any] = {"startLine": fix.start_line, "startColumn": 1}
    region["endLine"] = max(fix.end_line, fix.start_line)
    replacement = fix.replacement[:-1] if fix.replacement.endswith("\n") else fix.replacement
    return {
        "description": {"text": plain(f"Replace lines {fix.start_line}-{fix.end_line} of {fix.path}"
                                      + (" (verified by a re-scan)" if fix.diff else ""))},
        "artifactChanges": [{
            "artifactLocation": _artifact(fix.path),
            "replacements": [{"deletedRegion": region, "insertedContent": {"text": replacement}}],
        }],
    }


def _message(f: Finding) -> dict[str, Any]:
    where = " (on lines the change removed)" if f.on_removed else ""
    text = _text(f"{f.title}{where}: {f.message}" if f.message else f"{f.title}{where}", f.analyzer)
    md = f"**{inert(f.title)}**" + (f"\n\n{inert(f.message, block=True)}" if f.message else "")
    if f.fix is not None:
        md += "\n\n" + f.fix.suggestion
    return {"text": text, "markdown": md}


def _result(f: Finding, index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": rule_id(f),
        "ruleIndex": index,
        "level": LEVELS.get(f.level, "note"),
        "message": _message(f),
    }
    # on removed lines: the file, no line (the head has none of them; its line there is another's)
    loc = _location(f.path, None, None) if f.on_removed else _location(f.path, f.start_line, f.end_line)
    if loc:
        result["locations"] = [loc]
    result["partialFingerprints"] = {**({FINGERPRINT: f.key} if f.key else {}),
                                     DISMISSAL_FINGERPRINT: f.fingerprint()}
    if f.fix is not None:
        result["fixes"] = [_fix(f.fix)]
    props: dict[str, Any] = {"analyzer": f.analyzer, "title": f.title}
    if f.scores:
        props["scores"] = dict(f.scores)
    result["properties"] = props
    return result


# a skipped item is a path, or "path:line rule" for one finding
_ITEM = re.compile(r"^(?P<path>[^\s:]*[./][^\s:]*)(?::(?P<line>\d+))?(?:\s.*)?$")


def _skipped_notification(s: Skipped) -> dict[str, Any]:
    note: dict[str, Any] = {"level": "note", "message": {"text": _text(f"skipped {s.item}: {s.reason}", "skipped")},
                            "descriptor": {"id": "skipped"}}
    m = _ITEM.match(s.item)
    if m:
        line = int(m["line"]) if m["line"] else None
        loc = _location(m["path"], line, line)
        if loc:
            note["locations"] = [loc]
    return note


def _notifications(report: AnalyzerReport) -> list[dict[str, Any]]:
    """What the run says beside its results: an error, why it did not run, its inconclusive items
    (no results: the evidence says nothing about the change), each item it skipped."""
    notifications = [_skipped_notification(s) for s in report.skipped]
    if apart := report.inconclusive:  # the evidence says nothing about the change: no result, one line
        why = "; ".join(dict.fromkeys(f.inconclusive.words for f in apart if f.inconclusive is not None))
        notifications.insert(0, {"level": "note", "descriptor": {"id": "inconclusive"}, "message": {"text": _text(
            f"{len(apart)} of {len(report.findings)} items inconclusive, not reported as results ({why})",
            "inconclusive")}})
    if report.not_run:  # it ran, and had nothing it could do: said, never a silent clean run
        notifications.insert(0, {"level": "note", "message": {"text": _text(f"not run: {report.not_run}", "not run")},
                                 "descriptor": {"id": "not-run"}})
    if report.error:
        notifications.insert(0, {"level": "error", "message": {"text": _text(report.error, "error")},
                                 "descriptor": {"id": "analyzer-error"}})
    return notifications


def report_run(report: AnalyzerReport) -> dict[str, Any]:
    """One SARIF run for one analyzer report."""
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for f in report.findings:
        rid = rule_id(f)
        if rid not in index:
            index[rid] = len(rules)
            rules.append(_rule(rid, report, f))
    if not rules:  # the analyzer's own rule, so a clean run still says what it checked
        index[report.name] = 0
        rules.append(_rule(report.name, report, Finding(report.name, report.title)))
    notifications = _notifications(report)
    properties: dict[str, Any] = {"analyzer": report.name, "title": report.title}
    if report.scores:
        properties["scores"] = dict(report.scores)
    if report.usage:
        properties["usage"] = readable.public_usage(report.usage)  # samples and their bill: never a cache oracle
    if report.said:
        properties["notes"] = report.said
    if report.not_run:
        properties["notRun"] = report.not_run
    if report.skipped:
        properties["skipped"] = [{"item": s.item, "reason": s.reason} for s in report.skipped]
    return {
        "tool": {"driver": {
            "name": driver_name(report),
            "fullName": f"{TOOL_NAME} {report.title} ({report.name})",
            "version": _version(),
            "rules": rules,
        }},
        "automationDetails": {"id": f"rtcbot/{report.name}/"},
        "invocations": [{
            "executionSuccessful": report.error is None,
            "toolExecutionNotifications": notifications,
        }],
        "columnKind": "unicodeCodePoints",
        "originalUriBaseIds": {SRCROOT: {"description": {"text": "The repository root."}}},
        "results": [_result(f, index[rule_id(f)]) for f in report.findings if f.inconclusive is None],
        "properties": properties,
    }


def to_sarif(reports: Sequence[AnalyzerReport]) -> dict[str, Any]:
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [report_run(r) for r in reports]}


def render_sarif(reports: Sequence[AnalyzerReport]) -> str:
    return json.dumps(to_sarif(reports), indent=2, ensure_ascii=False)


class SarifReporter(Collecting):
    """Writes one SARIF log of every report to `path` when flushed."""

    name = "sarif"

    @classmethod
    def from_sinks(cls, sinks: Sinks) -> SarifReporter:
        return cls(need(sinks.sarif, cls.name, "a path to write (the Action's `sarif-file`, the CLI's --output)"))

    def __init__(self, path: Path, root: Path | None = None) -> None:
        """`root`: the checkout `path` is relative to (the Action's workspace)."""
        super().__init__()
        self.path, self.root = path, root

    def flush(self) -> Path:
        """Written as every fixed-name file in a checkout is (analyzers/code/checkout_files.py): a
        temporary file renamed into place, never through a symbolic link; CheckoutFileError."""
        root, rel = (self.root, self.path.as_posix()) if self.root is not None else split(self.path)
        return write_text(root, rel, render_sarif(self.reports), name=str(self.path))
