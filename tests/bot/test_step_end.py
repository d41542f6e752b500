"""bot/action/step_end.py: the step's own outputs after the check runs (or the workflow
commands in their place): the step summary, GITHUB_OUTPUT and the SARIF file say where the
findings went. The Action runs in process on the fake GitHub with the toy analyzer of
tests/test_plugins.py (registered for the test only), which asks no model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from analyzers import registry
from bot.action.run import run_action
from bot.action.settings import ActionResult, ActionSettings
from bot.action.workflow import ActionError
from tests.fakes.github_server import FakeGitHub
from tests.test_plugins import PATCH

TOKEN = "ghs_step_end_token"


@pytest.fixture(autouse=True)
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.ANALYZERS, "toy", "tests.test_plugins:ToyAnalyzer")


def run(tmp_path: Path, gh: FakeGitHub, **settings: Any) -> ActionResult:
    """The Action on the toy's pull request; its log in log.txt, its stdout in stdout.txt."""
    gh.grant_token(TOKEN)
    gh.add_pr(3, diff_text=PATCH)
    event = tmp_path / "event.json"
    event.write_text(json.dumps(gh.pr_event("opened", 3)), encoding="utf-8")
    (tmp_path / "ws").mkdir(exist_ok=True)

    def no_llm() -> Any:
        raise AssertionError("the toy analyzer asks no model")

    with open(tmp_path / "log.txt", "w") as log, open(tmp_path / "stdout.txt", "w") as stdout:
        return run_action(ActionSettings(event_path=str(event), event_name="pull_request", api_url=gh.base_url,
                                         token=TOKEN, workspace=tmp_path / "ws", llm_factory=no_llm, analyzers="toy",
                                         step_summary_path=str(tmp_path / "summary.md"),
                                         output_path=str(tmp_path / "output.txt"), **settings),
                          log=log, stdout=stdout)


def outputs(tmp_path: Path) -> dict[str, str]:
    text = (tmp_path / "output.txt").read_text(encoding="utf-8")
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_the_summary_and_outputs_name_the_check_runs_and_the_sarif_file(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    result = run(tmp_path, fake_github(), sarif_file="out/rtcbot.sarif")
    assert result.mode == "check-runs" and list(result.check_runs) == ["toy"]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "Posted 1 check run(s): rtcbot / Toy." in summary
    assert outputs(tmp_path)["annotations"] == "check-runs"
    sarif = tmp_path / "ws" / "out" / "rtcbot.sarif"  # relative: inside the workspace
    assert [r["automationDetails"]["id"] for r in json.loads(sarif.read_text())["runs"]] == ["rtcbot/toy/"]
    assert f"rtcbot: SARIF written to {sarif}" in (tmp_path / "log.txt").read_text(encoding="utf-8")


def test_workflow_commands_in_place_of_check_runs_are_said_in_the_summary_and_the_log(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    gh.read_only_checks = True
    result = run(tmp_path, gh)
    assert result.mode == "workflow-commands" and gh.check_runs == {}
    note = ("This token cannot create check runs (the workflow needs `permissions: checks: write`), so the "
            "findings are workflow-command annotations: 2 shown.")
    assert f"**{note.replace(' (', '** (', 1)}" in (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert f"rtcbot: {note}" in (tmp_path / "log.txt").read_text(encoding="utf-8")
    assert outputs(tmp_path)["annotations"] == "workflow-commands"


def test_a_sarif_file_that_cannot_be_written_stops_the_step_with_one_line(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "out.sarif").symlink_to(tmp_path / "victim")
    with pytest.raises(ActionError, match="sarif-file: cannot write 'out.sarif'"):
        run(tmp_path, fake_github(), sarif_file="out.sarif")
    assert not (tmp_path / "victim").exists()
