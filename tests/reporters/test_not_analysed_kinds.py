"""Issue #47 item 4: what was not analysed is said once, in a reader's words — documentation and
images by their kind (analyzers/code/kinds.py), never "unknown language"; AutoFix's files in
languages without its rules are entries of the one *Not analysed* section (each file once,
beside the other analyses' reasons), never a sentence of their own."""

from __future__ import annotations

from analyzers.autofix.analyzer import AutoFix
from analyzers.code.diff import parse_diff
from analyzers.code.kinds import not_code
from analyzers.context import AnalysisContext
from analyzers.editing_rtc.analyzer import EditingRTC
from reporters import render, unanalysed


def _added(path: str, text: str) -> str:
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,1 @@\n-x\n+{text}\n"


NOT_CODE = (_added("docs/index.rst", "Welcome") + _added("artwork/logo.svg", "<svg/>") + _added("CHANGES", "2.0")
            + _added("data.weird", "?"))
GO = _added("cmd/main.go", "package main")


def test_documentation_and_images_are_named_by_their_kind() -> None:
    assert not_code("docs/index.rst", None) == "not code (documentation)"
    assert not_code("artwork/logo.svg", None) == "not code (image)"
    assert not_code("CHANGES", None) == "not code (documentation)"
    assert not_code(".github/ci.yml", "yaml") == "not code (yaml)"
    assert not_code("data.weird", None) == "not code (no known language)"


def test_autofix_and_editing_rtc_name_each_file_once_in_one_not_analysed_section() -> None:
    ctx = AnalysisContext()  # no model: nothing here is code EditingRTC (the Go file left out) or AutoFix scores
    rtc, fix = EditingRTC().run(parse_diff(NOT_CODE), ctx), AutoFix().run(parse_diff(NOT_CODE + GO), ctx)
    assert {s.path: s.reason for s in rtc.skipped} == {
        "docs/index.rst": "not code (documentation)", "artwork/logo.svg": "not code (image)",
        "CHANGES": "not code (documentation)", "data.weird": "not code (no known language)"}
    assert [(s.path, s.reason, s.kind) for s in fix.skipped] == [
        ("cmd/main.go", "no AutoFix rules for its language", "policy")]
    assert not any("not scanned" in n for n in fix.notes)  # the old separate sentence
    entries = {e.what: e.reasons for e in unanalysed.collect([rtc, fix])}
    assert entries["cmd/main.go"] == ["no AutoFix rules for its language"]
    assert entries["docs/index.rst"] == ["not code (documentation)"]
    md = render([rtc, fix], "markdown")
    assert md.count("## Not analysed") == 1 and md.count("`cmd/main.go`") == 1
    assert "unknown language" not in md
