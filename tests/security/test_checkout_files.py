"""Files rtcbot reads or writes by a fixed name in a checkout (issue 27, part 5), planted by the
repository as its author would: a committed symbolic link where `.rtcbot/qualification.json`
or `.github/rtcbot.yml` should be (to a file of the user's, to `/dev/zero`), a FIFO, a folder,
an oversize record. Each surface answers with one clear line and its exit code, never a
traceback, a MemoryError or a hang, and writes nothing through a link.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from analyzers.code.checkout_files import (
    CheckoutFileError,
    MiB,
    append_text,
    read_bytes,
    read_text,
    write_text,
)
from analyzers.report import AnalyzerReport, Finding
from bot.core.qualification import refusal_from_file
from bot.entry import main
from reporters.sarif import SarifReporter
from tests.bot.commands.test_qualify import (
    git,
    repo,  # noqa: F401  (fixture)
)
from tests.fakes.llm_server import ScriptedLLM
from tests.support import ROOT

RECORD = ".rtcbot/qualification.json"


def rtcbot(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def cli(*args: str) -> Result:
    """rtcbot in this process (the working folder as the test set it)."""
    return CliRunner().invoke(main, list(args))


def one_line_error(r: Result, code: int, fragment: str) -> None:
    """Exit `code`, one `Error` line holding `fragment`, and no exception but the exit's."""
    assert r.exit_code == code, r.output
    assert isinstance(r.exception, SystemExit), r.exception  # no traceback
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("Error")]
    assert len(errors) == 1 and fragment in errors[0], r.stderr


@pytest.fixture
def checkout(request: pytest.FixtureRequest) -> Path:
    """A repository of 20 commits (tests/bot/commands/test_qualify.py builds it)."""
    path = request.getfixturevalue("repo")
    assert isinstance(path, Path)
    return path


def commit_link(checkout: Path, rel: str, target: str) -> None:
    """The repository commits `rel` as a symbolic link to `target`."""
    link = checkout / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", f"link {rel}")


def finishes(fn: Callable[[], object], within_s: float = 10.0) -> object:
    """fn's result (or its exception), asserting it came within `within_s` (a FIFO must not
    hold it)."""
    out: list[object] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as e:  # raised again in the test's thread
            failed.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(within_s)
    assert not t.is_alive(), "it hung"
    if failed:
        raise failed[0]
    return out[0] if out else None


# ------------------------------------------------------------------ `rtcbot qualify`
@pytest.mark.parametrize("planted", ["file", "folder"])
def test_qualify_never_writes_through_a_committed_symlink(
        planted: str, checkout: Path, tmp_path: Path, scripted_llm: Callable[..., ScriptedLLM]) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "qualification.json").write_text("keep me\n")
    if planted == "file":  # the record itself is a link to a file of the user's
        commit_link(checkout, RECORD, str(victim / "qualification.json"))
    else:  # the record's folder is a link
        commit_link(checkout, ".rtcbot", str(victim))
    llm = scripted_llm("Edit.", model="B")
    one_line_error(cli("qualify", "--repo", str(checkout), "--last", "3", "--model", f"{llm.base_url}#B"),
                   2, f"`{RECORD}`" + (" is a symbolic link" if planted == "file"
                                       else ": `.rtcbot` is a symbolic link"))
    assert (victim / "qualification.json").read_text() == "keep me\n" and os.listdir(victim) == ["qualification.json"]
    assert llm.request_count == 0  # refused before the run spent anything


def test_qualify_writes_its_record_by_renaming_a_new_file_into_place(
        checkout: Path, tmp_path: Path, scripted_llm: Callable[..., ScriptedLLM]) -> None:
    (checkout / ".rtcbot").mkdir()
    (checkout / RECORD).write_text("old\n")
    before = (checkout / RECORD).stat().st_ino
    llm = scripted_llm("Edit.", model="B")
    r = cli("qualify", "--repo", str(checkout), "--last", "3", "--model", f"{llm.base_url}#B", "--json")
    assert r.exit_code == 1 and llm.request_count > 0, r.output  # ran; "Edit." qualifies nothing
    assert (checkout / RECORD).read_text().startswith("{") and (checkout / RECORD).stat().st_ino != before
    assert os.listdir(checkout / ".rtcbot") == ["qualification.json"]  # no temporary file left


