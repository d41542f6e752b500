"""Paths in a diff are data.

Attacks covered: path traversal in a diff header (`+++ b/../../x.py`, and the same hidden in
Git's octal quoting `"b/..\\057x.py"`); absolute paths (`+++ /etc/x.py`, `+++ b//etc/x.py`);
Git-quoted names (non-ASCII `"b/\\303\\251vil.py"`, escaped quotes and backslashes) read
as the real name; control characters, ESC and NUL in names; empty and `.` components
(`a//b.py`, `./x.py`); a newline in a GitHub file name injecting a second diff header;
hunk headers that would allocate by their numbers (`+999999999`, a 5,000-digit count) or
whose counts disagree with the body (extra lines silently dropped); one bad file aborting
the parse of the others; AutoFix writing a traversal or absolute path outside its work
folder (the scan and the oracle); symlinks leading `safe_join` out of its folder; the Action's
SARIF file written through a symlink that the pull request's checkout planted.
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from analyzers.autofix.analyzer import AutoFix, Options
from analyzers.autofix.oracle import FixOutcome, FixTarget, oracle
from analyzers.autofix.text import FixAnswer, pseudo_file
from analyzers.code.diff import ChangeSet, DiffLine, FileChange, Hunk, parse_diff, parse_github_files
from analyzers.code.paths import path_problem, safe_join, unquote_git, write_inside
from analyzers.context import AnalysisContext
from analyzers.semgrep.scan import SemgrepFinding, find_semgrep
from tests.bot.test_action import pr_github, run_action  # noqa: F401  (fixture)
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fixture)
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.support import require


def one_file(header_path: str, body: str = "@@ -0,0 +1 @@\n+x = eval(input())\n") -> str:
    return f"--- /dev/null\n+++ {header_path}\n{body}"


def only(text: str) -> FileChange:
    cs = parse_diff(text)
    assert len(cs.files) == 1, cs.files
    return cs.files[0]


# ------------------------------------------------------------------------- the parser
@pytest.mark.parametrize("header,reason", [
    ("b/../../x.py", "'..' component"),
    ("b/src/../../../x.py", "'..' component"),
    ('"b/..\\057..\\057x.py"', "'..' component"),  # traversal spelled in octal
    ("/etc/x.py", "absolute path"),
    ("b//etc/x.py", "absolute path"),
    ("b/a//b.py", "empty path component"),
    ("b/./x.py", "'.' component"),
    ("b/dir/", "empty path component"),
    ('"b/a\\033[31mred.py"', "control character"),
    ('"b/a\\nb.py"', "control character"),
    ('"b/a\\000b.py"', "NUL"),
    ("b/a\x1bb.py", "control character"),
    ("b/.git/hooks/pre-commit", "'.git' component"),
])
def test_unsafe_names_are_skipped_with_the_reason(header: str, reason: str) -> None:
    f = only(one_file(header))
    assert f.skipped is not None and reason in f.skipped and f.skipped.startswith("unsafe file name")
    assert f.hunks == [] and f.language is None
    assert "\n" not in f.path and "\x1b" not in f.path and "\0" not in f.path  # printable


def test_traversal_in_a_git_diff_is_skipped_and_the_other_files_are_kept() -> None:
    text = ("diff --git a/ok.py b/../../x.py\n--- a/ok.py\n+++ b/../../x.py\n@@ -1 +1 @@\n-a\n+b\n"
            "diff --git a/y.py b/y.py\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n")
    cs = parse_diff(text)
    assert [(f.path, f.skipped is None) for f in cs.files] == [("../../x.py", False), ("y.py", True)]
    assert [f.path for f in cs.analysed] == ["y.py"]
    assert "'..' component" in (cs.files[0].skipped or "")


def test_git_quoted_names_are_unquoted() -> None:
    text = ('diff --git "a/\\303\\251vil.py" "b/\\303\\251vil.py"\nnew file mode 100644\n'
            '--- /dev/null\n+++ "b/\\303\\251vil.py"\n@@ -0,0 +1 @@\n+eval(x)\n'
            'diff --git "a/q\\"uote\\\\d.py" "b/q\\"uote\\\\d.py"\n--- "a/q\\"uote\\\\d.py"\n'
            '+++ "b/q\\"uote\\\\d.py"\n@@ -1 +1 @@\n-a\n+b\n')
    cs = parse_diff(text)
    assert [(f.path, f.language, f.skipped) for f in cs.files] == [
        ("évil.py", "python", None), ('q"uote\\d.py', "python", None)]
    assert cs.files[0].hunks[0].added_lines == [1]
    assert unquote_git('"\\346\\227\\245\\346\\234\\254.py"') == "日本.py"
    assert unquote_git("plain name.py") == "plain name.py"
    for bad in ('"a\\q"', '"\\377.py"', '"a"b"'):
        with pytest.raises(ValueError):
            unquote_git(bad)
    f = only(one_file('"b/\\377.py"'))  # not UTF-8: skipped, not crashed on
    assert f.skipped and "not UTF-8" in f.skipped


def test_a_github_file_name_with_a_newline_cannot_inject_a_header() -> None:
    files = [{"filename": "a.py\n+++ b/../../evil.py", "status": "added", "patch": "@@ -0,0 +1 @@\n+x"},
             {"filename": "../up.py", "status": "modified", "patch": "@@ -1 +1 @@\n-a\n+b"},
             {"filename": "n.py", "status": "renamed", "previous_filename": "/abs.py",
              "patch": "@@ -1 +1 @@\n-a\n+b"},
             {"filename": "ok.py", "status": "added", "patch": "@@ -0,0 +1 @@\n+x"}]
    cs = parse_github_files(files)
    assert [f.path for f in cs.analysed] == ["ok.py"]
    assert [f.skipped for f in cs.files[:3]] == [
        "unsafe file name: control character in the path", "unsafe file name: '..' component",
        "unsafe file name: absolute path"]
    assert cs.files[0].path == "a.py\\x0a+++ b/../../evil.py"


# ------------------------------------------------------------------------- hunk headers
def test_a_huge_hunk_start_is_refused_without_allocating() -> None:
    text = ("--- a/x.py\n+++ b/x.py\n@@ -1 +999999999 @@\n-a\n+b\n"
            "--- a/y.py\n+++ b/y.py\n@@ -1 +1,999999999 @@\n-a\n+b\n"
            "--- a/z.py\n+++ b/z.py\n@@ -1 +1 @@\n-a\n+b\n")
    tracemalloc.start()
    t0 = time.monotonic()
    cs = parse_diff(text)
    pseudo = [pseudo_file(f) for f in cs.analysed]  # what AutoFix builds without a checkout
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert time.monotonic() - t0 < 5 and peak < 20 * 2**20
    by = {f.path: f for f in cs.files}
    assert "is beyond line 1,000,000" in (by["x.py"].skipped or "")
    assert "is beyond line 1,000,000" in (by["y.py"].skipped or "")
    assert by["z.py"].skipped is None and pseudo == ["b\n"]


def test_a_five_thousand_digit_count_is_a_skipped_file_not_a_crash() -> None:
    text = (f"--- a/x.py\n+++ b/x.py\n@@ -1 +1,{'9' * 5000} @@\n-a\n+b\n"
            "--- a/z.py\n+++ b/z.py\n@@ -1 +1 @@\n-a\n+b\n")
    cs = parse_diff(text)
    assert cs.files[0].skipped and "beyond line" in cs.files[0].skipped
    assert len(cs.files[0].skipped) < 200  # the message is one short line
    assert cs.file("z.py") is not None and cs.file("z.py").skipped is None  # type: ignore[union-attr]


@pytest.mark.parametrize("body,says", [
    ("@@ -1 +1 @@\n-a\n+b\n+hidden = eval(input())\n", "more lines"),  # extra line dropped
    ("@@ -1,3 +1,3 @@\n-a\n+b\n", "fewer lines"),  # would read the next file's lines
])
def test_a_count_that_disagrees_with_the_body_skips_only_that_file(body: str, says: str) -> None:
    text = (f"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n{body}"
            "diff --git a/z.py b/z.py\n--- a/z.py\n+++ b/z.py\n@@ -1 +1 @@\n-a\n+b\n")
    cs = parse_diff(text)
    x, z = cs.file("x.py"), cs.file("z.py")
    assert x is not None and x.skipped and says in x.skipped and x.hunks == []
    assert z is not None and z.skipped is None and z.hunks[0].added_code == "b\n"


# ------------------------------------------------------------------------- safe_join
def test_safe_join_refuses_escapes_and_symlinks_out(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    (root / "file-link").symlink_to(tmp_path / "victim.txt")
    assert safe_join(root, "sub/a.py") == (root / "sub" / "a.py").resolve()
    assert safe_join(root, "évil.py").name == "évil.py"
    for rel in ("../x", "/etc/passwd", "sub/../../x", "link/x.py", "file-link", "", "a//b", "."):
        with pytest.raises(ValueError, match="unsafe path"):
            safe_join(root, rel)
    with pytest.raises(ValueError):
        write_inside(root, "link/planted.py", "x")
    assert not (outside / "planted.py").exists() and not (tmp_path / "victim.txt").exists()
    assert path_problem("a/b.py") is None and path_problem("x" * 256) is not None


# ------------------------------------------------------------------------- AutoFix writes
def _files_under(p: Path) -> set[Path]:
    return {q for q in p.rglob("*")}


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tempfile's folder set to tmp_path/tmp, so a traversal from a work folder lands in
    tmp_path where the test can see it."""
    tmp = tmp_path / "a" / "tmp"
    tmp.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def test_autofix_on_a_traversal_change_writes_nothing_outside(tmp_path: Path, private_tmp: Path) -> None:
    require(find_semgrep(), "semgrep is not installed")
    absolute = tmp_path / "abs-planted.py"
    names = ["../../planted.py", "../../../planted2.py", str(absolute), "sub/../../../planted3.py"]
    code = "x = 1\n"
    fcs = [FileChange(path=n, status="added", language="python",
                      hunks=[Hunk(n, 0, 0, 1, 1, lines=[DiffLine("+", "x = 1", None, 1)])])
           for n in [*names, "ok.py"]]
    before = _files_under(tmp_path)
    ctx = AnalysisContext(file_loader=lambda p: code)
    report = AutoFix().run(ChangeSet(fcs), ctx)
    assert _files_under(tmp_path) == before  # nothing planted anywhere, work folders removed
    assert not absolute.exists()
    assert sorted(s.item for s in report.skipped) == sorted(names)
    assert all("unsafe path" in s.reason for s in report.skipped)
    # the bad files did not stop the run: the safe one was scanned
    assert report.error is None and "Semgrep found nothing on the changed lines" in report.notes


