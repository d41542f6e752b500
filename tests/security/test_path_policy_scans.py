"""Names cannot hide code from the scans that cost nothing (issue #51, item 1).

Attack, played as the pull request's author: `eval(request.args["q"])` in `app.py` fails
`fail_on: autofix.findings>0`; the same code in a file named like generated, vendored or built
code (`app/generated/handler.py`, `auth_pb2.py`, `build/lib/auth.py`, `vendor/auth.py`,
`auth.generated.py`, `static/app.bundle.js`, `lib/util.min.js`), in `src/auth.mts` /
`src/auth.cts`, in an extension-less script with a shebang (`bin/deploy`) or in `notes.txt` was
"ignored by glob" or never scanned, and the gate passed: CLI exit 0, the Action green, the App's
check run neutral. And an `editing_rtc.rtc` gate over a PR whose code was all "ignored" had no
metric and passed.

Now ignore globs spare only the analyzers that ask a model; Semgrep scans every changed file
whose language its name or its content says (analyzers/code/languages.py), under a name it
cannot leave out (analyzers/semgrep/targets.py); a file that holds code and that nothing could
scan fails a findings gate unless the base branch's config names its exact path; a gate whose
metric nothing measured because globs spared all the code cannot pass. Real Semgrep, the
scripted model, the fake GitHub.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analyzers.autofix.analyzer import AutoFix
from analyzers.code.diff import parse_diff, parse_github_files
from analyzers.context import AnalysisContext
from bot.entry import main
from tests.bot.app_support import App
from tests.bot.test_action import read_outputs
from tests.bot.test_jobs import finished, world  # noqa: F401  (fixture)
from tests.conftest import client_for
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fixture)
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.security.path_moves import EVAL_PY, MOVES, PLAIN, new_file_diff
from tests.security.test_action import action
from tests.security.test_fail_closed import action_pr, pr_files
from tests.security.test_semgrep_gates import _semgrep

pytestmark = pytest.mark.slow
GATE = "autofix.findings>0"
NOT_VULNERABLE = "NOT_VULNERABLE: test input"
BIG_PY = EVAL_PY + "".join(f"# padding line {i}\n" for i in range(20))  # over a 200-byte size limit


def review(tmp_path: Path, files: list[tuple[str, str]], config: str, *args: str,
           env: dict[str, str | None] | None = None) -> Any:
    """`rtcbot review` of a change adding `files`, with `config` as the base branch's config."""
    diff = tmp_path / "change.diff"
    diff.write_text("".join(new_file_diff(p, t) for p, t in files))
    cfg = tmp_path / "rtcbot.yml"
    cfg.write_text(config)
    return CliRunner().invoke(main, ["review", str(diff), "--config", str(cfg), "--format", "json",
                                     "--quiet", *args], env=env or {})


def llm_args(srv: ScriptedLLM) -> list[str]:
    return ["--llm-base-url", srv.base_url, "--model", srv.model]