# ------------------------------------------------------------------ `require_qualified`
@pytest.mark.slow
def test_require_qualified_with_the_record_a_link_to_dev_zero_is_one_line(
        checkout: Path, tmp_path: Path, scripted_llm: Callable[..., ScriptedLLM]) -> None:
    commit_link(checkout, RECORD, "/dev/zero")
    (tmp_path / "rtcbot.yml").write_text("require_qualified: true\n")
    llm = scripted_llm("Edit.", model="B")
    p = rtcbot("review", "--git", "HEAD~2..HEAD~1", "--repo", str(checkout), "--config", str(tmp_path / "rtcbot.yml"),
               "--llm-base-url", llm.base_url, "--model", "B", "--format", "json", "--no-cache", cwd=checkout)
    assert p.returncode == 1 and "Traceback" not in p.stderr and "MemoryError" not in p.stderr
    said = [ln for ln in p.stderr.splitlines() if "is not qualified" in ln]
    assert said and all(f"`{RECORD}` is a symbolic link (rtcbot follows no link in a checkout)" in ln
                        for ln in said), p.stderr
    assert llm.request_count == 0


@pytest.mark.parametrize("plant", ["fifo", "folder", "oversize", "link-inside", "not-utf8"])
def test_the_record_read_for_require_qualified_refuses_what_is_not_a_small_regular_file(
        plant: str, tmp_path: Path) -> None:
    (tmp_path / ".rtcbot").mkdir()
    record = tmp_path / RECORD
    if plant == "fifo":
        os.mkfifo(record)
    elif plant == "folder":
        record.mkdir()
    elif plant == "oversize":
        record.write_bytes(b" " * (MiB + 1))
    elif plant == "link-inside":  # a link that stays inside the checkout is refused too
        (tmp_path / "elsewhere.json").write_text('{"models": []}')
        record.symlink_to(tmp_path / "elsewhere.json")
    else:
        record.write_bytes(b"\xff\xfe{}")
    why = finishes(lambda: refusal_from_file("B", tmp_path))
    expected = {"fifo": "is a FIFO", "folder": "is a folder", "oversize": "is over 1 MiB",
                "link-inside": "is a symbolic link", "not-utf8": "is not UTF-8"}[plant]
    assert isinstance(why, str) and "\n" not in why and f"`{RECORD}` {expected}" in why


# ------------------------------------------------------------------ the config
def test_the_config_as_a_symbolic_link_is_refused_by_review_and_validate(
        checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside.yml"
    outside.write_text("require_qualified: false\n")
    commit_link(checkout, ".github/rtcbot.yml", str(outside))
    monkeypatch.chdir(checkout)
    r = cli("config", "validate")
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit)
    assert r.stderr.strip() == "`.github/rtcbot.yml` is a symbolic link (rtcbot follows no link in a checkout)"
    patch = tmp_path / "p.diff"
    patch.write_text("--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    one_line_error(cli("review", str(patch), "--config", ".github/rtcbot.yml"), 2, "symbolic link")
    # the folder on the way is the link
    (checkout / ".github" / "rtcbot.yml").unlink()
    (checkout / ".github").rmdir()
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "rtcbot.yml").write_text("{}\n")
    (checkout / ".github").symlink_to(tmp_path / "cfg")
    r = cli("config", "validate")
    assert r.exit_code == 2 and r.stderr.strip() == "`.github/rtcbot.yml`: `.github` is a symbolic link " \
        "(rtcbot follows no link in a checkout)"


