"""The one diff filter: which lines a pull request's diff shows, by side and hunk."""

from __future__ import annotations

from analyzers.code.diff import parse_diff, parse_github_files
from reporters.diff_filter import DiffFilter

DIFF = ("--- a/m.py\n+++ b/m.py\n"
        "@@ -1,4 +1,5 @@\n def f(x):\n-    a = x\n+    a = eval(x)\n+    b = eval(x)\n     return a\n \n"
        "@@ -20,3 +21,2 @@\n def g():\n-    pass\n     return 1\n"
        "--- a/gone.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x = 1\n-y = 2\n")


def test_each_side_shows_its_hunks_lines() -> None:
    d = DiffFilter.of(parse_diff(DIFF))
    assert d.spans("m.py") == ((1, 5), (21, 22)) and d.spans("m.py", "LEFT") == ((1, 4), (20, 22))
    assert d.spans("gone.py") == () and d.spans("other.py") == ()  # a deleted file shows no head line


def test_place_cuts_to_the_first_hunk_and_shows_needs_every_line_in_one() -> None:
    d = DiffFilter.of(parse_diff(DIFF))
    assert d.place("m.py", 4, 8) == (4, 5)  # annotations: cut to what a hunk shows
    assert d.place("m.py", 6, 20) is None and d.place("m.py", 0, 1) == (1, 1)
    assert d.shows("m.py", 2, 3) and not d.shows("m.py", 4, 6)  # review comments: every line
    assert not d.shows("m.py", 5, 21)  # two hunks: GitHub keeps a comment's lines in one
    assert not d.shows("m.py", 0, 1) and d.shows("m.py", 21, 21, "RIGHT")
    assert d.shows("m.py", 2, 2, "LEFT") and not d.shows("m.py", 5, 5, "LEFT")  # a deleted line, then none


def test_the_same_lines_from_a_patch_and_from_githubs_files() -> None:
    files = [{"filename": "m.py", "status": "modified",
              "patch": "@@ -1,4 +1,5 @@\n def f(x):\n-    a = x\n+    a = eval(x)\n+    b = eval(x)\n     return a\n "}]
    assert DiffFilter.of(parse_github_files(files)).spans("m.py") == ((1, 5),)
    assert DiffFilter() == DiffFilter() and hash(DiffFilter.of(parse_diff(DIFF))) == hash(DiffFilter())
