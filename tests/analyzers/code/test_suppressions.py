"""The pure part of "suppressions count from the base branch" (analyzers/code/suppressions.py)."""

from __future__ import annotations

import difflib

from analyzers.code import suppressions as s
from analyzers.code.diff import Hunk, parse_diff
from analyzers.code.statements import BaseLines, statement_span
from analyzers.semgrep.scan import SemgrepFinding


def _finding(line: int, rule: str = "python-code-injection") -> SemgrepFinding:
    return SemgrepFinding(rule, "a.py", line, line, "m")


def test_a_marker_naming_other_rules_covers_nothing_else() -> None:
    assert s.semgrep_marker("x = eval(q)  # nosemgrep: python-code-injection", "python-code-injection") == "nosemgrep"
    assert s.semgrep_marker("x = eval(q)  # nosemgrep: other-rule", "python-code-injection") is None
    assert s.semgrep_marker("x = 1  # nosem", "r", alone=True) is None  # not alone on its line
    assert s.semgrep_marker("    # NOSEM", "r", alone=True) == "nosem"


def _hunks(base: str, head: str, path: str = "a.py") -> list[Hunk]:
    patch = f"diff --git a/{path} b/{path}\n" + "".join(difflib.unified_diff(
        base.splitlines(True), head.splitlines(True), f"a/{path}", f"b/{path}"))
    return parse_diff(patch).files[0].hunks


def test_only_the_bases_markers_on_unchanged_code_are_honoured() -> None:
    base = "a = eval(q)  # nosem\n# nosemgrep\nb = ok(q)\n"
    text = "a = eval(q)  # nosem\n# nosemgrep\nb = eval(q)\nc = eval(q)  # nosemgrep\n"
    found = [_finding(1), _finding(3), _finding(4)]
    kept, notes = s.semgrep_split(found, {"a.py": text}, {"a.py": _hunks(base, text)}, {"a.py": "python"})
    assert [f.start_line for f in kept] == [3, 4]  # line 1: the base's marker on the base's code
    assert [n.sentence() for n in notes] == [
        "this pull request changes the code at a.py:3 under the `# nosemgrep` at a.py:2; a suppression from the "
        "base branch covers only the statement it covered there, unchanged",
        "this pull request adds `# nosemgrep` at a.py:4; suppressions count from the base branch"]


BASE = ("import subprocess\n\n\ndef run(cmd):\n    # nosemgrep\n    subprocess.call('uptime', shell=True)\n"
        "    subprocess.call(\n        cmd,\n        shell=True)\n")


def test_a_base_marker_covers_its_statement_only_unchanged_and_where_it_was() -> None:
    """Issue #51: the marker covers the statement it was written above, by content. The
    statement moved under it (the line between deleted) or any line of it changed: nothing."""
    moved = BASE.replace("    subprocess.call('uptime', shell=True)\n", "")
    multi = SemgrepFinding("python-shell-injection", "a.py", 6, 8, "m")
    kept, notes = s.semgrep_split([multi], {"a.py": moved}, {"a.py": _hunks(BASE, moved)}, {"a.py": "python"})
    assert kept == [multi] and [(n.line, n.covers, n.moved) for n in notes] == [(5, 6, True)]
    assert notes[0].sentence().startswith("this pull request puts other code at a.py:6 under the `# nosemgrep`")
    marked = "def run(cmd):\n    subprocess.call(  # nosemgrep\n        cmd,\n        shell=True)\n"
    edited = marked.replace("        cmd,\n", "        cmd.strip(),\n")  # a line inside the statement
    call = SemgrepFinding("python-shell-injection", "a.py", 2, 2, "m")
    kept, notes = s.semgrep_split([call], {"a.py": edited}, {"a.py": _hunks(marked, edited)}, {"a.py": "python"})
    assert kept == [call] and [(n.line, n.covers, n.moved) for n in notes] == [(2, 2, False)]
    above = "# the module\n" + BASE  # lines added elsewhere: the same statement under the same marker
    kept, notes = s.semgrep_split([SemgrepFinding("python-shell-injection", "a.py", 7, 7, "m")], {"a.py": above},
                                  {"a.py": _hunks(BASE, above)}, {"a.py": "python"})
    assert kept == [] and notes == []


def test_base_lines_and_statements() -> None:
    head = BASE.replace("    subprocess.call('uptime', shell=True)\n", "").replace("cmd,", "cmd.strip(),")
    base = BaseLines(_hunks(BASE, head))
    assert [base.of(n) for n in range(1, 9)] == [1, 2, 3, 4, 5, 7, None, 9]
    assert BaseLines(_hunks(BASE, "# top\n" + BASE)).of(10) == 9
    assert statement_span(head, "python", 6, 6) == (6, 8)  # the whole call, three lines
    assert statement_span(head, "javascript", 6, 7) == (6, 7) == statement_span("def (:", "python", 6, 7)


def test_directives_on_added_lines_are_made_inert_in_place() -> None:
    java = 'class A {\n  @SuppressWarnings("PMD.X") int x; // NOPMD\n  int y; // NOPMD\n}\n'
    out, found = s.neutralise("java", java, [2], "A.java")
    assert len(out) == len(java) and out.splitlines()[2] == "  int y; // NOPMD"  # line 3: the base's
    assert "NOPMD" not in out.splitlines()[1] and "SuppressWarnings" not in out and '"PMD' not in out
    assert [(a.line, a.marker) for a in found] == [(2, "// NOPMD"), (2, "@SuppressWarnings")]
    js = "/* jshint ignore:start */\neval(x);\n/* jshint ignore:end */\n"
    out, found = s.neutralise("javascript", js, [1, 2, 3], "a.js")
    assert out.splitlines()[0] == "/* XXXXXX ignore:start */" and out.splitlines()[2] == "/* jshint ignore:end */"
    assert [a.marker for a in found] == ["/* jshint ignore */"]


def test_a_fix_adding_any_suppression_is_seen() -> None:
    flagged = "    subprocess.call(cmd, shell=True)  # nosemgrep\n"  # the base's own marker
    assert s.added_markers("python", flagged, flagged) == []
    assert s.added_markers("python", flagged, flagged.replace("# nosemgrep", "# nosemgrep  # noqa")) == ["# noqa"]
    assert s.added_markers("javascript", "eval(x);\n", "eval(x); // eslint-disable-line\n") == ["eslint-disable"]
