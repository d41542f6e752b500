"""Semgrep gates that hold: what is not scanned is said, and "fixed" means clean.

Attacks covered: a file over Semgrep's size limit silently dropped (so its findings vanish,
and a fix padded past the limit is judged "fixed"); thousands of long target names making the
argument list too long (E2BIG), which turned the whole scan into "skipped"; non-ASCII names
in Git's quoted form never scanned; a fix that removes rule A's match but triggers rule B on
the same lines judged "fixed"; a fix the server stopped at max_tokens (an unclosed fence: the
code so far) judged "fixed"; a `semgrep` planted in the working directory or on a PATH
entry of the repository run instead of the operator's.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from analyzers.autofix.analyzer import AutoFix
from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext, Tools
from analyzers.report import Finding
from analyzers.semgrep.scan import (
    MAX_BATCH_ARG_BYTES,
    MAX_TARGET_BYTES,
    batches,
    build_argv,
    find_semgrep,
    parse_output,
    scan,
)
from tests.conftest import client_for
from tests.fakes.llm_server import last_user_text
from tests.support import require

pytestmark = pytest.mark.slow
UNSAFE = "import pickle\npickle.loads(b'')\n"


def _semgrep() -> str:
    exe = find_semgrep()
    require(exe, "semgrep is not installed")
    assert exe is not None
    return exe


def new_file_diff(path_in_header: str, text: str) -> str:
    lines = text.splitlines()
    body = "".join(f"+{ln}\n" for ln in lines)
    return (f"diff --git a/{path_in_header[2:]} {path_in_header}\nnew file mode 100644\n"
            f"--- /dev/null\n+++ {path_in_header}\n@@ -0,0 +1,{len(lines)} @@\n{body}")


# ------------------------------------------------------------------------- size limit
def test_a_file_over_the_size_limit_is_reported_skipped(tmp_path: Path) -> None:
    _semgrep()
    big = UNSAFE + "# padding\n" * (MAX_TARGET_BYTES // 10 + 10)
    (tmp_path / "big.py").write_text(big)
    (tmp_path / "small.py").write_text(UNSAFE)
    result = scan(tmp_path, ["big.py", "small.py"])
    assert [f.path for f in result.findings] == ["small.py"]
    assert "big.py" in result.skipped and "exceeds" in result.skipped["big.py"]
    assert any(a.startswith(f"--max-target-bytes={MAX_TARGET_BYTES}") for a in result.argv)
    # the analyzer says so too: "no findings" is never mistaken for "scanned"; a file over the
    # limit at the head is not even read (analyzers/context.py), nor scanned in pieces
    diff = "--- a/big.py\n+++ b/big.py\n@@ -1,2 +1,2 @@\n import pickle\n-x\n+pickle.loads(b'')\n"
    report = AutoFix().run(parse_diff(diff), AnalysisContext(file_loader=lambda p: big))
    assert [(s.item, s.reason, s.kind) for s in report.skipped] == [
        ("big.py", f"not read: {len(big):,} bytes at the head, over the {MAX_TARGET_BYTES:,}-byte limit of a "
                   "file rtcbot analyses (Semgrep's size limit)", "failed")]
    # an operator's lower limit for Semgrep: the file is read, and Semgrep skips it
    tools = Tools(semgrep_max_target_bytes=len(big) // 2)
    medium = big[:len(big) * 3 // 4]
    report = AutoFix().run(parse_diff(diff), AnalysisContext(file_loader=lambda p: medium, tools=tools))
    assert [(s.item, s.reason.startswith("over Semgrep's size limit"), s.kind) for s in report.skipped] == [
        ("big.py", True, "failed")]


def test_a_target_semgrep_neither_scanned_nor_skipped_is_reported() -> None:
    data: dict[str, Any] = {"results": [], "errors": [], "paths": {"scanned": ["a.py"]}}
    r = parse_output(data, ["a.py", "b.py"])
    assert r.skipped == {"b.py": "not scanned by semgrep (no reason given)"}


# ------------------------------------------------------------------------- E2BIG
def test_five_thousand_long_targets_are_batched_and_all_scanned(tmp_path: Path) -> None:
    _semgrep()
    folder = "d" * 200
    (tmp_path / folder).mkdir()
    names = [f"{folder}/f{i:04d}_{'x' * 240}.py" for i in range(5000)]
    for i, n in enumerate(names):
        (tmp_path / n).write_text(UNSAFE if i % 1000 == 0 else "x = 1\n")
    total = sum(len(os.fsencode(n)) + 1 for n in names)
    assert total > int(subprocess.check_output(["getconf", "ARG_MAX"]))  # one run would be E2BIG
    result = scan(tmp_path, names)
    assert result.skipped == {} and result.failed == {}
    assert sorted(f.path for f in result.findings) == names[::1000]
    assert result.runs >= total // MAX_BATCH_ARG_BYTES
    for batch in batches(names):
        argv = build_argv("semgrep", [], batch)
        assert sum(len(os.fsencode(a)) + 1 for a in argv) < MAX_BATCH_ARG_BYTES + 4096


# ------------------------------------------------------------------------- quoted names
def test_a_non_ascii_git_quoted_name_is_scanned(tmp_path: Path, scripted_llm: Any) -> None:
    _semgrep()
    text = "import pickle\n\n\ndef load(b):\n    return pickle.loads(b)\n"
    diff = new_file_diff('"b/\\303\\251vil.py"', text)
    server = scripted_llm("NOT_VULNERABLE: test input")
    ctx = AnalysisContext(llm_factory=lambda: client_for(server), file_loader=lambda p: text)
    report = AutoFix().run(parse_diff(diff), ctx)
    assert report.error is None and report.skipped == []
    assert [(f.path, f.rule_id, f.start_line) for f in report.findings] == [
        ("évil.py", "python-unsafe-deserialization", 5)]


# ------------------------------------------------------------------------- "fixed"
APP = '''import ast
import pickle


def load(expr, blob, ok):
    return eval(expr) if ok else pickle.loads(blob)
'''


def _autofix(tmp_path: Path, scripted_llm: Any, eval_fix: str, finish: str = "stop") -> dict[str, Finding]:
    """AutoFix over APP; the model answers `eval_fix` for the eval finding, ending it for
    `finish` (the server's finish_reason: "length" where it stopped the answer at max_tokens)."""
    def fixing_eval(req: dict[str, Any]) -> bool:
        return "`python-code-injection`" in last_user_text(req)

    def responder(req: dict[str, Any]) -> str:
        return eval_fix if fixing_eval(req) else "NO_FIX: not in this test"

    server = scripted_llm(responder, finish_reason=lambda req: finish if fixing_eval(req) else "stop")
    ctx = AnalysisContext(llm_factory=lambda: client_for(server), file_loader=lambda p: APP,
                          options={"autofix": {"rtc": False}})
    report = AutoFix().run(parse_diff(new_file_diff("b/app.py", APP)), ctx)
    assert report.error is None, report.error
    return {str(f.rule_id): f for f in report.findings}


def test_a_fix_that_trades_rule_a_for_rule_b_is_not_fixed(tmp_path: Path, scripted_llm: Any) -> None:
    _semgrep()
    by_rule = _autofix(tmp_path, scripted_llm,
                       "```python\nreturn pickle.loads(ast.literal_eval(expr))\n```")
    f = by_rule["python-code-injection"]
    assert f.evidence["oracle"] == "not fixed" and f.fix is None
    assert f.evidence["remaining"] == [] and f.evidence["new_findings"] == ["python-unsafe-deserialization"]


def test_a_fix_padded_past_the_size_limit_is_not_fixed(tmp_path: Path, scripted_llm: Any) -> None:
    """A fix padded past Semgrep's size limit (the flagged call kept at its end) never reaches the
    scan: the answer is cut at the byte cap its token limit allows, and a cut answer is no fix
    (its first part alone, without the call, would scan clean)."""
    _semgrep()
    pad = "".join(f"x{i} = 0  # {'p' * 90}\n" for i in range(MAX_TARGET_BYTES // 90))
    by_rule = _autofix(tmp_path, scripted_llm, f"```python\n{pad}return eval(expr)\n```")
    f = by_rule["python-code-injection"]
    assert f.evidence["oracle"] == "not fixed" and f.fix is None
    assert "was cut: part of a fix is no fix" in f.evidence["error"]


CUT_SHORT = "```python\nreturn ast.literal_eval(expr)\n"  # the fix's first line; `if ok else …` never came


def test_a_fix_the_server_stopped_at_max_tokens_is_not_offered(tmp_path: Path, scripted_llm: Any) -> None:
    """An answer the server stopped at its token limit (finish_reason "length") is no fix, though
    its unclosed fence holds code: here the code so far drops the `else` branch, and (a control,
    the same answer finished) would scan clean and be offered as "fixed"."""
    _semgrep()
    whole = _autofix(tmp_path, scripted_llm, CUT_SHORT)["python-code-injection"]
    assert whole.evidence["oracle"] == "fixed" and whole.fix is not None  # what a cut answer would earn
    f = _autofix(tmp_path, scripted_llm, CUT_SHORT, finish="length")["python-code-injection"]
    assert f.evidence["oracle"] == "not fixed" and f.fix is None and "fixed" not in f.scores
    assert f.title == "python-code-injection: no usable fix in the answer"
    why = 'the server stopped the answer at its 768-token limit (finish_reason "length"), unfinished'
    assert f.evidence["error"] == f.evidence["answer"] == f"{why}: part of a fix is no fix"


# ------------------------------------------------------------------------- which semgrep
def test_a_planted_semgrep_is_never_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = _semgrep()
    planted = tmp_path / "semgrep"
    planted.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\nexit 0\n")
    planted.chmod(planted.stat().st_mode | stat.S_IEXEC)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f".:{tmp_path}:{os.environ.get('PATH', '')}")
    monkeypatch.delenv("RTCBOT_SEMGREP", raising=False)
    assert find_semgrep() == real and find_semgrep("semgrep") == real
    assert find_semgrep("./semgrep") is None  # a relative path is never looked up here
    assert find_semgrep(str(planted)) == str(planted)  # the operator's absolute path is used
    (tmp_path / "a.py").write_text(UNSAFE)
    result = scan(tmp_path, ["a.py"])
    assert [f.path for f in result.findings] == ["a.py"] and not (tmp_path / "ran").exists()
