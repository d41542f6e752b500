"""A disguised dangerous fix is never published as verified (issue #51, item 2).

The model answers the flagged `subprocess.call(cmd, shell=True)` or `eval(expr)` with the
same call in disguise — through `getattr`, `__import__`, an alias, a `**` dict or a truthy
`shell=` that is no literal. Semgrep's re-scan finds none of them (its patterns name the
call), pyflakes finds nothing undefined, Patched RTC passes; on f32233f each was "fix
proposed, verified by re-scan and Patched RTC" with a committable suggestion. Now the fix's
delta must add only what its rule's list allows (analyzers/autofix/allowlist.py): each is
"proposed, not verified", with the reason as a type (`adds what is not on the list`) and the
constructs it added, on the CLI (each disguise), the Action and the App (one each, through the
fake GitHub: no suggestion posted). An honest fix is still verified; a fix that brings a finding
of another bundled rule is refused by the whole rule set's re-scan. Real Semgrep, the scripted
model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot.entry import main
from tests.bot.app_support import App
from tests.bot.test_action import EVENT, TOKEN
from tests.fakes.github_server import FakeGitHub, fake_github  # noqa: F401  (fixture)
from tests.fakes.llm_server import ScriptedLLM
from tests.security.test_action import action
from tests.security.test_fail_closed import pr_files
from tests.security.test_semgrep_gates import _semgrep, new_file_diff
from tests.security.test_verified_fix import app_fix

pytestmark = pytest.mark.slow

SHELL = "import builtins\nimport subprocess\n\n\ndef run_user(cmd):\n    subprocess.call(cmd, shell=True)\n"
EVAL = "import builtins\n\n\ndef calc(expr):\n    return eval(expr)\n"
NOT_LISTED = "adds what is not on the list"
WORDS = "fix proposed, not verified: it adds what a fix for this rule may not: "

DISGUISES = [  # (file, the model's fix, the kinds of what it adds that the list does not allow)
    (SHELL, 'getattr(subprocess, "call")(cmd, shell=True)', {"DYNAMIC", "COMPUTED", "ALIAS"}),
    (SHELL, "subprocess.call(cmd, shell=bool(1))", {"SHELL", "CALL"}),
    (SHELL, 'subprocess.call(cmd, **{"shell": True})', {"UNPACKED"}),
    (SHELL, '__import__("os").system(cmd)', {"DYNAMIC", "CALL"}),
    (EVAL, 'return getattr(builtins, "ev" + "al")(expr)', {"DYNAMIC", "COMPUTED", "ALIAS"}),
    (EVAL, "run = eval\nreturn run(expr)", {"ALIAS", "CALL"}),
]


def answering(fix: str) -> Callable[[dict[str, Any]], str]:
    """The model: `fix` to the fix prompt and to Patched RTC's regeneration (so RTC passes:
    it is not what refuses these fixes)."""
    def responder(req: dict[str, Any]) -> str:
        system = req["messages"][0]["content"]
        return f"```python\n{fix}\n```" if system.startswith(("Task: fix", "Task: apply")) else "Apply the change."
    return responder


def review(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, text: str, fix: str) -> dict[str, Any]:
    """`rtcbot review` of a pull request that adds `text` as app.py; its one AutoFix finding."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text(text)
    patch = tmp_path / "change.diff"
    patch.write_text(new_file_diff("b/app.py", text))
    srv = scripted_llm(answering(fix))
    r = CliRunner().invoke(main, ["review", str(patch), "--repo", str(repo), "--analyzers", "autofix",
                                  "--format", "json", "--quiet", "--llm-base-url", srv.base_url, "--model", srv.model])
    assert r.exit_code == 0, r.output
    (f,) = json.loads(r.stdout)["reports"][0]["findings"]
    return dict(f)


@pytest.mark.parametrize(("text", "fix", "kinds"), DISGUISES)
def test_cli_a_disguised_fix_is_not_verified(text: str, fix: str, kinds: set[str],
                                             scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    _semgrep()
    f = review(scripted_llm, tmp_path, text, fix)
    ev = f["evidence"]
    assert f["fix"] is None and f["scores"]["fixed"] == 0.0, ev
    assert ev["rtc"] == "pass" and ev["remaining"] == [] and ev["new_findings"] == []  # what passed it before
    assert ev["reason"] == NOT_LISTED and {a["kind"] for a in ev["added"]} == kinds
    assert WORDS in f["title"] and "verified by re-scan" not in f["title"]


def test_cli_an_honest_fix_is_still_verified(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    _semgrep()
    f = review(scripted_llm, tmp_path, SHELL, "subprocess.run(cmd.split(), check=True)")
    assert f["fix"] is not None and "reason" not in f["evidence"], f["evidence"]
    assert f["title"] == "python-shell-injection: fix proposed, verified by re-scan and Patched RTC"


def test_cli_a_fix_that_brings_another_rules_finding_is_not_verified(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """The re-scan runs every bundled rule, not just the one that flagged the line: a fix for
    the shell call that loads YAML unsafely on its lines is refused by python-yaml-unsafe-load."""
    _semgrep()
    text = "import subprocess\nimport yaml\n\n\ndef run_user(cmd):\n    subprocess.call(cmd, shell=True)\n"
    f = review(scripted_llm, tmp_path, text, "subprocess.call(yaml.load(cmd))")
    ev = f["evidence"]
    assert f["fix"] is None and ev["oracle"] == "not fixed" and ev["reason"] == "still flagged"
    assert ev["remaining"] == [] and ev["new_findings"] == ["python-yaml-unsafe-load"]


def test_action_a_disguised_fix_publishes_no_suggestion(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM],  # noqa: F811
        tmp_path: Path) -> None:
    """The Action with `reporters: pr-review`: `__import__("os").system(cmd)` is no verified
    fix, so no review with a committable suggestion is posted; the annotation says why."""
    _semgrep()
    pr = json.loads(EVENT.read_text(encoding="utf-8"))["pull_request"]
    gh = fake_github(repo=pr["base"]["repo"]["full_name"])
    gh.grant_token(TOKEN)
    gh.add_pr(pr["number"], files=pr_files(("app.py", SHELL)), head_sha=pr["head"]["sha"])
    gh.set_file("app.py", SHELL, ref=pr["head"]["sha"])
    proc = action(gh, scripted_llm(answering('__import__("os").system(cmd)')), tmp_path,
                  analyzers="autofix", reporters="pr-review")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = gh.check_runs.values()
    (note,) = run["annotations"]
    assert WORDS in note["title"] and "dynamic dispatch `__import__`" in note["message"]
    assert gh.reviews == []


def test_app_a_disguised_fix_publishes_no_suggestion(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:  # noqa: F811
    """The App with `RTCBOT_REPORTERS=pr-review`: `getattr(subprocess, "call")(cmd, shell=True)`
    gets no committable suggestion; the check run's annotation says it is not verified."""
    _semgrep()
    note, reviews = app_fix(apps, fake_github(), answering('getattr(subprocess, "call")(cmd, shell=True)'))
    assert WORDS in note["title"] and "verified by re-scan" not in note["title"]
    assert reviews == []