def test_the_oracle_never_writes_a_fix_outside_its_folder(tmp_path: Path, private_tmp: Path) -> None:
    outcomes = []
    for name in ("../../oracle-planted.py", str(tmp_path / "oracle-abs.py")):
        finding = SemgrepFinding("python-code-injection", name, 1, 1, "eval")
        out = FixOutcome(FixTarget(finding, "python", "eval(x)\n"), FixAnswer("code", "x\n"),
                      replacement="x\n", patched="import os\n")
        outcomes.append(out)
    before = _files_under(tmp_path)
    oracle(outcomes, Options())
    assert _files_under(tmp_path) == before
    for out in outcomes:
        assert out.verdict == "not fixed" and out.error and "unsafe path" in out.error


def test_a_traversal_diff_through_the_parser_reaches_no_analyzer(tmp_path: Path,
                                                                  private_tmp: Path) -> None:
    require(find_semgrep(), "semgrep is not installed")
    text = "diff --git a/x.py b/../../p.py\n--- /dev/null\n+++ b/../../p.py\n@@ -0,0 +1 @@\n+x = 1\n"
    cs = parse_diff(text)
    before = _files_under(tmp_path)
    report = AutoFix().run(cs, AnalysisContext(file_loader=lambda p: "x = 1\n"))
    assert _files_under(tmp_path) == before and not report.findings
    assert cs.analysed == [] and cs.skipped[0].skipped == "unsafe file name: '..' component"


@pytest.mark.slow
def test_the_action_never_writes_sarif_through_a_planted_symlink(
        pr_github: Callable[..., FakeGitHub],  # noqa: F811  (the fixture imported above)
        scripted_llm: Callable[..., ScriptedLLM],
        tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "out").symlink_to(tmp_path)  # committed by the pull request
    proc = run_action(pr_github(), scripted_llm(varied), tmp_path, analyzers="editing-rtc",
                      sarif_file="out/victim.txt")
    assert proc.returncode != 0 and victim.read_text() == "keep me\n"
    assert "sarif-file: cannot write 'out/victim.txt'" in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
