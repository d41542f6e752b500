from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.entry import main
from tests.fakes.llm_server import ScriptedLLM, last_user_text, varied
from tests.support import FIXTURES, ROOT, require


def llm_args(srv: ScriptedLLM) -> list[str]:
    return ["--llm-base-url", srv.base_url, "--model", srv.model]


def rtcbot(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=ROOT, capture_output=True,
                          text=True, env=env, input=None if stdin is None else stdin.decode(), timeout=120)


def assert_one_clear_error(p: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    assert fragment in p.stderr
    assert len([ln for ln in p.stderr.splitlines() if ln.startswith("Error")]) == 1


@pytest.mark.slow
def test_empty_file(tmp_path: Path) -> None:
    f = tmp_path / "empty.diff"
    f.write_text("")
    assert_one_clear_error(rtcbot("review", str(f)), "empty")


@pytest.mark.slow
def test_not_a_diff(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("just some words\n")
    assert_one_clear_error(rtcbot("review", str(f)), "not a unified diff")


@pytest.mark.slow
def test_missing_file_and_bad_options(tmp_path: Path) -> None:
    assert_one_clear_error(rtcbot("review", str(tmp_path / "nope.diff")), "no such file")
    assert_one_clear_error(rtcbot("review"), "PATCH_FILE")
    assert_one_clear_error(rtcbot("review", str(FIXTURES / "prs" / "jsoup-b035b623d3.diff"), "--analyzers", "bogus"),
                           "unknown analyzer")


@pytest.mark.slow
def test_unreachable_endpoint_is_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = rtcbot("review", "samples/demo.diff", "--llm-base-url", f"http://127.0.0.1:{port}/v1", "--model", "m")
    # the endpoint named, never shown: the report's error is public text (issue #51 item 9)
    assert_one_clear_error(p, "cannot reach the LLM endpoint")
    assert "'m'" in p.stderr and f":{port}" not in p.stderr


def test_binary_patch_is_a_listed_skip(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm("```\nx\n```")
    f = tmp_path / "bin.diff"
    f.write_text(
        "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\n"
        "GIT binary patch\nliteral 4\nLcmZ?wbaMa#00000\n\nliteral 0\nHcmV?d00001\n\n"
    )
    r = CliRunner().invoke(main, ["review", str(f), "--format", "json", *llm_args(srv)])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)["reports"][0]
    assert rep["skipped"] == [{"item": "logo.png", "reason": "binary file", "kind": "policy", "path": "logo.png"}]
    assert srv.request_count == 0


@pytest.mark.slow
def test_large_and_wide_diffs_complete(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    # answers in the expected formats (a description without code; code in a fence), or the
    # format watch would rightly stop the run after a handful (analyzers/llm/format_watch.py)
    srv = scripted_llm(lambda req: "```\nx\n```" if "[edit description]" in last_user_text(req) else "x",
                       honour_n=True)
    wide = tmp_path / "wide.diff"
    wide.write_text("".join(f"--- a/f{i}.py\n+++ b/f{i}.py\n@@ -1 +1 @@\n-a = {i}\n+a = {i + 1}\n" for i in range(500)))
    r = CliRunner().invoke(main, ["review", str(wide), "--format", "json", *llm_args(srv)])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)["reports"][0]
    assert len(rep["findings"]) == 100  # the per-run hunk limit…
    assert sum("limit of 100 hunks" in s["reason"] for s in rep["skipped"]) == 400  # …and the rest listed
    big = tmp_path / "big.diff"
    big.write_text("--- /dev/null\n+++ b/big.py\n@@ -0,0 +1,400000 @@\n"
                   + "".join(f"+v{i} = {i}\n" for i in range(400000)))
    assert big.stat().st_size > 5_000_000
    r = CliRunner().invoke(main, ["review", str(big), "--format", "json", *llm_args(srv)])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)["reports"][0]
    assert rep["findings"] == [] and rep["skipped"][0]["reason"].startswith("too large")


@pytest.mark.parametrize("fixture", ["more-itertools-069b30002a.diff", "jsoup-b035b623d3.diff",
                                     "underscore-0061801a43.diff"])
def test_review_json_has_every_hunk(fixture: str, scripted_llm: Callable[..., ScriptedLLM]) -> None:
    from analyzers.code.diff import CODE_LANGUAGES, parse_diff

    srv = scripted_llm(varied, honour_n=True)
    path = FIXTURES / "prs" / fixture
    r = CliRunner().invoke(main, ["review", str(path), "--format", "json", *llm_args(srv)])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)["reports"][0]
    hunks = [(f, h) for f, h in parse_diff(path.read_text()).hunks() if f.language in CODE_LANGUAGES]
    code_hunks = [(f, h) for f, h in hunks if h.added_lines]  # a pure deletion has nothing to re-create
    assert len(rep["findings"]) == len(code_hunks)
    deletions = [s for s in rep["skipped"] if s["reason"] == "lines removed only: nothing to re-create"]
    assert len(deletions) == len(hunks) - len(code_hunks) and all(s["kind"] == "policy" for s in deletions)
    for f in rep["findings"]:
        assert {"rtc", "lift", "baseline", "rtc@3"} <= set(f["scores"])
        assert len(f["evidence"]["descriptions"]) == 3 and len(f["evidence"]["regenerated"]) == 3
    assert srv.request_count == 5 * len(code_hunks)


