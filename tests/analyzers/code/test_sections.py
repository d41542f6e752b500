"""A diff's text cut into file sections and checked against its hunk headers (before parsing)."""

from __future__ import annotations

from analyzers.code.sections import MAX_LINE_NUMBER, file_sections, hunk_problem, repo_path, section_name

TWO_FILES = (
    "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n--- a\n+++ b\n"
    "--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-old\n+new\n"
)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def test_plain_diff_is_cut_at_each_file_outside_hunks() -> None:
    """The `--- a`/`+++ b` body lines of x.py's hunk do not start a section: its header counts them."""
    sections = file_sections(_lines(TWO_FILES))
    assert [section_name(s) for s in sections] == ["x.py", "y.py"]
    assert sections[0][-1] == "+++ b\n"


def test_git_diff_is_cut_at_each_diff_git_line() -> None:
    text = ("diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-1\n+2\n"
            "diff --git a/b.py b/b.py\nBinary files a/b.py and b/b.py differ\n")
    sections = file_sections(_lines(text))
    assert [len(s) for s in sections] == [6, 2]
    assert section_name(sections[1]) == "b.py"


def test_a_body_that_disagrees_with_its_header_is_named() -> None:
    head = "--- a/x.py\n+++ b/x.py\n"
    assert hunk_problem(_lines(head + "@@ -1 +1 @@\n-old\n+new\n")) is None
    assert "fewer lines" in (hunk_problem(_lines(head + "@@ -1,2 +1,2 @@\n-old\n+new\n")) or "")
    assert "more lines" in (hunk_problem(_lines(head + "@@ -1 +1 @@\n-old\n+new\n+extra\n")) or "")


def test_a_header_beyond_the_largest_file_is_refused_and_swallows_nothing() -> None:
    huge = f"--- a/x.py\n+++ b/x.py\n@@ -1,{MAX_LINE_NUMBER + 1} +1 @@\n+x\n"
    problem = hunk_problem(_lines(huge))
    assert problem is not None and "beyond line" in problem
    sections = file_sections(_lines(huge + "--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n"))
    assert [section_name(s) for s in sections] == ["x.py", "y.py"]


def test_repo_path_drops_prefixes_unquotes_and_names_unsafe_paths() -> None:
    assert repo_path("/dev/null") == (None, None)
    assert repo_path("b/src/x.py") == ("src/x.py", None)
    assert repo_path('"b/\\303\\251.py"') == ("é.py", None)
    path, problem = repo_path("b/../etc/passwd")
    assert path == "../etc/passwd" and problem is not None
