"""Suppressions belong to the team, not the author (issue #38, item 1).

Attack covered: the pull request's author writes `# nosem` / `# nosemgrep` on the new line
`return eval(q)`: AutoFix said "no Semgrep findings" and `fail_on: autofix.findings>0` passed
on the CLI, the Action and the App. Semgrep now scans with `--disable-nosem`; only the base
branch's markers, on code the pull request did not change, are honoured, and a marker the
pull request adds is said in one line. The same for the smell detectors that feed CRScore's
pseudo-references: a `// NOPMD`, `@SuppressWarnings("PMD…")` or JSHint directive on an added
line hides no smell. Real Semgrep, PMD and JSHint, the scripted model, the fake GitHub.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analyzers.code.diff import parse_diff
from analyzers.crscore.analyzer import SmellPlan, Unit
from analyzers.crscore.smells import detect_many
from analyzers.crscore.smells.jshint import unavailable_reason as jshint_missing
from analyzers.crscore.smells.pmd import unavailable_reason as pmd_missing
from bot.entry import main
from reporters.untrusted import inert
from tests.bot.app_support import App
from tests.bot.test_action import EVENT, TOKEN, read_outputs
from tests.bot.test_jobs import finished, world  # noqa: F401  (fixture)
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fixture)
from tests.fakes.llm_server import ScriptedLLM
from tests.security.markdown_audit import audit
from tests.security.test_action import action
from tests.security.test_fail_closed import pr_files, review
from tests.security.test_semgrep_gates import _semgrep
from tests.security.test_untrusted_text import HOST
from tests.support import require

GATE = "autofix.findings>0"
MARKED = {marker: f"def handler(q):\n    return eval(q)  # {marker}\n" for marker in ("nosem", "nosemgrep")}
ADDED = "this pull request adds `# {}` at a.py:2; suppressions count from the base branch"


def _llm(scripted_llm: Callable[..., ScriptedLLM]) -> list[str]:
    srv = scripted_llm("NOT_VULNERABLE: test input")
    return ["--llm-base-url", srv.base_url, "--model", srv.model]


# ------------------------------------------------------------------------- the CLI
@pytest.mark.slow
@pytest.mark.parametrize("marker", ["nosem", "nosemgrep"])
def test_cli_a_suppression_the_pull_request_adds_hides_nothing(
        marker: str, scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    _semgrep()
    r = review(tmp_path, [("a.py", MARKED[marker])], GATE, "--analyzers", "autofix", *_llm(scripted_llm), limit=None)
    assert r.exit_code == 1, r.output
    assert "fail_on matched: autofix.findings>0" in r.stderr
    (rep,) = json.loads(r.stdout)["reports"]
    assert [(f["rule_id"], f["start_line"]) for f in rep["findings"]] == [("python-code-injection", 2)]
    assert ADDED.format(marker) in rep["notes"]


def _modify(tmp_path: Path, base: str, head: str, path: str = "m.py") -> tuple[Path, Path]:
    """A checkout at the head and the change's patch (base → head) of `path`."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / path).write_text(head)
    patch = tmp_path / "change.diff"
    patch.write_text(f"diff --git a/{path} b/{path}\n" + "".join(difflib.unified_diff(
        base.splitlines(True), head.splitlines(True), f"a/{path}", f"b/{path}")))
    return repo, patch


def _review(tmp_path: Path, base: str, head: str, llm: list[str]) -> Any:
    repo, patch = _modify(tmp_path, base, head)
    cfg = tmp_path / "rtcbot.yml"
    cfg.write_text(f'fail_on: "{GATE}"\n')
    return CliRunner().invoke(main, ["review", str(patch), "--repo", str(repo), "--config", str(cfg),
                                     "--format", "json", "--quiet", "--analyzers", "autofix", *llm])


BASE_MARKED = ("import subprocess\n\n\ndef run(cmd):\n    subprocess.call(  # nosemgrep\n"
               "        cmd,\n        shell=True)\n")