def test_a_config_that_is_dev_zero_or_a_fifo_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".github").mkdir()
    os.mkfifo(tmp_path / ".github" / "rtcbot.yml")
    monkeypatch.chdir(tmp_path)
    r = finishes(lambda: cli("config", "validate"))
    assert isinstance(r, Result) and r.exit_code == 2
    assert r.stderr.strip() == "`.github/rtcbot.yml` is a FIFO, not a regular file"
    r = cli("config", "validate", "/dev/zero")  # named by the person at the terminal: still refused
    assert r.exit_code == 2 and r.stderr.strip() == "`/dev/zero` is a device, not a regular file"


# ------------------------------------------------------------------ `rtcbot eval`'s results log
def test_eval_never_appends_its_results_through_a_committed_link(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """`rtcbot eval editing-rtc` run in a checkout keeps its results in `.rtcbot/eval/…`."""
    from tests.bot.commands.test_eval_editing_rtc import CLAIMS

    victim = tmp_path / "victim"
    victim.mkdir()
    work = tmp_path / "work"
    (work / ".rtcbot").mkdir(parents=True)
    (work / ".rtcbot" / "eval").symlink_to(victim)
    monkeypatch.chdir(work)
    llm = scripted_llm("Edit.", model="B")
    r = cli("eval", "editing-rtc", str(CLAIMS), "--limit", "1", "--llm-base-url", llm.base_url, "--model", "B")
    one_line_error(r, 2, "`.rtcbot/eval` is a symbolic link")
    assert os.listdir(victim) == [] and llm.request_count == 0


# ------------------------------------------------------------------ SARIF and the helper
def test_sarif_in_a_checkout_is_never_written_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    work = tmp_path / "workspace"
    work.mkdir()
    (work / "rtcbot.sarif").symlink_to(victim)
    reporter = SarifReporter(Path("rtcbot.sarif"), root=work)
    reporter.publish(AnalyzerReport("autofix", "AutoFix", findings=[Finding("autofix", "t", "m", "a.py", 1, 1)]))
    with pytest.raises(CheckoutFileError, match="is a symbolic link"):
        reporter.flush()
    assert victim.read_text() == "keep me\n"
    (work / "rtcbot.sarif").unlink()
    assert reporter.flush() == work.resolve() / "rtcbot.sarif"
    assert '"version": "2.1.0"' in (work / "rtcbot.sarif").read_text() and os.listdir(work) == ["rtcbot.sarif"]


def test_the_helper_reads_nothing_past_its_cap_and_keeps_a_replaced_files_mode(tmp_path: Path) -> None:
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(CheckoutFileError, match=r"^`zero` is a symbolic link"):
        read_bytes(tmp_path, "zero")
    with pytest.raises(CheckoutFileError, match=r"^`\.\./a`: '\.\.' component$"):
        read_bytes(tmp_path, "../a")
    assert read_text(tmp_path, "missing/file") is None
    (tmp_path / "small").write_text("x" * 10)
    with pytest.raises(CheckoutFileError, match=r"^`small` is over 8 bytes$"):
        read_bytes(tmp_path, "small", limit=8)
    (tmp_path / "script.sh").write_text("old\n")
    (tmp_path / "script.sh").chmod(0o750)
    write_text(tmp_path, "script.sh", "new\n")
    assert (tmp_path / "script.sh").read_text() == "new\n" and (tmp_path / "script.sh").stat().st_mode & 0o777 == 0o750
    (tmp_path / "dir").mkdir()
    with pytest.raises(CheckoutFileError, match=r"^`dir` is a folder, not a file: not written$"):
        write_text(tmp_path, "dir", "x")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(CheckoutFileError, match=r"^`fifo` is a FIFO, not a regular file: not written$"):
        finishes(lambda: append_text(tmp_path, "fifo", "x\n"))
    append_text(tmp_path, "log/results.jsonl", "a\n")
    append_text(tmp_path, "log/results.jsonl", "b\n")
    assert read_text(tmp_path, "log/results.jsonl") == "a\nb\n"
