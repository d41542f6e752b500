""""Verified" means verified (issue #38, item 2): a fix is offered only if checks that do not
trust the model pass.

Attacks covered, each a scripted model answer: one that keeps `subprocess.call(cmd, shell=True)`
and adds `# nosemgrep` (the re-scan honoured it: "verified"); one that replaces the flagged call
with `return ast.literal_eval(x)`, `x` and `ast` undefined there; one that drops a definition
the rest of the function uses; a Java fix javac cannot parse and a JavaScript fix node cannot
(Semgrep's tolerant parsers scan both clean); a fix that scans clean and breaks the
repository's tests where a test command is configured (the CLI, the Action). Each is refused, the check
that failed said in the finding; a good fix is still offered. Real Semgrep, pyflakes, javac,
node and the sandbox; the scripted model; the fake GitHub for the Action and the App.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analyzers.autofix.analyzer import AutoFix
from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext
from analyzers.report import Finding
from analyzers.sandbox.box import Sandbox
from bot.entry import main
from tests.bot.app_support import App
from tests.bot.test_action import EVENT, TOKEN
from tests.bot.test_jobs import finished
from tests.conftest import client_for
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fixture)
from tests.fakes.llm_server import ScriptedLLM
from tests.security.test_action import action
from tests.security.test_fail_closed import pr_files
from tests.security.test_semgrep_gates import _semgrep, new_file_diff
from tests.support import require

pytestmark = pytest.mark.slow

SHELL = "import subprocess\n\n\ndef run_user(cmd):\n    subprocess.call(cmd, shell=True)\n"
EVAL = "def calc(expr):\n    return eval(expr)\n"
PICKLE = "import pickle\n\n\ndef load(blob):\n    data = pickle.loads(blob)\n    return data\n"


def fixed_by(scripted_llm: Callable[..., ScriptedLLM], path: str, text: str, answer: str,
             **ctx: Any) -> Finding:
    """AutoFix on a new file `path`; the model answers `answer` to the fix prompt (Patched RTC
    regenerates the same code, so it passes: it is not what refuses these fixes)."""
    def responder(req: dict[str, Any]) -> str:
        system = req["messages"][0]["content"]
        return answer if system.startswith(("Task: fix", "Task: apply")) else "Apply the change."

    server = scripted_llm(responder)
    context = AnalysisContext(llm_factory=lambda: client_for(server), file_loader=lambda p: text, **ctx)
    report = AutoFix().run(parse_diff(new_file_diff(f"b/{path}", text)), context)
    assert report.error is None, report.error
    (f,) = report.findings
    return f


def refused(f: Finding, why: str) -> None:
    assert f.fix is None and f.scores.get("fixed") == 0.0, f.evidence
    assert f.evidence["refused"] == why
    assert f.title.endswith(f"fix proposed, not verified: {why}")


NOSEMGREP_FIX = "```python\nsubprocess.call(cmd, shell=True)  # nosemgrep\n```"


def test_a_fix_that_adds_nosemgrep_is_refused(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    _semgrep()
    f = fixed_by(scripted_llm, "app.py", SHELL, NOSEMGREP_FIX)
    assert f.evidence["oracle"] == "not fixed" and f.evidence["rtc"] == "pass"
    refused(f, "it adds a suppression comment (`# nosemgrep`); a fix must remove the weakness, "
               "not hide it from the scan")


def test_a_fix_that_uses_undefined_names_is_refused(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    _semgrep()
    f = fixed_by(scripted_llm, "calc.py", EVAL, "```python\nreturn ast.literal_eval(x)\n```")
    refused(f, "it uses `ast`, `x`, not defined at that point")


def test_a_fix_that_drops_a_definition_the_file_uses_is_refused(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    _semgrep()
    f = fixed_by(scripted_llm, "load.py", PICKLE, "```python\nisinstance(blob, bytes)\n```")
    refused(f, "it removes the definition of `data`, which the rest of the file uses")


def test_a_good_fix_is_still_offered(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    _semgrep()
    f = fixed_by(scripted_llm, "app.py", SHELL, "```python\nsubprocess.call(cmd.split())\n```")
    assert f.evidence["oracle"] == "fixed" and "refused" not in f.evidence
    assert f.fix is not None and f.fix.replacement == "    subprocess.call(cmd.split())\n"
    assert f.title == "python-shell-injection: fix proposed, verified by re-scan and Patched RTC"


JAVA = ("class Runner {\n    void run(String cmd) throws Exception {\n        Runtime.getRuntime().exec(cmd);\n"
        "    }\n}\n")
JS = "function run(input) {\n    let value = null;\n    value = eval(input);\n    return value;\n}\n"


def test_a_java_fix_javac_cannot_parse_is_refused(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    _semgrep()
    f = fixed_by(scripted_llm, "Runner.java", JAVA, "```java\nnew ProcessBuilder('sh', cmd).start();\n```")
    assert f.evidence["oracle"] == "unparsable" and f.fix is None
    assert f.evidence["refused"].startswith("the fixed file does not parse (javac: unclosed character literal")


def test_a_javascript_fix_node_cannot_parse_is_refused(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    _semgrep()
    f = fixed_by(scripted_llm, "run.js", JS, "```javascript\nlet value = JSON.parse(input);\n```")
    assert f.evidence["oracle"] == "unparsable" and f.fix is None
    assert f.evidence["refused"] == ("the fixed file does not parse (node: SyntaxError: Identifier 'value' "
                                     "has already been declared)")


# ------------------------------------------------------------------------- the tests, on the CLI
CALC = "import ast\n\n\ndef calc(expr):\n    return eval(expr)\n"
TESTS = ("import unittest\n\nfrom calc import calc\n\n\nclass T(unittest.TestCase):\n"
         "    def test_sum(self):\n        self.assertEqual(calc('{case}'), {value})\n")


def _literal_eval(req: dict[str, Any]) -> str:
    system = req["messages"][0]["content"]
    return ("```python\nreturn ast.literal_eval(expr)\n```" if system.startswith(("Task: fix", "Task: apply"))
            else "Use ast.literal_eval.")


@pytest.mark.parametrize(("case", "value", "offered"), [("1 + 2", 3, False), ("3", 3, True)])
def test_cli_a_fix_that_breaks_the_tests_is_refused(case: str, value: int, offered: bool,
                                                    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """`ast.literal_eval` scans clean and parses; the repository's test (`calc('1 + 2') == 3`)
    fails with it, so `rtcbot review --test-command` does not offer it; where the test passes
    (`calc('3') == 3`) it is offered."""
    _semgrep()
    python = Sandbox().python
    require(python, "no Python for the sandbox")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TESTS.format(case=case, value=value))
    patch = tmp_path / "change.diff"
    patch.write_text(new_file_diff("b/calc.py", CALC))

    srv = scripted_llm(_literal_eval)
    r = CliRunner().invoke(main, ["review", str(patch), "--repo", str(repo), "--analyzers", "autofix",
                                  "--test-command", f"{python} -m unittest -q test_calc", "--format", "json",
                                  "--quiet", "--llm-base-url", srv.base_url, "--model", srv.model])
    assert r.exit_code == 0, r.output
    (f,) = json.loads(r.stdout)["reports"][0]["findings"]
    if offered:
        assert f["fix"] is not None and "refused" not in f["evidence"], f["evidence"]
    else:
        assert f["fix"] is None
        assert f["evidence"]["refused"].startswith(
            f"the tests fail with the fix applied (`{python} -m unittest -q test_calc`: FAILED (errors=1)")


def test_action_a_fix_that_breaks_the_tests_is_not_offered(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path) -> None:
    """The same on the Action (`test-command`, a checkout at the head): the check run's
    annotation says the fix was refused and why; no suggestion is published."""
    _semgrep()
    python = Sandbox().python
    require(python, "no Python for the sandbox")
    pr = json.loads(EVENT.read_text(encoding="utf-8"))["pull_request"]
    gh = fake_github(repo=pr["base"]["repo"]["full_name"])
    gh.grant_token(TOKEN)
    gh.add_pr(pr["number"], files=pr_files(("calc.py", CALC)), head_sha=pr["head"]["sha"])
    gh.set_file("calc.py", CALC, ref=pr["head"]["sha"])
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "calc.py").write_text(CALC)
    (workspace / "test_calc.py").write_text(TESTS.format(case="1 + 2", value=3))
    srv = scripted_llm(_literal_eval)
    proc = action(gh, srv, tmp_path, analyzers="autofix", reporters="pr-review",
                  test_command=f"{python} -m unittest -q test_calc")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = gh.check_runs.values()
    (note,) = run["annotations"]
    assert "fix proposed, not verified: the tests fail with the fix applied" in note["title"] + note["message"]
    assert gh.reviews == []  # pr-review publishes verified fixes only


@pytest.mark.slow
def test_app_a_fix_that_adds_nosemgrep_publishes_no_suggestion(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:  # noqa: F811
    """The App with `RTCBOT_REPORTERS=pr-review`: the forged fix is no "verified" fix, so no
    committable suggestion is posted, and the check run's annotation says why."""
    _semgrep()

    def answers(req: dict[str, Any]) -> str:
        system = req["messages"][0]["content"]
        return (NOSEMGREP_FIX if system.startswith(("Task: fix", "Task: apply")) else "Apply the change.")

    note, reviews = app_fix(apps, fake_github(), answers)
    assert "fix proposed, not verified: it adds a suppression comment" in note["title"]
    assert reviews == []


def app_fix(apps: Callable[..., App], gh: FakeGitHub, responder: Callable[[dict[str, Any]], str]
            ) -> tuple[dict[str, Any], list[Any]]:
    """The App with `RTCBOT_REPORTERS=pr-review` on a pull request that adds SHELL as app.py,
    the model answering with `responder`: AutoFix's one annotation, and the reviews posted."""
    w = apps(gh, responder=responder, analyzers=["autofix"], reporters=["pr-review"])
    pr = w.gh.add_pr(43, files=pr_files(("app.py", SHELL)))
    w.gh.set_file("app.py", SHELL, ref=pr.head_sha)
    w.deliver("pull_request", w.gh.pr_event("opened", 43))
    w.run()
    run = finished(w, "rtcbot / AutoFix", sha=pr.head_sha)
    (note,) = run["annotations"]
    return dict(note), list(w.gh.reviews)