@pytest.mark.slow
def test_cli_a_base_suppression_covers_nothing_once_its_statement_changes(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """The team's `# nosemgrep` (line 5, unchanged) covered the call as it was at the base; the
    pull request edits one of its arguments (line 6): the statement is not the one the marker was
    written for, so the finding stands and the note names the marker (issue #51: it passed)."""
    _semgrep()
    r = _review(tmp_path, BASE_MARKED, BASE_MARKED.replace("cmd,", "cmd.strip(),"), _llm(scripted_llm))
    assert r.exit_code == 1, r.output
    (rep,) = json.loads(r.stdout)["reports"]
    assert [(f["rule_id"], f["start_line"]) for f in rep["findings"]] == [("python-shell-injection", 5)]
    assert ("this pull request changes the code at m.py:5 under the `# nosemgrep` at m.py:5; a suppression from the "
            "base branch covers only the statement it covered there, unchanged") in rep["notes"]


MOVED_BASE = ("import subprocess\n\n\ndef run(cmd):\n    # nosemgrep\n    subprocess.call(\"uptime\", shell=True)\n"
              "    subprocess.call(\n        cmd,\n        shell=False)\n")


@pytest.mark.slow
def test_cli_a_base_suppression_does_not_cover_code_moved_under_it(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """Issue #51's attack: the base's `# nosemgrep` sits alone above `subprocess.call("uptime",
    shell=True)`; the author deletes that line, so the multi-line call below moves up under the
    marker, and flips its `shell=False` to `shell=True`. On f32233f: 0 findings, exit 0, no note."""
    _semgrep()
    head = MOVED_BASE.replace('    subprocess.call("uptime", shell=True)\n', "").replace("shell=False", "shell=True")
    r = _review(tmp_path, MOVED_BASE, head, _llm(scripted_llm))
    assert r.exit_code == 1, r.output
    (rep,) = json.loads(r.stdout)["reports"]
    assert [(f["rule_id"], f["start_line"]) for f in rep["findings"]] == [("python-shell-injection", 6)]
    assert ("this pull request changes the code at m.py:6 under the `# nosemgrep` at m.py:5; a suppression from the "
            "base branch covers only the statement it covered there, unchanged") in rep["notes"]


BASE_ABOVE = "import subprocess\n\n\ndef run(cmd):\n    # nosemgrep\n    subprocess.call([cmd])\n"


@pytest.mark.slow
def test_cli_a_line_changed_under_a_base_suppression_is_not_covered(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """The author rewrites the line under the team's `# nosemgrep` into a shell call: the base's
    marker covered other code, so the finding stands, and the note says why."""
    _semgrep()
    head = BASE_ABOVE.replace("subprocess.call([cmd])", "subprocess.call(cmd, shell=True)")
    r = _review(tmp_path, BASE_ABOVE, head, _llm(scripted_llm))
    assert r.exit_code == 1, r.output
    (rep,) = json.loads(r.stdout)["reports"]
    assert [(f["rule_id"], f["start_line"]) for f in rep["findings"]] == [("python-shell-injection", 6)]
    assert ("this pull request changes the code at m.py:6 under the `# nosemgrep` at m.py:5; a suppression from the "
            "base branch covers only the statement it covered there, unchanged") in rep["notes"]


# ------------------------------------------------------------------------- the Action
@pytest.mark.slow
def test_action_a_suppression_the_pull_request_adds_fails_the_gate(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path) -> None:
    _semgrep()
    pr = json.loads(EVENT.read_text(encoding="utf-8"))["pull_request"]
    gh = fake_github(repo=pr["base"]["repo"]["full_name"])
    gh.grant_token(TOKEN)
    gh.add_pr(pr["number"], files=pr_files(("a.py", MARKED["nosemgrep"])), head_sha=pr["head"]["sha"])
    gh.set_file("a.py", MARKED["nosemgrep"], ref=pr["head"]["sha"])
    proc = action(gh, scripted_llm("NOT_VULNERABLE: test input"), tmp_path, analyzers="autofix", fail_on=GATE)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "fail_on matched: autofix.findings>0" in proc.stderr or "fail-on" in proc.stderr
    (run,) = gh.check_runs.values()
    assert run["conclusion"] == "failure"
    assert inert(ADDED.format("nosemgrep")) in run["output"]["summary"]
    assert [a["start_line"] for a in run["annotations"]] == [2]
    assert read_outputs(tmp_path / "output.txt")["conclusion"] == "failure"


# ------------------------------------------------------------------------- the App
@pytest.mark.slow
def test_app_a_suppression_the_pull_request_adds_fails_the_check_run(
        world: Callable[..., App]) -> None:  # noqa: F811
    _semgrep()
    w = world(analyzers=["autofix"])
    w.gh.set_file(".github/rtcbot.yml", f'fail_on: "{GATE}"\n')
    pr = w.gh.add_pr(42, files=pr_files(("a.py", MARKED["nosem"])))
    w.gh.set_file("a.py", MARKED["nosem"], ref=pr.head_sha)
    w.deliver("pull_request", w.gh.pr_event("opened", 42))
    w.run()
    run = finished(w, "rtcbot / AutoFix", sha=pr.head_sha)
    assert run["conclusion"] == "failure"
    assert inert(ADDED.format("nosem")) in run["output"]["summary"]
    assert [(a["path"], a["start_line"]) for a in run["annotations"]] == [("a.py", 2)]


# ------------------------------------------------------------------------- CRScore's smells
def _smells(path: str, base: str, head: str, tmp_path: Path) -> tuple[list[str], list[str]]:
    """The smell sentences CRScore's pseudo-references get for a change of `path`, and the notes
    on suppressions (the plan the analyzer runs, with the real detectors)."""
    _, patch = _modify(tmp_path, base, head, path)
    (fc,) = parse_diff(patch.read_text()).files
    unit = Unit(fc, list(fc.hunks), "k")
    plan = SmellPlan.of([unit], {path: head})
    found = plan.on_unit(unit, detect_many(plan.sources))
    return [s.sentence() for rep in found for s in rep.smells], [a.sentence() for a in plan.suppressed]


JAVA_BASE = "public class Calc {\n    public int twice(int a) {\n        return a * 2;\n    }\n}\n"
JAVA_HEAD = ("public class Calc {\n    public int twice(int a) {\n        return a * 2;\n    }\n\n"
             "    public int check(int a) {\n        if (a > 0) return 1; {MARK}\n        return 0;\n    }\n}\n")


@pytest.mark.slow
@pytest.mark.parametrize("mark", ["// NOPMD", "ANNOTATION"])
def test_crscore_a_pmd_suppression_the_pull_request_adds_hides_no_smell(mark: str, tmp_path: Path) -> None:
    require(pmd_missing() is None, pmd_missing() or "")
    head = JAVA_HEAD.replace(" {MARK}", "" if mark == "ANNOTATION" else f" {mark}")
    if mark == "ANNOTATION":
        head = head.replace("    public int check", '    @SuppressWarnings("PMD")\n    public int check')
    smells, notes = _smells("Calc.java", JAVA_BASE, head, tmp_path)
    assert any("ControlStatementBraces" in s for s in smells), smells
    where = "Calc.java:7" if mark == "// NOPMD" else "Calc.java:6"
    words = "// NOPMD" if mark == "// NOPMD" else "@SuppressWarnings"
    assert notes == [f"this pull request adds `{words}` at {where}; suppressions count from the base branch"]


JS_BASE = "function add(a, b) {\n    return a + b;\n}\n"


@pytest.mark.slow
@pytest.mark.parametrize("head", [
    JS_BASE + "function run(x) {\n    return eval(x); // jshint ignore:line\n}\n",
    JS_BASE + "/* jshint ignore:start */\nfunction run(x) {\n    return eval(x);\n}\n/* jshint ignore:end */\n",
    JS_BASE + "function run(x) {\n    /* jshint -W061 */\n    return eval(x);\n}\n",
], ids=["ignore-line", "ignore-block", "warning-off"])
def test_crscore_a_jshint_directive_the_pull_request_adds_hides_no_smell(head: str, tmp_path: Path) -> None:
    require(jshint_missing() is None, jshint_missing() or "")
    smells, notes = _smells("run.js", JS_BASE, head, tmp_path)
    assert any("eval can be harmful" in s for s in smells), smells
    assert notes and all(n.startswith("this pull request adds `") and "jshint" in n for n in notes)


@pytest.mark.slow
def test_crscore_a_detector_suppression_at_the_base_still_counts(tmp_path: Path) -> None:
    require(jshint_missing() is None, jshint_missing() or "")
    base = "/* jshint ignore:start */\nfunction run(x) {\n    return eval(x);\n}\n/* jshint ignore:end */\n"
    head = base.replace("    return eval(x);\n", "    var y = x;\n    return eval(y);\n")
    smells, notes = _smells("run.js", base, head, tmp_path)
    assert not any("eval" in s for s in smells) and notes == []


@pytest.mark.slow
def test_cli_the_added_suppression_line_quotes_a_hostile_path_inert(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """The one line that says the pull request added a suppression names the file, a name the
    author chose: a mention and a link in it stay text in the Markdown a reviewer reads."""
    _semgrep()
    path = f"@admin[x](https:{HOST}).py"
    r = review(tmp_path, [(path, MARKED["nosemgrep"])], GATE, "--analyzers", "autofix", *_llm(scripted_llm),
               "--format", "markdown", limit=None)
    assert r.exit_code == 1, r.output
    assert "suppressions count from the base branch" in r.stdout
    found = audit(r.stdout, HOST)
    assert found.clean, found
