"""The pure part of "suppressions count from the base branch" (analyzers/code/suppressions.py)."""

from __future__ import annotations

from analyzers.code import suppressions as s
from analyzers.semgrep.scan import SemgrepFinding


def _finding(line: int, rule: str = "python-code-injection") -> SemgrepFinding:
    return SemgrepFinding(rule, "a.py", line, line, "m")


def test_a_marker_naming_other_rules_covers_nothing_else() -> None:
    assert s.semgrep_marker("x = eval(q)  # nosemgrep: python-code-injection", "python-code-injection") == "nosemgrep"
    assert s.semgrep_marker("x = eval(q)  # nosemgrep: other-rule", "python-code-injection") is None
    assert s.semgrep_marker("x = 1  # nosem", "r", alone=True) is None  # not alone on its line
    assert s.semgrep_marker("    # NOSEM", "r", alone=True) == "nosem"


def test_only_the_bases_markers_on_unchanged_code_are_honoured() -> None:
    text = "a = eval(q)  # nosem\n# nosemgrep\nb = eval(q)\nc = eval(q)  # nosemgrep\n"
    found = [_finding(1), _finding(3), _finding(4)]
    kept, notes = s.semgrep_split(found, {"a.py": text}, {"a.py": {3, 4}}, {"a.py": "python"})
    assert [f.start_line for f in kept] == [3, 4]  # line 1: the base's marker on the base's code
    assert [n.sentence() for n in notes] == [
        "this pull request changes a.py:3, under the `# nosemgrep` at a.py:2; a suppression from the base "
        "branch covers only the code it covered there",
        "this pull request adds `# nosemgrep` at a.py:4; suppressions count from the base branch"]


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
