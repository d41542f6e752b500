"""Files at the head are the pull request's, of any size: GitHub serves up to 100 MB, a
checkout or a git blob holds more. Before, every surface read one whole and every analysis
parsed it (Python's `ast`, the brace scan that names a hunk, the smell detectors): a PR that
changes one line of a file padded to megabytes made each analysis of it cost that much.

Now no analysis reads a file at the head over the limit of a file rtcbot analyses (Semgrep's
size limit, analyzers/context.py `head_file_limit`): a checkout's or a git blob's bytes are
never read, and the report says why.

GitHub's were still downloaded whole (up to its 100 MB) before being dropped: a cost the pull
request's author chose. Now the contents API's `size` refuses such a file before its bytes are
asked for, and a raw read stops one byte past the limit; the fake GitHub counts what it sends."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext, HeadFileTooLarge, Tools, head_file_limit
from analyzers.pipeline import run_one
from analyzers.semgrep.scan import MAX_TARGET_BYTES
from bot.core.context import head_files
from bot.entry import main
from tests.bot.test_cli import llm_args
from tests.bot.test_github import SURFACES, calls, client
from tests.conftest import client_for
from tests.fakes.github_server import FakeGitHub, Padded
from tests.fakes.llm_server import ScriptedLLM, varied

LIMIT = MAX_TARGET_BYTES
# one line changed in a file padded past the limit: the diff is small, the file is not
PAD = "".join(f"x{i} = 0  # {'p' * 90}\n" for i in range(LIMIT // 100 + 100))
BASE = "def hot():\n    a = 1\n    b = 2\n    c = 3\n    return 1\n\n\n" + PAD
HEAD = BASE.replace("return 1", "return 2")
DIFF = ("--- a/big.py\n+++ b/big.py\n@@ -1,3 +1,3 @@\n def hot():\n-    return 1\n+    return 2\n \n")


def why(size: int, limit: int = LIMIT) -> str:
    return str(HeadFileTooLarge(size, limit))


def test_the_limit_is_semgreps_or_the_operators_where_higher() -> None:
    assert head_file_limit(Tools()) == LIMIT
    assert head_file_limit(Tools(semgrep_max_target_bytes=LIMIT * 5)) == LIMIT * 5
    assert head_file_limit(Tools(semgrep_max_target_bytes=LIMIT // 5)) == LIMIT  # lower: Semgrep's alone
    assert why(1_234_567) == ("not read: 1,234,567 bytes at the head, over the 1,000,000-byte limit of a "
                              "file rtcbot analyses (Semgrep's size limit)")


def test_a_checkout_file_over_the_limit_is_never_read(tmp_path: Path) -> None:
    """The Action's checkout: a sparse 256 MiB file (no disk) is refused by its size, only the
    limit's bytes read. The contents API is not asked for it either."""
    with (tmp_path / "big.py").open("wb") as fh:
        fh.truncate(256 << 20)
    (tmp_path / "ok.py").write_text("x = 1\n")
    asked: list[str] = []

    def from_the_api(path: str) -> str | None:
        asked.append(path)
        return None

    load = head_files(tmp_path, from_the_api, limit=LIMIT)
    for _ in range(2):
        with pytest.raises(HeadFileTooLarge) as e:
            load("big.py")
        assert str(e.value) == why(256 << 20)
    assert load("ok.py") == "x = 1\n" and asked == []
    ctx = AnalysisContext(file_loader=load)  # the analyses' view: not available, and why
    assert ctx.file_at_head("big.py") is None and ctx.unread == {"big.py": why(256 << 20)}
    plain = AnalysisContext(repo_path=tmp_path)  # `rtcbot review PATCH --repo`: the same rule
    assert plain.file_at_head("big.py") is None and plain.unread == {"big.py": why(256 << 20)}
    assert plain.file_at_head("ok.py") == "x = 1\n"


def sent(gh: FakeGitHub) -> list[tuple[str, int]]:
    """(Accept, body bytes the fake sent) of each contents API answer, once all went out."""
    gh.wait_for(lambda: all(r.sent is not None for r in calls(gh, "/contents/")))
    return [(r.headers["accept"], r.sent or 0) for r in calls(gh, "/contents/")]


