"""Gates fail closed (issue #27, part 3): a gate never passes over what an analyzer could not
analyse.

Attack covered: the party being scored hides `eval(...)` in a changed file Semgrep skips (over
its size limit), so `fail_on: autofix.findings>0` sees no finding and passes. The file is now
`autofix.unscanned`, and the gate fails on all three surfaces, naming the file and why: the
App's check run and the Action's (conclusion `failure`), the Action's exit 1 and step summary,
`rtcbot review`'s exit 1. A spent LLM budget does the same to a gate on EditingRTC; files
skipped by policy (a lock file) never block a gate. Real Semgrep with a small size limit
(RTCBOT_SEMGREP_MAX_TARGET_BYTES, the operator's), the fake GitHub, the scripted model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analyzers.code.diff import parse_github_files
from analyzers.semgrep.scan import parse_output
from bot.entry import main
from tests.bot.app_support import App
from tests.bot.test_action import EVENT, TOKEN, read_outputs
from tests.bot.test_jobs import finished, world  # noqa: F401  (fixture)
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fixture)
from tests.fakes.llm_server import RoundTrips, ScriptedLLM, varied
from tests.security.test_action import action
from tests.security.test_semgrep_gates import _semgrep, new_file_diff
from tests.support import ROOT

LIMIT = 200  # bytes: Semgrep's size limit in these tests (its default is 1 MB)
BIG_PY = "def run(expr):\n    return eval(expr)\n" + "".join(f"# padding line {i}\n" for i in range(20))
OK_PY = "def add(a, b):\n    return a + b\n"
LOCK = '{\n  "lockfileVersion": 3\n}\n'
GATE = "autofix.findings>0"
SAID = "The gate cannot pass: AutoFix could not scan 1 changed file: big.py (over Semgrep's size limit"


def patch_of(text: str) -> str:
    """GitHub's `patch` of a new file (no file header)."""
    lines = text.splitlines()
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{ln}\n" for ln in lines)


def pr_files(*files: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"filename": p, "status": "added", "additions": len(t.splitlines()), "deletions": 0,
             "changes": len(t.splitlines()), "patch": patch_of(t)} for p, t in files]


def action_pr(fake_github: Callable[..., FakeGitHub], *files: tuple[str, str]) -> FakeGitHub:  # noqa: F811
    """The fake GitHub holding the Action's event's pull request, which adds `files` (each also
    at the head, for the contents API)."""
    pr = json.loads(EVENT.read_text(encoding="utf-8"))["pull_request"]
    gh = fake_github(repo=pr["base"]["repo"]["full_name"])
    gh.grant_token(TOKEN)
    gh.add_pr(pr["number"], files=pr_files(*files), head_sha=pr["head"]["sha"])
    for path, text in files:
        gh.set_file(path, text, ref=pr["head"]["sha"])
    return gh


def review(tmp_path: Path, files: list[tuple[str, str]], gate: str, *args: str,
           limit: int | None = LIMIT) -> Any:
    """`rtcbot review` of a change adding `files`, with `gate` as the config's fail_on."""
    diff = tmp_path / "change.diff"
    diff.write_text("".join(new_file_diff(f"b/{p}", t) for p, t in files))
    cfg = tmp_path / "rtcbot.yml"
    cfg.write_text(f'fail_on: "{gate}"\n')
    env = {"RTCBOT_SEMGREP_MAX_TARGET_BYTES": str(limit) if limit else None}
    return CliRunner().invoke(main, ["review", str(diff), "--config", str(cfg), "--format", "json",
                                     "--quiet", *args], env=env)


# ------------------------------------------------------------------------- pure parts
def test_semgreps_size_limit_reads_as_such() -> None:
    data = {"results": [], "errors": [], "paths": {"scanned": [], "skipped": [
        {"path": "big.py", "reason": "exceeded_size_limit", "details": "target file size exceeds 200 bytes"}]}}
    assert parse_output(data, ["big.py"]).skipped == {
        "big.py": "over Semgrep's size limit: target file size exceeds 200 bytes"}


def test_a_code_file_github_gives_no_patch_for_could_not_be_analysed() -> None:
    files = [{"filename": "huge.py", "status": "modified"}, {"filename": "logo.png", "status": "modified"},
             {"filename": "poetry.lock", "status": "modified", "patch": "@@ -1 +1 @@\n-a\n+b"}]
    kinds = {f.path: f.skip_kind for f in parse_github_files(files).skipped}
    assert kinds == {"huge.py": "failed", "logo.png": "policy", "poetry.lock": "policy"}