def test_markdown_and_text_formats(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("```\nx\n```")
    for fmt, marker in (("markdown", "## EditingRTC"), ("text", "EditingRTC")):
        r = CliRunner().invoke(main, ["review", "samples/demo.diff", "--format", fmt, *llm_args(srv)])
        assert r.exit_code == 0 and marker in r.output and "inventory/stock.py" in r.output


def test_git_range(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm("```\nx\n```")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.py").write_text("x = 1\n")
    subprocess.run([*git, "-C", str(tmp_path), "add", "."], check=True)
    subprocess.run([*git, "-C", str(tmp_path), "commit", "-qm", "a"], check=True)
    (tmp_path / "a.py").write_text("x = 2\n")
    subprocess.run([*git, "-C", str(tmp_path), "commit", "-qam", "b"], check=True)
    r = CliRunner().invoke(main, ["review", "--git", "HEAD~1..HEAD", "--repo", str(tmp_path),
                                  "--format", "json", *llm_args(srv)])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["reports"][0]["findings"][0]["path"] == "a.py"


def test_review_autofix_with_repo_checkout(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm("NOT_VULNERABLE: the input is a constant here")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("import os\n\n\ndef run(expr):\n    return eval(expr)\n")
    patch = tmp_path / "p.diff"
    patch.write_text("--- a/calc.py\n+++ b/calc.py\n@@ -4,2 +4,2 @@\n"
                     " def run(expr):\n-    return int(expr)\n+    return eval(expr)\n")
    r = CliRunner().invoke(main, ["review", str(patch), "--analyzers", "autofix", "--repo", str(repo),
                                  "--format", "json", *llm_args(srv)])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)["reports"][0]
    assert rep["name"] == "autofix" and rep["title"] == "AutoFix" and rep["error"] is None
    f = rep["findings"][0]
    assert f["path"] == "calc.py" and f["start_line"] == 5 and f["rule_id"]
    assert f["fix"] is None  # the model said not vulnerable: nothing to suggest


# -- --config: the one repository config (issue #13) ------------------------------------------
def test_review_config_gate_and_ignore(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """`rtcbot review --config FILE` applies the file's ignore globs and its gate (exit 1)."""
    srv = scripted_llm(varied)
    cfg = tmp_path / "rtcbot.yml"
    cfg.write_text('ignore: ["docs/*"]\nthresholds: {editing_rtc: {rtc: 2}}\n')
    patch = tmp_path / "p.diff"
    patch.write_text("--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
                     "--- a/docs/d.py\n+++ b/docs/d.py\n@@ -1 +1 @@\n-y = 1\n+y = 2\n")
    r = CliRunner().invoke(main, ["review", str(patch), "--config", str(cfg), "--format", "json", *llm_args(srv)])
    assert r.exit_code == 1, r.output
    assert "fail_on matched: editing_rtc.rtc<2" in r.stderr
    (rep,) = json.loads(r.stdout)["reports"]
    assert [f["path"] for f in rep["findings"]] == ["m.py"]
    without = CliRunner().invoke(main, ["review", str(patch), "--format", "json", *llm_args(srv)])
    assert without.exit_code == 0 and len(json.loads(without.stdout)["reports"][0]["findings"]) == 2


def test_review_runs_synthesis_with_the_configs_test_command(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """The file's `test_command` turns SynthesisRTC on at --repo (a flag would win over it)."""
    from analyzers.sandbox.box import Sandbox, SandboxUnavailable
    from tests.analyzers.synthesis_rtc.test_analyzer import DIFF, MODULE_NEW, TESTS
    from tests.fakes.llm_server import last_user_text

    try:
        python = Sandbox().python
    except SandboxUnavailable as e:
        require(False, f"no sandbox here: {e}")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text(MODULE_NEW)
    (repo / "test_calc.py").write_text(TESTS)
    patch = tmp_path / "p.diff"
    patch.write_text(DIFF)
    cfg = tmp_path / "rtcbot.yml"
    cfg.write_text(f"analyzers: {{editing_rtc: false}}\ntest_command: {python} -m unittest -q test_calc\n"
                   "options: {synthesis_rtc: {max_regions: 1, test_timeout_s: 30}}\n")
    srv = scripted_llm(lambda req: [f"d{i}" for i in range(int(req.get("n") or 1))]
                       if "[region]" in last_user_text(req) else "```python\npass\n```")
    r = CliRunner().invoke(main, ["review", str(patch), "--repo", str(repo), "--config", str(cfg),
                                  "--format", "json", *llm_args(srv)])
    assert r.exit_code == 0, r.output
    (rep,) = json.loads(r.stdout)["reports"]
    assert rep["name"] == "synthesis_rtc" and rep["error"] is None, rep
    assert [f["path"] for f in rep["findings"]] == ["calc.py"] and rep["scores"]["rtc_pass"] == 0.0


@pytest.mark.slow
def test_review_refuses_an_invalid_config(tmp_path: Path) -> None:
    cfg = tmp_path / "rtcbot.yml"
    cfg.write_text("thresholds: {editing_rtc: {rtc: high}}\n")
    patch = tmp_path / "p.diff"
    patch.write_text("--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    p = rtcbot("review", str(patch), "--config", str(cfg))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith(f"Error: {cfg} is invalid: thresholds.editing_rtc.rtc: ")
    missing = rtcbot("review", str(patch), "--config", str(tmp_path / "nope.yml"))
    assert missing.returncode == 2 and missing.stderr.strip() == f"Error: {tmp_path / 'nope.yml'}: no such file"


def test_a_spent_budget_that_skipped_work_exits_3_saying_how_much(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("```\nx\n```")
    r = CliRunner().invoke(main, ["review", "samples/demo.diff", "--format", "json", "--max-requests", "3",
                                  *llm_args(srv)])
    rep = json.loads(r.stdout)["reports"][0]
    skipped = [s for s in rep["skipped"] if "budget" in s["reason"]]
    assert rep["findings"] == [] and skipped  # every hunk cut off: "no findings" is not the answer
    assert r.exit_code == 3, r.output
    assert f"the LLM budget ran out (request budget of 3 spent): {len(skipped)} items skipped" in r.stderr
    assert srv.request_count <= 3
    # the same change with room to finish: exit 0, no budget message
    r = CliRunner().invoke(main, ["review", "samples/demo.diff", "--format", "json", *llm_args(srv)])
    assert r.exit_code == 0 and "budget" not in r.stderr


@pytest.mark.slow
def test_bad_log_settings_are_one_line_naming_the_variable(tmp_path: Path) -> None:
    env = {**os.environ, "RTCBOT_LOG_FORMAT": "xml", "LOG_LEVEL": "loud"}
    p = subprocess.run([sys.executable, "-m", "bot", "config", "validate", str(tmp_path / "none.yml")],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.splitlines() == ["Error: LOG_LEVEL: must be one of debug, info, warning, error, critical",
                                     "Error: RTCBOT_LOG_FORMAT: must be 'text' or 'json'"]