@pytest.mark.parametrize("surface", SURFACES)
def test_githubs_file_over_the_limit_is_never_downloaded_and_asked_for_once(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], surface: str) -> None:
    """The App and the Action without a checkout read the file through the contents API (the
    surfaces' readers pass the limit, as here). Its 100 MB (GitHub's most, made up as the fake
    serves it) used to come whole; now the JSON form's `size` refuses it: none of its bytes go
    out, it is not asked for again, and EditingRTC says why its hunk is named by git's header."""
    gh = fake_github()
    size = gh.max_raw_bytes
    gh.set_file("big.py", Padded(size), ref="abc123")
    gh_client = client(gh, surface)
    load = head_files(None, lambda p: gh_client.file_text(gh.repo, p, "abc123", limit=LIMIT), limit=LIMIT)
    srv = scripted_llm(varied)
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv), file_loader=load)
    report = run_one("editing_rtc", parse_diff(DIFF), ctx)
    assert ctx.file_at_head("big.py") is None and ctx.unread == {"big.py": why(size)}
    [(accept, body)] = sent(gh)  # one answer, asked for twice: the JSON form, which describes the file
    assert accept == "application/vnd.github+json" and body < 4096
    assert report.error is None and [f.title for f in report.findings] == ["hunk at line 2"]
    assert f"big.py: {why(size)}; its hunks are named by git's header" in report.notes


def loopback_buffers() -> int:
    """The most bytes the kernel holds between the two ends of a loopback TCP connection: its
    receive and send buffers at their largest (Linux's tcp_rmem and tcp_wmem maxima)."""
    return sum(int(Path(f"/proc/sys/net/ipv4/tcp_{k}mem").read_text().split()[2]) for k in "rw")


def test_a_raw_read_stops_past_the_limit_whatever_the_size_said(fake_github: Callable[..., FakeGitHub]) -> None:
    """A file of 1 MB to the limit (an operator's higher one) comes with the raw media type after
    the JSON form gave its size; a branch moved between the two requests (a push: here, as the
    description comes back) serves 100 MB instead. The read stops one byte past the limit, the
    connection goes: the fake sends the limit and what the kernel's buffers took, never the
    file, and the reason gives the size GitHub announced (Content-Length)."""
    gh = fake_github()
    limit, size = head_file_limit(Tools(semgrep_max_target_bytes=2_000_000)), gh.max_raw_bytes
    assert limit + loopback_buffers() < size, "the kernel's buffers could hold the whole file"
    gh.set_file("big.py", Padded(1_500_000), ref="feature")
    gh_client = client(gh, "action")  # a token's client: connections of its own

    def push(r: httpx.Response) -> None:
        if r.request.headers["accept"] == "application/vnd.github+json":
            gh.set_file("big.py", Padded(size), ref="feature")

    gh_client.http.event_hooks = {"response": [push]}
    load = head_files(None, lambda p: gh_client.file_text(gh.repo, p, "feature", limit=limit), limit=limit)
    with pytest.raises(HeadFileTooLarge) as e:
        load("big.py")
    assert str(e.value) == why(size, limit)
    [(_, described), (accept, body)] = sent(gh)
    assert described < 4096 and accept == "application/vnd.github.raw+json"
    assert limit < body <= limit + loopback_buffers() + 64 * 1024  # the fake writes 64 KiB at a time


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "-C", str(repo), *args],
                   check=True, capture_output=True)


def test_the_cli_reads_no_blob_over_the_limit(tmp_path: Path, scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """`rtcbot review --git`: the blob's size is asked first; over the limit it is never read,
    and the report says why."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "big.py").write_text(BASE)
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "big.py").write_text(HEAD)
    _git(tmp_path, "commit", "-qam", "head")
    os.remove(tmp_path / "big.py")  # the working tree is not the head: only the blob is read
    srv = scripted_llm(varied)
    r = CliRunner().invoke(main, ["review", "--git", "HEAD~1..HEAD", "--repo", str(tmp_path),
                                  "--format", "json", *llm_args(srv)])
    assert r.exit_code == 0, r.output
    [rep] = json.loads(r.output)["reports"]
    assert f"big.py: {why(len(HEAD))}; its hunks are named by git's header" in rep["notes"]
    assert [f["title"] for f in rep["findings"]] == ["def hot():"]  # git's header: the file was not parsed
