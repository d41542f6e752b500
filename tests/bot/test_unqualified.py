"""A model the repository's qualification record does not qualify (bot/core/qualification.py,
issue #47): without `require_qualified`, its EditingRTC hunks are inconclusive ("not qualified
for this repository", with the model named and how to qualify it in the notes), never given
author advice, and a gate over them fails closed unless `gate_inconclusive: ignore`; with no
record at all nothing changes. With `require_qualified: true` a gate over `editing_rtc.*` does
not pass silently either. On the three surfaces: `rtcbot review`, the Action (the record at the
base commit) and the App (its `qualifications` table), against the scripted model that
round-trips well (its hunks are conclusive when nothing else says otherwise).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from analyzers.editing_rtc import evidence
from analyzers.report import Finding, Inconclusive
from bot.core.config import CONFIG_PATH
from bot.core.qualification import RECORD_PATH, standing_from_file, standing_from_store, standing_from_text
from bot.entry import main
from bot.store.store import Store
from tests.bot.test_action import event_pr, read_outputs, run_action
from tests.bot.test_cli import llm_args
from tests.bot.test_qualification import DIFF, PATH, record_json
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import RoundTrips, ScriptedLLM

PATCH = ("--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n def f(x):\n-    return x+1\n+    return x + 2\n # end f\n"
         "@@ -10,3 +10,3 @@\n def g():\n-    pass\n+    return None\n # end g\n")
GATE = 'fail_on: "editing_rtc.rtc<0.5"\n'
WORDS = Inconclusive.UNQUALIFIED.words


# ============================================================================ the record, the evidence
def test_only_a_record_that_leaves_the_model_out_makes_its_scores_inconclusive(tmp_path: Path) -> None:
    assert standing_from_text("m", None, "r.json").unqualified() is None  # no record: nothing said
    assert standing_from_text("m", record_json("m", True), "r.json").unqualified() is None
    for text in (record_json("other", True), record_json("m", False), "{"):
        why = standing_from_text("m", text, "r.json", "o/r").unqualified()
        assert why is not None and "model 'm' is not qualified for o/r" in why and "docs/qualify.md" in why, text
        assert "inconclusive" in why and "require_qualified" not in why
    assert standing_from_file("m", tmp_path).unqualified() is None
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    try:
        assert standing_from_store(store, "o/r", "m").unqualified() is None  # no record of the repository
        store.qualifications.save("o/r", "other", True, {})
        why = standing_from_store(store, "o/r", "m").unqualified()
        assert why is not None and "'m' is not qualified for o/r" in why
        assert standing_from_store(store, "o/r", "other").unqualified() is None
    finally:
        store.close()


def test_an_unqualified_model_makes_every_hunk_inconclusive_but_the_embedded_reason_comes_first() -> None:
    found = [Finding("editing_rtc", "f", scores={"rtc": 1.0}), Finding("editing_rtc", "g", scores={"rtc": 0.0})]
    evidence.judge(found, [False, True], embedded=False, unqualified=True)
    assert [f.inconclusive for f in found] == [Inconclusive.UNQUALIFIED] * 2
    evidence.judge(found, [False, True], embedded=True, unqualified=True)
    assert [f.inconclusive for f in found] == [Inconclusive.EMBEDDED] * 2
    assert "not qualified for this repository" in WORDS and "docs/qualify.md" in WORDS


# ============================================================================ rtcbot review
def _review(tmp_path: Path, srv: ScriptedLLM, config: str, record: str | None, fmt: str = "markdown") -> Result:
    repo = tmp_path / "repo"
    (repo / RECORD_PATH.parent).mkdir(parents=True, exist_ok=True)
    if record is not None:
        (repo / RECORD_PATH).write_text(record)
    patch, cfg = tmp_path / "p.diff", tmp_path / "rtcbot.yml"
    patch.write_text(PATCH)
    cfg.write_text(config)
    return CliRunner().invoke(main, ["review", str(patch), "--config", str(cfg), "--repo", str(repo),
                                     *llm_args(srv), "--format", fmt])


def test_review_marks_an_unqualified_models_hunks_inconclusive_and_fails_a_gate_over_them(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm(RoundTrips())
    scored = _review(tmp_path, srv, GATE, None)  # no record: the hunks are conclusive, the gate passes
    assert scored.exit_code == 0, scored.output
    assert "inconclusive" not in scored.stdout.splitlines()[0]
    r = _review(tmp_path, srv, GATE, record_json("another-model", True))
    assert r.exit_code == 1, r.output
    why = f"The gate cannot pass: EditingRTC: 2 of 2 hunks are inconclusive ({WORDS})"
    assert f"Error: {why}" in r.stderr.splitlines()
    assert f"this run's model {srv.model!r} is not qualified for this repository" in r.stderr
    assert r.stdout.splitlines()[0].startswith("**The gate fails: EditingRTC: 2 of 2 hunks are inconclusive")
    assert "What to do:" not in r.stdout  # no advice on an inconclusive hunk
    (rep,) = json.loads(_review(tmp_path, srv, GATE, record_json("another-model", True), "json").stdout)["reports"]
    assert [(f["inconclusive"], f["advice"]) for f in rep["findings"]] == [("unqualified", None)] * 2
    ignored = _review(tmp_path, srv, GATE + "gate_inconclusive: ignore\n", record_json("another-model", True))
    assert ignored.exit_code == 0, ignored.output


def test_review_under_require_qualified_fails_a_gate_over_the_refused_model_and_says_why(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm(RoundTrips())
    r = _review(tmp_path, srv, GATE + "require_qualified: true\n", record_json("another-model", True))
    assert r.exit_code == 1, r.output
    said = [line for line in r.stderr.splitlines() if line.startswith("Error: ")]
    assert len(said) == 1 and f"this run's model {srv.model!r} is not qualified" in said[0], r.stderr
    assert r.stdout.splitlines()[0].startswith("**The gate fails: EditingRTC could not run: ")
    assert srv.request_count == 0


# ============================================================================ the Action
@pytest.mark.slow
def test_the_action_reads_the_base_commits_record_and_fails_the_gate_over_inconclusive_hunks(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    gh, base = event_pr(fake_github, DIFF)
    gh.set_file(CONFIG_PATH, GATE, ref=base)
    gh.set_file(RECORD_PATH.as_posix(), record_json("another-model", True), ref=base)
    llm = scripted_llm(RoundTrips())
    proc = run_action(gh, llm, tmp_path, analyzers="editing-rtc")
    assert proc.returncode == 1, proc.stderr[-3000:]
    (run,) = gh.check_runs.values()
    assert run["conclusion"] == "failure" and run["output"]["title"].startswith("The gate fails: EditingRTC: ")
    summary = run["output"]["summary"]
    assert f"The hunk is inconclusive ({WORDS})" in summary.splitlines()[0], summary
    assert f"this run's model {llm.model!r} is not qualified for {gh.repo}" in summary
    assert not run["annotations"] and "What to do" not in summary
    assert read_outputs(tmp_path / "output.txt")["conclusion"] == "failure"


# ============================================================================ the App
def _app_run(tmp_path: Path, gh: FakeGitHub, llm: ScriptedLLM, config: str,
             before: Callable[[Store], object]) -> dict[str, Any]:
    from bot.app.runtime import Runtime
    from bot.app.web import create_app
    from tests.bot.app_support import deliver, drain, make_settings, serve

    gh.set_file(CONFIG_PATH, config)
    settings = make_settings(tmp_path / "app", gh, llm, analyzers=["editing_rtc"])
    rt = Runtime(settings)
    try:
        before(rt.store)
        with serve(create_app(settings, runtime=rt)) as url:
            pr = gh.add_pr(7, diff_text=DIFF)
            gh.set_file(PATH, "x = 1\n", ref=pr.head_sha)
            assert deliver(url, "pull_request", gh.pr_event("opened", 7)).status_code in (200, 202)
            drain(rt)
    finally:
        rt.store.close()
    (run,) = [r for r in gh.runs(head_sha=pr.head_sha) if r["status"] == "completed"]
    return run


@pytest.mark.slow
@pytest.mark.parametrize("ignore", [False, True])
def test_the_app_reads_its_table_and_fails_the_gate_over_an_unqualified_models_hunks(
        ignore: bool, tmp_path: Path, fake_github: Callable[..., FakeGitHub],
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    gh, llm = fake_github(), scripted_llm(RoundTrips())
    config = GATE + ("gate_inconclusive: ignore\n" if ignore else "")
    run = _app_run(tmp_path, gh, llm, config, lambda s: s.qualifications.save(gh.repo, "another-model", True, {}))
    summary = run["output"]["summary"]
    assert f"this run's model {llm.model!r} is not qualified for {gh.repo}" in summary, summary
    assert f"inconclusive ({WORDS})" in summary and "What to do" not in summary
    assert run["conclusion"] == ("neutral" if ignore else "failure"), summary
