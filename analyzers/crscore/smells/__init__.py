"""Code smells as pseudo-references: each tool finding becomes one sentence.

A smell is kept only when it is on a changed (added) line. Detectors run on the post-change
file when it is available and on the hunk's new code otherwise (line numbers are mapped back
to the file's). A missing tool (Java, Node, the npm packages) or code the tool cannot parse
gives a `SmellReport` with `skipped` set to the reason, never an exception.

`detect_many` looks at many pieces of code (files, hunks) with one run of each language's
tool, the languages' tools at once: a tool's start-up (a JVM for PMD) is paid once per
analysis, not once per hunk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from analyzers import spans
from analyzers.code.diff import Hunk
from analyzers.crscore.smells.found import ROOT, TOOL_TIMEOUT_S, Smell, SmellReport, node_bin, which

__all__ = ["ROOT", "TOOL_TIMEOUT_S", "Smell", "SmellReport", "Source", "detect_files", "detect_in_file",
           "detect_in_hunk", "detect_many", "file_source", "hunk_source", "node_bin", "normalise_language",
           "on_hunk", "which"]  # the types and tools' places are found.py's, named here for the package's users

LANGUAGE_ALIASES = {"py": "python", "python": "python", "java": "java", "js": "javascript",
                    "javascript": "javascript"}


def normalise_language(language: str | None) -> str | None:
    return LANGUAGE_ALIASES.get((language or "").lower())


def detect_files(language: str | None, files: Mapping[str, str], pmd_server: str = "auto") -> dict[str, SmellReport]:
    """Run the language's detector once over several files (name → code); all their smells.
    `pmd_server`: the operator's `Tools.pmd_server` (Java)."""
    lang = normalise_language(language)
    if not files:
        return {}
    if lang == "python":
        from analyzers.crscore.smells.python import detect_python

        return detect_python(files)
    if lang == "java":
        from analyzers.crscore.smells.pmd import detect_java

        return detect_java(files, pmd_server)
    if lang == "javascript":
        from analyzers.crscore.smells.jshint import detect_javascript

        return detect_javascript(files)
    return {name: SmellReport(skipped=f"no smell detector for {language or 'this language'}") for name in files}


@dataclass(frozen=True)
class Source:
    """One piece of code for a detector: its language, a file name (whose stem names the
    tool's temporary file) and the code."""

    language: str | None
    name: str
    code: str


def detect_many(sources: Sequence[Source], pmd_server: str = "auto") -> list[SmellReport]:
    """Every smell of each source, in order: one tool run per language (each source in a
    file of its own), the languages' runs concurrently (at most one thread per language)."""
    groups: dict[str | None, list[int]] = {}
    for i, src in enumerate(sources):
        groups.setdefault(src.language, []).append(i)

    def run(language: str | None) -> dict[int, SmellReport]:
        names = {i: f"{i}/{sources[i].name}" for i in groups[language]}
        with spans.span(f"smells {language}"):
            found = detect_files(language, {names[i]: sources[i].code for i in names}, pmd_server)
        return {i: found.get(name, SmellReport()) for i, name in names.items()}

    out = [SmellReport() for _ in sources]
    if len(groups) <= 1:
        parts = [run(lang) for lang in groups]
    else:
        with ThreadPoolExecutor(max_workers=len(groups), thread_name_prefix="smells") as ex:
            parts = list(ex.map(run, groups))
    for part in parts:
        for i, report in part.items():
            out[i] = report
    return out


def file_source(language: str | None, path: str, code: str) -> Source:
    return Source(language, Path(path).name or "file", code)


def hunk_source(language: str | None, hunk: Hunk) -> Source:
    """The hunk's new code (context + added lines) as a snippet of its own."""
    suffix = {"python": ".py", "java": ".java", "javascript": ".js"}.get(normalise_language(language) or "", "")
    return Source(language, "Hunk" + suffix, hunk.new_code)


def on_hunk(report: SmellReport, hunk: Hunk) -> SmellReport:
    """A hunk snippet's smells numbered as in the file, kept on the hunk's added lines."""
    offset = hunk.new_start - 1
    moved = SmellReport([s.moved(offset) for s in report.smells], report.skipped)
    return moved.on_lines(hunk.added_lines)


def detect_in_file(language: str | None, path: str, code: str, changed_lines: Iterable[int]) -> SmellReport:
    """Smells of the post-change file `code` that sit on `changed_lines`."""
    return detect_many([file_source(language, path, code)])[0].on_lines(changed_lines)


def detect_in_hunk(language: str | None, hunk: Hunk) -> SmellReport:
    """Smells of the hunk's new code (context + added lines) on its added lines, file-numbered."""
    return on_hunk(detect_many([hunk_source(language, hunk)])[0], hunk)
