"""`require_qualified: true` on the App and the Action (bot/core/qualification.py).

End to end against the fake GitHub (tests/fakes/github_server.py) and the scripted LLM: a
pull request adding a Python file that a bundled Semgrep rule flags. An unqualified model
(no record, or a record saying it did not qualify) gets check runs that name it and say it is
not qualified, while AutoFix still carries Semgrep's finding (without a fix) and no request
reaches the model; a qualified model gets its normal scores. Plus the store's records, the
record's reading and `rtcbot qualify --database`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from analyzers.autofix.analyzer import AutoFix
from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext
from analyzers.semgrep import find_semgrep
from bot.core.config import CONFIG_PATH
from bot.core.llm import refusing_factory
from bot.core.qualification import (
    RECORD_PATH,
    refusal_from_file,
    refusal_from_store,
    refusal_from_text,
)
from bot.store.store import Store
from tests.bot.commands.test_qualify import git, qualify, recreator
from tests.bot.commands.test_qualify import repo as repo  # noqa: F401  (fixture)
from tests.bot.test_action import event_pr, run_action
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.support import require

FLAGGED = "import sys\n\n\ndef run(expr):\n    return eval(expr)\n\n\nprint(run(sys.argv[1]))\n"
PATH = "app/calc.py"
CONFIG = "require_qualified: true\nanalyzers: {editing_rtc: true, crscore: false, autofix: true}\n"


def new_file_diff(path: str, text: str) -> str:
    body = "".join(difflib.unified_diff([], text.splitlines(keepends=True), f"a/{path}", f"b/{path}"))
    return f"diff --git a/{path} b/{path}\nnew file mode 100644\n{body}"


DIFF = new_file_diff(PATH, FLAGGED)


def record_json(model: str, qualified: bool) -> str:
    return json.dumps({"version": 1, "repository": "x", "models": [
        {"model": model, "qualified": qualified, "reasons": [] if qualified else ["lift too low"]}]})


def _semgrep_flags_the_file() -> None:
    require(find_semgrep(), "semgrep is not installed")


# ============================================================================ the record
def test_the_store_keeps_the_latest_record_per_repo_and_model(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    try:
        assert store.qualifications.latest("o/r", "m") is None
        store.qualifications.save("o/r", "m", True, {"rtc": 0.5}, base_url="http://x/v1", at=100.0)
        store.qualifications.save("o/r", "m", False, {"reasons": ["RTC 0.1 is below 0.2"]}, at=200.0)
        store.qualifications.save("o/other", "m", True, {}, at=300.0)
        row = store.qualifications.latest("o/r", "m")
        assert row is not None and row.qualified is False and row.figures["reasons"] == ["RTC 0.1 is below 0.2"]
        why = refusal_from_store(store, "o/r", "m")
        assert why is not None and "'m'" in why and "not qualified for o/r" in why and "RTC 0.1" in why
        assert refusal_from_store(store, "o/other", "m") is None
        assert "no qualification record" in (refusal_from_store(store, "o/r", "n") or "")
    finally:
        store.close()


def test_the_record_is_read_the_same_from_a_file_and_from_text(tmp_path: Path) -> None:
    assert refusal_from_text("m", record_json("m", True), "r.json") is None
    for text, expect in [(None, "no qualification record at r.json"), ("{", "not JSON"),
                         ("[]", "no 'models' list"), (record_json("m", False), "qualified in r.json: none"),
                         (record_json("other", True), "qualified in r.json: other")]:
        why = refusal_from_text("m", text, "r.json")
        assert why is not None and expect in why and "model 'm' is not" in why and "docs/qualify.md" in why, (text, why)
    assert "no qualification record" in (refusal_from_file("m", tmp_path) or "")
    (tmp_path / RECORD_PATH).parent.mkdir()
    (tmp_path / RECORD_PATH).write_text(record_json("m", True))
    assert refusal_from_file("m", tmp_path) is None


def test_qualify_stores_each_verdict_in_the_apps_database(
        scripted_llm: Callable[..., ScriptedLLM], repo: Path, tmp_path: Path) -> None:  # noqa: F811
    good, noise = scripted_llm(recreator(), model="A"), scripted_llm("Edit.", model="B")
    db = f"sqlite:///{tmp_path / 'app.sqlite3'}"
    models = ["--model", f"{good.base_url}#A", "--model", f"{noise.base_url}#B"]
    r = qualify("--repo", str(repo), "--last", "20", "--max-hunks", "4", *models, "--database", db)
    assert r.exit_code == 2 and "give --repo-name" in r.output and "Traceback" not in r.output  # no origin
    r = qualify("--repo", str(repo), "--last", "20", "--max-hunks", "4", *models, "--database", db,
                "--repo-name", "../etc")
    assert r.exit_code == 2 and "is not a GitHub OWNER/NAME" in r.output
    git(repo, "remote", "add", "origin", "https://x-token:secret@github.com/octo-org/widgets.git")
    r = qualify("--repo", str(repo), "--last", "20", "--max-hunks", "4", *models, "--database", db)
    assert r.exit_code == 0, r.output
    assert "stored in the App's database for octo-org/widgets" in r.stderr
    store = Store(db)
    try:
        a = store.qualifications.latest("octo-org/widgets", "A")
        b = store.qualifications.latest("octo-org/widgets", "B")
        assert a is not None and a.qualified and a.base_url == good.base_url and a.figures["rtc"] == 1.0
        assert b is not None and not b.qualified and b.figures["reasons"]
        assert refusal_from_store(store, "octo-org/widgets", "A") is None
        assert "not qualified for octo-org/widgets" in (refusal_from_store(store, "octo-org/widgets", "B") or "")
    finally:
        store.close()


def test_autofix_under_a_refused_model_still_lists_semgreps_findings() -> None:
    _semgrep_flags_the_file()
    ctx = AnalysisContext(llm_factory=refusing_factory("model 'm' is not qualified"))
    report = AutoFix().run(parse_diff(DIFF), ctx)
    assert report.error is None
    assert [(f.path, f.rule_id, f.fix) for f in report.findings] == [(PATH, "python-code-injection", None)]
    assert "no fix proposed" in report.findings[0].title
    assert any("not qualified" in n for n in report.notes)


# ============================================================================ the App
def _app_runs(tmp_path: Path, gh: FakeGitHub, llm: ScriptedLLM,
              before: Callable[[Store], object] = lambda _: None) -> dict[str, dict[str, Any]]:
    """The App on CONFIG: a pull request adding PATH opened, its jobs run; the completed
    check runs by name."""
    from bot.app.runtime import Runtime
    from bot.app.web import create_app
    from tests.bot.app_support import deliver, drain, make_settings, serve

    gh.set_file(CONFIG_PATH, CONFIG)
    settings = make_settings(tmp_path / "app", gh, llm, analyzers=["editing_rtc", "autofix"])
    rt = Runtime(settings)
    try:
        before(rt.store)
        with serve(create_app(settings, runtime=rt)) as url:
            pr = gh.add_pr(7, diff_text=DIFF)
            gh.set_file(PATH, FLAGGED, ref=pr.head_sha)
            assert deliver(url, "pull_request", gh.pr_event("opened", 7)).status_code in (200, 202)
            drain(rt)
    finally:
        rt.store.close()
    return {r["name"]: r for r in gh.runs(head_sha=pr.head_sha) if r["status"] == "completed"}


@pytest.mark.slow
@pytest.mark.parametrize("recorded", [None, False])
def test_app_withholds_an_unqualified_models_scores_and_keeps_semgreps_finding(
        recorded: bool | None, tmp_path: Path, fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    _semgrep_flags_the_file()
    gh, llm = fake_github(), scripted_llm(varied)

    def record(store: Store) -> None:
        if recorded is not None:
            store.qualifications.save(gh.repo, llm.model, recorded, {"reasons": ["lift too low"]})

    runs = _app_runs(tmp_path, gh, llm, record)
    assert set(runs) == {"rtcbot / EditingRTC", "rtcbot / AutoFix"}
    for run in runs.values():
        text = run["output"]["summary"] + run["output"].get("text", "")
        assert f"this run's model {llm.model!r} is not qualified for {gh.repo}" in text, text
        assert "docs/qualify.md" in text
    assert "lift too low" in runs["rtcbot / EditingRTC"]["output"]["summary"] or recorded is None
    autofix = runs["rtcbot / AutoFix"]
    assert [(a["path"], a["start_line"]) for a in autofix["annotations"]] == [(PATH, 5)]
    assert "python-code-injection" in autofix["annotations"][0]["title"]
    assert llm.request_count == 0  # no model-based work at all


@pytest.mark.slow
def test_app_publishes_a_qualified_models_scores(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM]) -> None:
    _semgrep_flags_the_file()
    gh, llm = fake_github(), scripted_llm(varied)
    runs = _app_runs(tmp_path, gh, llm, lambda s: s.qualifications.save(gh.repo, llm.model, True, {}))
    edit = runs["rtcbot / EditingRTC"]
    assert "not qualified" not in edit["output"]["summary"]
    assert edit["annotations"] and llm.request_count > 0


# ============================================================================ the Action
def _action_runs(tmp_path: Path, fake_github: Callable[..., FakeGitHub], llm: ScriptedLLM,
                 base_record: str | None, head_record: str | None = None) -> dict[str, dict[str, Any]]:
    gh, base = event_pr(fake_github, DIFF)
    gh.set_file(CONFIG_PATH, CONFIG, ref=base)
    if base_record is not None:
        gh.set_file(RECORD_PATH.as_posix(), base_record, ref=base)
    if head_record is not None:  # the pull request's own copy, in the checkout: never trusted
        (tmp_path / "workspace" / RECORD_PATH).parent.mkdir(parents=True)
        (tmp_path / "workspace" / RECORD_PATH).write_text(head_record)
    proc = run_action(gh, llm, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {r["name"]: r for r in gh.check_runs.values() if r["status"] == "completed"}


@pytest.mark.slow
@pytest.mark.parametrize("recorded", [None, False])
def test_action_withholds_an_unqualified_models_scores_and_keeps_semgreps_finding(
        recorded: bool | None, tmp_path: Path, fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    _semgrep_flags_the_file()
    llm = scripted_llm(varied)
    runs = _action_runs(tmp_path, fake_github, llm,
                        None if recorded is None else record_json(llm.model, recorded),
                        head_record=record_json(llm.model, True))
    assert set(runs) == {"rtcbot / EditingRTC", "rtcbot / AutoFix"}
    for run in runs.values():
        summary = run["output"]["summary"]
        assert f"this run's model {llm.model!r} is not qualified for " in summary, summary
        assert "at the base commit" in summary and "docs/qualify.md" in summary
    autofix = runs["rtcbot / AutoFix"]
    assert [(a["path"], a["start_line"]) for a in autofix["annotations"]] == [(PATH, 5)]
    assert llm.request_count == 0
    assert "not qualified" in (tmp_path / "summary.md").read_text()


@pytest.mark.slow
def test_action_publishes_a_qualified_models_scores(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM]) -> None:
    _semgrep_flags_the_file()
    llm = scripted_llm(varied)
    runs = _action_runs(tmp_path, fake_github, llm, record_json(llm.model, True))
    edit = runs["rtcbot / EditingRTC"]
    assert "not qualified" not in edit["output"]["summary"]
    assert edit["annotations"] and llm.request_count > 0
