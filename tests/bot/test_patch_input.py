"""The change `rtcbot review` reads: bad input is one line and exit 2; a change over the
documented limits (bytes, files, hunks) is refused before it is parsed, in bounded memory."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import bot.cli.review  # noqa: F401  (imported before memory is traced)
from bot.cli.patch_input import (
    MAX_PATCH_BYTES,
    MAX_PATCH_FILES,
    MAX_PATCH_HUNKS,
    BadInput,
    Counter,
    limits_line,
    read_bounded,
)
from bot.entry import main
from tests.support import ROOT


def many_files(n: int, hunks_each: int = 1) -> str:
    out = []
    for i in range(n):
        out.append(f"diff --git a/f{i}.py b/f{i}.py\n--- a/f{i}.py\n+++ b/f{i}.py\n")
        out += [f"@@ -{k * 10 + 1},1 +{k * 10 + 1},2 @@\n x = {k}\n+y = {k}\n" for k in range(hunks_each)]
    return "".join(out)


def test_headers_are_counted_across_chunk_boundaries() -> None:
    text = many_files(7, hunks_each=3).encode()
    for size in (1, 2, 5, 11, 64, len(text)):
        counter = Counter("x")
        for i in range(0, len(text), size):
            counter.feed(text[i:i + size])
        assert (counter.files, counter.hunks, counter.size) == (7, 21, len(text)), size


def test_added_lines_that_look_like_headers_do_not_count() -> None:
    counter = Counter("x")
    counter.feed(b"diff --git a/a b/a\n@@ -1,2 +1,2 @@\n-@@ -1 +1 @@\n+diff --git a/b b/b\n")
    assert (counter.files, counter.hunks) == (1, 1)


@pytest.mark.parametrize(("text", "why"), [
    (many_files(MAX_PATCH_FILES + 1), f"more than {MAX_PATCH_FILES:,} files"),
    (many_files(1, hunks_each=MAX_PATCH_HUNKS + 1), f"more than {MAX_PATCH_HUNKS:,} hunks"),
])
def test_too_many_files_or_hunks_are_refused(text: str, why: str) -> None:
    with pytest.raises(BadInput) as e:
        read_bounded(io.BytesIO(text.encode()), "change.diff")
    assert e.value.exit_code == 2
    assert e.value.message.startswith(f"change.diff: {why}; not read") and limits_line() in e.value.message


def test_at_the_limits_is_read() -> None:
    text = many_files(MAX_PATCH_FILES).encode()
    assert read_bounded(io.BytesIO(text), "x") == text


def test_over_the_byte_limit_stops_reading_at_the_limit() -> None:
    class Endless:
        read_bytes = 0

        def read(self, n: int = -1, /) -> bytes:
            self.read_bytes += n
            return b"+" * n

    stream = Endless()
    with pytest.raises(BadInput, match="larger than 16 MiB"):
        read_bounded(stream, "stdin")
    assert stream.read_bytes <= MAX_PATCH_BYTES + 2 * (1 << 20)


def one_line_exit_2(args: list[str], fragment: str, stdin: bytes | None = None) -> None:
    r = CliRunner().invoke(main, ["review", *args, "--llm-base-url", "http://127.0.0.1:9/v1", "--model", "m"],
                           input=stdin)
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and fragment in lines[0], r.output


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("just some words\n")
    (tmp_path / "empty.diff").write_text("")
    one_line_exit_2([str(tmp_path / "notes.txt")], "not a unified diff")
    one_line_exit_2([str(tmp_path / "empty.diff")], "empty, not a diff")
    one_line_exit_2(["-"], "stdin: the input is empty", stdin=b"  \n")
    one_line_exit_2([str(tmp_path / "nope.diff")], "no such file")
    one_line_exit_2([str(tmp_path)], "is a directory")
    one_line_exit_2(["samples/demo.diff", "--repo", str(tmp_path / "nowhere")], "no such directory")
    (tmp_path / "c.json").write_text("{")
    one_line_exit_2(["samples/demo.diff", "--comments", str(tmp_path / "c.json")], "not JSON")


def test_a_hunk_past_the_line_limit_is_not_analysed_with_why(tmp_path: Path) -> None:
    """Not "no changed code to re-create": the file could not be read, and says why."""
    far = tmp_path / "far.diff"
    far.write_text("diff --git a/big.py b/big.py\n--- a/big.py\n+++ b/big.py\n"
                   "@@ -1000001,1 +1000001,2 @@\n x = 1\n+y = 2\n")
    args = ["review", str(far), "--llm-base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    [report] = json.loads(r.stdout)["reports"]
    assert report["not_run"] == "no changed code it could read (1 changed file not analysed)"
    assert report["skipped"][0]["item"] == "big.py" and report["skipped"][0]["kind"] == "failed"
    assert report["skipped"][0]["reason"] == "hunk header '@@ -1000001,1 +1000001,2 @@' is beyond line 1,000,000"
    text = CliRunner().invoke(main, args).stdout
    assert "no changed code to re-create" not in text and "is beyond line 1,000,000" in text


def test_refusal_by_files_is_in_bounded_memory(tmp_path: Path) -> None:
    """3,001 small files: refused while counting, before a parse (which held ~14x the input)."""
    big = tmp_path / "many.diff"
    big.write_text(many_files(MAX_PATCH_FILES + 1, hunks_each=2))
    tracemalloc.start()
    try:
        one_line_exit_2([str(big)], f"more than {MAX_PATCH_FILES:,} files")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * big.stat().st_size, peak


PEAK = ("import resource, sys\nfrom bot.entry import main\ntry:\n    main(sys.argv[1:])\nfinally:\n"
        "    print('peak-kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n")


def peak_kb(args: list[str], stdin: Path | None = None) -> tuple[int, str]:
    with (stdin or Path("/dev/null")).open("rb") as fh:
        p = subprocess.run([sys.executable, "-c", PEAK, "review", *args], cwd=ROOT, stdin=fh,
                           capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-2000:]
    kb = int(p.stderr.rsplit("peak-kb", 1)[1])
    return kb, p.stderr


@pytest.mark.slow
def test_a_50_mb_diff_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """A 50 MB diff of ~1,800 files took 175 s and 900 MB before any check: now it is refused
    at 16 MiB read (stdin) or from its size (a file), the process growing by at most ~2x the limit."""
    big = tmp_path / "big.diff"
    with big.open("w") as fh:
        while fh.tell() < 50 * 2**20:
            fh.write(many_files(1, hunks_each=1).replace("y = 0", "y = " + "z" * 28_000))
    notes = tmp_path / "notes.txt"
    notes.write_text("not a diff\n")
    base, _ = peak_kb([str(notes)])
    by_size, said = peak_kb([str(big)])
    assert "larger than 16 MiB; not read" in said
    by_reading, said = peak_kb(["-"], stdin=big)
    assert "stdin: larger than 16 MiB; not read" in said
    assert by_size - base < 8 * 1024, (base, by_size)
    assert by_reading - base < 2 * MAX_PATCH_BYTES // 1024 + 16 * 1024, (base, by_reading)


def test_bad_input_is_a_click_exception_of_its_own() -> None:
    assert issubclass(BadInput, click.ClickException) and BadInput("x").exit_code == 2