# ------------------------------------------------------------------------- the CLI, each name
@pytest.mark.parametrize(("path", "text"), [PLAIN, *MOVES], ids=[PLAIN[0], *(p for p, _ in MOVES)])
def test_cli_a_moved_eval_still_fails_the_findings_gate(
        path: str, text: str, scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    _semgrep()
    r = review(tmp_path, [(path, text)], f'fail_on: "{GATE}"\n', "--analyzers", "autofix",
               *llm_args(scripted_llm(NOT_VULNERABLE)))
    assert r.exit_code == 1, r.output
    assert f"fail_on matched: {GATE}" in r.stderr
    (rep,) = json.loads(r.stdout)["reports"]
    assert [(f["path"], f["rule_id"]) for f in rep["findings"]] == [
        (path, "javascript-code-injection" if "eval(req.query" in text else "python-code-injection")]
    # its place in the code's structure (its fingerprint) is read in the same language
    assert rep["findings"][0]["place"]["definition"] == "function handle"
    assert rep["skipped"] == []  # the LLM's spare is not AutoFix's: nothing "ignored by glob"


def test_cli_the_shebang_script_is_python_to_editing_rtc_too(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """`bin/deploy` was "no changed code" to EditingRTC: its shebang makes it Python, so the
    round trip measures it (the scripted model answers nothing useful: a low rtc)."""
    path, text = MOVES[-2]
    r = review(tmp_path, [(path, text)], 'fail_on: "editing_rtc.rtc<0.5"\n', "--analyzers", "editing_rtc",
               *llm_args(scripted_llm("```python\npass\n```")))
    assert r.exit_code == 1, r.output
    assert "fail_on matched: editing_rtc.rtc<0.5" in r.stderr
    (rep,) = json.loads(r.stdout)["reports"]
    assert rep["scores"]["rtc"] == 0.0 and rep["skipped"] == []


def test_cli_an_rtc_gate_over_code_all_spared_by_globs_cannot_pass(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    files = [("vendor/auth.py", EVAL_PY), ("static/app.bundle.js", MOVES[5][1])]
    r = review(tmp_path, files, 'fail_on: "editing_rtc.rtc<0.5"\n', "--analyzers", "editing_rtc",
               *llm_args(scripted_llm("```python\npass\n```")))
    assert r.exit_code == 1, r.output
    said = ("The gate cannot pass: EditingRTC measured nothing for editing_rtc.rtc<0.5: the changed code was "
            "all left out by ignore globs: vendor/auth.py (ignored by glob 'vendor/*'), "
            "static/app.bundle.js (ignored by glob '*.bundle.js')")
    assert said in r.stderr
    (rep,) = json.loads(r.stdout)["reports"]
    assert {s["item"]: (s["kind"], s.get("spared")) for s in rep["skipped"]} == {
        "vendor/auth.py": ("policy", True), "static/app.bundle.js": ("policy", True)}
    # a change of prose alone has no metric either, and there was no code to measure: it passes
    docs = review(tmp_path, [("docs/notes.md", "# Notes\n\nWords.\n")], 'fail_on: "editing_rtc.rtc<0.5"\n',
                  "--analyzers", "editing_rtc", *llm_args(scripted_llm("```python\npass\n```")))
    assert docs.exit_code == 0 and "cannot pass" not in docs.stderr, docs.output


# ------------------------------------------------------------------------- unscannable code
@pytest.mark.parametrize(("ignore", "passes"), [('["vendor/*"]', False), ('["vendor/big.py"]', True)])
def test_cli_code_nothing_could_scan_passes_only_when_the_config_names_its_path(
        ignore: str, passes: bool, scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """Over Semgrep's size limit, a vendored file is scanned by nothing: "ignored by glob" no
    longer excuses it; the base branch's config naming that very path does."""
    _semgrep()
    r = review(tmp_path, [("vendor/big.py", BIG_PY)], f'fail_on: "{GATE}"\nignore: {ignore}\n',
               "--analyzers", "autofix", *llm_args(scripted_llm(NOT_VULNERABLE)),
               env={"RTCBOT_SEMGREP_MAX_TARGET_BYTES": "200"})
    (rep,) = json.loads(r.stdout)["reports"]
    (item,) = rep["skipped"]
    assert item["item"] == "vendor/big.py" and item["reason"].startswith("over Semgrep's size limit")
    if passes:
        assert r.exit_code == 0 and "cannot pass" not in r.stderr, r.output
        assert item["kind"] == "policy" and item["reason"].endswith("excludes this path by name")
    else:
        assert r.exit_code == 1, r.output
        assert "The gate cannot pass: AutoFix could not scan 1 changed file: vendor/big.py" in r.stderr
        assert item["kind"] == "failed"


def test_a_modified_script_is_read_at_the_head_for_its_language(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """The diff of a modified `bin/deploy` shows no shebang (its first hunk starts further down):
    the file at the head is read, and its shebang makes it Python."""
    _semgrep()
    head = "#!/usr/bin/env python3\nimport sys\n\n\n" + EVAL_PY
    diff = ("diff --git a/bin/deploy b/bin/deploy\n--- a/bin/deploy\n+++ b/bin/deploy\n"
            "@@ -4,2 +4,3 @@\n \n def handle(request):\n+    return eval(request.args[\"q\"])\n")
    changes = parse_diff(diff)
    assert changes.files[0].language is None  # the diff alone does not say
    srv = scripted_llm(NOT_VULNERABLE)
    report = AutoFix().run(changes, AnalysisContext(llm_factory=lambda: client_for(srv), file_loader=lambda p: head))
    assert [(f.path, f.rule_id, f.start_line) for f in report.findings] == [
        ("bin/deploy", "python-code-injection", 6)]


def test_github_files_keep_the_hunks_of_ignored_files() -> None:
    """The PR files API's patch of a vendored file: skipped for the LLM analyzers, scannable."""
    (fc,) = parse_github_files(pr_files(("vendor/auth.py", EVAL_PY))).files
    assert (fc.spared_by, fc.skipped, fc.language) == ("vendor/*", "ignored by glob 'vendor/*'", "python")
    assert fc.changed_lines == [1, 2] and not fc.spared_by_name


# ------------------------------------------------------------------------- the Action
def test_action_a_vendored_eval_fails_the_gate(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path) -> None:
    _semgrep()
    gh = action_pr(fake_github, ("vendor/auth.py", EVAL_PY))
    proc = action(gh, scripted_llm(varied), tmp_path, analyzers="autofix", fail_on=GATE)
    assert proc.returncode == 1, proc.stderr[-3000:]
    (run,) = gh.check_runs.values()
    assert run["name"] == "rtcbot / AutoFix" and run["conclusion"] == "failure"
    assert [(a["path"], a["start_line"]) for a in run["annotations"]] == [("vendor/auth.py", 2)]
    assert read_outputs(tmp_path / "output.txt")["conclusion"] == "failure"


# ------------------------------------------------------------------------- the App
def test_app_a_shebang_script_fails_the_check_run(world: Callable[..., App]) -> None:  # noqa: F811
    _semgrep()
    path, text = MOVES[-2]
    w = world(analyzers=["autofix"])
    w.gh.set_file(".github/rtcbot.yml", f'fail_on: "{GATE}"\n')
    pr = w.gh.add_pr(43, files=pr_files((path, text)))
    w.gh.set_file(path, text, ref=pr.head_sha)
    w.deliver("pull_request", w.gh.pr_event("opened", 43))
    w.run()
    run = finished(w, "rtcbot / AutoFix", sha=pr.head_sha)
    assert run["conclusion"] == "failure"
    assert [(a["path"], a["start_line"]) for a in run["annotations"]] == [(path, 3)]
