from __future__ import annotations

import pytest

from analyzers.code.diff import DEFAULT_IGNORES, DiffError, is_ignored, parse_diff, parse_github_files
from tests.support import FIXTURES

PRS = FIXTURES / "prs"


def test_python_fixture_hunks_and_line_numbers() -> None:
    cs = parse_diff((PRS / "more-itertools-069b30002a.diff").read_bytes())
    paths = [f.path for f in cs.files]
    assert "more_itertools/more.py" in paths
    more = cs.file("more_itertools/more.py")
    assert more is not None and more.language == "python" and more.status == "modified"
    h = more.hunks[0]
    assert h.old_start == 2338 and h.new_start == 2338
    # every added line number points into the new side of the hunk
    for n in h.added_lines:
        assert h.new_start <= n < h.new_start + h.new_count
    # old/new code are the two sides: context plus removed / added lines
    assert h.old_code.count("\n") == h.old_count
    assert h.new_code.count("\n") == h.new_count


@pytest.mark.parametrize("name,lang", [("jsoup-b035b623d3.diff", "java"), ("underscore-0061801a43.diff", "javascript")])
def test_java_and_javascript_fixtures(name: str, lang: str) -> None:
    cs = parse_diff((PRS / name).read_text())
    assert any(f.language == lang and f.hunks for f in cs.files)
    assert sum(1 for _ in cs.hunks()) > 0


def test_every_fixture_parses() -> None:
    for p in sorted(PRS.glob("*.diff")):
        cs = parse_diff(p.read_bytes())
        assert cs.files, p.name


def test_added_deleted_renamed_and_binary() -> None:
    text = (
        "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n"
        "@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n"
        "diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-x = 1\n"
        "diff --git a/a.js b/b.js\nsimilarity index 90%\nrename from a.js\nrename to b.js\n"
        "--- a/a.js\n+++ b/b.js\n@@ -1 +1 @@\n-var x = 1;\n+let x = 1;\n"
        "diff --git a/logo.png b/logo.png\nindex 1..2 100644\nBinary files a/logo.png and b/logo.png differ\n"
    )
    cs = parse_diff(text)
    by = {f.path: f for f in cs.files}
    assert by["new.py"].status == "added" and by["new.py"].hunks[0].added_lines == [1, 2]
    assert by["old.py"].status == "deleted" and by["old.py"].skipped == "file deleted"
    assert by["b.js"].status == "renamed" and by["b.js"].old_path == "a.js"
    assert by["logo.png"].skipped == "binary file"
    assert {f.path for f in cs.skipped} == {"old.py", "logo.png"}


def test_crlf_and_undecodable_bytes() -> None:
    raw = b"--- a/x.py\r\n+++ b/x.py\r\n@@ -1,2 +1,2 @@\r\n a = 1\r\n-b = '\xff\xfe'\r\n+b = 2\r\n"
    cs = parse_diff(raw)
    h = cs.files[0].hunks[0]
    assert h.new_code == "a = 1\nb = 2\n"
    assert "\ufffd" in h.old_code  # undecodable bytes replaced, not crashed on


def test_format_patch_with_mail_header_and_signature() -> None:
    text = (
        "From 1234 Mon Sep 17 00:00:00 2001\nFrom: A <a@b.c>\nSubject: [PATCH] fix\n\n---\n"
        " x.py | 2 +-\n\n"
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
        "-- \n2.39.5\n\n"
    )
    cs = parse_diff(text)
    assert cs.files[0].hunks[0].new_code == "a = 2\n"


def test_github_patch_without_header() -> None:
    files = [
        {"filename": "src/a.py", "status": "modified", "patch": "@@ -1,2 +1,3 @@\n x = 1\n+y = 2\n z = 3"},
        {"filename": "img.png", "status": "modified"},
        {"filename": "gone.py", "status": "removed", "patch": "@@ -1 +0,0 @@\n-x"},
        {"filename": "n.py", "status": "renamed", "previous_filename": "o.py", "patch": "@@ -1 +1 @@\n-a\n+b"},
    ]
    cs = parse_github_files(files)
    a = cs.file("src/a.py")
    assert a is not None and a.hunks[0].added_lines == [2]
    assert cs.file("img.png").skipped.startswith("no patch")  # type: ignore[union-attr]
    assert cs.file("gone.py").skipped == "file deleted"  # type: ignore[union-attr]
    assert cs.file("n.py").old_path == "o.py"  # type: ignore[union-attr]


def test_ignore_globs_default_and_override() -> None:
    assert is_ignored("package-lock.json", DEFAULT_IGNORES)
    assert is_ignored("web/static/app.min.js", DEFAULT_IGNORES)
    assert is_ignored("src/vendor/lib/x.go", DEFAULT_IGNORES)
    assert is_ignored("proto/a_pb2.py", DEFAULT_IGNORES)
    assert not is_ignored("src/app.py", DEFAULT_IGNORES)
    text = "--- a/yarn.lock\n+++ b/yarn.lock\n@@ -1 +1 @@\n-a\n+b\n"
    assert parse_diff(text).files[0].skipped == "ignored by glob '*.lock'"
    assert parse_diff(text, ignore=()).files[0].skipped is None


@pytest.mark.parametrize("text", ["", "   \n", "hello world\nthis is not a diff\n", "\x89PNG\r\n\x1a\n\x00\x00"])
def test_not_a_diff(text: str) -> None:
    with pytest.raises(DiffError):
        parse_diff(text)


@pytest.mark.slow
def test_large_and_many_file_diffs() -> None:
    many = "".join(f"--- a/f{i}.py\n+++ b/f{i}.py\n@@ -1 +1 @@\n-a = {i}\n+a = {i + 1}\n" for i in range(500))
    assert len(parse_diff(many).files) == 500
    body = "".join(f"+line {i}\n" for i in range(250_000))  # ~3.4 MB in one file
    big = f"--- /dev/null\n+++ b/big.py\n@@ -0,0 +1,250000 @@\n{body}"
    f = parse_diff(big).files[0]
    assert f.skipped and f.skipped.startswith("too large")


def test_hunk_key_ignores_line_shift() -> None:
    a = parse_diff("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n").files[0].hunks[0]
    b = parse_diff("--- a/x.py\n+++ b/x.py\n@@ -40 +41 @@\n-a\n+b\n").files[0].hunks[0]
    c = parse_diff("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+c\n").files[0].hunks[0]
    assert a.key == b.key != c.key