# ------------------------------------------------------------------------- the CLI
@pytest.mark.slow
def test_cli_eval_in_a_file_over_semgreps_size_limit_fails_the_gate(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    _semgrep()
    srv = scripted_llm("NOT_VULNERABLE: test input")
    llm = ["--llm-base-url", srv.base_url, "--model", srv.model]
    files = [("big.py", BIG_PY), ("package-lock.json", LOCK)]
    r = review(tmp_path, files, GATE, "--analyzers", "autofix", *llm)
    assert r.exit_code == 1, r.output
    assert f"Error: {SAID}" in r.stderr and "package-lock.json" not in r.stderr
    (rep,) = json.loads(r.stdout)["reports"]
    assert rep["findings"] == []  # the eval was never seen ...
    assert {s["item"]: s["kind"] for s in rep["skipped"]} == {"big.py": "failed", "package-lock.json": "policy"}
    # ... and with Semgrep's default limit it is: the limit alone hid it
    seen = review(tmp_path, files, GATE, "--analyzers", "autofix", *llm, limit=None)
    assert seen.exit_code == 1 and "fail_on matched: autofix.findings>0" in seen.stderr
    assert "cannot pass" not in seen.stderr
    assert [f["rule_id"] for f in json.loads(seen.stdout)["reports"][0]["findings"]] == ["python-code-injection"]


@pytest.mark.slow
def test_cli_policy_skips_do_not_fail_the_gate(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    _semgrep()
    r = review(tmp_path, [("ok.py", OK_PY), ("package-lock.json", LOCK), ("vendor/ok.py", OK_PY)], GATE,
               "--analyzers", "autofix")
    assert r.exit_code == 0, r.output
    assert "cannot pass" not in r.stderr
    (rep,) = json.loads(r.stdout)["reports"]
    # a vendored file is scanned all the same (ignore globs spare only the LLM analyzers; one
    # over the size limit fails the gate: tests/security/test_path_policy_scans.py)
    assert {s["item"]: s["kind"] for s in rep["skipped"]} == {"package-lock.json": "policy"}


@pytest.mark.slow
def test_cli_a_budget_cut_leaves_the_gate_failing_closed(scripted_llm: Callable[..., ScriptedLLM],
                                                         tmp_path: Path) -> None:
    srv = scripted_llm(RoundTrips())  # a model that can edit code: the whole run's hunks are conclusive
    llm = ["--llm-base-url", srv.base_url, "--model", srv.model]
    cfg = tmp_path / "rtcbot.yml"
    cfg.write_text('fail_on: "editing_rtc.rtc<0"\n')  # never holds on a measured rtc
    demo = str(ROOT / "samples" / "demo.diff")
    cut = CliRunner().invoke(main, ["review", demo, "--config", str(cfg), "--max-requests", "3",
                                    "--format", "json", "--quiet", *llm])
    assert cut.exit_code == 1, cut.output  # the gate fails, before the budget's exit 3
    assert "The gate cannot pass: EditingRTC could not analyse" in cut.stderr
    assert "(not scored: request budget of 3 spent)" in cut.stderr
    whole = CliRunner().invoke(main, ["review", demo, "--config", str(cfg), "--format", "json", "--quiet", *llm])
    assert whole.exit_code == 0 and "cannot pass" not in whole.stderr, whole.output


# ------------------------------------------------------------------------- the Action
@pytest.mark.slow
def test_action_eval_in_a_file_over_semgreps_size_limit_fails_the_gate(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _semgrep()
    gh = action_pr(fake_github, ("big.py", BIG_PY), ("package-lock.json", LOCK))
    monkeypatch.setenv("RTCBOT_SEMGREP_MAX_TARGET_BYTES", str(LIMIT))
    proc = action(gh, scripted_llm(varied), tmp_path, analyzers="autofix", fail_on=GATE)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert f"rtcbot: fail-on: {SAID}" in proc.stderr
    (run,) = gh.check_runs.values()
    assert run["name"] == "rtcbot / AutoFix" and run["conclusion"] == "failure"
    assert f"**The gate cannot pass:** {SAID.split(': ', 1)[1]}" in run["output"]["summary"]
    summary = (tmp_path / "summary.md").read_text()
    assert f"fail-on `{GATE}`: **failed**" in summary and "AutoFix could not scan 1 changed file: big.py" in summary
    assert read_outputs(tmp_path / "output.txt")["conclusion"] == "failure"


# ------------------------------------------------------------------------- the App
@pytest.mark.slow
def test_app_eval_in_a_file_over_semgreps_size_limit_fails_the_check_run(
        world: Callable[..., App]) -> None:  # noqa: F811
    _semgrep()
    w = world(analyzers=["autofix"], semgrep_max_target_bytes=LIMIT)
    w.gh.set_file(".github/rtcbot.yml", f'fail_on: "{GATE}"\n')
    pr = w.gh.add_pr(41, files=pr_files(("big.py", BIG_PY), ("package-lock.json", LOCK)))
    w.gh.set_file("big.py", BIG_PY, ref=pr.head_sha)
    w.deliver("pull_request", w.gh.pr_event("opened", 41))
    w.run()
    run = finished(w, "rtcbot / AutoFix", sha=pr.head_sha)
    assert run["conclusion"] == "failure"
    assert f"**The gate cannot pass:** {SAID.split(': ', 1)[1]}" in run["output"]["summary"]
    assert run["annotations"] == []  # nothing was found: the gate failed on what was not scanned
